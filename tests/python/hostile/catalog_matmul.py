"""gl.matmul, gl.Matmul (each method, and wrong call orders), gl.MatmulOptions; reference
numpy.matmul in float64."""

from __future__ import annotations

import gc
from typing import Any

import numpy as np

import gpula as gl

from .core import WITH_GPU, Arg, Entry, Opt, as_np, close, dtype_check, first


def _huge_rows(v: np.ndarray) -> np.ndarray:
    return np.broadcast_to(v[..., :1, :], (*v.shape[:-2], 10**6, v.shape[-1]))


def _huge_cols(v: np.ndarray) -> np.ndarray:
    return np.broadcast_to(v[..., :, :1], (*v.shape[:-1], 10**6))


def _ab(g: np.random.Generator) -> dict:
    return {"a": g.standard_normal((4, 3)), "b": g.standard_normal((3, 5)), "kw": {}}


def _np(x: Any) -> np.ndarray:
    return np.asarray(as_np(x))


def _ref_mm(d: dict) -> Any:
    r = np.matmul(_np(d["a"]), _np(d["b"]))
    kw = d.get("kw", {})
    r = kw.get("alpha", 1.0) * r
    if d.get("c") is not None:
        r = r + kw.get("beta", 0.0) * _np(d["c"])
    if "bias" in d:
        r = np.maximum(r + _np(d["bias"]), 0)
    return r


def check_mm(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    return first(close(r, ref), dtype_check(r, ref) if strict else None)


A = Arg("a", "mat", batch=True, huge=_huge_rows)
B = Arg("b", "mat", batch=True, huge=_huge_cols)

_OPTS = (
    Opt("epilog_bogus", {"epilog": "BOGUS"}, mention="epilog"),
    Opt("alpha_str", {"alpha": "x"}, mention="alpha"),
    Opt("alpha_none", {"alpha": None}, mention="alpha"),
    Opt("options_unknown", {"options": {"foo": 1}}, mention="foo"),
    Opt("options_int", {"options": 5}, mention="options"),
    Opt("compute_type_bogus", {"options": {"compute_type": "BOGUS"}}, mention="compute_type"),
    Opt("compute_type_int", {"options": {"compute_type": 3}}, mention="compute_type"),
    Opt("memory_limit_neg", {"options": {"memory_limit": -5}}, mention="memory_limit"),
    Opt("memory_limit_pct", {"options": {"memory_limit": "150%"}}, mention="memory_limit"),
    Opt("result_type_bogus", {"options": {"result_type": "bogus"}}, mention="result_type"),
    Opt("scale_type_object", {"options": {"scale_type": object}}, mention="scale_type"),
    Opt("device_bogus", {"options": {"device": "tpu"}}, mention="device"),
    Opt("device_cuda", {"options": {"device": "cuda"}}, expect=WITH_GPU,
        mention=("cuda", "device")),
    Opt("fallback_bogus", {"options": {"fallback": "gpu"}}, mention="fallback"),
    Opt("blocking_bogus", {"options": {"blocking": "x"}}, mention="blocking"),
    Opt("logger_bogus", {"options": {"logger": 5}}, mention="logger"),
    Opt("options_dataclass_bogus", {"options": gl.MatmulOptions(memory_limit=-1)},
        mention="memory_limit"),
    Opt("stream_str", {"stream": "abc"}, mention="stream"),
    Opt("epilog_inputs_list", {"epilog_inputs": [1]}, mention="epilog_inputs"),
    Opt("epilog_inputs_unknown", {"epilog_inputs": {"foo": np.ones(5)}}, mention="foo"),
    Opt("quantization_bogus", {"quantization_scales": {"z": 1.0}}, mention="z"),
    Opt("quantization_short", {"quantization_scales": (1.0,)},
        mention="quantization_scales"),
    Opt("unknown_kw", {"foo": 1}, expect="signature", mention="foo"),
    Opt("alpha_2", {"alpha": 2.5}, expect="ref"),
)


def _matmul(d: dict) -> Any:
    if d.get("c") is None:
        return gl.matmul(d["a"], d["b"], **d["kw"])
    return gl.matmul(d["a"], d["b"], d["c"], **d["kw"])


def _matmul_obj(d: dict) -> Any:
    kw = dict(d["kw"])
    plan_kw = {k: kw.pop(k) for k in ("epilog", "epilog_inputs", "preferences") if k in kw}
    auto = kw.pop("iterations", None)
    with gl.Matmul(d["a"], d["b"], d.get("c"), **kw) as mm:
        mm.plan(**plan_kw)
        if auto is not None:
            mm.autotune(iterations=auto)
        return mm.execute()


def _bias(g: np.random.Generator) -> dict:
    d = _ab(g)
    d["bias"] = g.standard_normal(5)
    return d


def _call_bias(d: dict) -> Any:
    return gl.matmul(d["a"], d["b"], epilog="RELU_BIAS", epilog_inputs={"bias": d["bias"]},
                     **d["kw"])


# ---------------------------------------------------------------------------------------------
# Wrong call orders on gl.Matmul: (name, steps, expect_result, mention). steps(mm, d) runs the
# sequence; expect_result: the sequence returns ``a2 @ b`` (d["a2"]) or a @ b, else it raises.


def _planned(d: dict) -> Any:
    mm = gl.Matmul(d["a"], d["b"])
    mm.plan()
    return mm


def _freed(d: dict) -> Any:
    mm = _planned(d)
    mm.free()
    return mm


def _exit_then_execute(d: dict) -> Any:
    with gl.Matmul(d["a"], d["b"]) as mm:
        mm.plan()
    return mm.execute()


def _mutate_then_execute(d: dict) -> Any:
    mm = _planned(d)
    d["a"][...] = d["a2"]
    r = mm.execute()
    mm.free()
    return r


def _temporaries(d: dict) -> Any:
    mm = gl.Matmul(d["a"].copy(), d["b"].copy())
    gc.collect()
    mm.plan()
    gc.collect()
    return mm.execute()


def _reset_then_execute(d: dict) -> Any:
    mm = _planned(d)
    mm.reset_operands(a=d["a2"])
    return mm.execute()


def _plan_twice(d: dict) -> Any:
    mm = _planned(d)
    mm.plan(epilog="RELU")
    mm.plan()
    return mm.execute()


def _free_twice(d: dict) -> Any:
    mm = _freed(d)
    mm.free()
    return None


LIFECYCLE = (
    ("execute_before_plan", lambda d: gl.Matmul(d["a"], d["b"]).execute(), None, "plan"),
    ("autotune_before_plan", lambda d: gl.Matmul(d["a"], d["b"]).autotune(), None, "plan"),
    ("execute_after_free", lambda d: _freed(d).execute(), None, "free"),
    ("plan_after_free", lambda d: _freed(d).plan(), None, "free"),
    ("autotune_after_free", lambda d: _freed(d).autotune(), None, "free"),
    ("reset_after_free", lambda d: _freed(d).reset_operands(a=d["a2"]), None, "free"),
    ("output_specs_after_free", lambda d: _freed(d).output_specs(), None, "free"),
    ("execute_after_exit", _exit_then_execute, None, "free"),
    ("reset_other_shape", lambda d: _planned(d).reset_operands(a=np.ones((5, 3))), None, "a"),
    ("reset_other_dtype",
     lambda d: _planned(d).reset_operands(a=d["a"].astype(np.float32)), None, "a"),
    ("reset_list",
     lambda d: _planned(d).reset_operands(a=np.ones((4, 3), np.float32).tolist()), None, "a"),
    ("reset_c_without_c", lambda d: _planned(d).reset_operands(c=np.ones((4, 5))), None, "c"),
    ("reset_bias_without_epilog",
     lambda d: _planned(d).reset_operands(epilog_inputs={"bias": np.ones(5)}), None, "bias"),
    ("plan_epilog_missing_bias", lambda d: gl.Matmul(d["a"], d["b"]).plan(epilog="RELU_BIAS"),
     None, "bias"),
    ("plan_preferences_bogus",
     lambda d: gl.Matmul(d["a"], d["b"]).plan(preferences={"foo": 1}), None, "foo"),
    ("plan_preferences_neg",
     lambda d: gl.Matmul(d["a"], d["b"]).plan(preferences={"limit": -1}), None, "limit"),
    ("autotune_iterations_neg", lambda d: _planned(d).autotune(iterations=-1), None,
     "iterations"),
    ("autotune_iterations_str", lambda d: _planned(d).autotune(iterations="3"), None,
     "iterations"),
    ("execute_stream_bogus", lambda d: _planned(d).execute(stream="x"), None, "stream"),
    ("reset_then_execute", _reset_then_execute, "a2", None),
    ("inputs_changed_in_place", _mutate_then_execute, "a2", None),
    ("operands_dropped_after_construction", _temporaries, "a", None),
    ("plan_twice", _plan_twice, "a", None),
    ("free_twice", _free_twice, "none", None),
)


def _lifecycle_ref(expect: str | None) -> Any:
    if expect is None:
        return None
    if expect == "none":
        return lambda d: None
    return lambda d: np.matmul(d[expect], d["b"])


def _check_lifecycle(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    if ref is None:
        return None if r is None else f"returns {type(r).__name__}, expected None"
    return close(r, ref)


def entries() -> list[Entry]:
    out = [
        Entry("matmul", "matmul", _ab, _matmul, _ref_mm, check_mm, (A, B), options=_OPTS),
        Entry("matmul[float32]", "matmul",
              lambda g: {k: (v.astype(np.float32) if k != "kw" else v) for k, v in _ab(g).items()},
              _matmul, _ref_mm, check_mm, (A, B)),
        Entry("matmul[c, beta=1]", "matmul",
              lambda g: {**_ab(g), "c": g.standard_normal((4, 5)), "kw": {"beta": 1.0}},
              _matmul, _ref_mm, check_mm, (A, B, Arg("c", "mat"))),
        Entry("matmul[c without beta]", "matmul",
              lambda g: {**_ab(g), "c": g.standard_normal((4, 5))}, _matmul, None, check_mm,
              mention="beta"),
        Entry("matmul[RELU_BIAS]", "matmul", _bias, _call_bias, _ref_mm, check_mm,
              (A, B, Arg("bias", "vec"))),
        Entry("Matmul", "matmul", _ab, _matmul_obj, _ref_mm, check_mm, (A, B),
              options=tuple(o for o in _OPTS if o.label not in (
                  "epilog_bogus", "epilog_inputs_list", "epilog_inputs_unknown"))),
        Entry("Matmul[RELU_BIAS]", "matmul",
              lambda g: {**_bias(g), "kw": {"epilog": "RELU_BIAS"}},
              lambda d: _matmul_obj({**d, "kw": {**d["kw"], "epilog_inputs": {"bias": d["bias"]}}}),
              _ref_mm, check_mm, (A, B, Arg("bias", "vec")),
              options=(Opt("autotune", {"iterations": 2}, expect="ref"),
                       Opt("preferences_limit", {"preferences": {"limit": 1}}, expect="ref"))),
    ]
    for name, steps, expect, mention in LIFECYCLE:
        out.append(Entry(
            f"Matmul.{name}", "matmul",
            lambda g: {**_ab(g), "a2": g.standard_normal((4, 3))},
            steps, _lifecycle_ref(expect), _check_lifecycle, mention=mention, outputs=("a",)))
    return out

