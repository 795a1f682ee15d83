"""Sparse matrices (CSR) and what runs on them: ``gl.sparse``.

    >>> import scipy.sparse as sp, gpula as gl
    >>> A = gl.sparse.csr_matrix(sp.random(5, 4, density=0.5, format="coo"))
    >>> A.shape
    (5, 4)
"""

from . import linalg  # noqa: F401  (iterative solvers: gl.sparse.linalg.cg, ...)
from ._direct import DirectSolver, spsolve
from ._matrix import as_csr, csr_matrix, from_dense
from ._products import sddmm, spgemm, spmm

__all__ = [
    "as_csr",
    "csr_matrix",
    "from_dense",
    "DirectSolver",
    "spsolve",
    "linalg",
    "spmm",
    "sddmm",
    "spgemm",
]
