"""Sparse matrices (CSR) and their products: ``gl.sparse``.

    >>> import scipy.sparse as sp, gpula as gl
    >>> A = gl.sparse.as_csr(sp.random(5, 4, density=0.5, format="csr"), "example")
    >>> A.shape
    (5, 4)
"""

from ._matrix import as_csr, csr_matrix, from_dense
from ._direct import DirectSolver, spsolve  # sparse-direct

__all__ = ["as_csr", "csr_matrix", "from_dense"]
__all__ += ["DirectSolver", "spsolve"]  # sparse-direct
