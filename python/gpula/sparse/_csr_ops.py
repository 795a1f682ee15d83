"""The scipy.sparse.csr_matrix methods of ``gl.sparse.csr_matrix`` (a mixin its class takes):
``.T`` / ``transpose()``, ``conj()``, ``dot``, scalar ``*`` and ``/``, ``+`` / ``-`` of two
matrices, ``diagonal()``, and ``np.asarray(A)`` refused with a TypeError.

Results stay in the matrix's package and on its device. ``+`` / ``-`` of two matrices of one
pattern add the values on that pattern (explicit zeros stay stored, so a difference keeps the
pattern for a later refactorization); of different patterns the entries are merged and summed
by the COO builder. Index work (the row of every entry) is done on the host.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from .._interop import export, package_named
from ..errors import InvalidArgument
from ._arrays import _cast, _contiguous_1d, _dtype_name, _from_numpy, _to_numpy, result_dtype


def _is_scalar(x: Any) -> bool:
    return isinstance(x, numbers.Number) or (isinstance(x, np.ndarray) and x.ndim == 0)


def _py(x: Any) -> Any:
    """A scalar as a NumPy scalar (its dtype kept for the promotion; any package takes it)."""
    return x[()] if isinstance(x, np.ndarray) else x


def _csr_like(x: Any) -> bool:
    """A duck-typed CSR matrix: an object (not an array) with data, indices, indptr and shape."""
    return not hasattr(x, "ndim") and all(
        hasattr(x, k) for k in ("data", "indices", "indptr", "shape")
    )


def is_sparse(x: Any) -> bool:
    """Whether x is a sparse matrix gl.sparse takes (csr_matrix, scipy / cupyx sparse, torch
    sparse CSR / COO, a duck-typed CSR object with data, indices, indptr and shape)."""
    if isinstance(x, CsrOps) or _csr_like(x):
        return True
    mod = type(x).__module__
    if mod.startswith(("scipy.sparse", "cupyx.scipy.sparse")):
        return True
    if mod.startswith("torch"):
        return package_named("torch").sparse_format(x) in ("csr", "coo")
    return False


def _conj(x: Any, package: str) -> Any:
    """A new array of x's conjugated values (torch's lazy conj view resolved)."""
    c = x.conj()
    if package == "torch":
        return c.resolve_conj().clone()
    return _contiguous_1d(c, package)


class CsrOps:
    """The scipy-style methods; the class using it provides the arrays, ``_m`` and ``_wrap``."""

    # For the mixin's type checker: what csr_matrix provides.
    data: Any
    indices: Any
    indptr: Any
    shape: tuple[int, int]
    package: str
    device: str
    _m: Any

    # NumPy defers to our reflected operators (ndarray + A, np.float64(2) * A) instead of
    # building an object array, and ufuncs on A raise TypeError.
    __array_ufunc__ = None

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise TypeError(
            "gl.sparse.csr_matrix is not converted to a dense array implicitly (np.asarray, "
            "np.array); call A.toarray() for a dense copy"
        )

    def _with_values(self, values: Any, op: str) -> Any:
        """A matrix with this pattern (shared) and new values of the matrix's package."""
        values = _contiguous_1d(values, self.package)
        m = self._m.with_values(export(values), op)
        return type(self)._wrap(m, values, self.indices, self.indptr, self.package, self.device)  # type: ignore[attr-defined]

    def _rows(self) -> np.ndarray:
        """The row of every stored entry (host int64)."""
        p = _to_numpy(self.indptr, self.package).astype(np.int64)
        return np.repeat(np.arange(self.shape[0], dtype=np.int64), np.diff(p))

    def _coo(self, row: np.ndarray, col: np.ndarray, data: Any, shape: tuple[int, int]) -> Any:
        r, c = (_from_numpy(a, self.package, self.device) for a in (row, col))
        cls: Any = type(self)
        return cls((data, (r, c)), shape=shape)

    def transpose(self, axes: Any = None, copy: bool = False) -> Any:
        """A^T as a new canonical csr_matrix (scipy's signature; axes must be None)."""
        if axes is not None:
            raise InvalidArgument(
                "[sparse.csr_matrix.transpose] axes must be None (sparse matrices only swap "
                f"their two axes), got {axes!r}"
            )
        col = _to_numpy(self.indices, self.package).astype(np.int64)
        return self._coo(col, self._rows(), self.data, (self.shape[1], self.shape[0]))

    @property
    def T(self) -> Any:  # noqa: N802  (scipy's name)
        return self.transpose()

    def conj(self, copy: bool = True) -> Any:
        """The elementwise complex conjugate (a copy of the values for real dtypes too)."""
        if _dtype_name(self.data).startswith("complex"):
            return self._with_values(_conj(self.data, self.package), "sparse.csr_matrix.conj")
        return self.copy() if copy else self  # type: ignore[attr-defined]

    conjugate = conj

    def getH(self) -> Any:  # noqa: N802  (scipy's name)
        """The conjugate transpose A^H."""
        return self.conj().transpose()

    @property
    def H(self) -> Any:  # noqa: N802
        return self.getH()

    def dot(self, other: Any) -> Any:
        """``self @ other`` (a vector, a dense 2-D array or a sparse matrix)."""
        return self @ other  # type: ignore[operator]

    def diagonal(self, k: int = 0) -> Any:
        """The k-th diagonal as a 1-D array of the matrix's package (scipy's semantics: empty
        where k is past the matrix)."""
        rows, cols = self.shape
        k = int(k)
        length = max(0, min(rows + min(k, 0), cols - max(k, 0)))
        out = np.zeros(length, dtype=_dtype_name(self.data))
        if length:
            r = self._rows()
            c = _to_numpy(self.indices, self.package).astype(np.int64)
            on = c - r == k
            start = r[on] if k >= 0 else c[on]
            np.add.at(out, start, _to_numpy(self.data, self.package)[on])
        return _from_numpy(out, self.package, self.device)

    # ---- scalar products ----

    def _scaled(self, s: Any, op: str) -> Any:
        dt = result_dtype(op, np.result_type(np.dtype(_dtype_name(self.data)), s))
        values = self.data if _dtype_name(self.data) == dt else _cast(self.data, dt, self.package)
        return self._with_values(values * (s.item() if hasattr(s, "item") else s), op)

    def __mul__(self, other: Any) -> Any:
        """A scalar times the matrix; any other operand is a matrix product (scipy's
        csr_matrix, where ``*`` is ``@``)."""
        if _is_scalar(other):
            return self._scaled(_py(other), "sparse.multiply")
        return self @ other  # type: ignore[operator]

    def __rmul__(self, other: Any) -> Any:
        if _is_scalar(other):
            return self.__mul__(other)
        return NotImplemented

    def __truediv__(self, other: Any) -> Any:
        if not _is_scalar(other):
            return NotImplemented
        if _dtype_name(self.data) == "float32":  # scipy divides a float32 matrix in float64
            return self.astype("float64")._scaled(1 / _py(other), "sparse.divide")  # type: ignore[attr-defined]
        return self._scaled(1 / _py(other), "sparse.divide")

    def __neg__(self) -> Any:
        return self._with_values(-self.data, "sparse.negative")

    def __pos__(self) -> Any:
        return self

    # ---- sums ----

    def _sum(self, other: Any, sign: int, op: str) -> Any:
        if _is_scalar(other):
            if other == 0:
                return self.copy()  # type: ignore[attr-defined]
            raise NotImplementedError(
                f"[{op}] adding a nonzero scalar to a sparse matrix is not supported (it would "
                "be dense); use A.toarray() + c"
            )
        if not is_sparse(other):
            if getattr(other, "ndim", None) != 2:
                return NotImplemented
            dense = self.toarray()  # type: ignore[attr-defined]
            return dense + other if sign > 0 else dense - other
        cls: Any = type(self)
        B: Any = other if isinstance(other, CsrOps) else cls(other, op=op)
        if B.shape != self.shape:
            raise InvalidArgument(f"[{op}] shapes differ: {self.shape} and {B.shape}")
        if B.package != self.package or B.device != self.device:
            raise InvalidArgument(
                f"[{op}] B must be a {self.package} matrix on {self.device} like A, got "
                f"{B.package} on {B.device}"
            )
        dt = result_dtype(op, _dtype_name(self.data), B.dtype, args=("A", "B"))
        a_vals = self.data if _dtype_name(self.data) == dt else _cast(self.data, dt, self.package)
        b_vals = B.data if B.dtype == dt else _cast(B.data, dt, self.package)
        if self._same_pattern(B):
            return self._with_values(a_vals + b_vals if sign > 0 else a_vals - b_vals, op)
        pkg = package_named(self.package)
        rows = np.concatenate([self._rows(), B._rows()])
        cols = np.concatenate(
            [_to_numpy(M.indices, self.package).astype(np.int64) for M in (self, B)]
        )
        vals = np.concatenate(
            [_to_numpy(a_vals, self.package), sign * _to_numpy(b_vals, self.package)]
        )
        return self._coo(rows, cols, pkg.from_numpy(vals, pkg.device_from_name(self.device)), self.shape)

    def _same_pattern(self, B: Any) -> bool:
        if B is self or (B.indptr is self.indptr and B.indices is self.indices):
            return True
        if B.nnz != self.data.shape[0]:
            return False
        return all(
            np.array_equal(_to_numpy(x, self.package), _to_numpy(y, B.package))
            for x, y in ((self.indptr, B.indptr), (self.indices, B.indices))
        )

    def __add__(self, other: Any) -> Any:
        return self._sum(other, 1, "sparse.add")

    def __radd__(self, other: Any) -> Any:
        return self._sum(other, 1, "sparse.add")

    def __sub__(self, other: Any) -> Any:
        return self._sum(other, -1, "sparse.subtract")

    def __rsub__(self, other: Any) -> Any:
        r = self._sum(other, -1, "sparse.subtract")
        return NotImplemented if r is NotImplemented else -r

