"""The few vector operations gpula's Python loops (Krylov on a GPU LinearOperator, lsqr, lsmr,
Lanczos) need, on arrays of the caller's package (NumPy, CuPy, torch) and device: the vectors
stay where they are; scalars of the recurrences come back to the host as Python numbers."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import DTypeError, InvalidArgument
from ._arrays import _cast, _device, _dtype_name, _from_numpy, _package, _to_numpy


class Space:
    """Vectors of one package, device and dtype: allocation, conversion in, and reductions."""

    def __init__(self, package: str, device: str, dtype: str):
        self.package, self.device, self.dtype = package, device, dtype
        self.complex = dtype.startswith("complex")
        self.real_dtype = {"complex64": "float32", "complex128": "float64"}.get(dtype, dtype)
        self.eps = float(np.finfo(np.dtype(dtype)).eps)

    @classmethod
    def of(cls, x: Any, dtype: str) -> Space:
        p = _package(x)
        return cls(p, _device(x, p), dtype)

    def zeros(self, shape: Any) -> Any:
        return _from_numpy(np.zeros(shape, self.dtype), self.package, self.device)

    def host(self, a: np.ndarray) -> Any:
        """A host array as an array of this space (dtype converted)."""
        return _from_numpy(np.ascontiguousarray(a, dtype=self.dtype), self.package, self.device)

    def vector(self, x: Any, n: int, name: str, op: str) -> Any:
        """x (any package, shape (n,) or (n, 1)) as a new 1-D array of this space."""
        if _package_or_none(x) is None:
            x = np.asarray(x)
        p = _package(x)
        if tuple(x.shape) not in ((n,), (n, 1)):
            raise InvalidArgument(f"[{op}] {name} must have shape ({n},), got {tuple(x.shape)}")
        if p != self.package or _device(x, p) != self.device:
            x = _from_numpy(_to_numpy(x, p), self.package, self.device)
        x = x.reshape(n)
        return _cast(x, self.dtype, self.package)  # always a new array

    def result(self, y: Any, n: int, what: str, op: str) -> Any:
        """What a user's operator returned, checked ((n,) or (n, 1), numeric), as a 1-D array
        of this space (gl.InvalidArgument / gl.DTypeError naming ``what`` otherwise)."""
        p = _package_or_none(y)
        if p is None:
            y = np.asarray(y)
            p = "numpy"
        try:
            kind = np.dtype(_dtype_name(y)).kind
        except TypeError:
            kind = "O"
        if kind not in "biufc":
            raise DTypeError(
                f"[{op}] {what} must return a numeric array of shape ({n},), got "
                f"{type(y).__name__} of dtype {_dtype_name(y)}"
            )
        if tuple(y.shape) not in ((n,), (n, 1)):
            raise InvalidArgument(
                f"[{op}] {what} must return shape ({n},), got {type(y).__name__} of shape "
                f"{tuple(y.shape)}"
            )
        if p != self.package or _device(y, p) != self.device:
            y = _from_numpy(_to_numpy(y, p), self.package, self.device)
        y = y.reshape(n)
        return y if _dtype_name(y) == self.dtype else _cast(y, self.dtype, self.package)


def _package_or_none(x: Any) -> str | None:
    try:
        return _package(x) if hasattr(x, "shape") else None
    except Exception:  # noqa: BLE001  (not an array of a known package)
        return None


def vdot(a: Any, b: Any) -> complex | float:
    """sum(conj(a) * b) as a Python number (a host sync on a GPU)."""
    return (a.conj() * b).sum().item()


def norm(x: Any) -> float:
    """The 2-norm of a 1-D array, as a Python float (scaled: no overflow of the squares)."""
    m = float(abs(x).max().item()) if x.shape[0] else 0.0
    if m == 0.0 or not math.isfinite(m):
        return m
    y = x / m
    return m * math.sqrt(float((y.conj() * y).real.sum().item()))
