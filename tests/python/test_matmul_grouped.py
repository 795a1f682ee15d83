"""gl.grouped_matmul and gl.GroupedMatmul against a loop of NumPy float64 matmuls: the MoE form
(offsets as lists, host arrays, device arrays; empty groups, T = 0, one group, thousands of
groups, rows past the last offset), the list form, epilogues, result dtypes, the planned form
re-executed with new offsets, both GPU paths, and errors."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import DTYPES, cupy, gelu_tol, rel_err, to_np64, torch

import gpula as gl

TOL = {"float16": 5e-3, "bfloat16": 3e-2, "float32": 1e-5, "float64": 1e-12,
       "complex64": 1e-5, "complex128": 1e-12}
REAL = ("float16", "bfloat16", "float32", "float64")
BIAS_EPILOGS = ("BIAS", "RELU_BIAS", "GELU_BIAS")


def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))


def act(epilog: str, x):
    if "RELU" in epilog:
        return np.maximum(x, 0)
    if "GELU" in epilog:
        return gelu(x)
    return x


def reference(a, b, offsets, epilog="DEFAULT", bias=None):
    a, b = np.asarray(a), np.asarray(b)
    out = np.zeros((a.shape[0], b.shape[2]), np.result_type(a, b, np.float64))
    start = 0
    for g, end in enumerate(offsets):
        r = a[start:end] @ b[g]
        if bias is not None:
            r = r + np.asarray(bias)[g]
        out[start:end] = act(epilog, r)
        start = end
    return out


def random_offsets(rng, e: int, t: int, fill: bool = True) -> list[int]:
    ends = sorted(rng.integers(0, t + 1, e).tolist())
    if fill and e:
        ends[-1] = t
    return ends


def moe(xp, rng, dtype, t=40, k=12, n=9, e=5, fill=True):
    a, a64 = xp.random(rng, (t, k), dtype)
    b, b64 = xp.random(rng, (e, k, n), dtype)
    bias, bias64 = xp.random(rng, (e, n), dtype)
    return a, a64, b, b64, bias, bias64, random_offsets(rng, e, t, fill)


@pytest.mark.parametrize("dtype", DTYPES)
def test_moe_matches_loop_of_matmuls(xp, rng, dtype):
    a, a64, b, b64, _, _, offs = moe(xp, rng, dtype)
    r = gl.grouped_matmul(a, b, offs)
    xp.empty_like_check(r, dtype, (40, 9))
    assert rel_err(r, reference(a64, b64, offs)) < TOL[dtype]


@pytest.mark.parametrize("epilog", ["RELU", "GELU", *BIAS_EPILOGS])
@pytest.mark.parametrize("dtype", REAL)
def test_epilogues_per_group(xp, rng, dtype, epilog):
    a, a64, b, b64, bias, bias64, offs = moe(xp, rng, dtype)
    has_bias = epilog in BIAS_EPILOGS
    r = gl.grouped_matmul(a, b, offs, epilog=epilog,
                          epilog_inputs={"bias": bias} if has_bias else None)
    want = reference(a64, b64, offs, epilog, bias64 if has_bias else None)
    tol = gelu_tol(xp, dtype, TOL) if "GELU" in epilog else TOL[dtype]
    assert rel_err(r, want) < tol * 4


@pytest.mark.parametrize(
    "t,e,fill",
    [(0, 3, True), (30, 1, True), (30, 4, False), (3000, 2000, True), (20, 5, True)],
    ids=["T=0", "one-group", "rows-past-last-offset", "2000-groups", "many"],
)
def test_edge_cases(xp, rng, t, e, fill):
    a, a64, b, b64, _, _, offs = moe(xp, rng, "float32", t=t, k=4, n=3, e=e, fill=fill)
    r = gl.grouped_matmul(a, b, offs)
    assert tuple(r.shape) == (t, 3)
    np.testing.assert_allclose(to_np64(r), reference(a64, b64, offs), rtol=1e-5, atol=1e-5)


def test_empty_groups_and_k_zero(rng):
    a = rng.standard_normal((20, 5))
    b = rng.standard_normal((5, 5, 4))
    offs = [0, 7, 7, 20, 20]
    np.testing.assert_allclose(gl.grouped_matmul(a, b, offs), reference(a, b, offs), rtol=1e-12)
    bias = rng.standard_normal((3, 4))
    r = gl.grouped_matmul(np.ones((6, 0)), np.ones((3, 0, 4)), [2, 2, 6], epilog="GELU_BIAS",
                          epilog_inputs={"bias": bias})
    np.testing.assert_allclose(r, reference(np.ones((6, 0)), np.ones((3, 0, 4)), [2, 2, 6],
                                            "GELU_BIAS", bias), rtol=1e-12)


@pytest.mark.parametrize("form", ["list", "tuple", "int32", "int64", "torch"])
def test_offsets_forms(rng, form):
    a, b = rng.standard_normal((12, 3)), rng.standard_normal((3, 3, 2))
    ends = [4, 4, 10]
    offs = {"list": ends, "tuple": tuple(ends), "int32": np.array(ends, np.int32),
            "int64": np.array(ends, np.int64)}.get(form)
    if form == "torch":
        if torch is None:
            pytest.skip("torch is not installed")
        offs = torch.tensor(ends, dtype=torch.int32)
    np.testing.assert_allclose(gl.grouped_matmul(a, b, offs), reference(a, b, ends), rtol=1e-12)


def test_layouts_are_read_in_place_or_staged(rng):
    a = rng.standard_normal((12, 6))[:, ::2]           # strided columns: staged
    b = np.asfortranarray(rng.standard_normal((3, 3, 5)))  # no unit stride per matrix: staged
    bt = rng.standard_normal((3, 5, 3)).swapaxes(1, 2)  # column-major per matrix: in place
    for bb in (b, bt):
        np.testing.assert_allclose(gl.grouped_matmul(a, bb, [3, 8, 12]),
                                   reference(a, bb, [3, 8, 12]), rtol=1e-12)
    shared = np.broadcast_to(rng.standard_normal((1, 3, 5)), (3, 3, 5))  # stride-0 groups
    np.testing.assert_allclose(gl.grouped_matmul(a, shared, [3, 8, 12]),
                               reference(a, shared, [3, 8, 12]), rtol=1e-12)


def test_result_dtype_rules(rng):
    a, b = rng.standard_normal((6, 3)).astype(np.float16), rng.standard_normal((2, 3, 4))
    with pytest.raises(gl.DTypeError, match="dtype"):
        gl.grouped_matmul(a, b, [3, 6])  # no promotion, as gl.matmul
    r = gl.grouped_matmul(a, b.astype(np.float16), [3, 6], options={"result_type": "float32"})
    assert r.dtype == np.float32
    with pytest.raises(gl.DTypeError):
        gl.grouped_matmul(a.astype(np.int64), b.astype(np.int64), [3, 6])


@pytest.mark.parametrize("epilog", ["DEFAULT", "RELU_BIAS"])
def test_list_form(xp, rng, epilog):
    shapes = [(5, 7, 3), (0, 4, 2), (9, 1, 6), (4, 0, 5), (1, 1, 1)]
    a = [xp.random(rng, (m, k), "float32") for m, k, _ in shapes]
    b = [xp.random(rng, (k, n), "float32") for _, k, n in shapes]
    bias = [xp.random(rng, (n,), "float32") for _, _, n in shapes]
    kw = {"epilog": epilog, "epilog_inputs": {"bias": [x for x, _ in bias]}} if epilog != "DEFAULT" else {}
    r = gl.grouped_matmul([x for x, _ in a], [y for y, _ in b], **kw)
    assert isinstance(r, list) and len(r) == len(shapes)
    for i, (m, _, n) in enumerate(shapes):
        xp.empty_like_check(r[i], "float32", (m, n))
        want = a[i][1] @ b[i][1]
        if epilog != "DEFAULT":
            want = act(epilog, want + bias[i][1])
        np.testing.assert_allclose(to_np64(r[i]), want, rtol=1e-5, atol=1e-5)
    assert gl.grouped_matmul([], []) == []


def test_planned_form_new_offsets_every_step(xp, rng):
    a, a64, b, b64, bias, bias64, _ = moe(xp, rng, "float32", t=64, e=6)
    with gl.GroupedMatmul(a, b) as g:
        g.plan(epilog="GELU_BIAS", epilog_inputs={"bias": bias})
        assert g.output_specs() == [("result", (64, 9), "float32")]
        for step in range(4):
            offs = random_offsets(rng, 6, 64, fill=step % 2 == 0)
            r = g.execute(offsets=offs)
            assert rel_err(r, reference(a64, b64, offs, "GELU_BIAS", bias64)) < 1e-5
        a2, a2_64 = xp.random(rng, (64, 12), "float32")
        g.reset_operands(a=a2)
        r = g.execute(offsets=offs)
        assert rel_err(r, reference(a2_64, b64, offs, "GELU_BIAS", bias64)) < 1e-5
        assert g.algorithm == "per_group"
    with pytest.raises(gl.InvalidArgument, match="free"):
        g.execute(offsets=offs)


def test_offsets_given_once(rng):
    a, b = rng.standard_normal((10, 3)), rng.standard_normal((2, 3, 4))
    g = gl.GroupedMatmul(a, b, [4, 10])
    g.plan()
    np.testing.assert_allclose(g.execute(), reference(a, b, [4, 10]), rtol=1e-12)
    np.testing.assert_allclose(g.execute(offsets=[1, 2]), reference(a, b, [1, 2]), rtol=1e-12)
    # A call's offsets apply to it only (not kept: they may be a temporary, freed after it).
    np.testing.assert_allclose(g.execute(), reference(a, b, [4, 10]), rtol=1e-12)


@pytest.mark.parametrize(
    "offsets,err,words",
    [([4, 2, 6], gl.InvalidArgument, "non-decreasing"), ([-1, 2, 6], gl.InvalidArgument, "outside"),
     ([1, 2, 8], gl.InvalidArgument, "outside"), ([2, 6], gl.InvalidArgument, "entries"),
     (np.array([2.0, 2.0, 6.0]), gl.DTypeError, "int32"),
     (np.array([[2, 2, 6]]), gl.InvalidArgument, "1-D")],
)
def test_offsets_errors(rng, offsets, err, words):
    a, b = rng.standard_normal((6, 3)), rng.standard_normal((3, 3, 4))
    with pytest.raises(err, match=words) as info:
        gl.grouped_matmul(a, b, offsets)
    assert "[grouped_matmul]" in str(info.value) and "offsets" in str(info.value)


def test_other_errors(rng):
    a, b = rng.standard_normal((6, 3)), rng.standard_normal((3, 3, 4))
    with pytest.raises(gl.InvalidArgument, match="K"):
        gl.grouped_matmul(a, rng.standard_normal((3, 4, 4)), [1, 2, 6])
    with pytest.raises(gl.NotSupported, match="RELU_AUX"):
        gl.grouped_matmul(a, b, [1, 2, 6], epilog="RELU_AUX")
    with pytest.raises(gl.InvalidArgument, match="bias"):
        gl.grouped_matmul(a, b, [1, 2, 6], epilog="BIAS", epilog_inputs={"bias": np.ones((2, 4))})
    with pytest.raises(gl.NotSupported, match="grouped_gemm"):
        gl.grouped_matmul(a, b, [1, 2, 6], grouped_algo="grouped_gemm")  # a CUDA path
    with pytest.raises(gl.InvalidArgument, match="grouped_algo"):
        gl.grouped_matmul(a, b, [1, 2, 6], grouped_algo="fastest")
    g = gl.GroupedMatmul(a, b)
    g.plan()
    with pytest.raises(gl.InvalidArgument, match="offsets"):
        g.execute()
    ml_dtypes = pytest.importorskip("ml_dtypes")
    f8 = np.zeros((6, 3), ml_dtypes.float8_e4m3fn)
    with pytest.raises(gl.NotSupported, match="CPU"):
        gl.grouped_matmul(f8, np.zeros((3, 3, 4), ml_dtypes.float8_e4m3fn), [1, 2, 6])


def test_inputs_not_modified(rng):
    a, b, bias = rng.standard_normal((8, 3)), rng.standard_normal((2, 3, 4)), np.ones((2, 4))
    copies = [x.copy() for x in (a, b, bias)]
    offs = np.array([3, 8])
    gl.grouped_matmul(a, b, offs, epilog="RELU_BIAS", epilog_inputs={"bias": bias})
    for x, c in zip((a, b, bias), copies):
        np.testing.assert_array_equal(x, c)
    np.testing.assert_array_equal(offs, [3, 8])


def test_nan_propagates(rng):
    a, b = rng.standard_normal((6, 3)), rng.standard_normal((2, 3, 4))
    a[1, 0] = np.nan
    r = gl.grouped_matmul(a, b, [3, 6])
    assert np.isnan(r[1]).all() and np.isfinite(r[3:]).all()


# ---- GPU ---------------------------------------------------------------------------------------


def _gpu_packages():
    out = []
    if torch is not None:
        out.append("torch")
    if cupy is not None:
        out.append("cupy")
    return out


@pytest.mark.gpu
@pytest.mark.parametrize("pkg", _gpu_packages())
@pytest.mark.parametrize("algo", ["auto", "grouped_gemm", "per_group"])
@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
@pytest.mark.parametrize("where", ["device", "host"])
def test_gpu_paths(rng, pkg, algo, dtype, where):
    if pkg == "cupy" and dtype == "bfloat16":
        pytest.skip("cupy has no bfloat16")
    mod = torch if pkg == "torch" else cupy
    t, k, n, e = 1000, 64, 48, 16
    a64, b64 = rng.standard_normal((t, k)), rng.standard_normal((e, k, n))
    ends = random_offsets(rng, e, t)

    def dev(x, dt):
        if pkg == "torch":
            return torch.from_numpy(np.ascontiguousarray(x)).to("cuda", getattr(torch, dt))
        return cupy.asarray(x.astype(dt))

    a, b = dev(a64, dtype), dev(b64, dtype)
    offs = dev(np.array(ends), "int32") if where == "device" else ends
    with gl.GroupedMatmul(a, b, grouped_algo=algo) as g:
        g.plan()
        r = g.execute(offsets=offs)
        assert g.algorithm == ("per_group" if algo == "per_group" else "grouped_gemm")
    assert isinstance(r, mod.ndarray if pkg == "cupy" else torch.Tensor)
    assert rel_err(r, reference(to_np64(a), to_np64(b), ends)) < TOL[dtype]


@pytest.mark.gpu
@pytest.mark.parametrize("epilog", ["GELU_BIAS", "RELU"])
def test_gpu_epilogues_and_many_groups(rng, epilog):
    if torch is None:
        pytest.skip("torch is not installed")
    t, k, n, e = 4000, 32, 64, 2000
    a = torch.randn(t, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(e, k, n, device="cuda", dtype=torch.bfloat16)
    bias = torch.randn(e, n, device="cuda", dtype=torch.bfloat16)
    ends = random_offsets(rng, e, t)
    offs = torch.tensor(ends, device="cuda", dtype=torch.int64)
    has_bias = epilog == "GELU_BIAS"
    r = gl.grouped_matmul(a, b, offs, epilog=epilog,
                          epilog_inputs={"bias": bias} if has_bias else None)
    want = reference(to_np64(a), to_np64(b), ends, epilog, to_np64(bias) if has_bias else None)
    assert rel_err(r, want) < 3e-2


@pytest.mark.gpu
def test_gpu_list_form_and_fp8(rng):
    if torch is None:
        pytest.skip("torch is not installed")
    a = [torch.randn(m, 64, device="cuda", dtype=torch.float16) for m in (33, 0, 128)]
    b = [torch.randn(64, n, device="cuda", dtype=torch.float16) for n in (16, 8, 80)]
    for algo in ("grouped_gemm", "per_group"):
        r = gl.grouped_matmul(a, b, grouped_algo=algo)
        for x, y, z in zip(a, b, r):
            assert rel_err(z, to_np64(x) @ to_np64(y)) < 5e-3
    if not hasattr(torch, "float8_e4m3fn") or torch.cuda.get_device_capability()[0] < 9:
        return
    a8 = (torch.randn(200, 64, device="cuda") * 4).to(torch.float8_e4m3fn)
    b8 = (torch.randn(4, 64, 32, device="cuda") * 4).to(torch.float8_e4m3fn)
    ends = [50, 50, 120, 200]
    r = gl.grouped_matmul(a8, b8, ends, options={"result_type": "bfloat16"},
                          quantization_scales={"a": 0.5, "b": 0.25})
    want = reference(to_np64(a8), to_np64(b8), ends) * 0.125
    assert rel_err(r, want) < 3e-2
