"""Sparse matrices and solvers."""

from ._direct import DirectSolver, spsolve  # noqa: F401  (sparse-direct)
