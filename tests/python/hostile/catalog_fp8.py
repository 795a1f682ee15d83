"""gl.quantize_fp8 (issue 21) with valid arguments and a NumPy float64 reference: per block (all
of x, a row, 1x128 along the last dimension, 128x128), scale = amax / 448 over the finite |x|
(1 where that is 0) and x ~ scale * q. The reference refuses what gpula must refuse: inputs that
are not float16, bfloat16 or float32 (integers, bool, float64, complex: gl.DTypeError), block
shapes on non-2-D x. The check compares the dequantized q with x (one fp8 step: 2^-3 relative for
e4m3 normal values, 2^-3 for e5m2, plus the subnormal step times the scale) and the result's package with x's.
"""

from __future__ import annotations

import numpy as np

import gpula as gl

from .core import Arg, Entry, Opt, as_np, is_torch

_FLOATS = ("float16", "bfloat16", "float32")
_BLOCKS = {"tensor": None, "row": "row", "b128": 128, "b128x128": (128, 128)}


def _dtype_name(x):
    return str(x.dtype).replace("torch.", "")


def _ref(d):
    x, block = d["x"], d["kw"].get("block")
    if not hasattr(x, "dtype") or _dtype_name(x) not in _FLOATS:
        raise TypeError("quantize_fp8 takes float16, bfloat16, float32")
    if block is not None and len(x.shape) != 2:
        raise ValueError("block modes take 2-D x")
    return as_np(x).astype(np.float64)


def _check(r, ref, d, strict):
    q, s = r
    if is_torch(d["x"]) != is_torch(q) or is_torch(d["x"]) != is_torch(s):
        return "q/scales not in x's package"
    if tuple(q.shape) != ref.shape:
        return f"q shape {tuple(q.shape)} != {ref.shape}"
    qn = np.asarray(as_np(q.float() if is_torch(q) else q)).astype(np.float64)
    sn = np.asarray(as_np(s)).astype(np.float64)
    if not np.isfinite(sn).all() or (sn <= 0).any():
        return f"scales not positive finite: {sn}"
    block = d["kw"].get("block")
    if block is None:
        per = np.full(ref.shape, float(sn))
    else:
        r_, k = ref.shape
        rows = np.arange(r_) // (128 if block == (128, 128) else 1)
        cols = np.arange(k) // 128 if block != "row" else np.zeros(k, int)
        grid = sn[:, None] if block == "row" else sn
        per = grid[rows[:, None], cols[None, :]] if ref.size else np.zeros(ref.shape)
    fin = np.isfinite(ref)
    err = np.abs(qn * per - ref)[fin]
    e5m2 = d["kw"].get("dtype") == "e5m2"  # half an fp8 step: relative, and subnormal
    bound = (np.abs(ref) * 2.0 ** (-3 if e5m2 else -4) + per * 2.0 ** (-17 if e5m2 else -10))[fin]
    if (err > bound).any():
        return f"dequantized q off by {err.max()}"
    return None


def entries() -> list[Entry]:
    x = Arg("x", "mat")
    out = []
    for label, block in _BLOCKS.items():
        out.append(Entry(
            f"quantize_fp8[{label}]", "quantize_fp8",
            lambda g: {"x": g.standard_normal((130, 260)).astype(np.float32),
                       "kw": {"block": block} if block is not None else {}},
            lambda d: gl.quantize_fp8(d["x"], **d["kw"]),
            _ref, _check, (x,),
            options=(Opt("dtype_e5m2", {"dtype": "e5m2"}, expect="ref"),
                     Opt("dtype_int8", {"dtype": "int8"}, mention="dtype"),
                     Opt("block_64", {"block": 64}, mention="block"),
                     Opt("unknown_kw", {"foo": 1}, expect="signature", mention="foo")),
            mention="x"))
    return out
