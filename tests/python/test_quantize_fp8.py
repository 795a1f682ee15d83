"""gl.quantize_fp8 against a NumPy float64 reference (CPU; GPU bits equal to the CPU's), and the
fp8 scale-tensor checks of gl.matmul, which run in the front (before any backend) and so on the
CPU too. GPU matmuls with row-wise and block scales: test_matmul_fp8_scales.py."""

from __future__ import annotations

import numpy as np
import pytest

import gpula as gl

ml_dtypes = pytest.importorskip("ml_dtypes")

FP8 = {"e4m3": (ml_dtypes.float8_e4m3fn, 448.0), "e5m2": (ml_dtypes.float8_e5m2, 57344.0)}
BLOCKS = [None, "row", 128, (128, 128)]


def tiles(shape, block):
    """(row slices, col slices) of the blocks, and the scale index of block (i, j)."""
    if block is None:
        return None
    r, k = shape
    br, bc = {"row": (1, max(k, 1)), 128: (1, 128), (128, 128): (128, 128)}[block]
    rows = [slice(i, i + br) for i in range(0, r, br)]
    cols = [slice(j, j + bc) for j in range(0, k, bc)] or [slice(0, 0)]
    return rows, cols


def reference_scales(x64, block, fmax):
    """float32 scales: amax over finite |x| / fmax in float32 (IEEE, as gpula), 1 where 0."""

    def scale(v):
        v = np.abs(v[np.isfinite(v)])
        amax = np.float32(v.max()) if v.size else np.float32(0)
        return np.float32(amax / np.float32(fmax)) if amax > 0 else np.float32(1)

    if block is None:
        return np.array(scale(x64), np.float32), None
    rows, cols = tiles(x64.shape, block)
    s = np.empty((len(rows), len(cols)), np.float32)
    for i, rs in enumerate(rows):
        for j, cs in enumerate(cols):
            s[i, j] = scale(x64[rs, cs])
    return s, (rows, cols)


def expand(s, parts, shape):
    """Per-element scale (float64) from the block grid."""
    if parts is None:
        return np.full(shape, float(s))
    out = np.empty(shape)
    rows, cols = parts
    for i, rs in enumerate(rows):
        for j, cs in enumerate(cols):
            out[rs, cs] = s[i, j]
    return out


def grid_of(scales, block, shape):
    """gl's scales as the (row tiles, col tiles) grid."""
    s = np.asarray(scales)
    if block == "row":
        return s.reshape(-1, 1)
    return s


def signed_code(q):
    c = q.view(np.uint8).astype(np.int32)
    mag = c & 0x7F
    return np.where(c & 0x80, -mag, mag)


def check(x, dtype, block):
    ftype, fmax = FP8[dtype]
    q, scales = gl.quantize_fp8(x, dtype, block)
    x64 = np.asarray(x).astype(np.float64)
    assert q.dtype == np.dtype(ftype) and q.shape == x.shape
    assert scales.dtype == np.float32
    ref, parts = reference_scales(x64, block, fmax)
    if block is None:
        assert scales.shape == ()
        assert scales == ref
    else:
        np.testing.assert_array_equal(grid_of(scales, block, x.shape), ref)  # exact
    per = expand(ref, parts, x.shape)
    with np.errstate(invalid="ignore"):
        want = np.clip(x64 / per, -fmax, fmax)
    want_q = want.astype(ftype)
    finite = np.isfinite(x64)
    diff = np.abs(signed_code(q) - signed_code(want_q))
    assert diff[finite].max(initial=0) <= 1  # within one fp8 ulp
    assert np.isnan(q[np.isnan(x64)].astype(np.float32)).all()
    np.testing.assert_array_equal(q[np.isposinf(x64)].astype(np.float64), fmax)
    np.testing.assert_array_equal(q[np.isneginf(x64)].astype(np.float64), -fmax)
    return q, scales


@pytest.mark.parametrize("dtype", ["e4m3", "e5m2"])
@pytest.mark.parametrize("block", BLOCKS)
@pytest.mark.parametrize("shape", [(1, 1), (7, 5), (300, 260), (128, 256), (129, 127)])
def test_quantize_matches_float64(rng, dtype, block, shape):
    x = (rng.standard_normal(shape) * rng.uniform(0.01, 100)).astype(np.float32)
    check(x, dtype, block)


@pytest.mark.parametrize("in_dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("block", BLOCKS)
def test_quantize_input_dtypes(rng, in_dtype, block):
    dt = ml_dtypes.bfloat16 if in_dtype == "bfloat16" else np.dtype(in_dtype)
    x = rng.standard_normal((130, 200)).astype(dt)
    x_before = x.copy()
    check(x, "e4m3", block)
    np.testing.assert_array_equal(x.view(np.uint8), x_before.view(np.uint8))  # not modified


@pytest.mark.parametrize("block", BLOCKS)
def test_quantize_zero_blocks_scale_one(block):
    x = np.zeros((130, 260), np.float32)
    x[0, 0] = 3.0  # one nonzero block; the others have amax 0
    q, s = check(x, "e4m3", block)
    grid = np.asarray(s).reshape(-1)
    assert (grid == 1.0).sum() >= (0 if block is None else 1)
    if block is not None:
        assert grid.min() == np.float32(3.0) / np.float32(448.0)


@pytest.mark.parametrize("block", BLOCKS)
def test_quantize_nan_inf_policy(rng, block):
    x = rng.standard_normal((64, 300)).astype(np.float32)
    x[3, 7], x[10, 200], x[40, 299] = np.nan, np.inf, -np.inf
    q, s = check(x, "e4m3", block)
    assert np.isfinite(np.asarray(s)).all()  # scales from the finite values only


def test_quantize_e5m2_inf_saturates():
    x = np.array([[np.inf, -np.inf, 1.0, np.nan]], np.float32)
    q, s = gl.quantize_fp8(x, "e5m2", "row")
    v = q.astype(np.float32)
    assert v[0, 0] == 57344 and v[0, 1] == -57344 and np.isnan(v[0, 3])


def test_quantize_strided_input(rng):
    base = rng.standard_normal((260, 300)).astype(np.float32)
    x = base[::2, ::3]
    q, s = check(x, "e4m3", 128)
    q2, s2 = gl.quantize_fp8(np.ascontiguousarray(x), "e4m3", 128)
    np.testing.assert_array_equal(q.view(np.uint8), q2.view(np.uint8))


@pytest.mark.parametrize(
    "shape,block,scale_shape",
    [
        ((0, 5), "row", (0,)),
        ((5, 0), "row", (5,)),
        ((0, 300), 128, (0, 3)),
        ((5, 0), 128, (5, 0)),
        ((0, 0), (128, 128), (0, 0)),
        ((0,), None, ()),
        ((2, 0, 3), None, ()),
    ],
)
def test_quantize_empty(shape, block, scale_shape):
    q, s = gl.quantize_fp8(np.zeros(shape, np.float32), "e4m3", block)
    assert q.shape == shape and s.shape == scale_shape
    assert (np.asarray(s) == 1.0).all()


def test_quantize_layouts():
    x = np.ones((300, 260), np.float32)
    _, s = gl.quantize_fp8(x, block=128)
    assert s.shape == (300, 3) and s.strides == (4, 1200)  # row index fastest (cuBLASLt VEC128)
    _, s = gl.quantize_fp8(x, block=(128, 128))
    assert s.shape == (3, 3) and s.flags.c_contiguous
    _, s = gl.quantize_fp8(np.ones((2, 3, 4), np.float32))
    assert s.shape == ()


def test_quantize_errors():
    x = np.ones((4, 4), np.float32)
    with pytest.raises(gl.DTypeError, match="float64"):
        gl.quantize_fp8(x.astype(np.float64))
    with pytest.raises(gl.DTypeError, match="dtype"):
        gl.quantize_fp8(x, "int8")
    for bad in [64, "col", (128, 64), (128,), True]:
        with pytest.raises(gl.InvalidArgument, match="block"):
            gl.quantize_fp8(x, block=bad)
    with pytest.raises(gl.InvalidArgument, match="2-D"):
        gl.quantize_fp8(np.ones((2, 2, 2), np.float32), block=128)
    with pytest.raises(gl.InvalidArgument, match="2-D"):
        gl.quantize_fp8(np.ones(5, np.float32), block="row")
    with pytest.raises(gl.DTypeError):
        gl.quantize_fp8([1.0, 2.0])


# ---- matmul's scale checks (front; CPU) ---------------------------------------------------


def fp8(shape):
    return np.ones(shape, ml_dtypes.float8_e4m3fn)


M, K, N = 200, 300, 136
KB = 3


def ones(shape, strides_t=False):
    if strides_t:
        return np.ones(shape[::-1], np.float32).T
    return np.ones(shape, np.float32)


@pytest.mark.parametrize(
    "a_scale,b_scale",
    [
        (ones((M,)), ones((N,))),
        (ones((M, KB), True), ones((2, KB)).T),
        (ones((2, KB)), ones((KB, N))),
        (ones((M, KB), True), ones((KB, N))),
    ],
)
def test_structured_scales_on_cpu_not_supported(a_scale, b_scale):
    with pytest.raises(gl.NotSupported, match="sm_90"):
        gl.matmul(fp8((M, K)), fp8((K, N)), epilog_inputs={"a_scale": a_scale, "b_scale": b_scale})


def test_amax_on_cpu_not_supported():
    with pytest.raises(gl.NotSupported, match="GPU"):
        gl.matmul(fp8((M, K)), fp8((K, N)), amax=True)


@pytest.mark.parametrize(
    "a_scale,expected",
    [
        (ones((M + 1,)), f"({M},) for 'row'"),
        (ones((M, KB)), f"({M}, {KB}) with strides (1, {M}) for 'block128'"),  # C order
        (ones((3, 3)), "(2, 3) with strides (3, 1) for 'block128x128'"),
        (ones((1, 2, 3)), "() or (1,) for 'tensor'"),
    ],
)
def test_wrong_a_scale_names_expected_shapes(a_scale, expected):
    with pytest.raises(gl.InvalidArgument, match="a_scale") as e:
        gl.matmul(fp8((M, K)), fp8((K, N)), epilog_inputs={"a_scale": a_scale})
    assert expected in str(e.value)


@pytest.mark.parametrize(
    "b_scale,expected",
    [
        (ones((N, 1)), f"({N},) for 'row'"),
        (ones((N, KB), True), f"({KB}, {N}) with strides ({N}, 1) for 'block128'"),
        (ones((KB, 2)), f"({KB}, 2) with strides (1, {KB}) for 'block128x128'"),
    ],
)
def test_wrong_b_scale_names_expected_shapes(b_scale, expected):
    with pytest.raises(gl.InvalidArgument, match="b_scale") as e:
        gl.matmul(fp8((M, K)), fp8((K, N)), epilog_inputs={"b_scale": b_scale})
    assert expected in str(e.value)


def test_explicit_scale_mode_checks_shape():
    with pytest.raises(gl.InvalidArgument, match="must be .* for 'row'"):
        gl.matmul(fp8((M, K)), fp8((K, N)), epilog_inputs={"a_scale": ones((1,))},
                  scale_mode=("row", "row"))
    with pytest.raises(gl.InvalidArgument, match="scale_mode"):
        gl.matmul(fp8((M, K)), fp8((K, N)), scale_mode="rowwise")
    with pytest.raises(gl.InvalidArgument, match="no b_scale"):
        gl.matmul(fp8((M, K)), fp8((K, N)), epilog_inputs={"a_scale": ones((M,))},
                  scale_mode=("row", "row"))


def test_unsupported_pair_is_not_supported():
    with pytest.raises(gl.NotSupported, match="pairs"):
        gl.matmul(fp8((M, K)), fp8((K, N)), epilog_inputs={"a_scale": ones((M,))})
    with pytest.raises(gl.NotSupported, match="pairs"):
        gl.matmul(fp8((M, K)), fp8((K, N)),
                  epilog_inputs={"a_scale": ones((2, KB)), "b_scale": ones((2, KB)).T})


def test_scale_argument_errors():
    with pytest.raises(gl.DTypeError, match="a_scale has dtype float64"):
        gl.matmul(fp8((M, K)), fp8((K, N)), epilog_inputs={"a_scale": np.ones(M)})
    with pytest.raises(gl.InvalidArgument, match="float8 operands"):
        gl.matmul(np.ones((4, 4), np.float32), np.ones((4, 4), np.float32),
                  epilog_inputs={"a_scale": ones((4,))})
    with pytest.raises(gl.InvalidArgument, match="given twice"):
        gl.matmul(fp8((M, K)), fp8((K, N)), epilog_inputs={"a_scale": ones(())},
                  quantization_scales={"a": 2.0})
    with pytest.raises(gl.InvalidArgument, match="d_scale must have shape"):
        gl.matmul(fp8((M, K)), fp8((K, N)), epilog_inputs={"d_scale": ones((2,))},
                  options={"result_type": "float8_e4m3fn"})
    with pytest.raises(gl.InvalidArgument, match="float8 results"):
        gl.matmul(fp8((M, K)), fp8((K, N)), epilog_inputs={"d_scale": ones(())},
                  options={"result_type": "bfloat16"})
    with pytest.raises(gl.NotSupported, match="2-D"):
        gl.matmul(fp8((2, M, K)), fp8((K, N)),
                  epilog_inputs={"a_scale": ones((M,)), "b_scale": ones((N,))})
    with pytest.raises(gl.DTypeError, match="amax"):
        gl.matmul(fp8((M, K)), fp8((K, N)), amax=1)


def test_per_tensor_fp8_on_cpu_keeps_its_error():
    with pytest.raises(gl.NotSupported, match="CPU"):
        gl.matmul(fp8((M, K)), fp8((K, N)), epilog_inputs={"a_scale": ones(()),
                                                            "b_scale": ones((1,))})
