"""The array helpers gl.sparse shares: packages and devices by name ("numpy", "cupy", "torch";
"cpu", "cuda:N"), conversions, casts, and the one dtype promotion rule of sparse operations.
Each hands the work to that package's adapter (gpula._interop)."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from .._interop import package_named
from ..errors import DTypeError, Error

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
    raise DTypeError(f"expected a numpy, cupy or torch array, got {type(x).__name__}")


# gl.sparse names packages ("numpy", "cupy", "torch") and devices ("cpu", "cuda:N"); these
# hand each operation to that package's adapter (gpula._interop).
def _device(x: Any, package: str) -> str:
    return package_named(package).device_name(x)


def _dtype_name(x: Any, package: str | None = None) -> str:
    return str(x.dtype).replace("torch.", "")


def _to_numpy(x: Any, package: str) -> np.ndarray:
    return package_named(package).to_numpy(x)


def _from_numpy(a: np.ndarray, package: str, device: str) -> Any:
    p = package_named(package)
    return p.from_numpy(a, p.device_from_name(device))


def _contiguous_1d(x: Any, package: str) -> Any:
    p = package_named(package)
    return p.contiguous(p.detach(x))


def _cast(x: Any, dtype: str, package: str) -> Any:
    """x as dtype (a new array), in its package and on its device."""
    return package_named(package).astype(x, dtype)


def _dtype_str(d: Any) -> str:
    if isinstance(d, str):
        return d
    if type(d).__module__.startswith("torch"):
        return str(d).replace("torch.", "")
    try:
        return np.dtype(d).name
    except TypeError:
        return str(d)


def _value_dtype(names: list[str]) -> np.dtype | None:
    """NumPy's promotion of dtype names, integers and bool as float64 and float16 as float32;
    None where that is not one of the value dtypes."""
    try:
        dt = np.result_type(*[np.dtype(n) for n in names])
    except (TypeError, ValueError):
        return None
    if dt.kind in "biu":
        dt = np.dtype(np.float64)
    elif dt == np.float16:
        dt = np.dtype(np.float32)
    return dt if dt.name in _VALUE_DTYPES else None


def result_dtype(op: str, *dtypes: Any, args: tuple[str, ...] = ()) -> str:
    """The value dtype a sparse operation computes in: NumPy's promotion of `dtypes` (names,
    NumPy or torch dtypes), with integers and bool promoted to float64 and float16 to float32;
    DTypeError for anything that is not a number, naming the argument of that dtype (``args``:
    the arguments' names, in the order of ``dtypes``)."""
    names = [_dtype_str(d) for d in dtypes if d is not None]
    dt = _value_dtype(names)
    if dt is not None:
        return dt.name
    named = [(a, _dtype_str(d)) for a, d in zip(args, dtypes) if d is not None]
    bad = [(a, n) for a, n in named if _value_dtype([n]) is None] or named
    if bad:
        what = ", ".join(f"{a} has dtype {n}" for a, n in bad)
        raise DTypeError(
            f"[{op}] {what}; values must be float32, float64, complex64 or complex128 (bool and "
            "integers are promoted to float64, float16 to float32)"
        )
    raise DTypeError(
        f"[{op}] values must be float32, float64, complex64 or complex128 (integers are "
        f"promoted to float64), got {' and '.join(names)}"
    )


def renamed(e: Error, op: str) -> Error:
    """e (same type and attributes) with its message naming `op`, the call the user made,
    instead of the solver or plan that op ran."""
    e.args = tuple(
        re.sub(r"^\[[^\]]*\]", f"[{op}]", a, count=1) if isinstance(a, str) else a for a in e.args
    )
    return e
