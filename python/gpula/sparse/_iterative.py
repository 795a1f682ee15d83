"""Krylov solvers (cg, gmres, bicgstab, minres) with scipy.sparse.linalg's signatures.

A is a sparse matrix (scipy / gpula csr_matrix / anything with ``tocsr``), a dense 2-D array, a
:class:`LinearOperator` or a scipy LinearOperator (anything with ``shape`` and ``matvec``).
The loop runs in C++ (gpula::sparse, CPU backend); Python matvecs, preconditioner operators and
callbacks are called from inside it once per iteration.

Every solver returns ``(x, info)``; info is a :class:`SolveInfo`, an int (scipy's meaning) with
``info.iterations`` and ``info.residual_norm``. Counting callback calls works as in scipy.

A sparse A is validated (C++ validate_csr, O(nnz)) at every call before the loop reads an
index: malformed CSR arrays raise gl.InvalidArgument naming the solver, the array and the
position. maxiter=0 runs no iteration: info is 0 only when x0 already meets the tolerance.

CuPy arrays and CUDA torch tensors run on their GPU (zero-copy, on the package's current
stream), the whole loop resident on the device (cuSPARSE SpMV, cuBLAS, small kernels; the host
reads a status word every 8 iterations), for a real (float32 / float64) sparse A: a cupyx or
torch sparse matrix, a gl.sparse.csr_matrix, or a host scipy matrix (copied to b's device):
cg with M None / "jacobi" / "ic0", and gmres, bicgstab and minres with M None / "jacobi". A
callback there costs a host sync per call. A LinearOperator or a dense A with b on a GPU runs
a Python loop (sparse/_loops.py) over b's arrays: its matvec receives and returns them (any
dtype; M None, "jacobi" for a sparse A, or an operator). The other GPU cases of a sparse A
(complex dtypes, "ilu0", an operator M) raise NotSupported.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _gpula
from .._interop import export, is_gpu_array, package_named
from ..errors import DTypeError, InvalidArgument, NotSupported
from . import _loops
from ._csr_ops import is_sparse
from ._matrix import (
    _cast,
    _index,
    _contiguous_1d,
    _current_stream,
    _device,
    _dtype_name,
    _from_numpy,
    _package,
    _to_numpy,
    as_csr,
    csr_matrix,
    result_dtype,
)
from ._operator import LinearOperator, aslinearoperator
from ._vectors import Space, norm

_DTYPES = {
    np.dtype(np.float32): "float32",
    np.dtype(np.float64): "float64",
    np.dtype(np.complex64): "complex64",
    np.dtype(np.complex128): "complex128",
}


class SolveInfo(int):
    """The ``info`` the solvers return: an int as scipy's (0 converged, > 0 the iteration limit,
    < 0 a breakdown) that also carries ``iterations`` (gmres: inner Arnoldi steps in all cycles)
    and ``residual_norm`` (``||b - A x||`` at return, from the recurrence).

    Example:
        >>> import numpy as np, scipy.sparse as sp, gpula.sparse.linalg as sla
        >>> A = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(10, 10), format="csr")
        >>> x, info = sla.cg(A, np.ones(10), rtol=1e-12)
        >>> info == 0, info.iterations, info.residual_norm < 1e-10
        (True, 5, True)
    """

    iterations: int
    residual_norm: float

    def __new__(cls, info: int, iterations: int, residual_norm: float) -> SolveInfo:
        self = super().__new__(cls, int(info))
        self.iterations = int(iterations)
        self.residual_norm = float(residual_norm)
        return self


def _result_dtype(op: str, a_dtype: Any, b_dtype: Any) -> np.dtype:
    """The dtype the loop runs in: A's and b's promoted (errors name the one that is bad)."""
    return np.dtype(result_dtype(op, a_dtype, b_dtype, args=("A", "b")))


def _check_options(op: str, rtol: Any, atol: Any, callback: Any) -> None:
    """rtol and atol real numbers (not bool), callback None or callable: gl.DTypeError naming
    the argument otherwise (before anything runs)."""
    for name, v in (("rtol", rtol), ("atol", atol)):
        real = isinstance(v, (int, float, np.integer, np.floating))
        if isinstance(v, (bool, np.bool_)) or not real:
            raise DTypeError(f"[{op}] {name} must be a real number, got {v!r}")
    if callback is not None and not callable(callback):
        raise DTypeError(
            f"[{op}] callback must be None or a callable taking xk, got {type(callback).__name__}"
        )


def _vector(v: Any, n: int, name: str, dt: np.dtype, op: str) -> np.ndarray:
    """A new contiguous NumPy copy of a host vector (NumPy, torch CPU, list) in dtype dt."""
    a = _to_numpy(v, "torch") if type(v).__module__.startswith("torch") else np.asarray(v)
    if a.shape not in ((n,), (n, 1)):
        raise InvalidArgument(f"[{op}] {name} must have shape ({n},), got {a.shape}")
    return np.array(a.reshape(n), dtype=dt, copy=True, order="C")


def _as_apply(obj: Any, n: int, op: str, name: str) -> Callable[[Any], Any] | None:
    """matvec of a LinearOperator / scipy LinearOperator / sparse or dense matrix / callable."""
    if hasattr(obj, "matvec") and hasattr(obj, "shape"):
        if tuple(obj.shape) != (n, n):
            raise InvalidArgument(
                f"[{op}] {name} must have shape ({n}, {n}), got {tuple(obj.shape)}"
            )
        return obj.matvec
    if hasattr(obj, "shape") and hasattr(obj, "__matmul__"):
        if tuple(obj.shape) != (n, n):
            raise InvalidArgument(
                f"[{op}] {name} must have shape ({n}, {n}), got {tuple(obj.shape)}"
            )
        return lambda v: obj @ v
    if callable(obj):
        return obj
    return None


def _writer(
    f: Callable[[Any], Any], n: int, op: str, what: str
) -> Callable[[np.ndarray, np.ndarray], None]:
    """The loop's y = f(x), checking what f (``what``: "A.matvec", "M") returns: a numeric
    (n,) or (n, 1) array, else gl.InvalidArgument / gl.DTypeError naming it."""

    def apply(x: np.ndarray, y: np.ndarray) -> None:
        r = f(x.copy())
        a = _to_numpy(r, "torch") if type(r).__module__.startswith("torch") else np.asarray(r)
        if a.dtype.kind not in "biufc":
            raise DTypeError(
                f"[{op}] {what} must return a numeric array of shape ({n},), got "
                f"{type(r).__name__} of dtype {a.dtype}"
            )
        if a.shape not in ((n,), (n, 1)):
            raise InvalidArgument(
                f"[{op}] {what} must return shape ({n},), got {type(r).__name__} of shape {a.shape}"
            )
        y[...] = a.reshape(n)

    return apply


def _csr_arrays(a: Any, op: str) -> tuple[Any, Any, Any, int] | None:
    try:
        import scipy.sparse as sps
    except ImportError:  # pragma: no cover
        sps = None
    if sps is not None and sps.issparse(a):
        c = a.tocsr()
    elif type(a).__module__.startswith("torch") and getattr(a, "layout", None) is not None and "sparse" in str(a.layout):
        c = csr_matrix(a, op=op)  # torch sparse on the CPU: its CSR, validated
    elif all(hasattr(a, k) for k in ("data", "indices", "indptr", "shape")):
        c = a
    else:
        return None
    rows, cols = (int(s) for s in c.shape)
    if rows != cols:
        raise InvalidArgument(f"[{op}] A must be square, got shape ({rows}, {cols})")
    data, indices, indptr = (np.asarray(getattr(c, k)) for k in ("data", "indices", "indptr"))
    indices, indptr = (_index(x, "numpy", k, op) for x, k in ((indices, "indices"), (indptr, "indptr")))
    if indices.dtype != indptr.dtype:  # widened, never narrowed
        indices, indptr = indices.astype(np.int64), indptr.astype(np.int64)
    return data, indices, indptr, rows


def _solve(
    method: str,
    A: Any,
    b: Any,
    x0: Any,
    rtol: float,
    atol: float,
    maxiter: Any,
    M: Any,
    callback: Any,
    restart: int = 20,
    triangular_sweeps: Any = None,
    shift: Any = 0.0,
    callback_type: str = "x",
) -> tuple[Any, SolveInfo]:
    op = f"sparse.linalg.{method}"
    torch_out = type(b).__module__.startswith("torch")
    if triangular_sweeps is not None and (
        isinstance(triangular_sweeps, bool)
        or not isinstance(triangular_sweeps, (int, np.integer))
        or triangular_sweeps < 0
    ):
        raise InvalidArgument(
            f"[{op}] triangular_sweeps must be None or an int >= 0, got {triangular_sweeps!r}"
        )
    sweeps = -1 if triangular_sweeps is None else int(triangular_sweeps)
    maxiter = _maxiter(maxiter, op)
    _check_options(op, rtol, atol, callback)
    if shift != 0:
        A = _shifted(A, shift, op)
    if getattr(A, "ndim", None) == 2 and not is_sparse(A):  # a dense matrix, as scipy takes
        A = aslinearoperator(A)
    gpu = is_gpu_array(b) or is_gpu_array(A) or is_gpu_array(getattr(A, "data", None))
    if (gpu and not is_sparse(A)) or (callback is not None and callback_type != "x"):
        return _solve_py(op, method, A, b, x0, rtol, atol, maxiter, M, callback, restart,
                         callback_type)
    if gpu:
        return _solve_gpu(op, method, A, b, x0, rtol, atol, maxiter, M, callback, restart, sweeps)
    csr = _csr_arrays(A, op)
    b_dt = getattr(_to_numpy(b, "torch") if torch_out else np.asarray(b), "dtype", None)
    if csr is not None:
        data, indices, indptr, n = csr
        dt = _result_dtype(op, data.dtype, b_dt)
        data = np.ascontiguousarray(data, dtype=dt)
        matvec = None
    else:
        if not (hasattr(A, "shape") and hasattr(A, "matvec")):
            raise InvalidArgument(
                f"[{op}] A must be a sparse matrix or a LinearOperator, got {type(A).__name__}"
            )
        n, m = (int(s) for s in A.shape)
        if n != m:
            raise InvalidArgument(f"[{op}] A must be square, got shape ({n}, {m})")
        dt = _result_dtype(op, getattr(A, "dtype", None), b_dt)
        data = indices = indptr = None
        matvec = _writer(A.matvec, n, op, "A.matvec")
    bv = _vector(b, n, "b", dt, op)
    x = np.zeros(n, dtype=dt) if x0 is None else _vector(x0, n, "x0", dt, op)
    m_name = None
    m_op = None
    if isinstance(M, str):
        m_name = M
    elif M is not None:
        f = _as_apply(M, n, op, "M")
        if f is None:
            raise InvalidArgument(
                f"[{op}] M must be None, 'jacobi', 'ic0', 'ilu0' or an operator, "
                f"got {type(M).__name__}"
            )
        m_op = _writer(f, n, op, "M")
    cb = None if callback is None else (lambda xk: callback(xk.copy()))
    info = SolveInfo(*_gpula.sparse_iterative(
        method,
        n,
        data,
        indices,
        indptr,
        matvec,
        _DTYPES[dt],
        bv,
        x,
        float(rtol),
        float(atol),
        maxiter,
        int(restart),
        m_name,
        m_op,
        cb,
    ))
    if torch_out:
        return _from_numpy(x, "torch", "cpu"), info
    return x, info


def _shifted(A: Any, shift: Any, op: str) -> Any:
    """A - shift I: a csr_matrix for a sparse A (one merge of the patterns), an operator else."""
    if isinstance(shift, (bool, np.bool_)) or not isinstance(shift, (int, float, np.integer, np.floating)):
        raise DTypeError(f"[{op}] shift must be a real number, got {shift!r}")
    if is_sparse(A):
        C = as_csr(A, op)
        n = C.shape[0]
        idx = _from_numpy(np.arange(n, dtype=np.int64), C.package, C.device)
        one = _from_numpy(np.full(n, -float(shift)), C.package, C.device)
        return C + csr_matrix((one, (idx, idx)), shape=C.shape)
    Aop = aslinearoperator(A)
    return LinearOperator(Aop.shape, lambda x: Aop.matvec(x) - shift * x, dtype=Aop.dtype)


def _jacobi(A: Any, space: Space, op: str) -> Callable[[Any], Any]:
    """z = D^-1 r for a sparse A's diagonal D, in the loop's space."""
    if not is_sparse(A):
        raise InvalidArgument(f"[{op}] M='jacobi' needs a sparse A (a LinearOperator has no diagonal)")
    d = _to_numpy(as_csr(A, op).diagonal(), as_csr(A, op).package)
    if not np.all(d != 0):
        raise InvalidArgument(f"[{op}] M='jacobi' needs a nonzero diagonal")
    inv = space.host(1.0 / d)
    return lambda r: inv * r


def _solve_py(op, method, A, b, x0, rtol, atol, maxiter, M, callback, restart, callback_type):
    """The Python loops (sparse/_loops.py) over b's arrays: a LinearOperator or dense A on a
    GPU, or gmres with callback_type 'pr_norm' / 'legacy'."""
    Aop = aslinearoperator(A)
    n, m = Aop.shape
    if n != m:
        raise InvalidArgument(f"[{op}] A must be square, got shape ({n}, {m})")
    where = b if hasattr(b, "shape") and not isinstance(b, np.ndarray) else getattr(A, "data", A)
    try:
        space = Space.of(where, "float64")
    except DTypeError:
        space = Space("numpy", "cpu", "float64")
    b_dt = _dtype_name(b) if hasattr(b, "dtype") else np.asarray(b).dtype
    space = Space(space.package, space.device, _result_dtype(op, Aop.dtype, b_dt).name)
    bv = space.vector(b, n, "b", op)
    x = space.zeros(n) if x0 is None else space.vector(x0, n, "x0", op)

    def apply(v: Any) -> Any:
        return space.result(Aop.matvec(v), n, "A.matvec", op)

    if M is None:
        mf = None
    elif isinstance(M, str):
        if M != "jacobi":
            raise NotSupported(f"[{op}] M={M!r} needs gpula's C++ loop (a sparse A on the CPU); "
                               "here M takes None, 'jacobi' or an operator")
        mf = _jacobi(A, space, op)
    else:
        f = _as_apply(M, n, op, "M")
        if f is None:
            raise InvalidArgument(f"[{op}] M must be None, 'jacobi' or an operator, got {type(M).__name__}")
        mf = lambda v: space.result(f(v), n, "M", op)  # noqa: E731
    if norm(bv) == 0:  # x = 0 solves it (as the C++ loops)
        return space.zeros(n), SolveInfo(0, 0, 0.0)
    its = 10 * n if maxiter is None else maxiter
    if maxiter is not None and maxiter < 0:
        raise InvalidArgument(f"[{op}] maxiter must be >= 0, got {maxiter}")
    tol = max(float(rtol) * norm(bv), float(atol))
    cb = None if callback is None else (lambda v: callback(v * 1 if callback_type == "x" else v))
    if method == "gmres":
        r = _loops.gmres(apply, bv, x, tol, its, mf, cb, restart, callback_type, space)
    elif method == "minres":
        r = _loops.minres(apply, bv, x, tol, its, mf, cb, space.eps)
    else:
        r = getattr(_loops, method)(apply, bv, x, tol, its, mf, cb)
    return x, SolveInfo(*r)


# The preconditioners each method takes on a GPU (other names are checked, and refused, in C++).
_GPU_M = {
    "cg": ("jacobi", "ic0"),
    "gmres": ("jacobi",),
    "bicgstab": ("jacobi",),
    "minres": ("jacobi",),
}


def _maxiter(maxiter: Any, op: str) -> int | None:
    if maxiter is None:
        return None
    if isinstance(maxiter, bool) or not isinstance(maxiter, (int, np.integer)):
        raise InvalidArgument(f"[{op}] maxiter must be None or an int >= 0, got {maxiter!r}")
    return int(maxiter)  # < 0 is refused by the C++ front


def _gpu_csr(A: Any, op: str, M: Any) -> tuple[Any, Any, Any, tuple[int, int]]:
    """(data, indices, indptr, shape) of a sparse A for the GPU loops, in A's own package:
    csr_matrix, cupyx.scipy.sparse (any format), torch sparse CSR/COO, scipy.sparse, or a
    duck-typed CSR (data, indices, indptr, shape). M="ic0" needs canonical CSR: cupyx input
    that is not is canonicalized on a copy (A itself is left as it is)."""
    if isinstance(A, csr_matrix):
        return A.data, A.indices, A.indptr, A.shape
    mod = type(A).__module__
    if mod.startswith("torch") and getattr(A, "layout", None) is not None and "sparse" in str(A.layout):
        c = csr_matrix(A, op=op)
        return c.data, c.indices, c.indptr, c.shape
    if not all(hasattr(A, k) for k in ("data", "indices", "indptr", "shape")):
        raise NotSupported(
            f"[{op}] on a GPU A must be a sparse matrix (cupyx.scipy.sparse, torch sparse, "
            f"gl.sparse.csr_matrix), got {type(A).__name__}"
        )
    if getattr(A, "format", "csr") != "csr":  # a CSC matrix has indptr / indices too
        if not hasattr(A, "tocsr"):
            raise NotSupported(f"[{op}] on a GPU A must be CSR, got format {A.format!r}")
        A = A.tocsr()
    if M == "ic0" and not getattr(A, "has_canonical_format", True):
        A = A.copy()  # csric02 needs sorted column indices
        A.sum_duplicates()
    return A.data, A.indices, A.indptr, (int(A.shape[0]), int(A.shape[1]))


def _on(x: Any, package: str, device: str) -> Any:
    """x in `package` on `device`: itself when it is there, else a copy (host scipy arrays, or
    the other GPU package's)."""
    src = _package(x)
    if src == package and _device(x, src) == device:
        return x
    return _from_numpy(_to_numpy(x, src), package, device)


def _gpu_vector(v: Any, n: int, name: str, dt: str, package: str, device: str, op: str) -> Any:
    v = _on(v, package, device)
    if tuple(v.shape) not in ((n,), (n, 1)):
        raise InvalidArgument(f"[{op}] {name} must have shape ({n},), got {tuple(v.shape)}")
    v = v.reshape(n)
    return _contiguous_1d(v if _dtype_name(v) == dt else _cast(v, dt, package), package)


def _solve_gpu(op, method, A, b, x0, rtol, atol, maxiter, M, callback, restart, sweeps=-1):
    """CuPy arrays or CUDA torch tensors: the device-resident loops on b's device and its
    package's current stream, zero-copy (real dtypes; cg with M None/jacobi/ic0,
    gmres/bicgstab/minres with M None/jacobi; ic0 needs int32 indices and canonical CSR)."""
    allowed = _GPU_M[method]
    known = ("jacobi", "ic0", "ilu0")
    if (M is not None and not isinstance(M, str)) or (M in known and M not in allowed):
        got = f"M={M!r}" if isinstance(M, str) else f"an operator M ({type(M).__name__})"
        names = " / ".join(repr(k) for k in allowed)
        raise NotSupported(f"[{op}] on a GPU {method} takes M = None / {names}, got {got}")
    data, indices, indptr, (n, m) = _gpu_csr(A, op, M)
    if n != m:
        raise InvalidArgument(f"[{op}] A must be square, got shape ({n}, {m})")
    gpu = b if is_gpu_array(b) else data  # where the loop runs: b's device, else A's
    package = _package(gpu)
    device = _device(gpu, package)
    dt = _result_dtype(op, _dtype_name(data), _dtype_name(b)).name
    bv = _gpu_vector(b, n, "b", dt, package, device, op)
    if x0 is None:
        x = _cast(_on(np.zeros(n, dt), package, device), dt, package)
    else:  # the loop writes x: never the caller's x0
        x = package_named(package).copy(_gpu_vector(x0, n, "x0", dt, package, device, op))
    data, indices, indptr = (_on(a, package, device) for a in (data, indices, indptr))
    itype = "int32" if _dtype_name(indptr) == _dtype_name(indices) == "int32" else "int64"
    data = _contiguous_1d(data if _dtype_name(data) == dt else _cast(data, dt, package), package)
    indices, indptr = (
        _contiguous_1d(a if _dtype_name(a) == itype else _cast(a, itype, package), package)
        for a in (indices, indptr)
    )
    cb = None if callback is None else (lambda _xk: callback(package_named(package).copy(x)))  # a host sync
    info = SolveInfo(*_gpula.sparse_iterative(
        method,
        n,
        export(data),
        export(indices),
        export(indptr),
        None,
        dt,
        export(bv),
        export(x),
        float(rtol),
        float(atol),
        maxiter,
        int(restart),
        M,
        None,
        cb,
        triangular_sweeps=sweeps,
        stream=_current_stream(x),
    ))
    return x, info


def cg(
    A: Any,
    b: Any,
    x0: Any = None,
    *,
    rtol: float = 1e-5,
    atol: float = 0.0,
    maxiter: int | None = None,
    M: Any = None,
    callback: Callable[[Any], object] | None = None,
    triangular_sweeps: int | None = None,
) -> tuple[Any, SolveInfo]:
    """Conjugate gradients for Hermitian positive definite A; returns ``(x, info)``.

    info 0: converged (``||b - A x|| <= max(rtol ||b||, atol)``), > 0: maxiter reached, < 0:
    breakdown. M: None, "jacobi", "ic0", "ilu0" or an operator applying M^-1. callback(xk) is
    called after every iteration. On a GPU (CuPy b, cupyx CSR A): real dtypes, M None /
    "jacobi" / "ic0" (int32 indices).

    triangular_sweeps (M="ic0" on a GPU): each of the two triangular solves with the IC(0)
    factor is that many Jacobi sweeps (an approximate but fixed symmetric positive definite
    preconditioner; default None: 2), or 0 for the exact level-scheduled solves (cuSPARSE
    SpSV, slow on matrices with many dependency levels such as PDE grids). The CPU always
    solves exactly.

    Example:
        >>> import numpy as np, scipy.sparse as sp, gpula.sparse.linalg as sla
        >>> A = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(50, 50), format="csr")
        >>> x, info = sla.cg(A, np.ones(50), rtol=1e-10, M="ic0")
        >>> info, bool(np.linalg.norm(A @ x - 1.0) < 1e-8)
        (0, True)
    """
    return _solve(
        "cg", A, b, x0, rtol, atol, maxiter, M, callback, triangular_sweeps=triangular_sweeps
    )


def bicgstab(
    A: Any,
    b: Any,
    x0: Any = None,
    *,
    rtol: float = 1e-5,
    atol: float = 0.0,
    maxiter: int | None = None,
    M: Any = None,
    callback: Callable[[Any], object] | None = None,
) -> tuple[Any, SolveInfo]:
    """BiCGSTAB for a general square A; returns ``(x, info)`` (info and M as :func:`cg`; -10 and
    -11 are breakdowns of the BiCG and of the stabilizing step). callback(xk) is called after
    every iteration. On a GPU (CuPy b, cupyx CSR A): real dtypes, M None / "jacobi".

    Example:
        >>> import numpy as np, scipy.sparse as sp, gpula.sparse.linalg as sla
        >>> A = sp.diags([-1.2, 2.0, -0.8], [-1, 0, 1], shape=(50, 50), format="csr")
        >>> x, info = sla.bicgstab(A, np.ones(50), rtol=1e-10, M="jacobi")
        >>> info, bool(np.linalg.norm(A @ x - 1.0) < 1e-8)
        (0, True)
    """
    return _solve("bicgstab", A, b, x0, rtol, atol, maxiter, M, callback)


def gmres(
    A: Any,
    b: Any,
    x0: Any = None,
    *,
    rtol: float = 1e-5,
    atol: float = 0.0,
    restart: int | None = None,
    maxiter: int | None = None,
    M: Any = None,
    callback: Callable[[Any], object] | None = None,
    callback_type: str | None = None,
) -> tuple[Any, SolveInfo]:
    """Restarted GMRES (right preconditioning) for a general square A; returns ``(x, info)``.

    restart is the Krylov dimension of a cycle (default 20); maxiter counts restart cycles, as
    scipy, and info > 0 is that count; the test is on the true residual at the end of each cycle.
    callback_type as scipy: 'x' calls callback(xk) after every restart cycle; 'pr_norm' calls
    callback(relative preconditioned residual norm) after every inner step, and 'legacy' too,
    with maxiter then counting inner steps. None (gpula's default) is 'x' (scipy's None is
    'legacy', with a DeprecationWarning). 'pr_norm' and 'legacy' run scipy's algorithm (left
    preconditioning) in Python over b's arrays. On a GPU (CuPy b, cupyx CSR A): real
    dtypes, M None / "jacobi"; classical Gram-Schmidt done twice there.

    Example:
        >>> import numpy as np, scipy.sparse as sp, gpula.sparse.linalg as sla
        >>> A = sp.diags([-1.2, 2.0, -0.8], [-1, 0, 1], shape=(50, 50), format="csr")
        >>> x, info = sla.gmres(A, np.ones(50), rtol=1e-10, restart=10)
        >>> info, bool(np.linalg.norm(A @ x - 1.0) < 1e-8)
        (0, True)
    """
    return _solve(
        "gmres",
        A,
        b,
        x0,
        rtol,
        atol,
        maxiter,
        M,
        callback,
        restart=20 if restart is None else restart,
        callback_type=_callback_type(callback_type),
    )


def _callback_type(t: Any) -> str:
    if t is None:
        return "x"
    if t not in ("x", "pr_norm", "legacy"):
        raise InvalidArgument(
            f"[sparse.linalg.gmres] callback_type must be None, 'x', 'pr_norm' or 'legacy', got {t!r}"
        )
    return str(t)


def minres(
    A: Any,
    b: Any,
    x0: Any = None,
    *,
    rtol: float = 1e-5,
    shift: float = 0.0,
    atol: float = 0.0,
    maxiter: int | None = None,
    M: Any = None,
    callback: Callable[[Any], object] | None = None,
    show: bool = False,
    check: bool = False,
) -> tuple[Any, SolveInfo]:
    """MINRES for real symmetric / Hermitian (possibly indefinite) A; M must be positive
    definite. Solves ``(A - shift I) x = b`` (shift: a real number; a sparse A is shifted on
    its diagonal, an operator A wrapped). Stops on the true residual
    ``||b - A x|| <= max(rtol ||b||, atol)``; returns ``(x, info)`` as :func:`cg`. ``show`` and
    ``check`` are scipy's and accepted; gpula prints nothing and checks no symmetry. On a GPU (CuPy b, cupyx CSR A): real dtypes, M None / "jacobi".

    Example:
        >>> import numpy as np, scipy.sparse as sp, gpula.sparse.linalg as sla
        >>> d = np.where(np.arange(50) % 2 == 0, 3.0, -3.0)  # eigenvalues of both signs
        >>> A = sp.diags([np.ones(49), d, np.ones(49)], [-1, 0, 1], format="csr")
        >>> x, info = sla.minres(A, np.ones(50), rtol=1e-10)
        >>> info, bool(np.linalg.norm(A @ x - 1.0) < 1e-8)
        (0, True)
    """
    return _solve("minres", A, b, x0, rtol, atol, maxiter, M, callback, shift=shift)
