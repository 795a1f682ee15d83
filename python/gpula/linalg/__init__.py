"""gpula.linalg: dense decompositions and solvers; see gpula.linalg._solve for the conventions.

Example:
    >>> import numpy as np, gpula as gl
    >>> gl.linalg.solve(np.array([[2.0, 0.0], [0.0, 4.0]]), np.array([2.0, 2.0]))
    array([1. , 0.5])
"""

from ._solve import (
    EighResult,
    EigResult,
    LstsqResult,
    LUFactorResult,
    QRResult,
    SlogdetResult,
    SVDResult,
    cho_solve,
    cholesky,
    det,
    inv,
    lu_factor,
    lu_solve,
    slogdet,
    solve,
)
from ._eig import eig, eigvals
from ._eigh import eigh, eigvalsh
from ._qr import lstsq, qr
from ._svd import svd, svdvals

__all__ = ["cholesky", "cho_solve", "lu_factor", "lu_solve", "solve", "inv", "det", "slogdet"]
__all__ += ["eigh", "eigvalsh"]
__all__ += ["eig", "eigvals"]
__all__ += ["qr", "lstsq"]
__all__ += ["svd", "svdvals"]
# The named tuples of the results (NumPy 2's names; lstsq's and lu_factor's are gpula's).
__all__ += ["EighResult", "EigResult", "SVDResult", "SlogdetResult", "QRResult"]
__all__ += ["LstsqResult", "LUFactorResult"]
