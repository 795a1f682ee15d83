"""NumPy arrays: operands through the buffer protocol / DLPack (ml_dtypes' bfloat16 and float8
as a same-size unsigned-integer view plus the dtype's name), results from numpy.empty, on the
host and stream 0."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .._gpula import DTypeError
from .base import DEFAULT_OP, ML_NAMES, UINT_VIEW, Package, numpy_dtype


# The dtypes a NumPy operand is exported in as it is (ml_dtypes' bfloat16 and float8 go as an
# integer view, and a non-native byte order is refused); dtypes compare their byte order too.
# uint8: the relu_aux bit mask a DRELU epilogue reads (uint8 operands a and b still get the full
# path's DTypeError: no plan of theirs is ever cached).
_FAST_DTYPES = frozenset(
    np.dtype(n) for n in ("float16", "float32", "float64", "complex64", "complex128", "uint8")
)


class NumpyPackage(Package):
    name = "numpy"

    def fast_key(self, x: Any) -> tuple[Any, int] | None:
        """(dtype, shape, strides in bytes) and the data address, for a non-empty ndarray of
        one of _FAST_DTYPES; None (the full export) for anything else. No alignment: a CPU plan
        records none (src/matmul/cache.cpp). The address is the first element's, as the
        array's DLPack export gives it (strides may be negative)."""
        if type(x) is not np.ndarray or x.dtype not in _FAST_DTYPES or not x.size:
            return None
        return (x.dtype, x.shape, x.strides), x.ctypes.data

    def export(self, x: Any) -> Any:
        dt = x.dtype
        # ml_dtypes' kinds: "V" for bfloat16 and float8_e4m3fn, "f" for float8_e5m2.
        if dt.kind in "Vf" and dt.name in ML_NAMES:
            return (x.view(UINT_VIEW[dt.itemsize * 8]), dt.name)
        return x

    def device_of(self, x: Any) -> Any:
        return None

    def device_name(self, x: Any) -> str:
        return "cpu"

    def device_from_name(self, name: str) -> Any:
        return None

    def allocator(self, shape, dtype, device, op=DEFAULT_OP):
        dt = numpy_dtype(dtype)
        if dt is None:
            raise DTypeError(
                f"[{op}] a {dtype} result in NumPy needs ml_dtypes (pip install ml_dtypes)"
            )
        return functools.partial(np.empty, shape, dt)

    def empty(self, shape, dtype, device, op=DEFAULT_OP):
        dt = numpy_dtype(dtype)
        if dt is None:
            return self.allocator(shape, dtype, device, op)()
        return np.empty(shape, dt)

    def current_stream(self, device):
        return 0

    def to_numpy(self, x):
        return np.asarray(x)

    def from_numpy(self, a, device):
        return a if a.flags.c_contiguous else np.ascontiguousarray(a)  # which makes 0-d 1-d

    def from_dlpack(self, x):
        return np.from_dlpack(x)

    def contiguous(self, x):
        return x if x.flags.c_contiguous else np.ascontiguousarray(x)  # which makes 0-d 1-d

    def astype(self, x, dtype):
        dt = numpy_dtype(dtype)  # ml_dtypes' bfloat16/float8 too
        if dt is None:
            raise DTypeError(f"[{DEFAULT_OP}] NumPy has no {dtype} arrays here (ml_dtypes is "
                             "missing)")
        return x.astype(dt.newbyteorder("="))

    def eye(self, n, dtype, device):
        return np.eye(n, dtype=dtype)

    def randn(self, shape, dtype, device, seed):
        rng = np.random.default_rng(seed)
        g = rng.standard_normal(shape)
        if np.issubdtype(np.dtype(dtype), np.complexfloating):
            g = g + 1j * rng.standard_normal(shape)
        return g.astype(dtype)

    def sparse_csr(self, arg, shape=None):
        import scipy.sparse as sp

        return sp.csr_matrix(arg, shape=shape)


NUMPY = NumpyPackage()
