"""gpula.sparse.linalg: iterative solvers with scipy.sparse.linalg's signatures.

Example:
    >>> import numpy as np, scipy.sparse as sp, gpula as gl
    >>> A = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(20, 20), format="csr")
    >>> x, info = gl.sparse.linalg.cg(A, np.ones(20), rtol=1e-10)
    >>> info, bool(np.allclose(A @ x, 1.0))
    (0, True)
"""

from ._iterative import SolveInfo, bicgstab, cg, gmres, minres
from ._lanczos import ArpackError, ArpackNoConvergence, eigsh, svds
from ._lsq import lsmr, lsqr
from ._operator import LinearOperator, aslinearoperator

__all__ = [
    "ArpackError",
    "ArpackNoConvergence",
    "LinearOperator",
    "SolveInfo",
    "aslinearoperator",
    "bicgstab",
    "cg",
    "eigsh",
    "gmres",
    "lsmr",
    "lsqr",
    "minres",
    "svds",
]
