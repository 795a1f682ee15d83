"""gpula.sparse.linalg: iterative solvers with scipy.sparse.linalg's signatures."""

from ._iterative import LinearOperator, bicgstab, cg, gmres, minres

__all__ = ["LinearOperator", "bicgstab", "cg", "gmres", "minres"]
