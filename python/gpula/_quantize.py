"""gpula.quantize_fp8: float8 quantization with per-tensor, row-wise or block scales."""

from __future__ import annotations

from typing import Any

from . import _gpula, _interop, _log
from ._gpula import DTypeError, InvalidArgument

_OP = "quantize_fp8"
_DTYPES = {
    "e4m3": "float8_e4m3fn",
    "float8_e4m3fn": "float8_e4m3fn",
    "e5m2": "float8_e5m2",
    "float8_e5m2": "float8_e5m2",
}


def _block_name(block: Any) -> str:
    if block is None:
        return "tensor"
    if isinstance(block, str) and block == "row":
        return "row"
    if type(block) is int and block == 128:
        return "128"
    if isinstance(block, (tuple, list)) and tuple(block) == (128, 128):
        if all(type(b) is int for b in block):
            return "(128, 128)"
    raise InvalidArgument(
        f"[{_OP}] block must be None (one scale per tensor), 'row', 128 or (128, 128); got {block!r}"
    )


def quantize_fp8(
    x: Any, dtype: str = "e4m3", block: Any = None, *, stream: Any = None
) -> tuple[Any, Any]:
    """Quantizes ``x`` to float8 with float32 scales: returns ``(q, scales)``, ``x ~ scales * q``.

    ``x`` is a float16, bfloat16 or float32 array (NumPy, CuPy or torch); ``q`` has its shape and
    ``dtype`` (``"e4m3"`` = float8_e4m3fn, max 448, or ``"e5m2"`` = float8_e5m2, max 57344), in
    the same package and on the same device (NumPy needs ml_dtypes for float8). Per block,
    ``scale = amax / fp8_max`` (1 where ``amax`` is 0) and ``q = saturate(round(x / scale))``,
    rounding to nearest even; ``amax`` is the largest ``|x|`` over the block's finite elements:
    NaN stays NaN in ``q`` and +-Inf saturates to +-fp8_max. The GPU and the CPU give the same
    bits. ``x`` is not modified.

    ``block`` says what one scale covers, for ``x`` of shape (R, K):

    * ``None``: all of ``x`` (any shape); ``scales`` has shape ().
    * ``"row"``: each row; ``scales`` has shape (R,).
    * ``128``: 1x128 blocks along K; ``scales`` has shape (R, ceil(K/128)), row index fastest
      (strides (1, R), the transpose of a contiguous array).
    * ``(128, 128)``: 128x128 blocks; ``scales`` has shape (ceil(R/128), ceil(K/128)), contiguous.

    These are the layouts :func:`gpula.matmul` takes as ``epilog_inputs["a_scale"]`` for
    ``a = q``. For ``b``, quantize ``b.T`` (a weight of shape (N, K)) and pass ``q.T`` and
    ``scales.T`` (what torch._scaled_mm takes too).

    Example:
        >>> import numpy as np, gpula as gl
        >>> x = np.array([[1.0, -2.0, 0.5], [0.0, 0.0, 0.0]], np.float32)
        >>> q, s = gl.quantize_fp8(x, block="row")
        >>> s
        array([0.00446429, 1.        ], dtype=float32)
        >>> q.astype(np.float32) * s[:, None]
        array([[ 1. , -2. ,  0.5],
               [ 0. ,  0. ,  0. ]], dtype=float32)
    """
    pkg = _interop.package_of(x, _OP, "x")
    _log.sync_level()
    if not isinstance(dtype, str) or dtype not in _DTYPES:
        raise DTypeError(f"[{_OP}] dtype must be 'e4m3' or 'e5m2', got {dtype!r}")
    name = _block_name(block)
    ex = pkg.export(x)
    shape = tuple(int(d) for d in x.shape)
    scale_shape, scale_strides = _gpula.quantize_fp8_spec(list(shape), name)
    device = pkg.device_of(x)
    q = pkg.empty(shape, _DTYPES[dtype], device, _OP)
    transposed = len(scale_shape) == 2 and scale_strides[0] == 1 and scale_shape[0] > 1
    if transposed:
        scales = pkg.empty(scale_shape[::-1], "float32", device, _OP).T
    else:
        scales = pkg.empty(scale_shape, "float32", device, _OP)
    if stream is None:
        handle = pkg.current_stream(device)
    else:
        handle = _interop.stream_handle(stream, _OP)
        pkg.hand_over(_interop.copies(ex, x), handle, device)  # a lazy view's copy, read on it
    _gpula.quantize_fp8_into(
        ex,
        pkg.export(q),
        pkg.export(scales),
        name,
        handle,
    )
    return q, scales
