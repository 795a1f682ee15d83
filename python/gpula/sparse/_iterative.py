"""Krylov solvers (cg, gmres, bicgstab, minres) with scipy.sparse.linalg's signatures.

A is a sparse matrix (scipy / gpula csr_matrix / anything with ``tocsr``), a
:class:`LinearOperator` or a scipy LinearOperator (anything with ``shape`` and ``matvec``).
The loop runs in C++ (gpula::sparse, CPU backend); Python matvecs, preconditioner operators and
callbacks are called from inside it once per iteration.

A sparse A is validated (C++ validate_csr, O(nnz)) at every call before the loop reads an
index: malformed CSR arrays raise gl.InvalidArgument naming the solver, the array and the
position. maxiter=0 runs no iteration: info is 0 only when x0 already meets the tolerance.

CuPy arrays and CUDA torch tensors run on their GPU (zero-copy, on the package's current
stream), the whole loop resident on the device (cuSPARSE SpMV, cuBLAS, small kernels; the host
reads a status word every 8 iterations), for a real (float32 / float64) sparse A: a cupyx or
torch sparse matrix, a gl.sparse.csr_matrix, or a host scipy matrix (copied to b's device):
cg with M None / "jacobi" / "ic0", and gmres, bicgstab and minres with M None / "jacobi". A
callback there costs a host sync per call. The other GPU cases (complex dtypes,
LinearOperator, "ilu0", an operator M) raise NotSupported.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _gpula
from .._interop import export, is_gpu_array, package_named
from ..errors import DTypeError, InvalidArgument, NotSupported
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
    csr_matrix,
    result_dtype,
)

_DTYPES = {
    np.dtype(np.float32): "float32",
    np.dtype(np.float64): "float64",
    np.dtype(np.complex64): "complex64",
    np.dtype(np.complex128): "complex128",
}


class LinearOperator:
    """A matrix-free square operator: ``matvec(x)`` returns ``A @ x`` for a 1-D ``x``.

    Example:
        >>> import numpy as np, gpula.sparse.linalg as sla
        >>> op = sla.LinearOperator((3, 3), matvec=lambda x: 2.0 * x, dtype=np.float64)
        >>> x, info = sla.cg(op, np.ones(3))
        >>> info, np.allclose(x, 0.5)
        (0, True)
    """

    def __init__(self, shape: tuple[int, int], matvec: Callable[[Any], Any], dtype: Any = None):
        if len(shape) != 2:
            raise InvalidArgument(f"[sparse.linalg.LinearOperator] shape must be 2-D, got {shape}")
        self.shape = (int(shape[0]), int(shape[1]))
        self._matvec = matvec
        self.dtype = np.dtype(dtype) if dtype is not None else None

    def matvec(self, x: Any) -> Any:
        return self._matvec(x)


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
) -> tuple[Any, int]:
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
    if is_gpu_array(b) or is_gpu_array(A) or is_gpu_array(getattr(A, "data", None)):
        return _solve_gpu(op, method, A, b, x0, rtol, atol, maxiter, M, callback, restart, sweeps)
    csr = _csr_arrays(A, op)
    b_dt = getattr(np.asarray(b.numpy() if torch_out else b), "dtype", None)
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
    info, _its, _res = _gpula.sparse_iterative(
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
    )
    if torch_out:
        return _from_numpy(x, "torch", "cpu"), int(info)
    return x, int(info)


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
    return A.data, A.indices, A.indptr, tuple(int(s) for s in A.shape)


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
    info, _its, _res = _gpula.sparse_iterative(
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
    )
    return x, int(info)


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
) -> tuple[Any, int]:
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
) -> tuple[Any, int]:
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
) -> tuple[Any, int]:
    """Restarted GMRES (right preconditioning) for a general square A; returns ``(x, info)``.

    restart is the Krylov dimension of a cycle (default 20); maxiter counts restart cycles, as
    scipy, and info > 0 is that count; the test is on the true residual at the end of each cycle.
    callback(xk) is called after every restart cycle. On a GPU (CuPy b, cupyx CSR A): real
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
    )


def minres(
    A: Any,
    b: Any,
    x0: Any = None,
    *,
    rtol: float = 1e-5,
    atol: float = 0.0,
    maxiter: int | None = None,
    M: Any = None,
    callback: Callable[[Any], object] | None = None,
) -> tuple[Any, int]:
    """MINRES for real symmetric / Hermitian (possibly indefinite) A; M must be positive
    definite. Stops on the true residual ``||b - A x|| <= max(rtol ||b||, atol)``; returns
    ``(x, info)`` as :func:`cg`. On a GPU (CuPy b, cupyx CSR A): real dtypes, M None / "jacobi".

    Example:
        >>> import numpy as np, scipy.sparse as sp, gpula.sparse.linalg as sla
        >>> d = np.where(np.arange(50) % 2 == 0, 3.0, -3.0)  # eigenvalues of both signs
        >>> A = sp.diags([np.ones(49), d, np.ones(49)], [-1, 0, 1], format="csr")
        >>> x, info = sla.minres(A, np.ones(50), rtol=1e-10)
        >>> info, bool(np.linalg.norm(A @ x - 1.0) < 1e-8)
        (0, True)
    """
    return _solve("minres", A, b, x0, rtol, atol, maxiter, M, callback)
