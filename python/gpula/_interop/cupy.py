"""CuPy arrays: operands as (owner, address, dtype, shape, strides, device) read from their
attributes (cheaper than DLPack), results from cupy.empty on the array's device and CuPy's
current stream. cupy is imported when the first CuPy array arrives."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._gpula import DTypeError
from .base import DEFAULT_OP, NUMPY_DTYPES, Package


class CupyPackage(Package):
    name = "cupy"

    def __init__(self) -> None:
        import cupy

        self.cupy = cupy

    def export(self, x: Any) -> Any:
        """(x, address, dtype, shape, strides, device type, id): cheaper than DLPack."""
        it = x.itemsize
        strides = tuple(s // it for s in x.strides)
        return (x, x.data.ptr, x.dtype.name, x.shape, strides, 2, x.device.id)

    def fast_key(self, x: Any) -> tuple[Any, int] | None:
        p = x.data.ptr
        if not p:
            return None
        # The pointer's alignment as the plan records it (lowest set bit, at most 256).
        return (x.dtype, x.shape, x.strides, x.device.id, min(p & -p, 256)), p

    def device_of(self, x: Any) -> Any:
        return x.device.id

    def device_name(self, x: Any) -> str:
        return f"cuda:{x.device.id}"

    def device_from_name(self, name: str) -> Any:
        return int(name.split(":")[1])

    def allocator(self, shape, dtype, device, op=DEFAULT_OP):
        if dtype not in NUMPY_DTYPES:  # no ml_dtypes names: CuPy has no such arrays
            raise DTypeError(f"[{op}] CuPy has no {dtype} arrays")
        cp, dt = self.cupy, np.dtype(dtype)
        get_device = cp.cuda.runtime.getDevice

        def alloc():
            if get_device() == device:
                return cp.empty(shape, dt)
            with cp.cuda.Device(device):
                return cp.empty(shape, dt)

        return alloc

    @staticmethod
    def address(x: Any) -> int:
        return x.data.ptr

    def stream_getter(self, device):
        cp = self.cupy

        def current() -> int:
            return cp.cuda.get_current_stream(device).ptr

        try:
            current()
        except TypeError:  # older CuPy: no device argument
            return lambda: cp.cuda.get_current_stream().ptr
        return current

    def to_numpy(self, x):
        return x.get()

    def from_numpy(self, a, device):
        with self.cupy.cuda.Device(device):
            return self.cupy.asarray(a if a.flags.c_contiguous else np.ascontiguousarray(a))

    def from_dlpack(self, x):
        return self.cupy.from_dlpack(x)

    def contiguous(self, x):
        # cupy.ascontiguousarray makes a 0-d array 1-d; a contiguous array (0-d ones are) stays
        return x if x.flags.c_contiguous else self.cupy.ascontiguousarray(x)

    def astype(self, x, dtype):
        return x.astype(dtype)

    def eye(self, n, dtype, device):
        with self.cupy.cuda.Device(device):
            return self.cupy.eye(n, dtype=dtype)

    def randn(self, shape, dtype, device, seed):
        with self.cupy.cuda.Device(device):
            rs = self.cupy.random.RandomState(seed)
            real = np.float64 if dtype in ("float64", "complex128") else np.float32
            x = rs.standard_normal(shape, dtype=real)
            if dtype.startswith("complex"):
                x = x + 1j * rs.standard_normal(shape, dtype=real)
            return x.astype(dtype)

    def sparse_csr(self, arg, shape=None):
        import cupyx.scipy.sparse as csp

        return csp.csr_matrix(arg, shape=shape)
