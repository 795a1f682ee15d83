"""gpula.linalg: dense decompositions and solvers (cuSOLVER on a GPU, LAPACK on the CPU).

Every function takes a batch ``(..., n, n)`` of matrices (NumPy, CuPy, PyTorch or any DLPack
array, read in place whatever its strides; or what NumPy takes for an array: lists, tuples,
scalars, which become NumPy arrays and run on the CPU) and follows NumPy/SciPy's conventions:
defaults, shapes, NumPy 2's named tuples (EighResult, SVDResult, ...) and type promotion:
float32, float64, complex64 and complex128 are computed as they are; bool and integer input is
promoted to float64 and float16/bfloat16 to float32, and operands of different types to their
common type (float32 with float64 gives float64), as numpy.linalg does. Inputs are never
written. Results are new contiguous arrays in the package and on the device of the first
operand (zero-copy from gpula's own memory), produced on the package's current stream (or
``stream=``).

Right-hand sides follow numpy.linalg.solve (NumPy 2): a 1-D ``b`` of shape ``(n,)`` gives
``x`` of shape ``(..., n)``; otherwise ``b`` is ``(..., n, k)`` and its batch dimensions
broadcast against ``a``'s.

Common keyword arguments:
    check_finite: True (default) raises gl.InvalidArgument (a ValueError) when an operand holds
        NaN or +-Inf, as SciPy does; False skips the scan (on GPU arrays it costs a reduction
        and a wait for its result). Unchecked NaN/Inf input never crashes or hangs: results
        are NaN, or a typed error.
    check_info: True (default) raises gl.NotPositiveDefinite / gl.SingularMatrix (subclasses
        of numpy.linalg.LinAlgError) when a factorization fails, which waits for the device
        work; False does not wait and returns ``(result, info)`` instead, with ``info`` the int32
        LAPACK-style status of each matrix (batch shape; 0: success).
    device: None (where the data lives), "cpu", "cuda" or "cuda:N".
    fallback: None, or "cpu" to retry on the CPU when the GPU runs out of memory.
    stream: a torch.cuda.Stream, cupy.cuda.Stream or int handle (default: the package's
        current stream).

One module per operation: _solve.py (cholesky, cho_solve, lu_factor, lu_solve, solve, inv, det,
slogdet), _eigh.py, _eig.py, _qr.py (qr, lstsq), _svd.py (svd, svdvals; _svd_gram.py its
"gram" method), _topk.py (the randomized top-k SVD and what the top-k compositions share);
_triangular.py (solve_triangular), _lu.py (lu, lu_solve with trans=), _norms.py (norm, cond,
pinv, matrix_rank);
_ldl.py (ldl), _matfuncs.py (expm, matrix_power, multi_dot: compositions of matmul and solve);
_polar.py (orthogonalize: Muon's Newton-Schulz; polar), _roots.py (inv_root, sqrtm_psd),
_grouped.py (lists of matrices of different sizes, one batched call per size);
_operands.py reads operands and holds what every native call takes; _results.py the named
tuples.

Example:
    >>> import numpy as np, gpula as gl
    >>> gl.linalg.solve(np.array([[2.0, 0.0], [0.0, 4.0]]), np.array([2.0, 2.0]))
    array([1. , 0.5])
"""

from ._eig import eig, eigvals
from ._eigh import eigh, eigvalsh
from ._grouped import group
from ._ldl import ldl  # issue 22 (d2): ldl, expm, matrix_power, multi_dot
from ._matfuncs import expm, matrix_power, multi_dot
from ._polar import orthogonalize, polar  # issue 20: matrix functions for optimizers
from ._qr import lstsq, qr
from ._roots import inv_root, sqrtm_psd
from ._results import (
    EighResult,
    EigResult,
    LstsqResult,
    LUFactorResult,
    QRResult,
    SlogdetResult,
    SVDResult,
)
from ._solve import cho_solve, cholesky, det, inv, lu_factor, slogdet, solve
from ._svd import svd, svdvals
# solve_triangular, lu, lu_solve (trans=), pinv, matrix_rank, norm, cond
from ._lu import lu, lu_solve
from ._norms import cond, matrix_rank, norm, pinv
from ._triangular import solve_triangular
# end solve_triangular, lu, lu_solve, pinv, matrix_rank, norm, cond

__all__ = ["cholesky", "cho_solve", "lu_factor", "lu_solve", "solve", "inv", "det", "slogdet"]
__all__ += ["eigh", "eigvalsh"]
__all__ += ["eig", "eigvals"]
__all__ += ["qr", "lstsq"]
__all__ += ["svd", "svdvals"]
__all__ += ["solve_triangular", "lu", "pinv", "matrix_rank", "norm", "cond"]
__all__ += ["ldl", "expm", "matrix_power", "multi_dot"]  # issue 22 (d2)
__all__ += ["orthogonalize", "polar", "inv_root", "sqrtm_psd", "group"]  # issue 20
# The named tuples of the results (NumPy 2's names; lstsq's and lu_factor's are gpula's).
__all__ += ["EighResult", "EigResult", "SVDResult", "SlogdetResult", "QRResult"]
__all__ += ["LstsqResult", "LUFactorResult"]
