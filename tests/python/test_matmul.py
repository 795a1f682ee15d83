"""gl.matmul and gl.Matmul against NumPy float64 references, in every array package present."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import DTYPES, TOL, gelu_tol, rel_err, to_np64

import gpula as gl
from gpula import _interop

REAL = ("float16", "bfloat16", "float32", "float64")

SHAPES = [
    ((5, 7), (7, 3)),
    ((1, 1), (1, 1)),
    ((65, 130), (130, 33)),  # past a warp in every dimension
    ((7,), (7, 3)),  # 1-D operands: numpy.matmul's promotion
    ((5, 7), (7,)),
    ((7,), (7,)),
    ((4, 5, 7), (4, 7, 3)),  # batched
    ((2, 1, 5, 7), (3, 7, 3)),  # broadcast batch
    ((4, 5, 7), (7, 3)),  # shared B (folded into one product)
    ((5, 7), (4, 7, 3)),  # shared A
    ((0, 7), (7, 3)),  # m = 0
    ((5, 7), (7, 0)),  # n = 0
    ((5, 0), (0, 3)),  # k = 0: zeros
    ((0, 5, 7), (7, 3)),  # empty batch
]


def _check(xp, r, ref, dtype, scale=None, tol=None):
    xp.empty_like_check(r, dtype, ref.shape)
    err = rel_err(r, ref, scale)
    assert err <= (TOL[dtype] if tol is None else tol), err


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_matmul_numerics(xp, rng, dtype, shapes):
    a, a64 = xp.random(rng, shapes[0], dtype)
    b, b64 = xp.random(rng, shapes[1], dtype)
    r = gl.matmul(a, b)
    _check(xp, r, a64 @ b64, dtype, scale=abs(a64) @ abs(b64))


@pytest.mark.parametrize("dtype", DTYPES)
def test_transposed_and_sliced_views(xp, rng, dtype):
    base_a, base_a64 = xp.random(rng, (9, 14), dtype)
    base_b, base_b64 = xp.random(rng, (14, 10), dtype)
    a, a64 = xp.transpose(base_a)[1::2, ::2], base_a64.T[1::2, ::2]  # (7, 5) strided
    b, b64 = base_b[::2, 1:8], base_b64[::2, 1:8]  # (7, 7) sliced
    b2, b2_64 = xp.transpose(base_b)[:5, :6], base_b64.T[:5, :6]  # (5, 6) column-major view
    _check(xp, gl.matmul(a, b2), a64 @ b2_64, dtype)
    _check(xp, gl.matmul(xp.transpose(a)[:6], b), a64.T[:6] @ b64, dtype)
    # Batched, both transposed.
    c, c64 = xp.random(rng, (3, 8, 4), dtype)
    d, d64 = xp.random(rng, (3, 5, 8), dtype)
    _check(
        xp,
        gl.matmul(xp.transpose(c), xp.transpose(d)),
        c64.swapaxes(-1, -2) @ d64.swapaxes(-1, -2),
        dtype,
    )


def test_negative_strides_numpy(rng):
    a = rng.standard_normal((6, 5))
    b = rng.standard_normal((5, 4))
    r = gl.matmul(a[::-1], b[:, ::-1])
    assert rel_err(r, a[::-1] @ b[:, ::-1]) < 1e-12


@pytest.mark.parametrize("dtype", DTYPES)
def test_alpha_beta_c(xp, rng, dtype):
    a, a64 = xp.random(rng, (6, 9), dtype)
    b, b64 = xp.random(rng, (9, 4), dtype)
    c, c64 = xp.random(rng, (6, 4), dtype)
    complex_ = dtype.startswith("complex")
    alpha, beta = (1.5 - 0.5j, 0.25 + 2j) if complex_ else (1.5, -0.75)
    r = gl.matmul(a, b, c, alpha=alpha, beta=beta)
    _check(xp, r, alpha * (a64 @ b64) + beta * c64, dtype)
    # c broadcasts to the (batched) result shape.
    a3, a3_64 = xp.random(rng, (2, 6, 9), dtype)
    crow, crow64 = xp.random(rng, (4,), dtype)
    r = gl.matmul(a3, b, crow, beta=beta)
    _check(xp, r, a3_64 @ b64 + beta * crow64, dtype)


def test_result_type_float32_for_half(xp, rng):
    a, a64 = xp.random(rng, (8, 16), "float16")
    b, b64 = xp.random(rng, (16, 8), "float16")
    r = gl.matmul(a, b, options={"result_type": "float32"})
    _check(xp, r, a64 @ b64, "float32")


def test_inputs_unchanged(xp, rng):
    a, _ = xp.random(rng, (3, 6, 5), "float32")
    b, _ = xp.random(rng, (5, 4), "float32")
    c, _ = xp.random(rng, (6, 4), "float32")
    bias, _ = xp.random(rng, (4,), "float32")
    before = [to_np64(x) for x in (a, b, c, bias)]
    gl.matmul(a, b, c, beta=1.0)
    gl.matmul(a, b, epilog=gl.Epilog.GELU_AUX_BIAS, epilog_inputs={"bias": bias})
    gl.matmul(a, b, c, beta=0.5)
    xp.synchronize()
    for x, x0 in zip((a, b, c, bias), before):
        np.testing.assert_array_equal(to_np64(x), x0)


def test_function_form_cache_reuse(rng):
    gl.matmul_cache_clear()
    a = np.empty((11, 13))
    b = rng.standard_normal((13, 3))
    for _ in range(4):  # same buffers, new values: one plan, rebound each call
        a[...] = rng.standard_normal(a.shape)
        assert rel_err(gl.matmul(a, b), a @ b) < 1e-12
    assert gl.matmul_cache_size() == 1
    for _ in range(4):  # fresh arrays: plans are keyed by layout (and pointer alignment)
        a2 = rng.standard_normal((11, 13))
        assert rel_err(gl.matmul(a2, b), a2 @ b) < 1e-12
    assert gl.matmul_cache_size() <= 5
    n = gl.matmul_cache_size()
    gl.matmul(a, b, epilog="RELU")
    assert gl.matmul_cache_size() == n + 1
    gl.matmul_cache_clear()
    assert gl.matmul_cache_size() == 0


# ---------------------------------------------------------------------------------------------
# Epilogues

SQRT_2_OVER_PI = np.sqrt(2.0 / np.pi)


def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x**3)))


def gelu_grad(x):
    t = np.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x**3))
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * SQRT_2_OVER_PI * (1 + 3 * 0.044715 * x * x)


def unpack_bits(bits, n):
    """ReLU aux bitmask (..., M, ceil(N/128)*16) uint8 -> bool (..., M, N): bit j of row i,
    LSB first."""
    return np.unpackbits(np.asarray(bits, np.uint8), axis=-1, bitorder="little")[..., :n].astype(
        bool
    )


FORWARD = [
    "RELU",
    "RELU_AUX",
    "BIAS",
    "RELU_BIAS",
    "RELU_AUX_BIAS",
    "GELU",
    "GELU_AUX",
    "GELU_BIAS",
    "GELU_AUX_BIAS",
]


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("epilog", FORWARD)
@pytest.mark.parametrize("batch", [(), (3,)], ids=["2d", "batched"])
def test_forward_epilogs(xp, rng, dtype, epilog, batch):
    m, k, n = 9, 17, 130  # n past 128: two mask words per row
    a, a64 = xp.random(rng, (*batch, m, k), dtype)
    b, b64 = xp.random(rng, (k, n), dtype)
    inputs = None
    pre = a64 @ b64
    if "BIAS" in epilog:
        bias, bias64 = xp.random(rng, (n,), dtype)
        inputs = {"bias": bias}
        pre = pre + bias64
    act = np.maximum(pre, 0) if "RELU" in epilog else gelu(pre) if "GELU" in epilog else pre
    tol = gelu_tol(xp, dtype, TOL) if "GELU" in epilog else TOL[dtype]
    out = gl.matmul(a, b, epilog=getattr(gl.Epilog, epilog), epilog_inputs=inputs)
    if "AUX" not in epilog:
        _check(xp, out, act, dtype, tol=tol)
        return
    r, aux = out
    _check(xp, r, act, dtype, tol=tol)
    if "RELU" in epilog:
        mask = aux["relu_aux"]
        words = -(-n // 128)
        xp.empty_like_check(mask, "uint8", (*batch, m, words * 16))
        got = unpack_bits(to_np64(mask), n)
        want = pre > 0
        decided = np.abs(pre) > 1e-3 * np.abs(pre).max()  # ignore ties with zero
        bad = np.argwhere((got != want) & decided)
        assert bad.size == 0, f"{len(bad)} mask bits differ, first at {bad[:5].tolist()}"
    else:
        g = aux["gelu_aux"]
        xp.empty_like_check(g, dtype, (*batch, m, -(-n // 8) * 8))
        assert rel_err(g[..., :n], pre) <= TOL[dtype]


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("kind", ["RELU", "GELU"])
@pytest.mark.parametrize("bgrad", [False, True])
def test_backward_epilogs(xp, rng, dtype, kind, bgrad):
    m, k1, k2, n = 12, 10, 7, 20
    x, _x64 = xp.random(rng, (m, k1), dtype)
    w, _w64 = xp.random(rng, (k1, n), dtype)
    _, fwd = gl.matmul(x, w, epilog=getattr(gl.Epilog, kind + "_AUX"))
    aux_name = kind.lower() + "_aux"
    aux = fwd[aux_name]
    dy, dy64 = xp.random(rng, (m, k2), dtype)
    wt, wt64 = xp.random(rng, (k2, n), dtype)
    epilog = getattr(gl.Epilog, "D" + kind + ("_BGRAD" if bgrad else ""))
    out = gl.matmul(dy, wt, epilog=epilog, epilog_inputs={aux_name: aux})
    g = dy64 @ wt64
    d = g * unpack_bits(to_np64(aux), n) if kind == "RELU" else g * gelu_grad(to_np64(aux[:, :n]))
    tol = gelu_tol(xp, dtype, TOL) if kind == "GELU" else TOL[dtype]
    if not bgrad:
        _check(xp, out, d, dtype, tol=tol)
        return
    r, extra = out
    _check(xp, r, d, dtype, tol=tol)
    name = "d" + kind.lower() + "_bgrad"
    assert list(extra) == [name]
    xp.empty_like_check(extra[name], dtype, (n,))
    assert rel_err(extra[name], d.sum(axis=0)) <= tol


@pytest.mark.parametrize("dtype", REAL)
@pytest.mark.parametrize("epilog", ["BGRADA", "BGRADB"])
@pytest.mark.parametrize("batch", [(), (2,)], ids=["2d", "batched"])
def test_bgrad_ab(xp, rng, dtype, epilog, batch):
    m, k, n = 6, 11, 9
    a, a64 = xp.random(rng, (*batch, m, k), dtype)
    b, b64 = xp.random(rng, (*batch, k, n), dtype)
    r, aux = gl.matmul(a, b, epilog=getattr(gl.Epilog, epilog))
    _check(xp, r, a64 @ b64, dtype)
    name = epilog.lower()
    assert list(aux) == [name]
    if epilog == "BGRADA":  # sums of A over K: one per row of the result
        xp.empty_like_check(aux[name], dtype, (*batch, m))
        assert rel_err(aux[name], a64.sum(axis=-1)) <= TOL[dtype]
    else:  # sums of B over K: one per column
        xp.empty_like_check(aux[name], dtype, (*batch, n))
        assert rel_err(aux[name], b64.sum(axis=-2)) <= TOL[dtype]


def test_epilog_by_name(rng):
    a = rng.standard_normal((4, 5))
    b = rng.standard_normal((5, 3))
    r = gl.matmul(a, b, epilog="relu")
    assert rel_err(r, np.maximum(a @ b, 0)) < 1e-12


# ---------------------------------------------------------------------------------------------
# The Matmul object


def test_matmul_object(xp, rng):
    a, a64 = xp.random(rng, (16, 24), "float32")
    b, b64 = xp.random(rng, (24, 8), "float32")
    bias, bias64 = xp.random(rng, (8,), "float32")
    with gl.Matmul(a, b) as mm:
        algos = mm.plan(epilog=gl.Epilog.RELU_BIAS, epilog_inputs={"bias": bias})
        assert isinstance(algos, list) and algos and isinstance(algos[0], dict)
        assert {"algo_id", "workspace_bytes", "description"} <= set(algos[0])
        best = mm.autotune(iterations=2)
        assert isinstance(best, dict) and "time_ms" in best
        assert mm.output_specs() == [("result", (16, 8), "float32")]
        r = mm.execute()
        _check(xp, r, np.maximum(a64 @ b64 + bias64, 0), "float32")
        # Same layout: no re-planning.
        a2, a2_64 = xp.random(rng, (16, 24), "float32")
        bias2, bias2_64 = xp.random(rng, (8,), "float32")
        mm.reset_operands(a=a2, epilog_inputs={"bias": bias2})
        r2 = mm.execute()
        _check(xp, r2, np.maximum(a2_64 @ b64 + bias2_64, 0), "float32")
        _check(xp, r, np.maximum(a64 @ b64 + bias64, 0), "float32")  # earlier result untouched
    with pytest.raises(ValueError, match="after free"):
        mm.execute()


def test_matmul_object_aux_outputs(numpy_xp, rng):
    a, a64 = numpy_xp.random(rng, (2, 5, 6), "float64")
    b, b64 = numpy_xp.random(rng, (6, 7), "float64")
    mm = gl.Matmul(a, b)
    mm.plan(epilog="GELU_AUX")
    r, aux = mm.execute()
    assert set(aux) == {"gelu_aux"}
    assert rel_err(r, gelu(a64 @ b64)) < 1e-12
    assert aux["gelu_aux"].shape == (2, 5, 8)
    mm.free()


def test_reset_operands_layout_change(numpy_xp, rng):
    a = rng.standard_normal((6, 4))
    b = rng.standard_normal((4, 5))
    mm = gl.Matmul(a, b)
    mm.plan()
    with pytest.raises(ValueError, match=r"\ba\b"):
        mm.reset_operands(a=np.asfortranarray(a))
    with pytest.raises(ValueError, match=r"\ba\b"):
        mm.reset_operands(a=rng.standard_normal((7, 4)))
    with pytest.raises(ValueError, match=r"\bb\b"):
        mm.reset_operands(b=b.astype(np.float32))
    with pytest.raises(ValueError, match="c"):
        mm.reset_operands(c=rng.standard_normal((6, 5)))  # not an operand of this plan
    assert rel_err(mm.execute(), a @ b) < 1e-12  # still usable


def test_execute_before_plan(numpy_xp, rng):
    mm = gl.Matmul(rng.standard_normal((3, 3)), rng.standard_normal((3, 3)))
    with pytest.raises(ValueError, match="before plan"):
        mm.execute()
    with pytest.raises(ValueError, match="before plan"):
        mm.autotune()


def test_context_manager_frees(numpy_xp, rng):
    with gl.Matmul(rng.standard_normal((3, 3)), rng.standard_normal((3, 3))) as mm:
        mm.plan()
        mm.execute()
    for call in (mm.execute, mm.autotune, mm.plan):
        with pytest.raises(ValueError, match="after free"):
            call()
    mm.free()  # idempotent


def test_matmul_object_stream_arg(numpy_xp, rng):
    a = rng.standard_normal((4, 4))
    mm = gl.Matmul(a, a, stream=0)
    mm.plan()
    assert rel_err(mm.execute(stream=0), a @ a) < 1e-12


def test_devices():
    d = gl.devices()
    assert d["devices"][0] == "cpu"
    assert isinstance(d["cuda_compiled"], bool)
    assert d["cuda_device_count"] == len(d["devices"]) - 1
    assert "cpu" in d["description"]


def test_bfloat16_numpy_result_dtype(rng):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    a = rng.standard_normal((4, 8)).astype(ml_dtypes.bfloat16)
    r = gl.matmul(a, a.T)
    assert r.dtype == ml_dtypes.bfloat16


def test_torch_requires_grad():
    torch = pytest.importorskip("torch")
    a = torch.randn(4, 5, requires_grad=True)
    b = torch.randn(5, 3)
    r = gl.matmul(a, b)
    assert isinstance(r, torch.Tensor) and not r.requires_grad
    torch.testing.assert_close(r, (a @ b).detach())


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_torch_conjugate_and_negative_views(device):
    """Lazy conj/neg views are materialized for the plan, and the copy lives until it has run
    (the function form once freed it before executing: a wrong answer from freed memory)."""
    torch = pytest.importorskip("torch")
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA")
    g = torch.Generator().manual_seed(3)
    for _ in range(3):
        c0 = torch.randn(6, 5, dtype=torch.complex128, generator=g)
        d = torch.randn(5, 4, dtype=torch.complex128, generator=g)
        c0, d = c0.to(device), d.to(device)
        for view in (c0.conj(), torch._neg_view(c0), c0.conj().T.conj().T):
            want = view.resolve_conj().resolve_neg() @ d
            for _ in range(2):
                got = gl.matmul(view, d)
                torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
                torch.testing.assert_close(gl.matmul(d.T, view.T), want.T, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_function_form_fast_path(device):
    """Repeated torch calls of one layout take gl.matmul's fast path: results stay right when
    the operands, their strides, alignment, epilogue, bias or options change between calls, and
    gl.matmul_cache_clear() empties it."""
    torch = pytest.importorskip("torch")
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA")
    g = torch.Generator().manual_seed(5)

    def rand(*shape):
        return torch.randn(*shape, dtype=torch.float64, generator=g).to(device)

    gl.matmul_cache_clear()
    for _ in range(3):
        a, b, bias = rand(7, 9), rand(9, 5), rand(5)
        torch.testing.assert_close(gl.matmul(a, b), a @ b)
        torch.testing.assert_close(gl.matmul(a, b.T.contiguous().T), a @ b)  # other strides
        torch.testing.assert_close(gl.matmul(a[:, 1:], b[1:]), a[:, 1:] @ b[1:])  # offset data
        y = gl.matmul(a, b, epilog="RELU_BIAS", epilog_inputs={"bias": bias})
        torch.testing.assert_close(y, torch.relu(a @ b + bias))
        y, aux = gl.matmul(a, b, epilog=gl.Epilog.GELU_AUX_BIAS, epilog_inputs={"bias": bias})
        assert set(aux) == {"gelu_aux"}
        torch.testing.assert_close(gl.matmul(a, b, alpha=2.0), 2 * (a @ b))
        opts = gl.MatmulOptions(compute_type="COMPUTE_64F")
        torch.testing.assert_close(gl.matmul(a, b, options=opts), a @ b)
    assert gl.matmul_cache_size() > 0
    gl.matmul_cache_clear()
    assert gl.matmul_cache_size() == 0
    a, b = rand(3, 4), rand(4, 2)
    torch.testing.assert_close(gl.matmul(a, b), a @ b)
    assert gl.matmul_cache_size() == 1
    with pytest.raises(gl.InvalidArgument, match="inner dimensions|shapes"):
        gl.matmul(a, rand(3, 2))  # a layout never seen: the full checks still run
    with pytest.raises(gl.InvalidArgument):
        gl.matmul(a, b, epilog="BIAS", epilog_inputs={"bias": rand(3)})


def test_function_form_fast_path_numpy(rng):
    """Repeated NumPy calls of one layout take the fast path (NumpyPackage.fast_key): results
    stay right when data, strides (negative too), alignment, read-only flags, dtype or the
    bias change between calls; dtypes without a plain export (big-endian, bool) still get the
    full path's typed errors."""
    gl.matmul_cache_clear()
    for dt in (np.float32, np.float64, np.complex128):
        for _ in range(3):
            a = rng.standard_normal((7, 9)).astype(dt)
            b = rng.standard_normal((9, 5)).astype(dt)
            bias = rng.standard_normal(5).astype(dt)
            tol = 1e-5 if dt == np.float32 else 1e-12
            np.testing.assert_allclose(gl.matmul(a, b), a @ b, rtol=tol, atol=tol)
            np.testing.assert_allclose(gl.matmul(a[::-1], b[:, ::-1]), a[::-1] @ b[:, ::-1],
                                       rtol=tol, atol=tol)
            np.testing.assert_allclose(gl.matmul(a[:, 1:], b[1:]), a[:, 1:] @ b[1:], rtol=tol,
                                       atol=tol)  # offset (less aligned) data
            ro = a.copy()
            ro.flags.writeable = False
            np.testing.assert_allclose(gl.matmul(ro, b), ro @ b, rtol=tol, atol=tol)
            if dt != np.complex128:
                y = gl.matmul(a, b, epilog="BIAS", epilog_inputs={"bias": bias})
                np.testing.assert_allclose(y, a @ b + bias, rtol=tol, atol=tol)
    assert gl.matmul_cache_size() > 0
    a = rng.standard_normal((3, 4))
    with pytest.raises(gl.DTypeError):
        gl.matmul(a.astype(">f8"), a.T.astype(">f8"))
    with pytest.raises(gl.DTypeError):
        gl.matmul(a > 0, a.T > 0)
    with pytest.raises(gl.DTypeError):
        gl.matmul(a, a.T.astype(np.float32))


class _FullPath(dict):
    """epilog_inputs that gl.matmul's fast path leaves to the full path (it takes plain dicts)."""


_SQRT_2_OVER_PI = np.sqrt(2.0 / np.pi)


def _gelu_grad64(x):
    """gelu'(x) of the tanh approximation, in float64."""
    t = np.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * x**3))
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * _SQRT_2_OVER_PI * (1 + 3 * 0.044715 * x * x)


def _aligned(x, offset=0):
    """A copy of x at 256-byte alignment plus offset bytes (the fast key holds the alignment:
    arrays of one layout and alignment share one fast plan)."""
    buf = np.empty(x.nbytes + 256 + offset, np.uint8)
    start = -buf.ctypes.data % 256 + offset
    y = buf[start : start + x.nbytes].view(x.dtype).reshape(x.shape)
    y[...] = x
    return y


@pytest.mark.parametrize("package", ["numpy", "torch"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("epilog", ["DGELU", "DGELU_BGRAD", "DRELU", "DRELU_BGRAD"])
def test_function_form_fast_path_aux_inputs(rng, package, dtype, epilog):
    """Repeated DGELU / DRELU calls (gpula.torch's FusedMLP backward) take gl.matmul's fast path
    with their aux input rebound per call: bit-identical to the full path and right against a
    float64 reference when the aux is another array, when its data change in place between
    calls (a stale address would show), at another offset or with other strides; a
    non-contiguous or wrongly typed aux still gets the full path's errors."""
    from gpula import _matmul

    if package == "torch":
        torch = pytest.importorskip("torch")
        wrap, unwrap = torch.from_numpy, (lambda t: t.numpy())  # views of the NumPy data
    else:
        wrap, unwrap = (lambda x: x), np.asarray
    relu = epilog.startswith("DRELU")
    name = "relu_aux" if relu else "gelu_aux"
    m, k, n = 7, 9, 5
    width = 16 if relu else 8  # aux row length: ceil(n/128)*16 bytes / roundup(n, 8) elements
    tol = 1e-5 if dtype == np.float32 else 1e-12

    def rand(*shape):
        return _aligned(rng.standard_normal(shape).astype(dtype))

    def make_aux(rows):
        """(an aux a forward call would give for `rows` rows, act'(pre) as float64)."""
        if relu:  # the bit mask of a RELU_AUX forward, and its 0/1 derivative
            y, aux = gl.matmul(rand(rows, 3), rand(3, n), epilog="RELU_AUX")
            return _aligned(aux["relu_aux"]), (y > 0).astype(np.float64)
        aux = np.zeros((rows, width), dtype)  # the pre-activation, rows padded to 8
        aux[:, :n] = 2 * rng.standard_normal((rows, n))
        return _aligned(aux), _gelu_grad64(aux[:, :n].astype(np.float64))

    def split(r):
        if "BGRAD" in epilog:
            return unwrap(r[0]), unwrap(r[1][f"d{name[:4]}_bgrad"])
        return unwrap(r), None

    def check(g, w, aux, factor, fast=True):
        """Checks one call; fast: the call must find its fast plan made already."""
        inputs = {name: wrap(aux)}
        a, b = wrap(g), wrap(w)
        key = _matmul._fast_key(_interop.package_of(a), a, b, 1.0, epilog, inputs, None)
        assert key is not None  # the fast path takes it
        assert (key[0] in _matmul._fast.plans) == fast
        got, bgrad = split(gl.matmul(a, b, epilog=epilog, epilog_inputs=inputs))
        assert key[0] in _matmul._fast.plans
        full, full_bgrad = split(gl.matmul(a, b, epilog=epilog, epilog_inputs=_FullPath(inputs)))
        np.testing.assert_array_equal(got, full)
        want = (g.astype(np.float64) @ w.astype(np.float64)) * factor
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
        if bgrad is not None:
            np.testing.assert_array_equal(bgrad, full_bgrad)
            np.testing.assert_allclose(bgrad, want.sum(0), rtol=tol, atol=10 * tol)

    gl.matmul_cache_clear()
    aux1, f1 = make_aux(m)
    aux2, f2 = make_aux(m)
    check(rand(m, k), rand(k, n), aux1, f1, fast=False)  # plans
    for _ in range(2):
        check(rand(m, k), rand(k, n), aux2, f2)  # another array of the layout
        new, f1 = make_aux(m)
        aux1[...] = new  # new data at the same address
        check(rand(m, k), rand(k, n), aux1, f1)
    # Another alignment of the same layout: the same key and fast plan (a CPU plan records no
    # alignment), the aux's address rebound.
    aux3, f3 = make_aux(m)
    off = _aligned(aux3, offset=aux3.itemsize)
    check(rand(m, k), rand(k, n), off, f3)
    for _ in range(2):
        check(rand(m, k), rand(k, n), aux2, f2)
        off[...], f3 = make_aux(m)
        check(rand(m, k), rand(k, n), off, f3)
    # One row: contiguous whatever the row stride, so another key (strides) and fast plan.
    aux4, f4 = make_aux(1)
    tall = _aligned(np.zeros((width, 1), aux4.dtype)).T  # strides (itemsize, itemsize)
    tall[...] = aux4
    check(rand(1, k), rand(k, n), aux4, f4, fast=False)
    check(rand(1, k), rand(k, n), tall, f4, fast=False)
    for _ in range(2):
        aux4[...], f4 = make_aux(1)
        check(rand(1, k), rand(k, n), aux4, f4)
        tall[...], f5 = make_aux(1)
        check(rand(1, k), rand(k, n), tall, f5)
    # Layouts the epilogue refuses: refused still, with this epilogue's fast plans made.
    wide = np.zeros((m, 2 * width), aux1.dtype)
    with pytest.raises(gl.InvalidArgument, match="contiguous"):
        gl.matmul(wrap(rand(m, k)), wrap(rand(k, n)), epilog=epilog,
                  epilog_inputs={name: wrap(wide[:, ::2])})
    other = np.float32 if aux1.dtype != np.float32 else np.float64
    with pytest.raises(gl.InvalidArgument, match="contiguous"):
        gl.matmul(wrap(rand(m, k)), wrap(rand(k, n)), epilog=epilog,
                  epilog_inputs={name: wrap(_aligned(aux1.astype(other)))})
    check(rand(m, k), rand(k, n), aux1, f1)


@pytest.mark.gpu
def test_host_data_on_gpu(rng):
    a = rng.standard_normal((33, 17))
    b = rng.standard_normal((17, 9))
    r = gl.matmul(a, b, options={"device": "cuda"})
    assert isinstance(r, np.ndarray)
    assert rel_err(r, a @ b) < 1e-12


@pytest.mark.gpu
def test_torch_stream_argument(rng):
    torch = pytest.importorskip("torch")
    a = torch.randn(64, 64, device="cuda")
    s = torch.cuda.Stream()
    with gl.Matmul(a, a, stream=s) as mm:
        mm.plan()
        r = mm.execute()
        s.synchronize()
        torch.testing.assert_close(r, a @ a, rtol=1e-4, atol=1e-4)
        r = mm.execute(stream=torch.cuda.current_stream())
        torch.testing.assert_close(r, a @ a, rtol=1e-4, atol=1e-4)


@pytest.mark.gpu
@pytest.mark.parametrize("result_type", ["bfloat16", "float16", "float32"])
def test_float8_torch(rng, result_type):
    torch = pytest.importorskip("torch")
    if not hasattr(torch, "float8_e4m3fn"):
        pytest.skip("torch has no float8")
    a = torch.from_numpy(rng.standard_normal((32, 64))).to("cuda", torch.float8_e4m3fn)
    b = torch.from_numpy(rng.standard_normal((64, 48))).to("cuda", torch.float8_e4m3fn)
    scales = {"a": 0.5, "b": 4.0, "d": 1.0}
    r = gl.matmul(a, b, options={"result_type": result_type}, quantization_scales=scales)
    assert r.dtype == getattr(torch, result_type) and r.is_cuda
    ref = 2.0 * (to_np64(a) @ to_np64(b))
    assert rel_err(r, ref) < 1e-2


@pytest.mark.gpu
def test_float8_numpy_on_gpu(rng):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    a = rng.standard_normal((16, 32)).astype(ml_dtypes.float8_e4m3fn)
    b = rng.standard_normal((32, 16)).astype(ml_dtypes.float8_e4m3fn)
    r = gl.matmul(a, b, options={"device": "cuda", "result_type": "float32"})
    assert isinstance(r, np.ndarray) and r.dtype == np.float32
    assert rel_err(r, to_np64(a) @ to_np64(b)) < 1e-2
