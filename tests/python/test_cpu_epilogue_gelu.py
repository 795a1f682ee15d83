"""The CPU backend's float32 GELU epilogues element by element, over the whole input range.

The float32 epilogue evaluates tanh with straight-line arithmetic (so that its loop vectorizes)
instead of libm's tanhf; these tests hold it to float32 accuracy against a float64 reference on
pre-activations that reach it exactly (a @ I + 0), from 0 to far past tanh's saturation, and at
the special values.
"""

from __future__ import annotations

import numpy as np
import pytest

import gpula as gl

SQRT_2_OVER_PI = np.sqrt(2.0 / np.pi)


def gelu64(x):
    with np.errstate(invalid="ignore", over="ignore"):
        return 0.5 * x * (1.0 + np.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x**3)))


def gelu_grad64(x):
    with np.errstate(invalid="ignore", over="ignore"):
        t = np.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x**3))
        du = SQRT_2_OVER_PI * (1 + 3 * 0.044715 * x * x)
        return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * du


def inputs(rng) -> np.ndarray:
    """(m, n) float32 pre-activations: a sweep of -40..40, random normals, wide magnitudes."""
    sweep = np.linspace(-40.0, 40.0, 64 * 100)
    normal = rng.standard_normal(64 * 50)
    wide = rng.choice([-1.0, 1.0], 64 * 50) * 10.0 ** rng.uniform(-8, 3, 64 * 50)
    x = np.concatenate([sweep, normal, wide]).astype(np.float32)
    return rng.permutation(x).reshape(-1, 64)


def exact_product(x: np.ndarray):
    """a, b with a @ b == x exactly in float32 (b the identity)."""
    return x, np.eye(x.shape[1], dtype=np.float32)


# Error bound per element: |got - ref| <= ATOL + RTOL * |ref|, with ref evaluated in float64 at
# the same float32 input. float32's own tanh gives 6e-8 absolute in tanh, this one 1.8e-7.
RTOL, ATOL = 2e-6, 5e-7


def assert_close(got, ref, what):
    got = np.asarray(got, np.float64)
    err = np.abs(got - ref)
    bound = ATOL + RTOL * np.abs(ref)
    bad = np.argwhere(~(err <= bound))
    assert bad.size == 0, (
        f"{what}: {len(bad)} elements off, worst {float(np.max(err / bound)):.3g} x the bound"
    )


def test_gelu_forward_elementwise(rng):
    x = inputs(rng)
    a, b = exact_product(x)
    bias = np.zeros(x.shape[1], np.float32)
    out, aux = gl.matmul(a, b, epilog=gl.Epilog.GELU_AUX_BIAS, epilog_inputs={"bias": bias})
    assert out.dtype == np.float32
    np.testing.assert_array_equal(aux["gelu_aux"][:, : x.shape[1]], x)
    assert_close(out, gelu64(x.astype(np.float64)), "GELU_AUX_BIAS")


def test_gelu_backward_elementwise(rng):
    x = inputs(rng)
    dy = np.ones_like(x)
    a, b = exact_product(dy)
    out, g = gl.matmul(a, b, epilog=gl.Epilog.DGELU_BGRAD, epilog_inputs={"gelu_aux": x})
    ref = gelu_grad64(x.astype(np.float64))
    assert_close(out, ref, "DGELU_BGRAD")
    # Saturated inputs: the derivative is exactly 1 far right and 0 far left.
    far = np.abs(x) >= 12
    np.testing.assert_array_equal(out[far], (x[far] > 0).astype(np.float32))
    db = g["dgelu_bgrad"]
    assert db.dtype == np.float32
    np.testing.assert_allclose(db, ref.sum(0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "value",
    [0.0, -0.0, 1e-30, -1e-30, 5.15, -5.15, 9.0, -9.0, 100.0, -100.0, 1e19, -1e19],
)
def test_gelu_special_values(value):
    x = np.full((2, 8), value, np.float32)
    a, b = exact_product(x)
    out = gl.matmul(a, b, epilog=gl.Epilog.GELU)
    ref = gelu64(x.astype(np.float64))
    assert_close(out, ref, f"GELU({value})")
    grad, _ = gl.matmul(
        np.ones_like(x), b, epilog=gl.Epilog.DGELU_BGRAD, epilog_inputs={"gelu_aux": x}
    )
    ref_grad = gelu_grad64(x.astype(np.float64))
    if np.isfinite(ref_grad).all():
        assert_close(grad, ref_grad, f"GELU'({value})")


def test_gelu_nan_and_infinities_follow_the_formula():
    # k = 1 and b = 1: a @ I would spread a NaN or an infinity over its whole row (x * 0).
    x = np.array([[np.nan], [np.inf], [-np.inf], [1.0], [-1.0], [0.0]], np.float32)
    one = np.ones((1, 1), np.float32)
    out = gl.matmul(x, one, epilog=gl.Epilog.GELU)
    ref = gelu64(x.astype(np.float64))  # nan, inf, nan (-inf * 0), gelu(+-1), 0
    np.testing.assert_array_equal(np.isnan(out), np.isnan(ref))
    finite = ~np.isnan(ref)
    np.testing.assert_allclose(out[finite], ref[finite], rtol=RTOL)
    aux = np.zeros((x.shape[0], 8), np.float32)  # rows padded to 8, as a forward call gives it
    aux[:, :1] = x
    grad, _ = gl.matmul(
        np.ones_like(x), one, epilog=gl.Epilog.DGELU_BGRAD, epilog_inputs={"gelu_aux": aux}
    )
    ref_grad = gelu_grad64(x.astype(np.float64))  # nan, nan (inf * 0), nan, ...
    np.testing.assert_array_equal(np.isnan(grad), np.isnan(ref_grad))
    finite = ~np.isnan(ref_grad)
    np.testing.assert_allclose(grad[finite], ref_grad[finite], rtol=RTOL)
