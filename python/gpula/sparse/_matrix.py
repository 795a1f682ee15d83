"""``csr_matrix``: a validated, canonical CSR matrix over the caller's arrays (numpy, cupy, torch).

Policy:
- The three arrays stay in the caller's package and device; canonical input (each row's column
  indices strictly increasing) is shared without a copy.
- Unsorted columns or duplicate entries are canonicalized: sorted within rows, duplicates summed,
  into new arrays (the input is never modified).
- Validation reads the index arrays on the host: GPU index arrays are copied to the host once.
- Malformed input raises ValueError naming the array and the position; wrong types TypeError.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

_VALUE_DTYPES = ("float32", "float64", "complex64", "complex128")
_INDEX_DTYPES = ("int32", "int64")


def _package(x: Any) -> str:
    mod = type(x).__module__.split(".")[0]
    if mod == "numpy":
        return "numpy"
    if mod == "cupy":
        return "cupy"
    if mod == "torch":
        return "torch"
    raise TypeError(f"expected a numpy, cupy or torch array, got {type(x).__name__}")


def _device(x: Any, package: str) -> str:
    if package == "numpy":
        return "cpu"
    if package == "cupy":
        return f"cuda:{x.device.id}"
    return "cpu" if x.device.type == "cpu" else f"cuda:{x.device.index or 0}"


def _dtype_name(x: Any, package: str) -> str:
    return str(x.dtype).replace("torch.", "")


def _to_numpy(x: Any, package: str) -> np.ndarray:
    if package == "numpy":
        return np.asarray(x)
    if package == "cupy":
        return x.get()
    return x.detach().resolve_conj().cpu().numpy()


def _from_numpy(a: np.ndarray, package: str, device: str) -> Any:
    a = np.ascontiguousarray(a)
    if package == "numpy":
        return a
    if package == "cupy":
        import cupy

        with cupy.cuda.Device(int(device.split(":")[1])):
            return cupy.asarray(a)
    import torch

    return torch.from_numpy(a).to(device)


def _contiguous_1d(x: Any, package: str) -> Any:
    if package == "numpy":
        return np.ascontiguousarray(x)
    if package == "cupy":
        import cupy

        return cupy.ascontiguousarray(x)
    return x.contiguous()


def _canonical_rows(indptr: np.ndarray, indices: np.ndarray) -> bool:
    if indices.size < 2:
        return True
    increasing = np.diff(indices) > 0
    # A decrease is only allowed where a new row starts at that position.
    starts = np.zeros(indices.size - 1, dtype=bool)
    inner = indptr[1:-1]
    inner = inner[(inner > 0) & (inner < indices.size)]
    starts[inner - 1] = True
    return bool(np.all(increasing | starts))


class csr_matrix:  # noqa: N801  (scipy's spelling)
    """A CSR matrix: ``shape``, ``dtype``, ``nnz``, ``data``, ``indices``, ``indptr`` (1-D
    contiguous arrays of ``package`` on ``device``), canonical (sorted, no duplicates)."""

    def __init__(self, arg: Any, shape: tuple[int, int] | None = None, *, op: str = "sparse.csr_matrix"):
        if isinstance(arg, csr_matrix):
            self.__dict__.update(arg.__dict__)
            return
        if not (isinstance(arg, tuple) and len(arg) == 3):
            raise TypeError(f"[{op}] expected (data, indices, indptr), got {type(arg).__name__}")
        if shape is None:
            raise ValueError(f"[{op}] shape= is required with (data, indices, indptr)")
        data, indices, indptr = arg
        try:
            package = _package(data)
        except TypeError as e:
            raise TypeError(f"[{op}] data: {e}") from None
        for name, a in (("indices", indices), ("indptr", indptr)):
            if type(a).__module__.split(".")[0] != package:
                raise TypeError(f"[{op}] {name} must be a {package} array like data, got {type(a).__name__}")
        device = _device(data, package)
        for name, a in (("indices", indices), ("indptr", indptr)):
            if _device(a, package) != device:
                raise ValueError(f"[{op}] {name} must be on data's device {device}, got {_device(a, package)}")
        rows, cols = (int(s) for s in shape)
        if rows < 0 or cols < 0:
            raise ValueError(f"[{op}] shape must be non-negative, got {tuple(shape)}")
        vd = _dtype_name(data, package)
        if vd not in _VALUE_DTYPES:
            raise TypeError(f"[{op}] data must be float32, float64, complex64 or complex128, got {vd}")
        for name, a in (("indices", indices), ("indptr", indptr)):
            if _dtype_name(a, package) not in _INDEX_DTYPES:
                raise TypeError(f"[{op}] {name} must be int32 or int64, got {_dtype_name(a, package)}")
            if a.ndim != 1:
                raise ValueError(f"[{op}] {name} must be 1-D, got shape {tuple(a.shape)}")
        if data.ndim != 1:
            raise ValueError(f"[{op}] data must be 1-D, got shape {tuple(data.shape)}")
        nnz = int(data.shape[0])
        if int(indptr.shape[0]) != rows + 1:
            raise ValueError(f"[{op}] indptr must have length {rows + 1}, got {int(indptr.shape[0])}")
        if int(indices.shape[0]) != nnz:
            raise ValueError(f"[{op}] indices must have length nnz = {nnz}, got {int(indices.shape[0])}")
        p = _to_numpy(indptr, package).astype(np.int64, copy=False)
        ind = _to_numpy(indices, package).astype(np.int64, copy=False)
        if p[0] != 0:
            raise ValueError(f"[{op}] indptr[0] must be 0, got {p[0]}")
        bad = np.nonzero(np.diff(p) < 0)[0]
        if bad.size:
            i = int(bad[0]) + 1
            raise ValueError(
                f"[{op}] indptr must be non-decreasing: indptr[{i}] = {p[i]} < indptr[{i - 1}] = {p[i - 1]}"
            )
        if p[-1] != nnz:
            raise ValueError(f"[{op}] indptr[{rows}] must equal nnz = {nnz}, got {p[-1]}")
        out = np.nonzero((ind < 0) | (ind >= cols))[0]
        if out.size:
            k = int(out[0])
            raise ValueError(f"[{op}] indices[{k}] = {ind[k]} is out of range [0, {cols})")
        index_dtype = "int64" if "int64" in (_dtype_name(indices, package), _dtype_name(indptr, package)) else "int32"
        if _dtype_name(indices, package) != index_dtype or _dtype_name(indptr, package) != index_dtype:
            indptr = _from_numpy(p.astype(index_dtype), package, device)
            indices = _from_numpy(ind.astype(index_dtype), package, device)
        self.canonicalized = False
        if not _canonical_rows(p, ind):
            row = np.repeat(np.arange(rows, dtype=np.int64), np.diff(p))
            vals = _to_numpy(data, package)
            data, indices, indptr = _coo_to_csr_numpy(row, ind, vals, rows, index_dtype)
            data = _from_numpy(data, package, device)
            indices = _from_numpy(indices, package, device)
            indptr = _from_numpy(indptr, package, device)
            self.canonicalized = True
        self.data = _contiguous_1d(data, package)
        self.indices = _contiguous_1d(indices, package)
        self.indptr = _contiguous_1d(indptr, package)
        self.shape = (rows, cols)
        self.package = package
        self.device = device

    @classmethod
    def _trusted(
        cls, data: Any, indices: Any, indptr: Any, shape: tuple[int, int], package: str, device: str
    ) -> csr_matrix:
        """A csr_matrix over arrays gpula made or checked itself (canonical, valid): no checks."""
        self = cls.__new__(cls)
        self.data, self.indices, self.indptr = data, indices, indptr
        self.shape = (int(shape[0]), int(shape[1]))
        self.package = package
        self.device = device
        self.canonicalized = False
        return self

    def _plan(self, kind: str, op: int) -> Any:
        """The SpMV / SpMM plan for op, made on first use and kept (cuSPARSE descriptors,
        buffer and preprocessing reused by later products). Changing the arrays' contents in
        place is seen by later products; replacing indptr/indices/data is not supported.
        Kept per thread (a GPU plan is not shared between threads)."""
        # Per thread: a GPU plan re-points its dense descriptors on each call.
        key = (kind, op, threading.get_ident())
        plans = self.__dict__.setdefault("_plans", {})
        plan = plans.get(key)
        if plan is None:
            from .. import _gpula
            from .._interop import export

            cls = _gpula.SparseSpMV if kind == "spmv" else _gpula.SparseSpMM
            plan = cls(export(self.indptr), export(self.indices), export(self.data),
                       self.shape[0], self.shape[1], op)
            plans[key] = plan
        return plan

    @property
    def nnz(self) -> int:
        return int(self.data.shape[0])

    @property
    def dtype(self) -> str:
        """The value dtype's name: "float32", "float64", "complex64" or "complex128"."""
        return _dtype_name(self.data, self.package)

    @property
    def index_dtype(self) -> str:
        return _dtype_name(self.indptr, self.package)

    def __repr__(self) -> str:
        return (
            f"gl.sparse.csr_matrix(shape={self.shape}, nnz={self.nnz}, dtype={self.dtype}, "
            f"index_dtype={self.index_dtype}, package={self.package}, device={self.device})"
        )

    def __matmul__(self, x: Any) -> Any:
        """``A @ x``: for a 1-D array ``x`` of A's dtype, package and device the SpMV (a new 1-D
        array); for a 2-D array the SpMM (a new 2-D array, ``gl.sparse.spmm``); for a sparse
        matrix (csr_matrix, scipy/cupyx sparse, torch sparse) the SpGEMM (a new csr_matrix,
        ``gl.sparse.spgemm``). gpula's OpenMP kernels on the CPU, cuSPARSE on a GPU."""
        from . import _products

        if _products._is_sparse(x):
            return _products.spgemm(self, x)
        if getattr(x, "ndim", None) == 2:
            return _products.spmm(self, x)
        return _spmv(self, x, 0, "sparse.matmul")

    def matvec(self, x: Any, op: str = "N") -> Any:
        """op(A) x with op "N" (A), "T" (A^T) or "H" (A^H)."""
        if op not in ("N", "T", "H"):
            raise ValueError(f"[sparse.matvec] op must be 'N', 'T' or 'H', got {op!r}")
        return _spmv(self, x, "NTH".index(op), "sparse.matvec")

    # Conversions back to the caller's packages.
    def to_scipy(self) -> Any:
        import scipy.sparse as sp

        return sp.csr_matrix(
            (_to_numpy(self.data, self.package), _to_numpy(self.indices, self.package), _to_numpy(self.indptr, self.package)),
            shape=self.shape,
        )

    def to_cupy(self) -> Any:
        import cupyx.scipy.sparse as csp

        if self.package != "cupy":
            dev = self.device if self.device.startswith("cuda") else "cuda:0"
            d, i, p = (_from_numpy(_to_numpy(a, self.package), "cupy", dev) for a in (self.data, self.indices, self.indptr))
        else:
            d, i, p = self.data, self.indices, self.indptr
        return csp.csr_matrix((d, i, p), shape=self.shape)

    def to_torch(self) -> Any:
        import torch

        if self.package == "torch":
            d, i, p = self.data, self.indices, self.indptr
        else:
            d, i, p = (torch.from_numpy(np.ascontiguousarray(_to_numpy(a, self.package))) for a in (self.data, self.indices, self.indptr))
            if self.device.startswith("cuda"):
                d, i, p = d.to(self.device), i.to(self.device), p.to(self.device)
        return torch.sparse_csr_tensor(p, i, d, size=self.shape)

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


def _coo_to_csr_numpy(row, col, vals, rows, index_dtype):
    """Canonical CSR of triplets on the host: sorted, duplicates summed."""
    row = np.asarray(row, dtype=np.int64)
    col = np.asarray(col, dtype=np.int64)
    order = np.lexsort((col, row))
    row, col, vals = row[order], col[order], np.asarray(vals)[order]
    if row.size:
        first = np.ones(row.size, dtype=bool)
        first[1:] = (row[1:] != row[:-1]) | (col[1:] != col[:-1])
        group = np.cumsum(first) - 1
        summed = np.zeros(int(group[-1]) + 1, dtype=vals.dtype)
        np.add.at(summed, group, vals)
        row, col, vals = row[first], col[first], summed
    indptr = np.zeros(rows + 1, dtype=np.int64)
    np.add.at(indptr, row + 1, 1)
    indptr = np.cumsum(indptr)
    return vals, col.astype(index_dtype), indptr.astype(index_dtype)


def _from_coo(row, col, vals, shape, package, device, op) -> csr_matrix:
    rows, cols = shape
    r = _to_numpy(row, package).astype(np.int64)
    c = _to_numpy(col, package).astype(np.int64)
    for name, a, bound in (("row", r, rows), ("col", c, cols)):
        out = np.nonzero((a < 0) | (a >= bound))[0]
        if out.size:
            k = int(out[0])
            raise ValueError(f"[{op}] {name}[{k}] = {a[k]} is out of range [0, {bound})")
    index_dtype = "int64" if max(rows, cols, r.size) >= 2**31 - 1 else "int32"
    d, i, p = _coo_to_csr_numpy(r, c, _to_numpy(vals, package), rows, index_dtype)
    return csr_matrix(tuple(_from_numpy(a, package, device) for a in (d, i, p)), shape=shape, op=op)


def as_csr(A: Any, op: str) -> csr_matrix:
    """A csr_matrix from a csr_matrix, a scipy.sparse or cupyx.scipy.sparse matrix/array, a torch
    sparse CSR/COO tensor, or a (data, indices, indptr) tuple (use ``csr_matrix(t, shape=)``).
    CSR input is shared without a copy when canonical; other formats are converted."""
    if isinstance(A, csr_matrix):
        return A
    mod = type(A).__module__
    if mod.startswith("scipy.sparse"):
        B = A if A.format == "csr" else A.tocsr()
        return csr_matrix((B.data, B.indices, B.indptr), shape=B.shape, op=op)
    if mod.startswith("cupyx.scipy.sparse"):
        B = A if A.format == "csr" else A.tocsr()
        return csr_matrix((B.data, B.indices, B.indptr), shape=B.shape, op=op)
    if mod.startswith("torch"):
        import torch

        if isinstance(A, torch.Tensor) and A.layout == torch.sparse_csr:
            if A.ndim != 2:
                raise ValueError(f"[{op}] expected a 2-D sparse CSR tensor, got {A.ndim}-D")
            return csr_matrix((A.values(), A.col_indices(), A.crow_indices()), shape=tuple(A.shape), op=op)
        if isinstance(A, torch.Tensor) and A.layout == torch.sparse_coo:
            if A.ndim != 2:
                raise ValueError(f"[{op}] expected a 2-D sparse COO tensor, got {A.ndim}-D")
            idx = A._indices()
            dev = _device(A, "torch")
            return _from_coo(idx[0], idx[1], A._values(), tuple(A.shape), "torch", dev, op)
    if isinstance(A, tuple):
        raise TypeError(f"[{op}] a (data, indices, indptr) tuple needs a shape: use gl.sparse.csr_matrix(t, shape=...)")
    raise TypeError(
        f"[{op}] expected a sparse matrix (gl.sparse.csr_matrix, scipy.sparse, cupyx.scipy.sparse, "
        f"torch sparse CSR/COO), got {type(A).__name__}"
    )


def from_dense(x: Any, op: str = "sparse.from_dense") -> csr_matrix:
    """The CSR matrix of a dense 2-D array's nonzeros, in the array's package and device."""
    package = _package(x)
    if x.ndim != 2:
        raise ValueError(f"[{op}] expected a 2-D array, got shape {tuple(x.shape)}")
    device = _device(x, package)
    h = _to_numpy(x, package)
    r, c = np.nonzero(h)
    return _from_coo(r, c, h[r, c], h.shape, "numpy", "cpu", op) if package == "numpy" else _from_coo(
        _from_numpy(r, package, device), _from_numpy(c, package, device), _from_numpy(h[r, c], package, device),
        h.shape, package, device, op)


def _empty_like_package(n: int, dtype: str, package: str, device: str) -> Any:
    if package == "numpy":
        return np.empty(n, dtype=dtype)
    if package == "cupy":
        import cupy

        idx = int(device.split(":")[1])
        if cupy.cuda.runtime.getDevice() == idx:
            return cupy.empty(n, dtype=dtype)
        with cupy.cuda.Device(idx):
            return cupy.empty(n, dtype=dtype)
    import torch

    return torch.empty(n, dtype=getattr(torch, dtype), device=device)


def _current_stream(x: Any) -> int:
    """The current stream of GPU array x's package on x's device (0 for host arrays): where
    gpula's products run, ordered with the caller's work like the package's own operations."""
    from .._interop import is_gpu_array, package_of

    if not is_gpu_array(x):
        return 0
    pkg = package_of(x)
    return pkg.current_stream(pkg.device_of(x))


def _spmv(A: csr_matrix, x: Any, op: int, name: str) -> Any:
    """y = op(A) x on the package's current stream. The checks of x against A are done in full
    once per (type, dtype) of x and then cached on A, so that repeated products of small
    matrices cost little more than the product itself."""
    from .._interop import export, package_of

    key = (type(x), getattr(x, "dtype", None), op)
    known = A.__dict__.get("_spmv_known")
    if known is None or known[0] != key:
        try:
            package = _package(x)
        except TypeError as e:
            raise TypeError(f"[{name}] x: {e}") from None
        device = _device(x, package)
        if package != A.package or device != A.device:
            raise ValueError(
                f"[{name}] x must be a {A.package} array on {A.device} like A, got {package} "
                f"on {device}"
            )
        if _dtype_name(x, package) != A.dtype:
            raise TypeError(
                f"[{name}] x must have A's dtype {A.dtype}, got {_dtype_name(x, package)}"
            )
        pkg = package_of(x)
        stream = (lambda: 0) if package == "numpy" else pkg.stream_getter(pkg.device_of(x))
        known = A.__dict__["_spmv_known"] = (key, package, stream)
    else:
        package = known[1]
        if package != "numpy" and _device(x, package) != A.device:
            raise ValueError(
                f"[{name}] x must be a {A.package} array on {A.device} like A, got {package} "
                f"on {_device(x, package)}"
            )
    if x.ndim != 1:
        raise ValueError(
            f"[{name}] x must be 1-D (use spmm for 2-D operands), got shape {tuple(x.shape)}"
        )
    n_out = A.shape[1] if op else A.shape[0]
    x = _contiguous_1d(x, package)
    y = _empty_like_package(n_out, A.dtype, package, A.device)
    A._plan("spmv", op).execute(export(x), export(y), stream=known[2]())
    return y
