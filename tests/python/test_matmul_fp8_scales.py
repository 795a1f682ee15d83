"""GPU: fp8 matmuls with scale tensors (tensor, row, 1x128, 128x128) and amax, against float64 of
the dequantized operands; quantize_fp8 on the GPU equal to the CPU's bits (torch arrays)."""

from __future__ import annotations

import numpy as np
import pytest

import gpula as gl

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.gpu

PAIRS = [
    ("tensor", "tensor", None, None),
    ("row", "row", "row", "row"),
    ("block128", "block128x128", 128, (128, 128)),
    ("block128x128", "block128", (128, 128), 128),
    ("block128", "block128", 128, 128),
]


def dequant(q, s, block):
    """float64 values scale * q of an (R, K) operand quantized with `block`."""
    v = q.float().cpu().numpy().astype(np.float64)
    s = s.cpu().numpy().astype(np.float64)
    r, k = v.shape
    if block is None:
        return v * float(s)
    if block == "row":
        return v * s[:, None]
    br = 128 if block == (128, 128) else 1
    rows = np.arange(r) // br
    cols = np.arange(k) // 128
    return v * s[rows[:, None], cols[None, :]]


@pytest.mark.parametrize("a_mode,b_mode,a_block,b_block", PAIRS)
@pytest.mark.parametrize("shape", [(256, 384, 512), (200, 136, 640)])
@pytest.mark.parametrize("result_type", ["float32", "bfloat16"])
def test_scale_modes_match_float64(a_mode, b_mode, a_block, b_block, shape, result_type):
    m, n, k = shape
    g = torch.Generator().manual_seed(7)
    x = (torch.randn(m, k, generator=g) * 3).cuda()
    w = (torch.randn(n, k, generator=g) * 0.05).cuda()
    qa, sa = gl.quantize_fp8(x, "e4m3", a_block)
    qw, sw = gl.quantize_fp8(w, "e4m3", b_block)
    sb = sw.T if sw.dim() == 2 else sw
    r, aux = gl.matmul(qa, qw.T, epilog_inputs={"a_scale": sa, "b_scale": sb},
                       options={"result_type": result_type}, amax=True)
    assert r.dtype == getattr(torch, result_type) and r.is_cuda
    ref = dequant(qa, sa, a_block) @ dequant(qw, sw, b_block).T
    got = r.float().cpu().numpy().astype(np.float64)
    err = np.linalg.norm(got - ref) / np.linalg.norm(ref)
    # Hopper's fp8 tensor cores accumulate with fewer bits than float32 (1.3e-4 measured on an
    # H100 for K = 512 and 640).
    assert err < (5e-4 if result_type == "float32" else 5e-3), (a_mode, b_mode, err)
    # gpula reduces a float32/bfloat16 result itself: within the result's error (the fp8
    # accumulation's, and bfloat16's rounding).
    amax_tol = 5e-4 if result_type == "float32" else 4e-3
    assert abs(float(aux["amax"]) - np.abs(ref).max()) <= amax_tol * np.abs(ref).max()
    # The same modes named explicitly.
    r2 = gl.matmul(qa, qw.T, epilog_inputs={"a_scale": sa, "b_scale": sb},
                   options={"result_type": result_type}, scale_mode=(a_mode, b_mode))
    torch.testing.assert_close(r2, r, rtol=0, atol=0)


def test_d_scale_and_fp8_result():
    x = torch.randn(128, 256).cuda()
    qa, sa = gl.quantize_fp8(x, "e4m3")
    qw, sw = gl.quantize_fp8(x[:96], "e4m3")
    d = torch.tensor(0.25, device="cuda")
    r, aux = gl.matmul(qa, qw.T, epilog_inputs={"a_scale": sa, "b_scale": sw, "d_scale": d},
                       options={"result_type": "float8_e4m3fn"}, amax=True)
    assert r.dtype == torch.float8_e4m3fn and tuple(r.shape) == (128, 96)
    full = dequant(qa, sa, None) @ dequant(qw, sw, None).T
    ref = full * 0.25
    got = r.float().cpu().numpy()
    ok = np.abs(ref) < 400
    assert np.allclose(got[ok], ref[ok], rtol=0.07, atol=0.02)
    # amax is of the product before d_scale and the rounding to float8 (cuBLASLt's), within the
    # fp8 accumulation's error (5.9e-4 relative seen on an H100).
    assert abs(float(aux["amax"]) - np.abs(full).max()) <= 2e-3 * np.abs(full).max()


def test_row_scales_with_fp8_result_raise_not_supported():
    x = torch.randn(128, 256).cuda()
    qa, sa = gl.quantize_fp8(x, "e4m3", "row")
    qw, sw = gl.quantize_fp8(x[:96], "e4m3", "row")
    with pytest.raises(gl.NotSupported, match="row-wise and block scales give"):
        gl.matmul(qa, qw.T, epilog_inputs={"a_scale": sa, "b_scale": sw},
                  options={"result_type": "float8_e4m3fn"})


def test_k_zero_with_block_scales_gives_zeros():
    qa = torch.zeros(64, 0, device="cuda", dtype=torch.float8_e4m3fn)
    qb = torch.zeros(48, 0, device="cuda", dtype=torch.float8_e4m3fn)
    sa = torch.ones(0, 64, device="cuda").T
    sb = torch.ones(0, 48, device="cuda")
    r = gl.matmul(qa, qb.T, epilog_inputs={"a_scale": sa, "b_scale": sb},
                  options={"result_type": "float32"}, scale_mode=("block128", "block128"))
    assert r.shape == (64, 48) and bool((r == 0).all())


@pytest.mark.parametrize("dtype", ["e4m3", "e5m2"])
@pytest.mark.parametrize("block", [None, "row", 128, (128, 128)])
@pytest.mark.parametrize("in_dtype", [torch.float32, torch.bfloat16, torch.float16])
def test_quantize_gpu_equals_cpu(dtype, block, in_dtype):
    g = torch.Generator().manual_seed(3)
    x = (torch.randn(300, 260, generator=g) * 20).to(in_dtype)
    x[3, 4], x[100, 7], x[299, 259] = float("nan"), float("inf"), float("-inf")
    q_cpu, s_cpu = gl.quantize_fp8(x, dtype, block)
    q_gpu, s_gpu = gl.quantize_fp8(x.cuda(), dtype, block)
    assert q_gpu.is_cuda and s_gpu.is_cuda and s_gpu.stride() == s_cpu.stride()
    assert torch.equal(q_gpu.cpu().view(torch.uint8), q_cpu.view(torch.uint8))
    assert torch.equal(s_gpu.cpu(), s_cpu)


def test_plan_form_with_scales_and_reset():
    x = torch.randn(256, 512).cuda()
    qa, sa = gl.quantize_fp8(x, "e4m3", 128)
    qw, sw = gl.quantize_fp8(x[:128], "e4m3", (128, 128))
    with gl.Matmul(qa, qw.T, options={"result_type": "bfloat16"}) as mm:
        mm.plan(epilog_inputs={"a_scale": sa, "b_scale": sw.T})
        r1 = mm.execute()
        mm.reset_operands(epilog_inputs={"a_scale": sa * 2})
        r2 = mm.execute()
    torch.testing.assert_close(r2.float(), 2 * r1.float(), rtol=1e-2, atol=1e-2)
