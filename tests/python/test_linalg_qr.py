"""gpula.linalg.qr and gpula.linalg.lstsq against numpy.linalg on fresh random inputs."""

from __future__ import annotations

import doctest

import numpy as np
import pytest
from conftest import rel_err, to_np64

import gpula as gl

LINALG_DTYPES = ("float32", "float64", "complex64", "complex128")
TOL = {"float32": 1e-4, "complex64": 1e-4, "float64": 1e-11, "complex128": 1e-11}
SHAPES = [(6, 4), (4, 6), (5, 5), (1, 1), (7, 1), (1, 7)]


def _qr_checks(a64, q, r, dtype):
    q64, r64 = to_np64(q), to_np64(r)
    k = q64.shape[-1]
    eye = np.broadcast_to(np.eye(k), (*q64.shape[:-2], k, k))
    assert rel_err(np.swapaxes(q64, -1, -2).conj() @ q64, eye, 1.0) < TOL[dtype]
    assert rel_err(q64 @ r64, a64) < TOL[dtype]
    assert np.all(np.tril(r64, -1) == 0)


@pytest.mark.parametrize("dtype", LINALG_DTYPES)
@pytest.mark.parametrize("batch", [(), (3,), (2, 2)])
@pytest.mark.parametrize("shape", SHAPES)
def test_qr_matches_numpy(xp, rng, dtype, batch, shape):
    m, n = shape
    a, a64 = xp.random(rng, (*batch, m, n), dtype)
    before = to_np64(a).copy()
    for mode in ("reduced", "complete"):
        q, r = gl.linalg.qr(a, mode=mode)
        q_ref, r_ref = np.linalg.qr(a64, mode=mode)
        xp.empty_like_check(q, dtype, q_ref.shape)
        xp.empty_like_check(r, dtype, r_ref.shape)
        _qr_checks(a64, q, r, dtype)
        # r agrees with numpy's up to the sign (phase) of each row.
        assert rel_err(np.abs(to_np64(r)), np.abs(r_ref)) < TOL[dtype]
    r_only = gl.linalg.qr(a, mode="r")
    xp.empty_like_check(r_only, dtype, np.linalg.qr(a64, mode="r").shape)
    assert np.array_equal(to_np64(r_only), to_np64(gl.linalg.qr(a)[1]))
    assert np.array_equal(to_np64(a), before)


@pytest.mark.parametrize("dtype", ["float64", "complex64"])
def test_qr_strided_input(xp, rng, dtype):
    a, _ = xp.random(rng, (2, 5, 7), dtype)
    at = xp.transpose(a)  # (2, 7, 5), not contiguous
    q, r = gl.linalg.qr(at)
    _qr_checks(to_np64(at), q, r, dtype)


def _lstsq_checks(xp, r, ref, dtype, a64):
    """gpula's LstsqResult against numpy.linalg.lstsq's four results."""
    x, residuals, rank, s = r
    assert r.solution is x and r.singular_values is s
    xp.empty_like_check(x, dtype, ref[0].shape)
    assert rel_err(x, ref[0]) < 10 * TOL[dtype]
    assert tuple(residuals.shape) == ref[1].shape
    if ref[1].size:
        scale = np.linalg.norm(a64) ** 2 * np.linalg.norm(ref[0]) ** 2  # rounding of b - a x
        assert rel_err(residuals, ref[1], np.sqrt(scale)) < 10 * TOL[dtype]
    if xp.gpu:  # QR: no rank or singular values, as torch's "gels"
        assert tuple(rank.shape) == (0,) and tuple(s.shape) == (0,)
    else:
        assert int(rank) == int(ref[2])
        assert rel_err(s, ref[3]) < TOL[dtype]


@pytest.mark.parametrize("dtype", LINALG_DTYPES)
@pytest.mark.parametrize("shape", [(8, 3), (3, 8), (5, 5), (1, 1)])
@pytest.mark.parametrize("vector", [False, True])
def test_lstsq_matches_numpy(xp, rng, dtype, shape, vector):
    m, n = shape
    a64 = rng.standard_normal((m, n)) + 3 * np.eye(m, n)
    if dtype.startswith("complex"):
        a64 = a64 + 1j * rng.standard_normal((m, n))
    a = xp.asarray(a64, dtype)
    a64 = to_np64(a)
    b, b64 = xp.random(rng, (m,) if vector else (m, 2), dtype)
    before = to_np64(a).copy(), to_np64(b).copy()
    r = gl.linalg.lstsq(a, b)
    assert isinstance(r, gl.linalg.LstsqResult)
    _lstsq_checks(xp, r, np.linalg.lstsq(a64, b64, rcond=None), dtype, a64)
    assert np.array_equal(to_np64(a), before[0]) and np.array_equal(to_np64(b), before[1])


def test_lstsq_returns_numpys_four_results_with_their_types(rng):
    a = rng.standard_normal((7, 3))
    b = rng.standard_normal(7)
    x, residuals, rank, s = gl.linalg.lstsq(a, b)
    ref = np.linalg.lstsq(a, b)
    assert type(rank) is type(ref[2]) and rank == ref[2] == 3
    assert residuals.shape == (1,) and residuals.dtype == np.float64
    np.testing.assert_allclose(residuals, ref[1], rtol=1e-10)
    np.testing.assert_allclose(s, ref[3], rtol=1e-12)
    np.testing.assert_allclose(x, ref[0], rtol=1e-10)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_lstsq_batches_broadcast(xp, rng, dtype):
    """Batches as torch.linalg.lstsq: a's and b's batch dimensions broadcast; rank has the
    batch shape, singular values batch + (min(m, n),), residuals batch + (k,)."""
    a, a64 = xp.random(rng, (2, 1, 6, 3), dtype)
    b, b64 = xp.random(rng, (3, 6, 2), dtype)
    x, residuals, rank, s = gl.linalg.lstsq(a, b)
    xp.empty_like_check(x, dtype, (2, 3, 3, 2))
    assert tuple(residuals.shape) == (2, 3, 2)
    if not xp.gpu:
        assert tuple(rank.shape) == (2, 3) and tuple(s.shape) == (2, 3, 3)
    for i in range(2):
        for j in range(3):
            ref = np.linalg.lstsq(a64[i, 0], b64[j], rcond=None)
            one = (x[i, j], residuals[i, j], rank[i, j] if not xp.gpu else rank, s[i, j]
                   if not xp.gpu else s)
            _lstsq_checks(xp, gl.linalg.LstsqResult(*one), ref, dtype, a64[i, 0])
    v, v64 = xp.random(rng, (6,), dtype)
    xv, rv, _, _ = gl.linalg.lstsq(a, v)
    xp.empty_like_check(xv, dtype, (2, 1, 3))
    assert tuple(rv.shape) == (2, 1, 1)
    ref = np.linalg.lstsq(a64[1, 0], v64, rcond=None)
    assert rel_err(to_np64(xv)[1, 0], ref[0]) < 10 * TOL[dtype]
    assert rel_err(to_np64(rv)[1, 0], ref[1]) < 10 * TOL[dtype]


def test_lstsq_rank_deficient_cpu_is_minimum_norm(numpy_xp):
    a = np.array([[1.0, 1.0], [1.0, 1.0], [1.0, 1.0]])
    b = np.array([2.0, 2.0, 2.0])
    x, residuals, rank, s = gl.linalg.lstsq(a, b)
    ref = np.linalg.lstsq(a, b, rcond=None)
    assert np.allclose(x, ref[0])
    assert rank == ref[2] == 1
    assert residuals.shape == ref[1].shape == (0,)  # rank-deficient: no residuals, as NumPy
    np.testing.assert_allclose(s, ref[3], atol=1e-14)


def test_lstsq_rcond(numpy_xp):
    a = np.diag([2.0, 1e-3, 1e-9])
    b = np.ones(3)
    for rcond in (None, 1e-2, 1e-7, -1, 0.0):
        x, residuals, rank, s = gl.linalg.lstsq(a, b, rcond)
        ref = np.linalg.lstsq(a, b, rcond=rcond)
        np.testing.assert_allclose(x, ref[0], rtol=1e-12)
        assert rank == ref[2], rcond
        assert residuals.shape == ref[1].shape
    assert gl.linalg.lstsq(a, b, rcond=1e-2).rank == 1
    for bad in ("1e-3", float("nan"), True, [1e-3]):
        with pytest.raises(gl.InvalidArgument, match=r"\[linalg.lstsq\] rcond must be"):
            gl.linalg.lstsq(a, b, rcond=bad)


def test_empty_dimensions(numpy_xp):
    for shape in [(0, 3), (3, 0), (0, 0), (0, 4, 2)]:
        a = np.zeros(shape)
        for mode in ("reduced", "complete"):
            q, r = gl.linalg.qr(a, mode=mode)
            q_ref, r_ref = np.linalg.qr(a, mode=mode)
            assert q.shape == q_ref.shape and r.shape == r_ref.shape
            assert np.array_equal(q, q_ref) and np.array_equal(r, r_ref)
        b = np.ones((*shape[:-1], 2))
        x, residuals, rank, s = gl.linalg.lstsq(a, b)
        assert x.shape == (*shape[:-2], shape[-1], 2)
        assert np.all(x == 0)
        assert rank.shape == shape[:-2] and np.all(rank == 0)
        assert s.shape == (*shape[:-2], min(shape[-2:]))
        if len(shape) == 2:  # NumPy takes one matrix only
            ref = np.linalg.lstsq(a, b, rcond=None)
            assert residuals.shape == ref[1].shape
            np.testing.assert_array_equal(residuals, ref[1])


@pytest.mark.parametrize("mode, numpy_mode", [("economic", "reduced"), ("full", "complete")])
def test_qr_takes_scipys_mode_names(rng, mode, numpy_mode):
    a = rng.standard_normal((5, 3))
    q, r = gl.linalg.qr(a, mode=mode)
    q_ref, r_ref = np.linalg.qr(a, mode=numpy_mode)
    assert q.shape == q_ref.shape and r.shape == r_ref.shape
    np.testing.assert_allclose(q @ r, a, atol=1e-13)


def test_errors(numpy_xp):
    with pytest.raises(gl.InvalidArgument, match="mode must be"):
        gl.linalg.qr(np.eye(2), mode="raw")
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.qr\] expected a matrix"):
        gl.linalg.qr(np.ones(3))
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.lstsq\] b has shape"):
        gl.linalg.lstsq(np.eye(3), np.ones(4))
    with pytest.raises(gl.DTypeError, match=r"\[linalg.qr\] unsupported dtype float128"):
        gl.linalg.qr(np.eye(3, dtype=np.longdouble))


def test_docstring_examples():
    import gpula.linalg._qr as module

    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0
    assert result.attempted > 0
