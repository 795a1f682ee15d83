"""Krylov solvers (cg, gmres, bicgstab, minres) with scipy.sparse.linalg's signatures.

A is a sparse matrix (scipy / gpula csr_matrix / anything with ``tocsr``), a
:class:`LinearOperator` or a scipy LinearOperator (anything with ``shape`` and ``matvec``).
The loop runs in C++ (gpula::sparse, CPU backend); Python matvecs, preconditioner operators and
callbacks are called from inside it once per iteration.

CuPy arrays with a cupyx.scipy.sparse CSR A (float32 / float64, int32 or int64 indices) run on
their GPU, the whole loop resident on the device (cuSPARSE SpMV, cuBLAS, small kernels; the
host reads a status word every 8 iterations): cg with M None / "jacobi" / "ic0", and gmres,
bicgstab and minres with M None / "jacobi". A callback there costs a host sync per call. The
other GPU cases (complex dtypes, LinearOperator, "ilu0", an operator M, CUDA torch tensors)
raise NotSupported.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import _gpula
from .._interop import is_gpu_array
from ..errors import DTypeError, InvalidArgument, NotSupported

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


def _result_dtype(op: str, *dts: Any) -> np.dtype:
    dt = np.result_type(*[d for d in dts if d is not None])
    if dt.kind in "biu":
        dt = np.dtype(np.float64)
    if dt == np.float16:
        dt = np.dtype(np.float32)
    if dt not in _DTYPES:
        raise DTypeError(
            f"[{op}] A and b must be float32, float64, complex64 or complex128, got {dt}"
        )
    return dt


def _vector(v: Any, n: int, name: str, dt: np.dtype, op: str) -> np.ndarray:
    if is_gpu_array(v):
        raise NotSupported(
            f"[{op}] GPU arrays are not supported yet, got {name} of {type(v).__module__}"
        )
    a = np.asarray(v.numpy() if hasattr(v, "numpy") and not isinstance(v, np.ndarray) else v)
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


def _writer(f: Callable[[Any], Any], n: int) -> Callable[[np.ndarray, np.ndarray], None]:
    def apply(x: np.ndarray, y: np.ndarray) -> None:
        y[...] = np.asarray(f(x.copy())).reshape(n)

    return apply


def _csr_arrays(a: Any, op: str) -> tuple[Any, Any, Any, int] | None:
    try:
        import scipy.sparse as sps
    except ImportError:  # pragma: no cover
        sps = None
    if sps is not None and sps.issparse(a):
        c = a.tocsr()
    elif all(hasattr(a, k) for k in ("data", "indices", "indptr", "shape")):
        c = a
    else:
        return None
    if any(is_gpu_array(getattr(c, k)) for k in ("data", "indices", "indptr")):
        raise NotSupported(f"[{op}] GPU sparse matrices are not supported yet")
    rows, cols = (int(s) for s in c.shape)
    if rows != cols:
        raise InvalidArgument(f"[{op}] A must be square, got shape ({rows}, {cols})")
    data = np.asarray(c.data)
    indptr = np.asarray(c.indptr)
    itype = (
        np.int32
        if indptr.dtype == np.int32 and np.asarray(c.indices).dtype == np.int32
        else np.int64
    )
    return (
        data,
        np.ascontiguousarray(c.indices, dtype=itype),
        np.ascontiguousarray(indptr, dtype=itype),
        rows,
    )


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
    if is_gpu_array(b) or is_gpu_array(A) or is_gpu_array(getattr(A, "data", None)):
        return _solve_cupy(
            op, method, A, b, x0, rtol, atol, maxiter, M, callback, restart, sweeps
        )
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
        matvec = _writer(A.matvec, n)
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
        m_op = _writer(f, n)
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
        -1 if maxiter is None else int(maxiter),
        int(restart),
        m_name,
        m_op,
        cb,
    )
    if torch_out:
        import torch

        return torch.from_numpy(x), int(info)
    return x, int(info)


# The preconditioners each method takes on a GPU (other names are checked, and refused, in C++).
_GPU_M = {
    "cg": ("jacobi", "ic0"),
    "gmres": ("jacobi",),
    "bicgstab": ("jacobi",),
    "minres": ("jacobi",),
}


def _solve_cupy(op, method, A, b, x0, rtol, atol, maxiter, M, callback, restart, sweeps=-1):
    """CuPy arrays and a cupyx CSR matrix: the device-resident loops (real dtypes; cg with M
    None/jacobi/ic0, gmres/bicgstab/minres with M None/jacobi; ic0 needs int32 indices and
    canonical CSR, made here by sum_duplicates on a copy)."""
    if type(b).__module__.startswith("torch"):
        raise NotSupported(f"[{op}] CUDA torch tensors are not supported yet (CuPy arrays are)")
    import cupy as cp

    if not all(hasattr(A, k) for k in ("data", "indices", "indptr")):
        raise NotSupported(
            f"[{op}] on a GPU A must be a sparse CSR matrix (cupyx.scipy.sparse), got "
            f"{type(A).__name__}"
        )
    if getattr(A, "format", "csr") != "csr":  # a CSC matrix has indptr / indices too
        if not hasattr(A, "tocsr"):
            raise NotSupported(f"[{op}] on a GPU A must be CSR, got format {A.format!r}")
        A = A.tocsr()
    allowed = _GPU_M[method]
    known = ("jacobi", "ic0", "ilu0")
    if (M is not None and not isinstance(M, str)) or (M in known and M not in allowed):
        got = f"M={M!r}" if isinstance(M, str) else f"an operator M ({type(M).__name__})"
        names = " / ".join(repr(k) for k in allowed)
        raise NotSupported(f"[{op}] on a GPU {method} takes M = None / {names}, got {got}")
    if M == "ic0" and not getattr(A, "has_canonical_format", True):
        A = A.copy()  # csric02 needs sorted column indices; A itself is left as it is
        A.sum_duplicates()
    n, m = (int(v) for v in A.shape)
    if n != m:
        raise InvalidArgument(f"[{op}] A must be square, got shape ({n}, {m})")
    dt = _result_dtype(op, np.dtype(A.data.dtype), np.dtype(b.dtype))
    bv = cp.ascontiguousarray(cp.asarray(b).reshape(-1), dtype=dt)
    if bv.shape != (n,):
        raise InvalidArgument(f"[{op}] b must have shape ({n},), got {tuple(cp.asarray(b).shape)}")
    x = cp.zeros(n, dtype=dt) if x0 is None else cp.array(cp.asarray(x0).reshape(n), dtype=dt)
    itype = cp.int32 if A.indptr.dtype == cp.int32 and A.indices.dtype == cp.int32 else cp.int64
    data = cp.ascontiguousarray(A.data, dtype=dt)
    indices = cp.ascontiguousarray(A.indices, dtype=itype)
    indptr = cp.ascontiguousarray(A.indptr, dtype=itype)
    cb = None if callback is None else (lambda _xk: callback(x.copy()))  # a host sync per call
    info, _its, _res = _gpula.sparse_iterative(
        method,
        n,
        data,
        indices,
        indptr,
        None,
        _DTYPES[dt],
        bv,
        x,
        float(rtol),
        float(atol),
        -1 if maxiter is None else int(maxiter),
        int(restart),
        M,
        None,
        cb,
        triangular_sweeps=sweeps,
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
