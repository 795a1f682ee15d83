"""gpula.linalg.expm / matrix_power / multi_dot against scipy.linalg.expm and numpy.linalg
(float64/complex128 references) on fresh random inputs: dtypes, batches, norms across every Pade
degree and scaling, empty and 1x1 inputs, packages, errors."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest
import scipy.linalg as sl
from conftest import to_np64

import gpula as gl

DTYPES = ("float32", "float64", "complex64", "complex128")
TOL = {"float32": 5e-5, "complex64": 5e-5, "float64": 1e-12, "complex128": 1e-12}


def rel(x, ref):
    return np.abs(to_np64(x) - ref).max(initial=0.0) / max(np.abs(ref).max(initial=0.0), 1e-300)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm", [1e-4, 0.2, 1.0, 3.0, 30.0])
@pytest.mark.parametrize("batch", [(), (3,), (2, 2)])
def test_expm_matches_scipy(xp, rng, dtype, norm, batch):
    n = 7
    a, a64 = xp.random(rng, (*batch, n, n), dtype)
    scale = float(norm / max(np.abs(a64).sum(-2).max(), 1e-300))
    a = a * scale
    a64 = to_np64(a)
    r = gl.linalg.expm(a)
    xp.empty_like_check(r, dtype, (*batch, n, n))
    ref = sl.expm(a64)
    cond = 1.0 + norm  # expm's relative condition grows with ||A||
    assert rel(r, ref) <= TOL[dtype] * cond * 10


def test_expm_mixed_norms_in_a_batch(rng):
    """Each matrix gets its own scaling: small matrices are not over-scaled by a large one."""
    a = rng.standard_normal((3, 6, 6))
    a[0] *= 1e-3
    a[2] *= 20.0
    r = gl.linalg.expm(a)
    for k in range(3):
        assert rel(r[k], sl.expm(a[k])) <= 1e-12 * (1 + np.abs(a[k]).sum(0).max())


def test_expm_known_values():
    np.testing.assert_array_equal(gl.linalg.expm(np.zeros((3, 3))), np.eye(3))
    np.testing.assert_allclose(gl.linalg.expm(np.diag([1.0, 2.0])), np.diag(np.exp([1.0, 2.0])))
    rot = gl.linalg.expm(np.array([[0.0, -np.pi / 2], [np.pi / 2, 0.0]]))
    np.testing.assert_allclose(rot, [[0.0, -1.0], [1.0, 0.0]], atol=1e-15)
    nil = np.triu(np.ones((4, 4)), 1)  # nilpotent: a finite series
    np.testing.assert_allclose(gl.linalg.expm(nil), sl.expm(nil), rtol=1e-14)
    assert gl.linalg.expm(np.array([[2.0]])).tolist() == [[np.exp(2.0)]]
    assert gl.linalg.expm(np.zeros((2, 0, 0))).shape == (2, 0, 0)
    assert gl.linalg.expm([[1, 0], [0, 1]]).dtype == np.float64  # integers: float64
    ill = np.array([[1.0, 1e6], [0.0, 1.0 + 1e-9]])  # far from normal
    np.testing.assert_allclose(gl.linalg.expm(ill), sl.expm(ill), rtol=1e-8)


def test_expm_errors():
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.expm\] a: expected \(..., n, n\)"):
        gl.linalg.expm(np.zeros((3, 4)))
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.expm\] a must not contain infs"):
        gl.linalg.expm(np.array([[np.nan, 0.0], [0.0, 1.0]]))
    r = gl.linalg.expm(np.array([[np.nan, 0.0], [0.0, 1.0]]), check_finite=False)
    assert np.isnan(r).any()  # never a crash


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("p", [0, 1, 2, 3, 5, 12, -1, -4])
def test_matrix_power_matches_numpy(xp, rng, dtype, p):
    a, a64 = xp.random(rng, (2, 5, 5), dtype)
    a = a + xp.asarray(3 * np.eye(5), dtype)  # well conditioned for negative powers
    a64 = to_np64(a)
    r = gl.linalg.matrix_power(a, p)
    xp.empty_like_check(r, dtype, (2, 5, 5))
    ref = np.linalg.matrix_power(a64, p)
    assert rel(r, ref) <= TOL[dtype] * 4 * max(abs(p), 1)


def test_matrix_power_integers_and_errors():
    a = np.array([[1, 1], [1, 0]], dtype=np.int64)
    r = gl.linalg.matrix_power(a, 30)
    assert r.dtype == np.int64 and r[0, 1] == 832040  # Fibonacci, exactly as NumPy
    np.testing.assert_array_equal(r, np.linalg.matrix_power(a, 30))
    inv = gl.linalg.matrix_power(a, -2)
    assert inv.dtype == np.float64
    np.testing.assert_allclose(inv, np.linalg.matrix_power(a, -2))
    np.testing.assert_array_equal(gl.linalg.matrix_power(a, 0), np.eye(2, dtype=np.int64))
    assert gl.linalg.matrix_power(np.zeros((0, 3, 3)), 4).shape == (0, 3, 3)
    b = np.eye(3)
    assert gl.linalg.matrix_power(b, 1) is not b
    with pytest.raises(TypeError, match="exponent must be an integer"):
        gl.linalg.matrix_power(b, 1.5)
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.matrix_power\] a: expected"):
        gl.linalg.matrix_power(np.zeros((2, 3)), 2)
    with pytest.raises(gl.SingularMatrix):
        gl.linalg.matrix_power(np.zeros((2, 2)), -1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shapes", [
    [(4, 30), (30, 5)],
    [(10, 100), (100, 5), (5, 50)],
    [(30,), (30, 2), (2, 40), (40, 7), (7,)],
    [(6,), (6, 3)],
    [(3, 60), (60, 2), (2, 9), (9,)],
])
def test_multi_dot_matches_numpy(xp, rng, dtype, shapes):
    arrays = [xp.random(rng, s, dtype) for s in shapes]
    r = gl.linalg.multi_dot([x for x, _ in arrays])
    ref = np.linalg.multi_dot([x64 for _, x64 in arrays])
    if xp.name == "numpy" and ref.ndim == 0:
        assert np.isscalar(r) or r.shape == ()
    else:
        xp.empty_like_check(r, dtype, ref.shape)
    k = max(max(s) for s in shapes)
    assert np.abs(to_np64(r) - ref).max() <= TOL[dtype] * k * (1 + np.abs(ref).max())


def test_multi_dot_order_promotion_out_and_errors(rng):
    from gpula.linalg._matfuncs import _chain_order

    # (10x100)(100x5)(5x50): (AB)C costs 7500, A(BC) 75000; numpy's choice.
    assert _chain_order([10, 100, 5, 50])[0][2] == 1
    assert _chain_order([50, 5, 100, 10])[0][2] == 0
    a32, b64 = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((4, 2))
    r = gl.linalg.multi_dot([a32, b64])
    assert r.dtype == np.float64
    ints = [np.arange(6).reshape(2, 3), np.arange(3).reshape(3, 1)]
    np.testing.assert_array_equal(gl.linalg.multi_dot(ints), np.linalg.multi_dot(ints))
    out = np.empty((3, 2))
    assert gl.linalg.multi_dot([a32.astype(np.float64), b64], out=out) is out
    np.testing.assert_allclose(out, a32.astype(np.float64) @ b64)
    with pytest.raises(gl.InvalidArgument, match="at least two arrays"):
        gl.linalg.multi_dot([b64])
    with pytest.raises(gl.InvalidArgument, match=r"arrays\[1\]: 3-dimensional"):
        gl.linalg.multi_dot([b64.T, np.zeros((4, 2, 2))])
    with pytest.raises(gl.InvalidArgument, match="do not align"):
        gl.linalg.multi_dot([b64, b64])


@pytest.mark.parametrize("module", ["gpula.linalg._matfuncs"])
def test_docstring_examples(module):
    result = doctest.testmod(importlib.import_module(module),
                             optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0 and result.attempted > 0
