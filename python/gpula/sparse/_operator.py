"""``LinearOperator`` and ``aslinearoperator`` with scipy.sparse.linalg's signatures.

An operator is its shape, dtype and the callables it was given; the vectors are the caller's
(NumPy, CuPy or torch, on their device): gpula never converts what a matvec receives or
returns. Missing pieces are derived as scipy does: matmat from matvec column by column,
rmatvec from rmatmat, and ``.T`` from the adjoint (``A^T x = conj(A^H conj(x))``).
"""

from __future__ import annotations

import numbers
from typing import Any, Callable

import numpy as np

from .._interop import package_named
from ..errors import DTypeError, InvalidArgument, NotSupported
from ._arrays import _cast, _device, _dtype_name, _from_numpy, _package, _to_numpy
from ._csr_ops import is_sparse
from ._matrix import as_csr
from ._products import spmm

_OP = "sparse.linalg.LinearOperator"


def _conj(x: Any) -> Any:
    c = x.conj()
    return c.resolve_conj() if hasattr(c, "resolve_conj") else c


def _columns(f: Callable[[Any], Any], X: Any, rows: int) -> Any:
    """[f(X[:, 0]), f(X[:, 1]), ...] as a 2-D array of X's package and device."""
    p = _package(X)
    pkg = package_named(p)
    cols = [f(X[:, j]) for j in range(int(X.shape[1]))]
    dt = _dtype_name(cols[0]) if cols else _dtype_name(X)
    Y = pkg.empty((rows, int(X.shape[1])), dt, pkg.device_of(X))
    for j, c in enumerate(cols):
        Y[:, j] = c.reshape(rows)
    return Y


class LinearOperator:
    """A matrix-free operator ``A`` of shape ``(m, n)``: ``matvec(x)`` returns ``A @ x``.

    ``LinearOperator(shape, matvec, rmatvec=None, matmat=None, dtype=None, rmatmat=None)``
    as scipy.sparse.linalg.LinearOperator: ``rmatvec(x)`` returns ``A^H @ x``, ``matmat(X)`` /
    ``rmatmat(X)`` the products with a 2-D ``X`` (derived column by column when not given).
    Supports ``A @ x``, ``A @ B`` / ``A * B`` (composition), ``A + B``, ``c * A``, ``-A``,
    ``A.T``, ``A.H``, ``A.dot``, ``A.adjoint()``, ``A.transpose()``. Every iterative solver,
    lsqr, lsmr, eigsh and svds take one; on a GPU (CuPy b or CUDA torch b) the vectors the
    callables receive are b's arrays. ``dtype`` (None: the solvers use b's) is not inferred
    by a trial call, unlike scipy.

    Example:
        >>> import numpy as np, gpula.sparse.linalg as sla
        >>> op = sla.LinearOperator((3, 3), matvec=lambda x: 2.0 * x, rmatvec=lambda x: 2.0 * x,
        ...                         dtype=np.float64)
        >>> x, info = sla.cg(op, np.ones(3))
        >>> info, np.allclose(x, 0.5), info.iterations, (op.T @ np.ones(3)).tolist()
        (0, True, 1, [2.0, 2.0, 2.0])
    """

    ndim = 2
    __array_ufunc__ = None  # ndarray @ A and 2.0 * A come to our reflected operators

    def __init__(
        self,
        shape: tuple[int, int],
        matvec: Callable[[Any], Any] | None = None,
        rmatvec: Callable[[Any], Any] | None = None,
        matmat: Callable[[Any], Any] | None = None,
        dtype: Any = None,
        rmatmat: Callable[[Any], Any] | None = None,
    ):
        try:
            dims = tuple(int(s) for s in shape)
        except (TypeError, ValueError):
            raise InvalidArgument(f"[{_OP}] shape must be a pair of ints, got {shape!r}") from None
        if len(dims) != 2 or min(dims) < 0:
            raise InvalidArgument(f"[{_OP}] shape must be 2-D and non-negative, got {shape}")
        for name, f in (("matvec", matvec), ("rmatvec", rmatvec), ("matmat", matmat),
                        ("rmatmat", rmatmat)):
            if f is not None and not callable(f):
                raise DTypeError(f"[{_OP}] {name} must be callable, got {type(f).__name__}")
        if matvec is None and matmat is None and type(self)._matvec is LinearOperator._matvec:
            raise InvalidArgument(f"[{_OP}] needs matvec or matmat (or a subclass's _matvec)")
        self.shape = (dims[0], dims[1])
        self.dtype = np.dtype(dtype) if dtype is not None else None
        self._f = {"matvec": matvec, "rmatvec": rmatvec, "matmat": matmat, "rmatmat": rmatmat}

    # Subclasses may override these, as scipy's.
    def _matvec(self, x: Any) -> Any:
        if self._f["matvec"] is not None:
            return self._f["matvec"](x)
        return self._matmat(x.reshape(-1, 1)).reshape(-1)

    def _rmatvec(self, x: Any) -> Any:
        if self._f["rmatvec"] is not None:
            return self._f["rmatvec"](x)
        if self._f["rmatmat"] is not None:
            return self._f["rmatmat"](x.reshape(-1, 1)).reshape(-1)
        raise NotSupported(f"[{_OP}] rmatvec (A^H x) is not defined: pass rmatvec= or rmatmat=")

    def _matmat(self, X: Any) -> Any:
        if self._f["matmat"] is not None:
            return self._f["matmat"](X)
        return _columns(self._matvec, X, self.shape[0])

    def _rmatmat(self, X: Any) -> Any:
        if self._f["rmatmat"] is not None:
            return self._f["rmatmat"](X)
        return _columns(self._rmatvec, X, self.shape[1])

    def _check(self, x: Any, rows: int, what: str) -> None:
        if int(x.shape[0]) != rows:
            raise InvalidArgument(
                f"[{_OP}] {what}: the operand must have {rows} rows, got shape {tuple(x.shape)}"
            )

    def matvec(self, x: Any) -> Any:
        """A @ x for x of shape (n,) or (n, 1) (the result has x's rank)."""
        self._check(x, self.shape[1], "matvec")
        y = self._matvec(x.reshape(-1) if x.ndim == 2 else x)
        return y.reshape(-1, 1) if x.ndim == 2 else y

    def rmatvec(self, x: Any) -> Any:
        """A^H @ x for x of shape (m,) or (m, 1)."""
        self._check(x, self.shape[0], "rmatvec")
        y = self._rmatvec(x.reshape(-1) if x.ndim == 2 else x)
        return y.reshape(-1, 1) if x.ndim == 2 else y

    def matmat(self, X: Any) -> Any:
        self._check(X, self.shape[1], "matmat")
        return self._matmat(X)

    def rmatmat(self, X: Any) -> Any:
        self._check(X, self.shape[0], "rmatmat")
        return self._rmatmat(X)

    def dot(self, x: Any) -> Any:
        """A @ x for an operator (composition), a scalar (scaling), a 1-D or a 2-D array."""
        if isinstance(x, LinearOperator):
            return _Product(self, x)
        if isinstance(x, numbers.Number):
            return _Scaled(self, x)
        if getattr(x, "ndim", None) == 1 or (getattr(x, "ndim", None) == 2 and x.shape[1] == 1):
            return self.matvec(x)
        if getattr(x, "ndim", None) == 2:
            return self.matmat(x)
        raise DTypeError(f"[{_OP}] expected an array, a scalar or a LinearOperator, got {type(x).__name__}")

    __call__ = dot

    def __matmul__(self, x: Any) -> Any:
        if isinstance(x, numbers.Number):
            raise InvalidArgument(f"[{_OP}] scalar operands are not allowed with @, use *")
        return self.dot(x)

    def __rmatmul__(self, x: Any) -> Any:
        if getattr(x, "ndim", None) not in (1, 2):
            return NotImplemented
        if x.ndim == 1:  # x @ A = (A^T x)
            return self.T.matvec(x)
        return self.T.matmat(x.T).T  # X @ A = (A^T X^T)^T

    def __mul__(self, x: Any) -> Any:
        return self.dot(x)

    def __rmul__(self, x: Any) -> Any:
        if isinstance(x, numbers.Number):
            return _Scaled(self, x)
        return NotImplemented

    def __neg__(self) -> LinearOperator:
        return _Scaled(self, -1)

    def __add__(self, other: Any) -> Any:
        if not isinstance(other, LinearOperator):
            return NotImplemented
        if other.shape != self.shape:
            raise InvalidArgument(f"[{_OP}] shapes differ: {self.shape} and {other.shape}")
        return _Sum(self, other)

    def __sub__(self, other: Any) -> Any:
        if not isinstance(other, LinearOperator):
            return NotImplemented
        return self + (-other)

    def adjoint(self) -> LinearOperator:
        """A^H (matvec and rmatvec swapped)."""
        return _Adjoint(self)

    @property
    def H(self) -> LinearOperator:  # noqa: N802  (scipy's name)
        return self.adjoint()

    def transpose(self) -> LinearOperator:
        """A^T: x -> conj(A^H conj(x))."""
        return _Transpose(self)

    @property
    def T(self) -> LinearOperator:  # noqa: N802
        return self.transpose()

    def __repr__(self) -> str:
        dt = "unspecified dtype" if self.dtype is None else f"dtype={self.dtype}"
        return f"<{self.shape[0]}x{self.shape[1]} {type(self).__name__} with {dt}>"


def _dtype_of(*ops: LinearOperator) -> Any:
    dts = [o.dtype for o in ops if o.dtype is not None]
    return np.result_type(*dts) if dts else None


class _Adjoint(LinearOperator):
    def __init__(self, A: LinearOperator):
        super().__init__((A.shape[1], A.shape[0]), A._rmatvec, A._matvec, A._rmatmat, A.dtype, A._matmat)


class _Transpose(LinearOperator):
    def __init__(self, A: LinearOperator):
        super().__init__(
            (A.shape[1], A.shape[0]),
            lambda x: _conj(A._rmatvec(_conj(x))),
            lambda x: _conj(A._matvec(_conj(x))),
            lambda X: _conj(A._rmatmat(_conj(X))),
            A.dtype,
            lambda X: _conj(A._matmat(_conj(X))),
        )


class _Scaled(LinearOperator):
    def __init__(self, A: LinearOperator, c: Any):
        cc = np.conj(c)
        dt = A.dtype if A.dtype is None else np.result_type(A.dtype, c)
        super().__init__(A.shape, lambda x: c * A._matvec(x), lambda x: cc * A._rmatvec(x),
                         lambda X: c * A._matmat(X), dt, lambda X: cc * A._rmatmat(X))


class _Sum(LinearOperator):
    def __init__(self, A: LinearOperator, B: LinearOperator):
        super().__init__(A.shape, lambda x: A._matvec(x) + B._matvec(x),
                         lambda x: A._rmatvec(x) + B._rmatvec(x),
                         lambda X: A._matmat(X) + B._matmat(X), _dtype_of(A, B),
                         lambda X: A._rmatmat(X) + B._rmatmat(X))


class _Product(LinearOperator):
    def __init__(self, A: LinearOperator, B: LinearOperator):
        if A.shape[1] != B.shape[0]:
            raise InvalidArgument(f"[{_OP}] cannot multiply shapes {A.shape} and {B.shape}")
        super().__init__((A.shape[0], B.shape[1]), lambda x: A._matvec(B._matvec(x)),
                         lambda x: B._rmatvec(A._rmatvec(x)),
                         lambda X: A._matmat(B._matmat(X)), _dtype_of(A, B),
                         lambda X: B._rmatmat(A._rmatmat(X)))


def _dense_product(A: Any) -> Callable[[Any], Any]:
    """x -> A @ x in NumPy's promotion of the two dtypes (torch refuses mixed ones), in x's
    package: A converted once per (package, dtype). The CPU solvers' loops hand NumPy vectors
    to a torch A: A is read once through its adapter (a lazy negative/conjugate view resolved,
    autograd detached) rather than through torch's __array__, which refuses those."""
    p = _package(A)
    casts: dict[tuple[str, str], Any] = {(p, _dtype_name(A)): A}

    def product(x: Any) -> Any:
        px = _package(x)
        dt = np.result_type(np.dtype(_dtype_name(A)), np.dtype(_dtype_name(x))).name
        M = casts.get((px, dt))
        if M is None:
            src = casts.get((px, _dtype_name(A)))
            if src is None:  # A in x's package and on its device
                src = casts[(px, _dtype_name(A))] = _from_numpy(_to_numpy(A, p), px, _device(x, px))
            M = casts[(px, dt)] = src if _dtype_name(src) == dt else _cast(src, dt, px)
        return M @ (x if _dtype_name(x) == dt else _cast(x, dt, px))

    return product


def _dense_adjoint(A: Any) -> Any:
    return A.mH if hasattr(A, "mH") else A.conj().T


def aslinearoperator(A: Any) -> LinearOperator:
    """A as a LinearOperator: itself, a scipy LinearOperator (its callables), a sparse matrix
    (gl.sparse.csr_matrix, scipy / cupyx sparse, torch sparse: gpula's SpMV / SpMM, ``A^H x``
    included) or a dense 2-D NumPy / CuPy / torch array.

    Example:
        >>> import numpy as np, scipy.sparse as sp, gpula.sparse.linalg as sla
        >>> op = sla.aslinearoperator(sp.eye(3, format="csr") * 2.0)
        >>> op.shape, (op.H @ np.ones(3)).tolist()
        ((3, 3), [2.0, 2.0, 2.0])
    """
    if isinstance(A, LinearOperator):
        return A
    scipy_op = hasattr(A, "matvec") and hasattr(A, "shape") and not hasattr(A, "format")
    if is_sparse(A) and not scipy_op:
        M = as_csr(A, "sparse.linalg.aslinearoperator")
        mv = _on_matrix(M, M.__matmul__)
        return LinearOperator(
            M.shape, mv, _on_matrix(M, lambda x: M.matvec(x, "H")), mv, np.dtype(M.dtype),
            _on_matrix(M, lambda X: _spmm_h(M, X)),
        )
    if scipy_op and len(tuple(A.shape)) == 2:  # scipy's LinearOperator
        r = getattr(A, "rmatvec", None)
        return LinearOperator(tuple(A.shape), A.matvec, r, getattr(A, "matmat", None),
                              getattr(A, "dtype", None), getattr(A, "rmatmat", None))
    if getattr(A, "ndim", None) == 2 and hasattr(A, "__matmul__"):
        _package(A)  # a NumPy, CuPy or torch array (DTypeError otherwise)
        mv, rmv = _dense_product(A), _dense_product(_dense_adjoint(A))
        return LinearOperator((int(A.shape[0]), int(A.shape[1])), mv, rmv, mv,
                              np.dtype(_dtype_name(A)), rmv)
    raise DTypeError(
        "[sparse.linalg.aslinearoperator] expected a LinearOperator, a sparse matrix or a dense "
        f"2-D array, got {type(A).__name__}"
    )


def _on_matrix(M: Any, f: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """f for operands of any package: one of another package or device than the matrix M is
    copied to M's, and the result back to the operand's (a host scipy A with torch vectors)."""

    def apply(x: Any) -> Any:
        p = _package(x)
        d = _device(x, p)
        if p == M.package and d == M.device:
            return f(x)
        return _from_numpy(_to_numpy(f(_from_numpy(_to_numpy(x, p), M.package, M.device)), M.package), p, d)

    return apply


def _spmm_h(M: Any, X: Any) -> Any:
    return spmm(M, X, "H")
