"""``csr_matrix``: a validated, canonical CSR matrix over the caller's arrays (numpy, cupy, torch).

Policy:
- Built from what ``scipy.sparse.csr_matrix`` takes: a scipy.sparse matrix or array of any
  format (converted to CSR by scipy, duplicates summed), ``(data, indices, indptr)`` with
  ``shape=``, ``(data, (row, col))``, ``(M, N)`` (empty), a dense 2-D array; and also a
  cupyx.scipy.sparse matrix, a torch sparse CSR / COO tensor (on its device) or another
  ``csr_matrix``.
- Validated once, when built, by the C++ validator (``gpula::sparse::validate_csr``): index
  dtypes, lengths, ``indptr`` from 0 to nnz and non-decreasing, every column index in range.
  Malformed input raises ``gl.InvalidArgument`` (a ValueError) naming the array and the
  position; wrong types ``gl.DTypeError`` (a TypeError).
- Snapshot of the pattern: ``indptr`` and ``indices`` are copied when the matrix is built (O(nnz),
  as the validation itself), so nothing done to the source's index arrays afterwards (in-place
  writes, or scipy reallocating them when an entry is inserted) reaches gpula: every product
  uses the pattern that was validated. The values are shared without a copy when the input is
  canonical and of a supported dtype, so in-place updates of the source's values are seen by
  later products (refactorization); a source that replaces its values array keeps the old one
  here. The pattern arrays are gpula's (read-only NumPy arrays; do not write to torch or CuPy
  ones).
- Unsorted columns or duplicate entries are canonicalized (sorted within rows, duplicates
  summed) into new arrays, values included; the input is never modified.
- Value dtypes: float32, float64, complex64, complex128; integer and bool values are promoted to
  float64 and float16 to float32 (NumPy's promotion), and so are products with such operands.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from .. import _gpula
from .._interop import FRAMEWORK, export, is_gpu_array, package_named, package_of
from ..errors import DTypeError, Error, InvalidArgument, OutOfMemory
from ._arrays import (  # noqa: F401  (re-exported: the sparse modules import them from here)
    _INDEX_DTYPES,
    _VALUE_DTYPES,
    _cast,
    _contiguous_1d,
    _device,
    _dtype_name,
    _dtype_str,
    _from_numpy,
    _package,
    _to_numpy,
    renamed,
    result_dtype,
)
from ._csr_ops import CsrOps, _csr_like, is_sparse  # noqa: F401  (is_sparse re-exported)


def _values(data: Any, package: str, op: str) -> Any:
    """1-D contiguous values of a supported dtype (promoted if need be; shared if already)."""
    dt = _dtype_name(data)
    want = result_dtype(op, dt) if dt not in _VALUE_DTYPES else dt
    return _contiguous_1d(data if want == dt else _cast(data, want, package), package)


def _index(x: Any, package: str, name: str, op: str) -> Any:
    dt = _dtype_name(x)
    if dt not in _INDEX_DTYPES:
        if np.dtype(dt).kind not in "iu":
            raise DTypeError(f"[{op}] {name} must be int32 or int64, got {dt}")
        x = _cast(x, "int64", package)
    return _contiguous_1d(x, package)


class csr_matrix(CsrOps):  # noqa: N801  (scipy's spelling)
    """A validated, canonical CSR matrix over arrays of NumPy, CuPy or PyTorch.

    ``csr_matrix(arg, shape=None, dtype=None, copy=False)`` takes what scipy.sparse.csr_matrix
    takes (a scipy.sparse matrix or array of any format, ``(data, indices, indptr)`` with
    ``shape=``, ``(data, (row, col))``, ``(M, N)``, a dense 2-D array) and also a
    cupyx.scipy.sparse matrix, a torch sparse CSR / COO tensor or another csr_matrix. The result
    lives in the input's package and on its device. Attributes: ``shape``, ``dtype``, ``nnz``,
    ``data``, ``indices``, ``indptr`` (1-D contiguous arrays of ``package`` on ``device``),
    ``index_dtype``. It is validated once, here; its pattern is its own copy, and its values are
    the input's (no copy) where the input is canonical, so in-place updates of them are seen
    by later products. See the module docstring for the whole policy.

    Example:
        >>> import numpy as np, scipy.sparse as sp, gpula as gl
        >>> S = sp.csr_matrix(np.array([[2.0, 0.0], [1.0, 3.0]]))
        >>> A = gl.sparse.csr_matrix(S)
        >>> (A @ np.ones(2)).tolist()
        [2.0, 4.0]
        >>> S.data[:] *= 10  # values are shared: later products see the update
        >>> (A @ np.ones(2)).tolist()
        [20.0, 40.0]
        >>> gl.sparse.csr_matrix(sp.coo_matrix(S)).nnz  # any scipy format
        3
    """

    format = "csr"
    ndim = 2
    canonicalized: bool
    has_canonical_format = True

    def __init__(
        self,
        arg1: Any,
        shape: tuple[int, int] | None = None,
        dtype: Any = None,
        copy: bool = False,
        *,
        op: str = "sparse.csr_matrix",
    ):
        src = arg1 if isinstance(arg1, csr_matrix) else _build(arg1, shape, op)
        if shape is not None and tuple(int(s) for s in shape) != src.shape:
            raise InvalidArgument(f"[{op}] shape {tuple(shape)} differs from the input's {src.shape}")
        if dtype is not None:
            src = src.astype(result_dtype(op, dtype), copy=copy)
        elif copy:
            src = src.copy()
        for k in ("_m", "data", "indices", "indptr", "shape", "package", "device", "canonicalized"):
            setattr(self, k, getattr(src, k))

    @classmethod
    def _wrap(
        cls, m: Any, data: Any, indices: Any, indptr: Any, package: str, device: str, canonicalized: bool = False
    ) -> csr_matrix:
        """A csr_matrix over a C++ CsrMatrix `m` and the arrays that show it in `package`."""
        self = cls.__new__(cls)
        if package == "numpy":  # the pattern is gpula's own: read-only to the caller
            indices.flags.writeable = False
            indptr.flags.writeable = False
        self._m = m
        self.data, self.indices, self.indptr = data, indices, indptr
        self.shape = (int(m.shape[0]), int(m.shape[1]))
        self.package = package
        self.device = device
        self.canonicalized = canonicalized
        return self

    def _plan(self, kind: str, op: int) -> Any:
        """The SpMV / SpMM plan for op, made on first use and kept (cuSPARSE descriptors,
        buffer and preprocessing reused by later products). Kept per thread (a GPU plan is not
        shared between threads)."""
        key = (kind, op, threading.get_ident())
        plans = self.__dict__.setdefault("_plans", {})
        plan = plans.get(key)
        if plan is None:
            cls = _gpula.SparseSpMV if kind == "spmv" else _gpula.SparseSpMM
            plan = plans[key] = cls(self._m, op)
        return plan

    @property
    def nnz(self) -> int:
        return int(self.data.shape[0])

    @property
    def dtype(self) -> str:
        """The value dtype's name: "float32", "float64", "complex64" or "complex128"."""
        return _dtype_name(self.data)

    @property
    def index_dtype(self) -> str:
        return _dtype_name(self.indptr)

    def astype(self, dtype: Any, copy: bool = True) -> csr_matrix:
        """This matrix with values of `dtype` (the pattern is shared; values are new, or this
        matrix itself when the dtype is already `dtype` and copy is False)."""
        dt = result_dtype("sparse.csr_matrix.astype", dtype)
        if dt == self.dtype and not copy:
            return self
        values = _contiguous_1d(_cast(self.data, dt, self.package), self.package)
        m = self._m.with_values(export(values), "sparse.csr_matrix.astype")
        return csr_matrix._wrap(m, values, self.indices, self.indptr, self.package, self.device)

    def copy(self) -> csr_matrix:
        """A matrix with its own copy of the values (the pattern is immutable and shared)."""
        return self.astype(self.dtype, copy=True)

    def __repr__(self) -> str:
        return (
            f"gl.sparse.csr_matrix(shape={self.shape}, nnz={self.nnz}, dtype={self.dtype}, "
            f"index_dtype={self.index_dtype}, package={self.package}, device={self.device})"
        )

    def __matmul__(self, x: Any) -> Any:
        """``A @ x``: for a 1-D array ``x`` of A's package and device the SpMV (a new 1-D
        array); for a 2-D array the SpMM (a new 2-D array, ``gl.sparse.spmm``); for a sparse
        matrix (csr_matrix, scipy/cupyx sparse, torch sparse) the SpGEMM (a new csr_matrix,
        ``gl.sparse.spgemm``). Mixed dtypes are promoted as NumPy does (int -> float64,
        float32 with float64 -> float64). gpula's OpenMP kernels on the CPU, cuSPARSE on a GPU."""
        y = _fast_spmv(self, x, 0)  # a repeated product with an x of one layout
        if y is not None:
            return y
        if is_sparse(x):
            return spgemm_csr(self, as_csr(x, "sparse.spgemm"), "sparse.spgemm")
        if getattr(x, "ndim", None) is None:
            raise DTypeError(
                "[sparse.matmul] the right operand (a 1-D x, a 2-D B or a sparse matrix) must be "
                f"a numpy, cupy or torch array or a sparse matrix, got {type(x).__name__}"
            )
        if x.ndim == 2:
            return spmm_csr(self, x, "N", "sparse.spmm")
        if x.ndim != 1:  # as numpy.matmul: no scalars, no stacks of matrices
            raise InvalidArgument(
                f"[sparse.matmul] the right operand must be a 1-D x or a 2-D B, got shape "
                f"{tuple(x.shape)}"
            )
        return _spmv(self, x, 0, "sparse.matmul")

    def matvec(self, x: Any, op: str = "N") -> Any:
        """op(A) x with op "N" (A), "T" (A^T) or "H" (A^H)."""
        if op not in ("N", "T", "H"):
            raise InvalidArgument(f"[sparse.matvec] op must be 'N', 'T' or 'H', got {op!r}")
        return _spmv(self, x, "NTH".index(op), "sparse.matvec")

    # Conversions back to the caller's packages.
    def to_scipy(self) -> Any:
        import scipy.sparse as sp

        return sp.csr_matrix(
            (_to_numpy(self.data, self.package), _to_numpy(self.indices, self.package).copy(),
             _to_numpy(self.indptr, self.package).copy()),
            shape=self.shape,
        )

    def to_cupy(self) -> Any:
        cupy = package_named("cupy")
        if self.package != "cupy":
            dev = self.device if self.device.startswith("cuda") else "cuda:0"
            d, i, p = (_from_numpy(_to_numpy(a, self.package), "cupy", dev) for a in (self.data, self.indices, self.indptr))
        else:
            d, i, p = self.data, self.indices.copy(), self.indptr.copy()
        return cupy.sparse_csr((d, i, p), self.shape)

    def to_torch(self) -> Any:
        torch = package_named("torch")
        if self.package == "torch":
            d, i, p = self.data, self.indices.clone(), self.indptr.clone()
        else:  # np.array: a writable copy (torch warns about the read-only pattern arrays)
            d, i, p = (
                _from_numpy(np.array(_to_numpy(a, self.package)), "torch", self.device)
                for a in (self.data, self.indices, self.indptr)
            )
        return torch.sparse_csr((d, i, p), self.shape)

    def to_native(self) -> Any:
        """scipy.sparse for numpy, cupyx.scipy.sparse for cupy, a torch sparse CSR tensor for torch."""
        return {"numpy": self.to_scipy, "cupy": self.to_cupy, "torch": self.to_torch}[self.package]()

    def to_dense(self) -> Any:
        """A dense 2-D array of the package and device of the matrix."""
        rows, cols = self.shape
        p = _to_numpy(self.indptr, self.package).astype(np.int64)
        ind = _to_numpy(self.indices, self.package).astype(np.int64)
        out = np.zeros((rows, cols), dtype=self.dtype)
        row = np.repeat(np.arange(rows), np.diff(p))
        out[row, ind] = _to_numpy(self.data, self.package)
        return _from_numpy(out, self.package, self.device)

    toarray = to_dense


def _shape(shape: Any, op: str) -> tuple[int, int]:
    try:
        rows, cols = (int(s) for s in shape)
    except (TypeError, ValueError):
        raise InvalidArgument(f"[{op}] shape must be a pair of ints, got {shape!r}") from None
    if rows < 0 or cols < 0:
        raise InvalidArgument(f"[{op}] shape must be non-negative, got {(rows, cols)}")
    return rows, cols


def _arrays_of(package: str, op: str, **arrays: Any) -> str:
    """The one device of arrays of one package (checked); returns the device."""
    device = None
    for name, a in arrays.items():
        try:
            p = _package(a)
        except DTypeError as e:
            raise DTypeError(f"[{op}] {name}: {e}") from None
        if p != package:
            raise DTypeError(f"[{op}] {name} must be a {package} array like data, got {type(a).__name__}")
        d = _device(a, package)
        if device is not None and d != device:
            raise InvalidArgument(f"[{op}] {name} must be on data's device {device}, got {d}")
        device = d
    return device or "cpu"


def _triplet(op: str, data: Any, **index_arrays: Any) -> tuple[str, str, Any]:
    """(package, device, values) of a (data, index arrays) triplet of one package and device,
    every array 1-D; the values with a supported dtype. Shared by the CSR and COO builders."""
    try:
        package = _package(data)
    except DTypeError as e:
        raise DTypeError(f"[{op}] data: {e}") from None
    device = _arrays_of(package, op, data=data, **index_arrays)
    for name, a in (("data", data), *index_arrays.items()):
        if a.ndim != 1:
            raise InvalidArgument(f"[{op}] {name} must be 1-D, got shape {tuple(a.shape)}")
    return package, device, _values(data, package, op)


def _from_csr(data: Any, indices: Any, indptr: Any, shape: Any, op: str) -> csr_matrix:
    """The csr_matrix of CSR arrays of one package: validated and canonicalized in C++."""
    if shape is None:
        raise InvalidArgument(f"[{op}] shape= is required with (data, indices, indptr)")
    rows, cols = _shape(shape, op)
    package, device, data = _triplet(op, data, indices=indices, indptr=indptr)
    indices = _index(indices, package, "indices", op)
    indptr = _index(indptr, package, "indptr", op)
    if _dtype_name(indices) != _dtype_name(indptr):
        indices, indptr = (_cast(a, "int64", package) for a in (indices, indptr))
    ed = export(data)
    m, shared = _gpula.SparseCsrMatrix.from_csr(export(indptr), export(indices), ed, rows, cols, op)
    d, i, p = m.arrays(FRAMEWORK[package])
    # The matrix keeps the caller's data where it reads it in place; where the export read a
    # materialized copy (a torch lazy negative/conjugate view) it keeps that copy, which the
    # native matrix reads: the raw view would be read without its negative bit.
    own = shared and (ed[0] if type(ed) is tuple else ed) is data
    return csr_matrix._wrap(m, data if own else d, i, p, package, device, canonicalized=not shared)


def _from_coo(row: Any, col: Any, data: Any, shape: Any, op: str) -> csr_matrix:
    """The csr_matrix of coordinates (duplicates summed), in C++ (one copy)."""
    package, device, data = _triplet(op, data, row=row, col=col)
    row = _index(row, package, "row", op)
    col = _index(col, package, "col", op)
    if shape is None:  # scipy's rule: one past the largest index
        r, c = (_to_numpy(a, package) for a in (row, col))
        shape = (int(r.max()) + 1 if r.size else 0, int(c.max()) + 1 if c.size else 0)
    rows, cols = _shape(shape, op)
    if _dtype_name(row) != _dtype_name(col):  # widened, never narrowed before the validation
        row, col = (_cast(a, "int64", package) for a in (row, col))
    m = _gpula.SparseCsrMatrix.from_coo(export(row), export(col), export(data), rows, cols, op)
    d, i, p = m.arrays(FRAMEWORK[package])
    return csr_matrix._wrap(m, d, i, p, package, device)


def _build(arg: Any, shape: Any, op: str) -> csr_matrix:
    mod = type(arg).__module__
    if mod.startswith(("scipy.sparse", "cupyx.scipy.sparse")) and hasattr(arg, "format"):
        if len(arg.shape) != 2:
            raise InvalidArgument(f"[{op}] expected a 2-D sparse matrix, got shape {arg.shape}")
        B = arg if arg.format == "csr" else arg.tocsr()
        return _from_csr(B.data, B.indices, B.indptr, B.shape, op)
    if mod.startswith("torch") and package_named("torch").sparse_format(arg) is not None:
        return _from_torch_sparse(arg, op)
    if _csr_like(arg):  # a duck-typed CSR matrix: its arrays, validated as any others
        return _from_csr(arg.data, arg.indices, arg.indptr, arg.shape, op)
    if isinstance(arg, tuple):
        if len(arg) == 3:
            return _from_csr(*arg, shape, op)
        if len(arg) == 2 and isinstance(arg[1], tuple) and len(arg[1]) == 2:
            return _from_coo(arg[1][0], arg[1][1], arg[0], shape, op)
        if len(arg) == 2 and all(isinstance(s, (int, np.integer)) for s in arg):
            rows, cols = _shape(arg, op)
            return _from_csr(np.zeros(0), np.zeros(0, np.int32), np.zeros(rows + 1, np.int32), (rows, cols), op)
        raise DTypeError(f"[{op}] expected (data, indices, indptr), (data, (row, col)) or (M, N), got a tuple of {len(arg)}")
    if isinstance(arg, list):
        arg = np.asarray(arg)
    if getattr(arg, "ndim", None) == 2:
        return from_dense(arg, op)
    raise DTypeError(
        f"[{op}] expected a sparse matrix (scipy.sparse, cupyx.scipy.sparse, torch sparse CSR/COO, "
        f"gl.sparse.csr_matrix), a (data, indices, indptr) tuple or a dense 2-D array, got "
        f"{type(arg).__name__}"
    )


def _from_torch_sparse(A: Any, op: str) -> csr_matrix:
    if A.ndim != 2:
        raise InvalidArgument(f"[{op}] expected a 2-D sparse tensor, got {A.ndim}-D")
    kind, data, first, second = package_named("torch").sparse_parts(A)  # type: ignore[attr-defined]
    if kind == "csr":
        return _from_csr(data, first, second, tuple(A.shape), op)
    return _from_coo(first, second, data, tuple(A.shape), op)


def as_csr(A: Any, op: str) -> csr_matrix:
    """A csr_matrix from a sparse matrix: a csr_matrix (itself), a scipy.sparse or
    cupyx.scipy.sparse matrix/array of any format, a torch sparse CSR/COO tensor, or a
    duck-typed CSR object (``data``, ``indices``, ``indptr``, ``shape``; validated). A
    (data, indices, indptr) tuple needs ``csr_matrix(t, shape=)``. ``op`` names the caller in
    errors.

    Example:
        >>> import scipy.sparse as sp, gpula as gl
        >>> A = gl.sparse.as_csr(sp.eye(3, format="coo"), "my_solver")
        >>> A.shape, A.nnz
        ((3, 3), 3)
    """
    if isinstance(A, csr_matrix):
        return A
    if is_sparse(A):
        return csr_matrix(A, op=op)
    if isinstance(A, tuple):
        raise DTypeError(f"[{op}] a (data, indices, indptr) tuple needs a shape: use gl.sparse.csr_matrix(t, shape=...)")
    raise DTypeError(
        f"[{op}] expected a sparse matrix (gl.sparse.csr_matrix, scipy.sparse, cupyx.scipy.sparse, "
        f"torch sparse CSR/COO, an object with data, indices, indptr and shape), got "
        f"{type(A).__name__}"
    )


def from_dense(x: Any, op: str = "sparse.from_dense") -> csr_matrix:
    """The CSR matrix of a dense 2-D array's nonzeros, in the array's package and device.

    Example:
        >>> import numpy as np, gpula as gl
        >>> A = gl.sparse.from_dense(np.array([[0.0, 2.0], [3.0, 0.0]]))
        >>> A.nnz, A @ np.ones(2)
        (2, array([2., 3.]))
    """
    try:
        package = _package(x)
    except DTypeError as e:
        raise DTypeError(f"[{op}] x: {e}") from None
    if x.ndim != 2:
        raise InvalidArgument(f"[{op}] x must be a 2-D array, got shape {tuple(x.shape)}")
    result_dtype(op, _dtype_name(x), args=("x",))  # before the scan for nonzeros
    device = _device(x, package)
    h = _to_numpy(x, package)
    r, c = np.nonzero(h)
    if max(h.shape) < 2**31 - 1:  # scipy's index dtype for what fits
        r, c = r.astype(np.int32), c.astype(np.int32)
    r, c, v = (_from_numpy(a, package, device) for a in (r, c, h[r, c]))
    return _from_coo(r, c, v, h.shape, op)


def _empty_like_package(n: Any, dtype: str, package: str, device: str, op: str, what: str) -> Any:
    """A new array of shape n for the result `what` ("op(A) @ B"); gl.OutOfMemory naming `op`,
    `what` and the shape where it does not fit."""
    try:
        return _empty(n, dtype, package, device)
    except MemoryError as e:
        raise OutOfMemory(
            f"[{op}] could not allocate the result {what} of shape {n} ({dtype}): {e}"
        ) from None


def _empty(n: Any, dtype: str, package: str, device: str) -> Any:
    p = package_named(package)
    return p.empty(n, dtype, p.device_from_name(device))


def _current_stream(x: Any) -> int:
    """The current stream of GPU array x's package on x's device (0 for host arrays): where
    gpula's products run, ordered with the caller's work like the package's own operations."""
    if not is_gpu_array(x):
        return 0
    pkg = package_of(x)
    return pkg.current_stream(pkg.device_of(x))


def operand(A: csr_matrix, x: Any, arg: str, name: str) -> tuple[str, str]:
    """Checks a dense operand's package and device against A's; returns (package, the dtype
    the product computes in)."""
    try:
        package = _package(x)
    except DTypeError as e:
        raise DTypeError(f"[{name}] {arg}: {e}") from None
    device = _device(x, package)
    if package != A.package or device != A.device:
        raise InvalidArgument(
            f"[{name}] {arg} must be a {A.package} array on {A.device} like A, got {package} on {device}"
        )
    return package, result_dtype(name, A.dtype, _dtype_name(x), args=("A", arg))


def _spmv(A: csr_matrix, x: Any, op: int, name: str) -> Any:
    """y = op(A) x on the package's current stream. The checks of x against A are done in full
    once per (type, dtype) of x and then cached on A, so that repeated products of small
    matrices cost little more than the product itself; where x's package has a fast_key (torch,
    CuPy), a repeated product with an x of the same layout on the same thread goes straight to
    allocating y and running the plan (the rest was checked on the first call)."""
    y = _fast_spmv(A, x, op)
    if y is not None:
        return y
    key = (type(x), getattr(x, "dtype", None), op)
    known = A.__dict__.get("_spmv_known")
    if known is None or known[0] != key:
        package, dt = operand(A, x, "x", name)
        pkg = package_of(x)
        stream = (lambda: 0) if package == "numpy" else pkg.stream_getter(pkg.device_of(x))
        known = A.__dict__["_spmv_known"] = (key, package, stream, dt)
    else:
        package, dt = known[1], known[3]
        if package != "numpy" and _device(x, package) != A.device:
            raise InvalidArgument(
                f"[{name}] x must be a {A.package} array on {A.device} like A, got {package} "
                f"on {_device(x, package)}"
            )
    if x.ndim != 1:
        raise InvalidArgument(
            f"[{name}] x must be 1-D (use spmm for 2-D operands), got shape {tuple(x.shape)}"
        )
    x_in = x
    if dt != A.dtype:  # promoted: the values in dt (the pattern shared), one product
        A = A.astype(dt)
    x = _contiguous_1d(x if _dtype_name(x) == dt else _cast(x, dt, package), package)
    rows = A.shape[1] if op else A.shape[0]
    y = _empty_like_package(rows, dt, package, A.device, name, "op(A) @ x")
    plan = A._plan("spmv", op)
    try:
        plan.execute(export(x), export(y), stream=known[2]())
    except Error as e:  # the C++ plan's checks name its class (sparse.SpMV): name the call
        raise renamed(e, name) from None
    if package != "numpy":
        _install_fast_spmv(A, x_in, x, op, name, plan, package, dt, rows, known[2])
    return y


def _fast_spmv(A: csr_matrix, x: Any, op: int) -> Any:
    """op(A) x by the executor _install_fast_spmv kept on A, or None where x does not match it."""
    fast = A.__dict__.get("_spmv_fast")
    if (fast is not None and type(x) is fast[0] and fast[1] == op
            and fast[2] == threading.get_ident()):
        fk = fast[3](x)
        if fk is not None and fk[0] == fast[4]:
            return fast[5](x)
    return None


def _install_fast_spmv(A: csr_matrix, x_in: Any, x: Any, op: int, name: str, plan: Any,
                       package: str, dt: str, rows: int, stream: Any) -> None:
    """Keeps, on A, the last (thread, op, layout of x) whose product read x in place (no cast,
    no copy), with an executor that only allocates y and runs the plan."""
    pkg = package_named(package)
    fk, used = pkg.fast_key(x_in), pkg.fast_key(x)
    if fk is None or used is None or fk[1] != used[1] or fk[0][0] != used[0][0]:
        return
    alloc = pkg.allocator((rows,), dt, pkg.device_from_name(A.device), name)

    def run(x: Any) -> Any:
        try:
            y = alloc()
        except MemoryError as e:
            raise OutOfMemory(
                f"[{name}] could not allocate the result op(A) @ x of shape {rows} ({dt}): {e}"
            ) from None
        try:
            plan.execute(export(x), export(y), stream=stream())
        except Error as e:
            raise renamed(e, name) from None
        return y

    A.__dict__["_spmv_fast"] = (type(x), op, threading.get_ident(), pkg.fast_key, fk[0], run)


# The products that both ``A @ x`` and gl.sparse.spmm / spgemm (sparse/_products.py) run, on
# matrices already made csr_matrix.


def dense_operand(A: csr_matrix, x: Any, arg: str, name: str) -> tuple[Any, str]:
    """A dense 2-D operand checked against A (package, device, rank; torch: not requiring
    grad) and the dtype the product computes in."""
    package, dt = operand(A, x, arg, name)
    if x.ndim != 2:
        raise InvalidArgument(f"[{name}] {arg} must be 2-D, got shape {tuple(x.shape)}")
    if package == "torch" and x.requires_grad:
        raise InvalidArgument(
            f"[{name}] {arg} requires grad; gpula.sparse products are not differentiable "
            "(use .detach())"
        )
    return package, dt


def in_dtype(x: Any, dt: str, package: str) -> Any:
    """x, or a copy of it as dt where its dtype differs."""
    return x if _dtype_name(x) == dt else _cast(x, dt, package)


def spmm_csr(A: csr_matrix, B: Any, op: str, name: str) -> Any:
    """op(A) @ B (op "N", "T" or "H") for a dense 2-D B: a new row-major array of B's package."""
    package, dt = dense_operand(A, B, "B", name)
    A, B = A.astype(dt, copy=False), in_dtype(B, dt, package)
    rows = A.shape[0] if op == "N" else A.shape[1]
    C = _empty_like_package((rows, int(B.shape[1])), dt, package, A.device, name, "op(A) @ B")
    A._plan("spmm", "NTH".index(op)).execute(export(B), export(C), stream=_current_stream(B))
    return C


def spgemm_csr(A: csr_matrix, B: csr_matrix, name: str) -> csr_matrix:
    """A @ B of two csr_matrix of one package and device: a new canonical csr_matrix."""
    if B.package != A.package or B.device != A.device:
        raise InvalidArgument(
            f"[{name}] B must be a {A.package} matrix on {A.device} like A, got {B.package} on "
            f"{B.device}"
        )
    if A.shape[1] != B.shape[0]:
        raise InvalidArgument(
            f"[{name}] B must have {A.shape[1]} rows (A is {A.shape}), got shape {B.shape}"
        )
    dt = result_dtype(name, A.dtype, B.dtype, args=("A", "B"))
    A, B = A.astype(dt, copy=False), B.astype(dt, copy=False)
    if A.index_dtype != B.index_dtype:  # int64 for both (a widened pattern, checked again)
        A, B = (_wide(M) for M in (A, B))
    m = _gpula.sparse_spgemm(A._m, B._m, stream=_current_stream(A.data))
    d, i, p = m.arrays(FRAMEWORK[A.package])
    return csr_matrix._wrap(m, d, i, p, A.package, A.device)


def _wide(M: csr_matrix) -> csr_matrix:
    if M.index_dtype == "int64":
        return M
    p = M.package
    wide = (M.data, _cast(M.indices, "int64", p), _cast(M.indptr, "int64", p))
    return csr_matrix(wide, shape=M.shape)
