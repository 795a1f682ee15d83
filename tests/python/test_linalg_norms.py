"""gpula.linalg.norm, cond, pinv and matrix_rank against numpy.linalg float64 on fresh random
inputs: every ord, axes, keepdims, dtypes, batches, empty, ill-conditioned and singular
matrices, results in the caller's package, and the documented errors."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import rel_err, to_np64

import gpula as gl

DTYPES = ("float32", "float64", "complex64", "complex128")
TOL = {"float32": 1e-4, "complex64": 1e-4, "float64": 1e-11, "complex128": 1e-11}
MATRIX_ORDS = [None, "fro", "nuc", np.inf, -np.inf, 1, -1, 2, -2]
VECTOR_ORDS = [None, np.inf, -np.inf, 0, 1, -1, 2, 3, 0.5]


def _same_package(xp, r, ref_shape, dtype):
    real = "float32" if dtype in ("float32", "complex64") else "float64"
    xp.empty_like_check(r, real, ref_shape)


@pytest.mark.parametrize("dtype", DTYPES)
def test_norm_matches_numpy(xp, rng, dtype):
    x, x64 = xp.random(rng, (3, 4, 5), dtype)
    for ord in MATRIX_ORDS:
        for axis in [(1, 2), (2, 0), (-1, -2)]:
            for keepdims in (False, True):
                r = gl.linalg.norm(x, ord, axis, keepdims)
                ref = np.linalg.norm(x64, ord, axis, keepdims)
                _same_package(xp, r, ref.shape, dtype)
                assert rel_err(r, ref) < TOL[dtype], (ord, axis, keepdims)
    for ord in VECTOR_ORDS:
        for axis in [0, -1, 1]:
            r = gl.linalg.norm(x, ord, axis)
            ref = np.linalg.norm(x64, ord, axis)
            _same_package(xp, r, ref.shape, dtype)
            assert rel_err(r, ref) < TOL[dtype], (ord, axis)
    assert rel_err(gl.linalg.norm(x), np.linalg.norm(x64)) < TOL[dtype]
    assert tuple(gl.linalg.norm(x, keepdims=True).shape) == (1, 1, 1)
    m, m64 = x[0], x64[0]
    for ord in MATRIX_ORDS:  # 2-D x, axis=None: matrix norms
        assert rel_err(gl.linalg.norm(m, ord), np.linalg.norm(m64, ord)) < TOL[dtype], ord
    for ord in VECTOR_ORDS:  # 1-D x, axis=None: vector norms
        assert rel_err(gl.linalg.norm(m[0], ord), np.linalg.norm(m64[0], ord)) < TOL[dtype], ord


def test_norm_numpy_scalars_integers_and_errors():
    r = gl.linalg.norm(np.array([3, 4]))
    assert isinstance(r, np.float64) and r == 5.0
    assert gl.linalg.norm([[1, 2], [3, 4]], "fro") == np.linalg.norm([[1, 2], [3, 4]], "fro")
    assert gl.linalg.norm(np.zeros((0, 3)), axis=1).shape == (0,)
    with pytest.raises(ValueError, match="invalid norm order"):
        gl.linalg.norm(np.ones(3), "fro", axis=0)
    with pytest.raises(ValueError, match="invalid norm order"):
        gl.linalg.norm(np.ones((3, 3)), 3)
    with pytest.raises(ValueError, match="improper number of dimensions"):
        gl.linalg.norm(np.ones((2, 2, 2)), 1)
    with pytest.raises(ValueError, match="duplicate axes"):
        gl.linalg.norm(np.ones((2, 2)), axis=(0, 0))
    with pytest.raises(ValueError, match="out of bounds"):
        gl.linalg.norm(np.ones((2, 2)), axis=2)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cond_matches_numpy(xp, rng, dtype):
    x, x64 = xp.random(rng, (3, 5, 5), dtype)
    for p in MATRIX_ORDS:
        r = gl.linalg.cond(x, p)
        ref = np.linalg.cond(x64, p)
        _same_package(xp, r, ref.shape, dtype)
        assert rel_err(r, ref) < 1e2 * TOL[dtype], p
    w, w64 = xp.random(rng, (2, 3, 6), dtype)  # p None/2/-2 take any shape
    assert rel_err(gl.linalg.cond(w), np.linalg.cond(w64)) < 1e2 * TOL[dtype]


def test_cond_singular_ill_conditioned_and_errors(rng):
    a = rng.standard_normal((3, 4, 4))
    a[1, :, 0] = 0
    for p in (1, -1, np.inf, "fro", "nuc"):
        assert np.isinf(gl.linalg.cond(a, p)[1]), p
    assert gl.linalg.cond(a)[1] > 1e14
    q, _ = np.linalg.qr(rng.standard_normal((6, 6)))
    ill = q @ np.diag(np.logspace(0, -10, 6)) @ q.T
    assert abs(gl.linalg.cond(ill) / np.linalg.cond(ill) - 1) < 1e-4
    assert isinstance(gl.linalg.cond(np.eye(2)), np.float64)
    with pytest.raises(np.linalg.LinAlgError, match="empty"):
        gl.linalg.cond(np.zeros((0, 0)))
    with pytest.raises(np.linalg.LinAlgError, match="square"):
        gl.linalg.cond(np.ones((2, 3)), 1)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 5), (3, 6, 4), (2, 4, 6), (1, 1)])
def test_pinv_and_matrix_rank_match_numpy(xp, rng, dtype, shape):
    a, a64 = xp.random(rng, shape, dtype)
    r = gl.linalg.pinv(a)
    ref = np.linalg.pinv(a64)
    xp.empty_like_check(r, dtype, ref.shape)
    assert rel_err(r, ref) < 1e2 * TOL[dtype]
    rank = gl.linalg.matrix_rank(a)
    assert np.array_equal(to_np64(rank), np.linalg.matrix_rank(a64))


def test_pinv_rank_deficient_hermitian_and_tolerances(rng):
    b = rng.standard_normal((2, 6, 3))
    a = b @ np.swapaxes(b, -1, -2)  # rank 3, symmetric positive semidefinite
    for kw in ({}, {"rtol": None}, {"rtol": 1e-8}, {"rcond": 1e-8}, {"hermitian": True}):
        assert rel_err(gl.linalg.pinv(a, **kw), np.linalg.pinv(a, **kw)) < 1e-8, kw
    assert gl.linalg.matrix_rank(a).tolist() == [3, 3]
    assert gl.linalg.matrix_rank(a, hermitian=True).tolist() == [3, 3]
    assert gl.linalg.matrix_rank(a, tol=1e30).tolist() == [0, 0]
    assert gl.linalg.matrix_rank(a, rtol=np.array([1e-12, 10.0])).tolist() == [3, 0]
    assert gl.linalg.matrix_rank(np.zeros(3)) == 0 and gl.linalg.matrix_rank(np.ones(3)) == 1
    assert isinstance(gl.linalg.matrix_rank(np.eye(3)), np.integer)
    assert gl.linalg.pinv(np.zeros((2, 0, 3))).shape == (2, 3, 0)
    with pytest.raises(ValueError, match="both set"):
        gl.linalg.pinv(a, rcond=1e-3, rtol=1e-3)
    with pytest.raises(ValueError, match="both set"):
        gl.linalg.matrix_rank(a, tol=1.0, rtol=1.0)
    with pytest.raises(ValueError, match="infs or NaNs"):
        gl.linalg.pinv(np.full((2, 2), np.inf))
