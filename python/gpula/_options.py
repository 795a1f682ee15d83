"""MatmulOptions: a dataclass that also accepts a dict or None, turned into gpula::MatmulOptions;
and the parsers of the options every operation takes (``device``, ``fallback``), which
gpula.linalg uses too. (The C++ bindings parse the same strings again in python/src/tensor.cpp.)"""

from __future__ import annotations

import dataclasses
import logging
from dataclasses import dataclass
from typing import Any

from . import _gpula
from ._gpula import ComputeType, DTypeError, InvalidArgument
from ._interop import dtype_name


@dataclass
class MatmulOptions:
    """Options of gpula.matmul and gpula.Matmul.

    Attributes:
        compute_type: a gl.ComputeType (or its name). Default: COMPUTE_32F for float16, bfloat16,
            float32, complex64 and float8; COMPUTE_64F for float64 and complex128.
        scale_type: dtype of alpha and beta; follows the compute type by default.
        result_type: dtype of the result; the type of `a` by default (float32 is allowed for
            half-precision inputs; bfloat16/float16/float32/float8 for float8 inputs).
        memory_limit: workspace cap on a GPU: "80%" (of device memory), a fraction (0.5) or
            bytes (an int).
        device: run here instead of where the data lives: "cpu", "cuda" or "cuda:N"
            (host data is copied to the GPU and back).
        fallback: None, or "cpu" to retry on the CPU when the GPU runs out of memory.
        blocking: "auto" (device work is asynchronous on the caller's stream; host data is
            waited for) or True (always wait for the device work).
        logger: a logging.Logger that receives this call's messages (plan choice, fallbacks).

    Example:
        >>> import numpy as np, gpula as gl
        >>> a = np.ones((4, 3), np.float32)
        >>> opts = gl.MatmulOptions(compute_type=gl.ComputeType.COMPUTE_32F_FAST_TF32)
        >>> gl.matmul(a, a.T, options=opts).shape
        (4, 4)
        >>> gl.matmul(a, a.T, options={"memory_limit": "50%"}).shape   # a dict works too
        (4, 4)
    """

    compute_type: ComputeType | str | None = None
    scale_type: Any = None
    result_type: Any = None
    memory_limit: str | int | float = "80%"
    device: str | None = None
    fallback: str | None = None
    blocking: bool | str = "auto"
    logger: logging.Logger | None = None


FIELDS = tuple(f.name for f in dataclasses.fields(MatmulOptions))
_DEFAULT_NATIVE = _gpula.NativeMatmulOptions()


def _compute_type(v: Any) -> ComputeType | None:
    if v is None or isinstance(v, ComputeType):
        return v
    if isinstance(v, str):
        try:
            return ComputeType[v.upper()]
        except KeyError:
            pass
    names = ", ".join(c.name for c in ComputeType)
    raise InvalidArgument(f"[matmul] compute_type must be one of {names}; got {v!r}")


def _memory_limit(v: Any) -> tuple:
    """(bytes, fraction); bytes < 0 means 'use the fraction'."""
    if isinstance(v, str):
        s = v.strip()
        if s.endswith("%"):
            try:
                pct = float(s[:-1])
            except ValueError:
                pct = -1.0
            if 0.0 < pct <= 100.0:
                return -1, pct / 100.0
    elif isinstance(v, bool):
        pass
    elif isinstance(v, int):
        if 0 <= v < 2**63:
            return v, 0.0
    elif isinstance(v, float) and 0.0 < v <= 1.0:
        return -1, v
    raise InvalidArgument(
        "[matmul] memory_limit must be a percentage ('80%'), a fraction in (0, 1] or a number of "
        f"bytes, got {v!r}"
    )


def device(v: Any, op: str = "matmul") -> str | None:
    """``device=``: None (where the data lives), "cpu", "cuda" or "cuda:N"; errors name op."""
    if v is None:
        return None
    if not isinstance(v, str):
        raise InvalidArgument(f"[{op}] device must be None, 'cpu', 'cuda' or 'cuda:N', got {v!r}")
    _gpula.parse_device(v, op)  # the grammar lives in the extension (python/src/tensor.cpp)
    return v


def fallback(v: Any, op: str = "matmul") -> bool:
    """``fallback=``: None (or "none") or "cpu"; True for "cpu". Errors name op."""
    if v is None or v == "none":
        return False
    if v == "cpu":
        return True
    raise InvalidArgument(f"[{op}] fallback must be None or 'cpu', got {v!r}")


def _blocking(v: Any) -> bool:
    if v == "auto" or v is False:
        return False
    if v is True:
        return True
    raise InvalidArgument(f"[matmul] blocking must be 'auto', True or False, got {v!r}")


def _dtype(v: Any, field: str) -> str | None:
    return None if v is None else dtype_name(v, "matmul", field)


def _logger(v: Any) -> Any:
    if v is not None and not callable(getattr(v, "log", None)):
        raise DTypeError(f"[matmul] logger must be a logging.Logger, got {type(v).__name__}")
    return v


def from_any(options: Any) -> MatmulOptions:
    """A MatmulOptions from a MatmulOptions, a dict of its fields, or None."""
    if options is None:
        return MatmulOptions()
    if isinstance(options, MatmulOptions):
        return options
    if isinstance(options, dict):
        for key in options:
            if key not in FIELDS:
                raise InvalidArgument(
                    f"[matmul] unknown option '{key}'; MatmulOptions has {', '.join(FIELDS)}"
                )
        return MatmulOptions(**options)
    raise DTypeError(
        f"[matmul] options must be a MatmulOptions, a dict or None, got {type(options).__name__}"
    )


def native(options: Any) -> Any:
    """gpula::MatmulOptions (as _gpula.NativeMatmulOptions) for options in any accepted form."""
    if options is None:
        return _DEFAULT_NATIVE
    o = from_any(options)
    nbytes, fraction = _memory_limit(o.memory_limit)
    return _gpula.NativeMatmulOptions(
        compute_type=_compute_type(o.compute_type),
        scale_type=_dtype(o.scale_type, "scale_type"),
        result_type=_dtype(o.result_type, "result_type"),
        memory_limit_bytes=nbytes,
        memory_limit_fraction=fraction,
        device=device(o.device),
        fallback_cpu=fallback(o.fallback),
        blocking=_blocking(o.blocking),
        logger=_logger(o.logger),
    )
