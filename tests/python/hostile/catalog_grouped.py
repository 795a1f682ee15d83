"""gl.grouped_matmul and gl.GroupedMatmul (MoE form and lists of pairs): the generic array
mutations of a, b, offsets and bias, and the bad inputs particular to grouping (offsets
decreasing, negative, past T, of the wrong length, float, 2-D; mismatched K; a group count that
differs from b's; a bias of the wrong shape; mixed devices). Reference: a loop of NumPy float64
matmuls, which refuses what grouped_matmul must refuse."""

from __future__ import annotations

from typing import Any

import numpy as np

import gpula as gl

from .core import HAS_CUDA, Arg, Entry, Opt, as_np, close, dtype_check, first

_OP = "grouped_matmul"


def _make(g: np.random.Generator) -> dict:
    return {"a": g.standard_normal((7, 3)), "b": g.standard_normal((3, 3, 4)),
            "offsets": np.array([2, 2, 6], np.int64), "kw": {}}


def _make_bias(g: np.random.Generator) -> dict:
    return {**_make(g), "bias": g.standard_normal((3, 4))}


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))


def _ref(d: dict) -> Any:
    """The loop of matmuls, after the checks a grouped call makes of its offsets."""
    a, b = np.asarray(as_np(d["a"])), np.asarray(as_np(d["b"]))
    off = d["offsets"]
    off = np.asarray(as_np(off)) if not isinstance(off, (list, tuple)) else np.asarray(off)
    for x in (a, b):
        if x.dtype.kind not in "f" or x.dtype != a.dtype:
            raise TypeError("operands must share one floating dtype")
    if a.ndim != 2 or b.ndim != 3 or a.shape[1] != b.shape[1]:
        raise ValueError("shapes")
    if off.dtype.kind not in "iu" or off.dtype.itemsize < 4 or off.dtype.kind == "u":
        raise TypeError("offsets must be int32 or int64")
    if off.ndim != 1 or off.shape[0] != b.shape[0]:
        raise ValueError("offsets length")
    if len(off) and (off.min() < 0 or off.max() > a.shape[0] or np.any(np.diff(off) < 0)):
        raise ValueError("offsets values")
    bias = d.get("bias")
    if bias is not None:
        bias = np.asarray(as_np(bias))
        if bias.shape != (b.shape[0], b.shape[2]) or bias.dtype != a.dtype:
            raise ValueError("bias")
    out = np.zeros((a.shape[0], b.shape[2]), np.float64)
    start = 0
    for g, end in enumerate(off):
        r = a[start:end].astype(np.float64) @ b[g].astype(np.float64)
        if bias is not None:
            r = _gelu(r + bias[g])
        out[start:end] = r
        start = end
    return out.astype(a.dtype)


def _call(d: dict) -> Any:
    return gl.grouped_matmul(d["a"], d["b"], d["offsets"], **d["kw"])


def _call_bias(d: dict) -> Any:
    return gl.grouped_matmul(d["a"], d["b"], d["offsets"], epilog="GELU_BIAS",
                             epilog_inputs={"bias": d["bias"]}, **d["kw"])


def _call_obj(d: dict) -> Any:
    kw = dict(d["kw"])
    epilog = kw.pop("epilog", None)
    with gl.GroupedMatmul(d["a"], d["b"], **kw) as g:
        g.plan(epilog=epilog)
        return g.execute(offsets=d["offsets"])


def _check(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    return first(close(r, ref), dtype_check(r, ref) if strict else None)


def _list_make(g: np.random.Generator) -> dict:
    return {"a": [g.standard_normal((4, 3)), g.standard_normal((0, 2)), g.standard_normal((5, 6))],
            "b": [g.standard_normal((3, 2)), g.standard_normal((2, 7)), g.standard_normal((6, 1))],
            "kw": {}}


def _list_ref(d: dict) -> Any:
    return [np.asarray(x) @ np.asarray(y) for x, y in zip(d["a"], d["b"])]


def _list_check(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    if not isinstance(r, list) or len(r) != len(ref):
        return f"returns {type(r).__name__}, expected a list of {len(ref)}"
    return first(*(close(x, y, f"result[{i}]") for i, (x, y) in enumerate(zip(r, ref))))


A = Arg("a", "mat")
B = Arg("b", "mat", batch=True)
OFF = Arg("offsets", "vec", only=("empty", "zero_stride", "unaligned", "negstride", "noncontig",
                                  "readonly", "bigendian", "bool", "float16",
                                  "object", "list", "scalar", "none", "str", "dict", "torch"))
BIAS = Arg("bias", "mat")

_OPTS = (
    Opt("epilog_bogus", {"epilog": "BOGUS"}, mention="epilog"),
    Opt("epilog_relu_aux", {"epilog": "RELU_AUX"}, mention="RELU_AUX"),
    Opt("epilog_drelu", {"epilog": gl.Epilog.DRELU}, mention="DRELU"),
    Opt("epilog_bias_without_bias", {"epilog": "BIAS"}, mention="bias"),
    Opt("grouped_algo_bogus", {"grouped_algo": "fast"}, mention="grouped_algo"),
    Opt("grouped_algo_int", {"grouped_algo": 1}, mention="grouped_algo"),
    Opt("grouped_algo_per_group", {"grouped_algo": "per_group"}, expect="ref"),
    # The cases' arrays are NumPy's: the CPU runs them, which has no grouped GEMM path.
    Opt("grouped_algo_grouped_gemm", {"grouped_algo": "grouped_gemm"}, mention="grouped_gemm"),
    Opt("options_unknown", {"options": {"foo": 1}}, mention="foo"),
    Opt("device_cuda", {"options": {"device": "cuda"}}, mention=("device", "cuda")),
    Opt("fallback_cpu", {"options": {"fallback": "cpu"}}, mention="fallback"),
    Opt("epilog_inputs_unknown", {"epilog_inputs": {"foo": np.ones(3)}}, mention="foo"),
    Opt("epilog_inputs_list", {"epilog_inputs": [1]}, mention="epilog_inputs"),
    Opt("stream_str", {"stream": "abc"}, mention="stream"),
    Opt("unknown_kw", {"foo": 1}, expect="signature", mention="foo"),
)


def _bad(offsets: Any = None, **changes: Any) -> Any:
    def make(g: np.random.Generator) -> dict:
        d = _make_bias(g)
        if offsets is not None:
            d["offsets"] = offsets
        for k, v in changes.items():
            d[k] = v(g) if callable(v) else v
        return d
    return make


# (name, make, call, mention): inputs a grouped call must refuse, naming `mention`.
BAD = (
    ("offsets_decreasing", _bad(np.array([4, 2, 6])), _call, "offsets"),
    ("offsets_negative", _bad(np.array([-1, 2, 6])), _call, "offsets"),
    ("offsets_past_t", _bad(np.array([1, 2, 8])), _call, "offsets"),
    ("offsets_too_short", _bad(np.array([2, 6])), _call, "offsets"),
    ("offsets_too_long", _bad(np.array([1, 2, 3, 6])), _call, "offsets"),
    ("offsets_float", _bad(np.array([2.0, 2.0, 6.0])), _call, "offsets"),
    ("offsets_float_list", _bad([2.0, 2.5, 6.0]), _call, "offsets"),
    ("offsets_2d", _bad(np.array([[2, 2, 6]])), _call, "offsets"),
    ("offsets_str", _bad("2,2,6"), _call, "offsets"),
    ("k_mismatch", _bad(b=lambda g: g.standard_normal((3, 4, 4))), _call, ("b", "K")),
    ("b_2d", _bad(b=lambda g: g.standard_normal((3, 4))), _call, "b"),
    ("bias_wrong_shape", _bad(bias=lambda g: g.standard_normal((2, 4))), _call_bias, "bias"),
    ("bias_1d", _bad(bias=lambda g: g.standard_normal(4)), _call_bias, "bias"),
    ("bias_float32", _bad(bias=lambda g: g.standard_normal((3, 4)).astype(np.float32)),
     _call_bias, "bias"),
    ("mixed_dtypes", _bad(b=lambda g: g.standard_normal((3, 3, 4)).astype(np.float32)), _call,
     "dtype"),
    ("list_with_offsets",
     _bad(a=lambda g: [np.ones((2, 3))], b=lambda g: [np.ones((3, 2))]), _call, "offsets"),
    ("list_k_mismatch",
     lambda g: {"a": [np.ones((2, 3))], "b": [np.ones((4, 2))], "kw": {}},
     lambda d: gl.grouped_matmul(d["a"], d["b"]), "b[0]"),
    ("list_lengths",
     lambda g: {"a": [np.ones((2, 3))] * 2, "b": [np.ones((3, 2))], "kw": {}},
     lambda d: gl.grouped_matmul(d["a"], d["b"]), "b"),
    ("list_array_mix",
     lambda g: {"a": [np.ones((2, 3))], "b": np.ones((1, 3, 2)), "kw": {}},
     lambda d: gl.grouped_matmul(d["a"], d["b"]), "b"),
    ("list_bias_array",
     lambda g: {"a": [np.ones((2, 3))], "b": [np.ones((3, 2))], "kw": {}},
     lambda d: gl.grouped_matmul(d["a"], d["b"], epilog="BIAS",
                                 epilog_inputs={"bias": np.ones(2)}), "bias"),
    ("execute_before_plan", _bad(), lambda d: gl.GroupedMatmul(d["a"], d["b"]).execute(
        offsets=d["offsets"]), "plan"),
    ("execute_without_offsets", _bad(), lambda d: _planned(d).execute(), "offsets"),
    ("execute_after_free", _bad(), lambda d: _freed(d).execute(offsets=d["offsets"]), "free"),
    ("reset_other_shape", _bad(), lambda d: _planned(d).reset_operands(a=np.ones((8, 3))), "a"),
)


def _planned(d: dict) -> Any:
    g = gl.GroupedMatmul(d["a"], d["b"])
    g.plan()
    return g


def _freed(d: dict) -> Any:
    g = _planned(d)
    g.free()
    return g


def _check_raises(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    return None if ref is None else close(r, ref)


def _mixed_devices(g: np.random.Generator) -> dict:
    import torch

    d = _make(g)
    d["a"] = torch.from_numpy(d["a"]).cuda()
    return d


def entries() -> list[Entry]:
    out = [
        Entry("grouped_matmul", _OP, _make, _call, _ref, _check, (A, B, OFF), options=_OPTS),
        Entry("grouped_matmul[GELU_BIAS]", _OP, _make_bias, _call_bias, _ref, _check,
              (A, B, OFF, BIAS)),
        Entry("grouped_matmul[list]", _OP, _list_make,
              lambda d: gl.grouped_matmul(d["a"], d["b"], **d["kw"]), _list_ref, _list_check,
              options=(Opt("grouped_algo_per_group", {"grouped_algo": "per_group"}, expect="ref"),
                       Opt("epilog_gelu", {"epilog": "GELU_AUX"}, mention="GELU_AUX"))),
        Entry("GroupedMatmul", _OP, _make, _call_obj, _ref, _check, (A, B, OFF),
              options=(Opt("grouped_algo_per_group", {"grouped_algo": "per_group"}, expect="ref"),
                       Opt("epilog_relu_aux", {"epilog": "RELU_AUX"}, mention="RELU_AUX"))),
    ]
    for name, make, call, mention in BAD:
        out.append(Entry(f"grouped_matmul.{name}", (_OP, "grouped_matmul.reset_operands"), make,
                         call, None, _check_raises, mention=mention))
    if HAS_CUDA:
        out.append(Entry("grouped_matmul.mixed_devices", _OP, _mixed_devices, _call, None,
                         _check_raises, mention=("device", "devices")))
    return out
