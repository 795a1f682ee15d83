"""Array packages: how operands are handed to C++ and how results are made in the caller's package.

Operands go to C++ without copies: NumPy and other producers through DLPack (or the buffer
protocol), NumPy arrays of ml_dtypes' bfloat16/float8 as a same-size unsigned-integer view plus
the dtype's name, torch and CuPy arrays as (owner, address, dtype, shape, strides, device) read
from their attributes (several microseconds cheaper than their __dlpack__, and free of its stream
handshake). Results are allocated by the caller's own package (numpy.empty / cupy.empty /
torch.empty) on the data's device, and filled by C++ through execute_into.

Every function that can raise takes the operation (``op``, "matmul", "linalg.cholesky", ...) and
where it helps the argument (``arg``) to name in its message. Both are optional for older call
sites, which get the neutral "[gpula] the operand ..."; new code passes them.
"""

from __future__ import annotations

import functools
import sys
from typing import Any, Callable

import numpy as np

from ._gpula import DTypeError, InvalidArgument, NotSupported

try:
    import ml_dtypes as _ml
except ImportError:  # optional: bfloat16/float8 arrays in NumPy need it
    _ml = None

# ml_dtypes' types, by gpula dtype name, and the uint view that carries each through DLPack.
_ML_NAMES = ("bfloat16", "float8_e4m3fn", "float8_e5m2")
_UINT_VIEW = {16: np.uint16, 8: np.uint8}

_NUMPY_DTYPES: dict[str, Any] = {
    n: np.dtype(n)
    for n in ("float16", "float32", "float64", "complex64", "complex128", "uint8", "int32", "int64")
}
if _ml is not None:
    for _n in _ML_NAMES:
        _NUMPY_DTYPES[_n] = np.dtype(getattr(_ml, _n))


# For callers that do not pass `op`/`arg` (older call sites): a neutral name, never another
# operation's ("[matmul]" in a cholesky message misled).
_DEFAULT_OP = "gpula"
_DEFAULT_ARG = "the operand"


def _zero() -> int:
    return 0


def stream_handle(stream: Any, op: str = _DEFAULT_OP) -> int:
    """A cudaStream_t as an int from an int, a torch.cuda.Stream or a cupy.cuda.Stream."""
    h: Any
    if type(stream) is int:
        h = stream
    else:
        h = getattr(stream, "cuda_stream", None)  # torch
        if h is None:
            h = getattr(stream, "ptr", None)  # cupy
        if h is None or isinstance(stream, bool):
            raise DTypeError(
                f"[{op}] stream must be an int handle, a torch.cuda.Stream or a cupy.cuda.Stream, "
                f"got {type(stream).__name__}"
            )
        h = int(h)
    if not 0 <= h < 2**64:
        raise InvalidArgument(f"[{op}] stream handle must be a cudaStream_t address, got {h}")
    return h


def dtype_name(dt: Any, op: str = _DEFAULT_OP, arg: str = "dtype") -> str:
    """gpula's name of a dtype given as a name, a NumPy/ml_dtypes type or a torch dtype."""
    if isinstance(dt, str):
        return dt
    mod = type(dt).__module__
    if mod.startswith("torch"):
        return str(dt).rsplit(".", 1)[-1]
    try:
        return np.dtype(dt).name
    except TypeError:
        raise DTypeError(f"[{op}] {arg} is not a dtype: {dt!r}") from None


class Package:
    """One array package: export of operands, allocation of results, streams."""

    name = "?"

    def export(self, x: Any) -> Any:
        """What C++ receives for operand x: x, or (uint view, dtype name)."""
        return x

    def device_of(self, x: Any) -> Any:
        """The data device of x, in the form allocator() takes."""
        raise NotImplementedError

    def allocator(
        self, shape: tuple[int, ...], dtype: str, device: Any, op: str = _DEFAULT_OP
    ) -> Callable[[], Any]:
        """A no-argument callable returning a fresh contiguous array."""
        raise NotImplementedError

    # Maps a result array to what execute_into takes (an int address); None: the array itself
    # (buffer protocol, cheaper than any Python-level pointer lookup).
    address: Callable[[Any], int] | None = None

    def address_for(self, device: Any, op: str = _DEFAULT_OP) -> Callable[[Any], int] | None:
        """address for results on device."""
        return self.address

    def stream_getter(self, device: Any) -> Callable[[], int]:
        """A no-argument callable returning the package's current stream on device."""
        return _zero

    # One-off forms of allocator() and stream_getter(), for the function form.
    def empty(
        self, shape: tuple[int, ...], dtype: str, device: Any, op: str = _DEFAULT_OP
    ) -> Any:
        return self.allocator(shape, dtype, device, op)()

    def current_stream(self, device: Any) -> int:
        return self.stream_getter(device)()


class NumpyPackage(Package):
    name = "numpy"

    def export(self, x: Any) -> Any:
        dt = x.dtype
        if dt.kind == "V" and dt.name in _ML_NAMES:
            return (x.view(_UINT_VIEW[dt.itemsize * 8]), dt.name)
        return x

    def device_of(self, x: Any) -> Any:
        return None

    def allocator(self, shape, dtype, device, op=_DEFAULT_OP):
        dt = _NUMPY_DTYPES.get(dtype)
        if dt is None:
            raise DTypeError(
                f"[{op}] a {dtype} result in NumPy needs ml_dtypes (pip install ml_dtypes)"
            )
        return functools.partial(np.empty, shape, dt)

    def empty(self, shape, dtype, device, op=_DEFAULT_OP):
        dt = _NUMPY_DTYPES.get(dtype)
        if dt is None:
            return self.allocator(shape, dtype, device, op)()
        return np.empty(shape, dt)

    def current_stream(self, device):
        return 0


class TorchPackage(Package):
    name = "torch"

    def __init__(self) -> None:
        import torch

        self.torch = torch
        names = ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
        names += ["float8_e4m3fn", "float8_e5m2", "int32", "int64", "uint8"]
        self.names = {getattr(torch, n): n for n in names if hasattr(torch, n)}
        self.address = torch.Tensor.data_ptr
        # The fast way to the current cudaStream_t (an int), where this torch has it.
        self._raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)

    def export(self, x: Any) -> Any:
        """(x, address, dtype, shape, strides, device type, id): no DLPack round trip, which in
        torch costs microseconds and may order streams; float8 and requires_grad need no
        special case. DLPack (and its errors) for dtypes and devices gpula does not take."""
        name = self.names.get(x.dtype)
        if x.is_cuda:
            kind, idx = 2, x.get_device()
        elif name is not None and x.device.type == "cpu":
            kind, idx = 1, 0
        else:
            name = None
        if name is None:
            return x.detach() if x.requires_grad else x
        if x.is_conj():  # lazy conjugate / negative views: materialize (one copy)
            x = x.resolve_conj()
        if x.is_neg():
            x = x.resolve_neg()
        return (x, x.data_ptr(), name, x.shape, x.stride(), kind, idx)

    def device_of(self, x: Any) -> Any:
        return x.device

    def allocator(self, shape, dtype, device, op=_DEFAULT_OP):
        torch = self.torch
        dt = getattr(torch, dtype, None)
        if dt is None:
            raise DTypeError(f"[{op}] this torch has no {dtype}")
        return functools.partial(torch.empty, shape, dtype=dt, device=device)

    def empty(self, shape, dtype, device, op=_DEFAULT_OP):
        dt = getattr(self.torch, dtype, None)
        if dt is None:
            return self.allocator(shape, dtype, device, op)()
        return self.torch.empty(shape, dtype=dt, device=device)

    def current_stream(self, device):
        if device.type != "cuda":
            return 0
        idx = device.index if device.index is not None else self.torch.cuda.current_device()
        if self._raw_stream is not None:
            return self._raw_stream(idx)
        return self.torch.cuda.current_stream(idx).cuda_stream

    def stream_getter(self, device):
        if device.type != "cuda":
            return _zero
        idx = device.index if device.index is not None else self.torch.cuda.current_device()
        raw = self._raw_stream
        if raw is not None:
            return functools.partial(raw, idx)
        cur = self.torch.cuda.current_stream
        return lambda: cur(idx).cuda_stream


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

    def device_of(self, x: Any) -> Any:
        return x.device.id

    def allocator(self, shape, dtype, device, op=_DEFAULT_OP):
        if dtype not in _NUMPY_DTYPES or dtype in _ML_NAMES:
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


class DLPackPackage(Package):
    """Any other DLPack producer: results in NumPy on the CPU, else CuPy or torch on the GPU."""

    name = "dlpack"

    def device_of(self, x: Any) -> Any:
        kind, idx = x.__dlpack_device__()
        return None if int(kind) in (1, 3) else int(idx)

    def _gpu(self, op: str = _DEFAULT_OP) -> Package:
        for mod, cls in (("cupy", CupyPackage), ("torch", TorchPackage)):
            try:
                return _package_named(mod, cls)
            except ImportError:
                continue
        raise NotSupported(f"[{op}] GPU results of this array type need CuPy or PyTorch")

    def allocator(self, shape, dtype, device, op=_DEFAULT_OP):
        if device is None:
            return _NUMPY.allocator(shape, dtype, None, op)
        gpu = self._gpu(op)
        if gpu.name == "torch":
            return gpu.allocator(shape, dtype, gpu.torch.device("cuda", device), op)
        return gpu.allocator(shape, dtype, device, op)

    def address_for(self, device, op=_DEFAULT_OP):
        return None if device is None else self._gpu(op).address


_NUMPY = NumpyPackage()
_by_type: dict[type, Package] = {np.ndarray: _NUMPY}
_by_name: dict[str, Package] = {"numpy": _NUMPY}


def _package_named(mod: str, cls: type) -> Package:
    p = _by_name.get(mod)
    if p is None:
        p = _by_name[mod] = cls()
    return p


def package_of(x: Any, op: str = _DEFAULT_OP, arg: str = _DEFAULT_ARG) -> Package:
    """The package of array x (cached per type); DTypeError naming op and arg for a non-array."""
    t = type(x)
    p = _by_type.get(t)
    if p is not None:
        return p
    root = t.__module__.split(".", 1)[0]
    if root == "torch" and "torch" in sys.modules and isinstance(x, sys.modules["torch"].Tensor):
        p = _package_named("torch", TorchPackage)
    elif root == "cupy":
        p = _package_named("cupy", CupyPackage)
    elif isinstance(x, np.ndarray):
        p = _NUMPY
    elif hasattr(t, "__dlpack__"):
        p = _package_named("dlpack", DLPackPackage)
    else:
        name = t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"
        raise DTypeError(
            f"[{op}] {arg} must be an array (NumPy, CuPy, PyTorch or another DLPack producer), "
            f"got {name}"
        )
    _by_type[t] = p
    return p


def is_gpu_array(x: Any) -> bool:
    """Whether x is a CuPy array or a CUDA torch tensor (anything else: False)."""
    mod = type(x).__module__
    if mod.startswith("cupy"):
        return True
    if mod.startswith("torch"):
        return bool(getattr(x, "is_cuda", False))
    return False


def export(x: Any, op: str = _DEFAULT_OP, arg: str = _DEFAULT_ARG) -> Any:
    """Operand x as C++ takes it (no copy); DTypeError naming op and arg for a non-array."""
    return package_of(x, op, arg).export(x)
