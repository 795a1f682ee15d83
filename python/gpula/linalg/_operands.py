"""Operands of gpula.linalg on any package (NumPy, CuPy, torch, other DLPack producers, and what
NumPy takes for an array): reading, type promotion as numpy.linalg, conversion, and SciPy's
check_finite scan; what every native call takes besides them (``Call``); and the array
helpers the compositions (top-k, svd's gram method) share. Every function that can raise names
the operation (``op``: "linalg.svd", or "svd" where the name says ``linalg.<op>``) and the
argument (``arg``) in its message.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from .. import _interop, _log, _options
from .._gpula import DTypeError, InvalidArgument, NotSupported, OutOfMemory
from .._matmul import matmul

INTEGER = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
# dtype name -> (complex, double precision) of the type it is computed in.
_KIND = {
    "float16": (False, False),
    "bfloat16": (False, False),
    "float32": (False, False),
    "float64": (False, True),
    "complex32": (True, False),
    "complex64": (True, False),
    "complex128": (True, True),
}
_KIND.update({n: (False, True) for n in INTEGER})
# Complex dtype name -> its real counterpart.
_REAL = {"complex64": "float32", "complex128": "float64"}


def dtype_of(x: Any, op: str, arg: str) -> str:
    """The dtype name of array x ("float64", also for torch.float64)."""
    return _interop.dtype_name(x.dtype, op, arg)


def real_dtype(name: str) -> str:
    """The real dtype of a floating dtype name (complex128 -> float64)."""
    return _REAL.get(name, name)


def as_array(x: Any, op: str, arg: str) -> Any:
    """x as a NumPy, CuPy or torch array: those as they are, another DLPack producer as a
    zero-copy NumPy (CPU) or CuPy/torch (GPU) array, and what NumPy takes for an array (lists,
    tuples, Python and NumPy scalars) as a new NumPy array."""
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, (list, tuple, int, float, complex, np.generic)):  # bool is an int
        try:
            arr = np.asarray(x)
        except (ValueError, TypeError) as e:  # ragged nesting
            raise InvalidArgument(f"[{op}] {arg} is not a regular array: {e}") from None
        if arr.dtype.kind not in "biufc":
            raise DTypeError(f"[{op}] {arg} must hold numbers, got dtype {arr.dtype}")
        return arr
    try:
        pkg = _interop.package_of(x, op, arg)
    except DTypeError:
        raise DTypeError(
            f"[{op}] {arg} must be an array (NumPy, CuPy, PyTorch or any DLPack producer) or a "
            f"sequence of numbers, got {type(x).__module__}.{type(x).__qualname__}"
        ) from None
    if pkg.name != "dlpack":
        return x
    try:
        if int(x.__dlpack_device__()[0]) in (1, 3):  # CPU, CUDA host memory
            return np.from_dlpack(x)
        return pkg.gpu(op).from_dlpack(x)  # type: ignore[attr-defined]
    except NotSupported:
        raise
    except (BufferError, TypeError, ValueError, RuntimeError) as e:
        raise DTypeError(f"[{op}] {arg} cannot be read through DLPack: {e}") from None


def array_module(x: Any) -> Any:
    """The module of x's package (numpy, cupy or torch), for the functions all three share."""
    name = _interop.package_of(x).name
    return sys.modules[name] if name in ("torch", "cupy") else np


def out_of_memory(op: str, arg: str, e: BaseException) -> OutOfMemory | None:
    """gl.OutOfMemory naming op and arg for NumPy's MemoryError or a torch allocator's failure
    (a RuntimeError saying so); None for any other exception."""
    text = str(e).splitlines()[0] if str(e) else type(e).__name__
    if isinstance(e, MemoryError):
        return OutOfMemory(f"[{op}] {arg}: out of host memory: {text}")
    if isinstance(e, RuntimeError) and ("alloc" in text.lower() or "out of memory" in text.lower()):
        return OutOfMemory(f"[{op}] {arg}: out of memory: {text}")
    return None


def to_host(x: Any) -> np.ndarray:
    """x (a NumPy, CuPy or torch array, or a NumPy scalar) as a NumPy array on the host."""
    if isinstance(x, (np.ndarray, np.generic)):  # a NumPy reduction may give a NumPy scalar
        return np.asarray(x)
    return _interop.package_of(x).to_numpy(x)


def like(a: Any, x: np.ndarray) -> Any:
    """Host array x as a contiguous array of a's package on a's device."""
    pkg = _interop.package_of(a)
    return pkg.from_numpy(x, pkg.device_of(a))


def contig(x: Any) -> Any:
    """x as a C-contiguous array of its package (x itself where it is one)."""
    return _interop.package_of(x).contiguous(x)


def mT(x: Any) -> Any:  # noqa: N802  (NumPy's name)
    return x.swapaxes(-1, -2) if hasattr(x, "swapaxes") else x.transpose(-1, -2)


def adj(x: Any) -> Any:
    """The conjugate transpose of each matrix (a view where the package makes one)."""
    return mT(x).conj() if is_complex(x) else mT(x)


def is_complex(x: Any) -> bool:
    return "complex" in str(x.dtype)


def np_dtype(x: Any) -> np.dtype:
    """x's dtype as a NumPy dtype (also for torch tensors)."""
    return np.dtype(str(x.dtype).replace("torch.", ""))


def real_np_dtype(x: Any) -> np.dtype:
    """The real NumPy dtype of floating x (float32 for complex64)."""
    return np.dtype(real_dtype(np_dtype(x).name))


def flip_last(x: Any) -> Any:
    """x reversed along its last axis (a new array; torch takes no negative steps)."""
    if _interop.package_of(x).name == "torch":
        return x.flip(-1)
    return x[..., ::-1].copy()


def mm(a: Any, b: Any) -> Any:
    """a @ b by gpula's matmul, where the data lives."""
    r = matmul(a, b)
    return r[0] if isinstance(r, tuple) else r


def in_package_of(x: Any, like: Any) -> Any:
    """x as an array of like's package (through DLPack, copying a NumPy x first, whose read-only
    views DLPack cannot export); x itself when it already is one. Both are on one device: the
    native call that took them as operands checked that."""
    xp = array_module(like)
    if array_module(x) is xp:
        return x
    return xp.from_dlpack(np.array(x) if isinstance(x, np.ndarray) else x)


def concat(xs: list[Any], axis: int) -> Any:
    """The arrays xs (one package) joined along axis, a new array."""
    xp = array_module(xs[0])
    return xp.cat(xs, axis) if xp.__name__ == "torch" else xp.concatenate(xs, axis=axis)


def eye_like(a: Any) -> Any:
    """Identity matrices of a's shape (..., n, n), dtype, package and device (a new array)."""
    n = a.shape[-1]
    return like(a, np.broadcast_to(np.eye(n, dtype=np_dtype(a)), tuple(a.shape)).copy())


def unbroadcast(x: Any) -> Any:
    """x without the repeats of its zero-stride (broadcast) dimensions, which keep size 1."""
    strides = x.stride() if callable(getattr(x, "stride", None)) else x.strides
    repeated = [st == 0 and d > 1 for st, d in zip(strides, x.shape)]
    if not any(repeated):
        return x
    return x[tuple(slice(0, 1) if r else slice(None) for r in repeated)]


def astype(x: Any, dtype: str) -> Any:
    """x converted to dtype (a name; native byte order) in its own package and on its device,
    always a new array; a broadcast view is converted once per distinct element and broadcast
    again."""
    c = unbroadcast(x)
    pkg = _interop.package_of(c)
    r = pkg.astype(c, dtype)
    if c is x:
        return r
    if pkg.name == "torch":
        return r.expand(tuple(x.shape))
    return array_module(r).broadcast_to(r, x.shape)


def empty_1d(like: Any, dtype: str) -> Any:
    """An empty (0,) array of dtype in like's package and on its device."""
    pkg = _interop.package_of(like)
    return pkg.empty((0,), dtype, pkg.device_of(like))


def all_finite(x: Any) -> bool:
    """Whether no element of x is NaN or +-Inf (a reduction; on a GPU it waits for the result)."""
    c = unbroadcast(x)
    return bool(array_module(c).isfinite(c).all())


def promoted(op: str, named: list[tuple[str, Any]]) -> str:
    """The dtype numpy.linalg computes operands of these dtypes in: bool and integers as
    float64, float16/bfloat16 as float32, then the common type (float32 with float64: float64;
    real with complex: complex)."""
    cplx = double = False
    for arg, x in named:
        name = dtype_of(x, op, arg)
        kind = _KIND.get(name)
        if kind is None:
            raise DTypeError(
                f"[{op}] unsupported dtype {name} for {arg}; linalg computes in float32, "
                "float64, complex64 or complex128 (bool and integer input is promoted to "
                "float64, float16 and bfloat16 to float32)"
            )
        cplx, double = cplx or kind[0], double or kind[1]
    if cplx:
        return "complex128" if double else "complex64"
    return "float64" if double else "float32"


def check_finite_flag(op: str, v: Any) -> bool:
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    raise InvalidArgument(f"[{op}] check_finite must be True or False, got {v!r}")


def operands(op: str, check_finite: Any, **named: Any) -> list[Any]:
    """The operands as linalg computes them: array-likes read (as_array), converted to their
    common type (promoted; big-endian NumPy arrays to native order) without touching the
    caller's arrays, and, with check_finite (SciPy's rule), scanned for NaN and Inf:
    gl.InvalidArgument (a ValueError) naming the operand."""
    finite = check_finite_flag(op, check_finite)
    arrays = [(arg, as_array(x, op, arg)) for arg, x in named.items()]
    target = promoted(op, arrays)
    out = []
    for arg, x in arrays:
        swapped = isinstance(x, np.ndarray) and not x.dtype.isnative
        if swapped or dtype_of(x, op, arg) != target:
            x = astype(x, target)
        if finite and not all_finite(x):
            raise InvalidArgument(f"[{op}] {arg} must not contain infs or NaNs")
        out.append(x)
    return out


# ---- what every native call takes ----------------------------------------------------------



def operands_of(op: str, check_finite: Any, **named: Any) -> list[Any]:
    """operands() for linalg.<op>."""
    return operands(f"linalg.{op}", check_finite, **named)


def flag(op: str, name: str, v: Any) -> bool:
    """Argument `name` of linalg.<op> as a bool: True or False (NumPy's too), else
    gl.InvalidArgument."""
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, np.ndarray) and v.shape == () and v.dtype == np.bool_:
        return bool(v)  # SciPy 1.18 (GPU host) returns cho_factor's lower as a 0-d array
    raise InvalidArgument(f"[linalg.{op}] {name} must be True or False, got {v!r}")


class Call:
    """The package of the first operand, and what every native call takes besides operands."""

    __slots__ = ("dev", "kwargs", "pkg")

    def __init__(self, op: str, a: Any, check_info: Any, device: Any, fallback: Any, stream: Any):
        self.pkg = _interop.package_of(a, f"linalg.{op}", "a")
        self.dev = self.pkg.device_of(a)
        _log.sync_level()
        self.kwargs: dict[str, Any] = {
            "check_info": flag(op, "check_info", check_info),
            "device": _options.device(device, f"linalg.{op}"),
            "fallback_cpu": _options.fallback(fallback, f"linalg.{op}"),
            "framework": _interop.FRAMEWORK[self.pkg.name],
            "stream": self.pkg.current_stream(self.dev)
            if stream is None
            else _interop.stream_handle(stream, f"linalg.{op}"),
        }


def with_info(call: Call, value: Any, info: Any) -> Any:
    """value, or (value, info) where the call was made with check_info=False."""
    return value if call.kwargs["check_info"] else (value, info)
