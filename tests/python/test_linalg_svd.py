"""gpula.linalg.svd / svdvals against numpy.linalg.svd (float64) on fresh random inputs."""

from __future__ import annotations

import doctest
import importlib
import logging

import numpy as np
import pytest
from conftest import to_np64

import gpula as gl

LINALG_DTYPES = ("float32", "float64", "complex64", "complex128")
TOL = {"float32": 2e-5, "complex64": 2e-5, "float64": 1e-13, "complex128": 1e-13}
REAL = {"float32": "float32", "float64": "float64", "complex64": "float32", "complex128": "float64"}
METHODS = ("auto", "gesvd", "gesvdj", "gesvdp", "gesvda")


def check_svd(a64, u, s, vh, tol, full):
    """s against numpy's, a = u s vh, u^H u = I, vh vh^H = I (a64: the matrix as given)."""
    u, s, vh = to_np64(u), to_np64(s), to_np64(vh)
    m, n = a64.shape[-2:]
    k = min(m, n)
    scale = max(np.linalg.norm(a64, axis=(-2, -1)).max(initial=0.0), 1e-300)
    size = max(m, n, 4)
    ref = np.linalg.svd(a64, compute_uv=False)
    assert np.abs(s - ref).max(initial=0.0) <= tol * size * max(ref.max(initial=0.0), 1e-300)
    assert np.all(np.diff(s, axis=-1) <= 0) and np.all(s >= 0)
    assert u.shape[-1] == (m if full else k) and vh.shape[-2] == (n if full else k)
    rec = (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :]
    assert np.abs(rec - a64).max(initial=0.0) <= tol * size * scale
    eu, ev = np.eye(u.shape[-1]), np.eye(vh.shape[-2])
    assert np.abs(np.swapaxes(u, -1, -2).conj() @ u - eu).max(initial=0.0) <= tol * size
    assert np.abs(vh @ np.swapaxes(vh, -1, -2).conj() - ev).max(initial=0.0) <= tol * size


@pytest.mark.parametrize("dtype", LINALG_DTYPES)
@pytest.mark.parametrize("batch", [(), (3,), (2, 2)])
@pytest.mark.parametrize("mn", [(6, 6), (9, 4), (4, 9), (40, 35)])
@pytest.mark.parametrize("full", [False, True])
def test_svd_matches_numpy(xp, rng, dtype, batch, mn, full):
    a, a64 = xp.random(rng, (*batch, *mn), dtype)
    before = to_np64(a).copy()
    m, n = mn
    k = min(m, n)
    u, s, vh = gl.linalg.svd(a, full_matrices=full)
    xp.empty_like_check(u, dtype, (*batch, m, m if full else k))
    xp.empty_like_check(s, REAL[dtype], (*batch, k))
    xp.empty_like_check(vh, dtype, (*batch, n if full else k, n))
    check_svd(a64, u, s, vh, TOL[dtype], full)
    ref = np.linalg.svd(a64, compute_uv=False)
    s2 = gl.linalg.svd(a, full, compute_uv=False)
    xp.empty_like_check(s2, REAL[dtype], (*batch, k))
    assert np.abs(to_np64(s2) - ref).max() <= TOL[dtype] * max(m, n) * ref.max()
    s3 = gl.linalg.svdvals(a)
    assert np.abs(to_np64(s3) - ref).max() <= TOL[dtype] * max(m, n) * ref.max()
    np.testing.assert_array_equal(to_np64(a), before)


@pytest.mark.parametrize("method", METHODS)
def test_every_method_on_the_cpu_is_gesdd(numpy_xp, rng, method):
    a, a64 = numpy_xp.random(rng, (2, 7, 5), "complex128")
    u, s, vh = gl.linalg.svd(a, full_matrices=False, method=method)
    check_svd(a64, u, s, vh, 1e-13, False)
    np.testing.assert_array_equal(s, gl.linalg.svd(a)[1])  # the same routine as "auto"
    np.testing.assert_allclose(gl.linalg.svdvals(a, method=method), s, rtol=1e-13)


def test_non_contiguous_and_transposed_input(numpy_xp, rng):
    a, _ = numpy_xp.random(rng, (3, 8, 5), "float64")
    t = np.swapaxes(a, -1, -2)  # (3, 5, 8), a strided view
    u, s, vh = gl.linalg.svd(t, full_matrices=True)
    check_svd(np.asarray(t), u, s, vh, 1e-13, True)
    big = np.zeros((3, 16, 20), complex)
    big[:, ::2, ::4] = a + 1j * a[..., ::-1]
    view = big[:, ::2, ::4]
    u, s, vh = gl.linalg.svd(view)
    check_svd(np.asarray(view), u, s, vh, 1e-13, True)
    b = np.broadcast_to(a[:1], (4, 8, 5))  # stride-0 batch
    s_b = gl.linalg.svdvals(b)
    np.testing.assert_allclose(s_b, np.linalg.svd(b, compute_uv=False), rtol=1e-13)


def test_edge_cases():
    u, s, vh = gl.linalg.svd(np.zeros((3, 0)), full_matrices=True)
    assert u.shape == (3, 3) and s.shape == (0,) and vh.shape == (0, 0)
    np.testing.assert_array_equal(u, np.eye(3))
    u, s, vh = gl.linalg.svd(np.zeros((2, 0, 4), np.complex64), full_matrices=True)
    assert u.shape == (2, 0, 0) and vh.shape == (2, 4, 4) and s.dtype == np.float32
    np.testing.assert_array_equal(vh, np.broadcast_to(np.eye(4), (2, 4, 4)))
    u, s, vh = gl.linalg.svd(np.zeros((0, 3, 5)))  # full_matrices=True, as NumPy
    assert u.shape == (0, 3, 3) and s.shape == (0, 3) and vh.shape == (0, 5, 5)
    u, s, vh = gl.linalg.svd(np.zeros((0, 3, 5)), full_matrices=False)
    assert u.shape == (0, 3, 3) and s.shape == (0, 3) and vh.shape == (0, 3, 5)
    assert gl.linalg.svdvals(np.zeros((0, 3, 3), np.float32)).shape == (0, 3)
    u, s, vh = gl.linalg.svd(np.array([[-3.0]]))
    assert s.tolist() == [3.0] and (u * s) @ vh == -3.0
    np.testing.assert_array_equal(gl.linalg.svdvals(np.zeros((4, 3))), np.zeros(3))
    a = np.eye(4)
    a[2, 1] = np.nan
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.svdvals\] a must not contain"):
        gl.linalg.svdvals(a)
    assert np.isnan(gl.linalg.svdvals(a, check_finite=False)).all()  # never a crash
    u, s, vh = gl.linalg.svd(np.stack([np.eye(3), np.full((3, 3), np.inf)]), check_finite=False)
    assert not np.isnan(s[0]).any() and np.isnan(s[1]).all()
    (u, s, vh), info = gl.linalg.svd(np.eye(3), check_info=False)
    assert info.shape == () and int(info) == 0
    s, info = gl.linalg.svdvals(np.eye(3)[None], check_info=False)
    assert info.shape == (1,) and info.dtype == np.int32


def test_top_k_through_randomized_svd(numpy_xp, rng):
    u0, _ = np.linalg.qr(rng.standard_normal((50, 30)))
    v0, _ = np.linalg.qr(rng.standard_normal((30, 30)))
    a = (u0 * 0.6 ** np.arange(30)) @ v0.T
    u, s, vh = gl.linalg.svd(a, k=5)
    assert u.shape == (50, 5) and s.shape == (5,) and vh.shape == (5, 30)
    ref = np.linalg.svd(a, compute_uv=False)[:5]
    np.testing.assert_allclose(s, ref, rtol=1e-10)
    np.testing.assert_allclose(u.T @ u, np.eye(5), atol=1e-10)
    s_only = gl.linalg.svd(a, compute_uv=False, k=3)
    np.testing.assert_allclose(s_only, ref[:3], rtol=1e-10)
    sk = gl.linalg.svd(a, k=np.int64(30), compute_uv=False)  # k = min(m, n): exact
    np.testing.assert_allclose(sk, np.linalg.svd(a, compute_uv=False), atol=1e-12)


def test_errors():
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.svd\] expected a matrix"):
        gl.linalg.svd(np.zeros(3))
    with pytest.raises(gl.DTypeError, match="unsupported dtype float128"):
        gl.linalg.svdvals(np.zeros((3, 3), np.longdouble))
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.svd\] method must be one of"):
        gl.linalg.svd(np.eye(2), method="jacobi")
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.svdvals\] method must be one of"):
        gl.linalg.svdvals(np.eye(2), method=None)
    with pytest.raises(gl.InvalidArgument, match="full_matrices must be True or False"):
        gl.linalg.svd(np.eye(2), full_matrices=1)
    with pytest.raises(gl.InvalidArgument, match="compute_uv must be True or False"):
        gl.linalg.svd(np.eye(2), compute_uv="no")
    with pytest.raises(gl.InvalidArgument, match=r"k must be a positive int or None, got 0"):
        gl.linalg.svd(np.eye(3), k=0)
    with pytest.raises(gl.InvalidArgument, match=r"k must be a positive int or None, got True"):
        gl.linalg.svd(np.eye(3), k=True)
    with pytest.raises(gl.InvalidArgument, match=r"k must be <= min\(m, n\) = 2"):
        gl.linalg.svd(np.ones((2, 5)), k=3)
    with pytest.raises(gl.InvalidArgument, match="full_matrices=True cannot be combined with k"):
        gl.linalg.svd(np.eye(3), full_matrices=True, k=1)
    with pytest.raises(gl.InvalidArgument, match="method 'gesvdj' names a full-SVD routine"):
        gl.linalg.svd(np.eye(3), k=1, method="gesvdj")
    with pytest.raises(gl.InvalidArgument, match="check_info=False cannot be combined with k"):
        gl.linalg.svd(np.eye(3), k=1, check_info=False)
    with pytest.raises(gl.InvalidArgument, match="device and fallback cannot be combined"):
        gl.linalg.svd(np.eye(3), k=1, device="cpu")
    with pytest.raises(gl.InvalidArgument, match="device must be None"):
        gl.linalg.svd(np.eye(3), device="tpu")


@pytest.mark.gpu
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("dtype", LINALG_DTYPES)
@pytest.mark.parametrize("shape", [(40, 33), (33, 40), (50, 16, 16), (6, 33, 33)])
def test_gpu_methods_match_numpy(rng, method, dtype, shape):
    a, a64 = _random(rng, shape, dtype)
    u, s, vh = gl.linalg.svd(a, full_matrices=False, method=method, device="cuda")
    tol = TOL[dtype] * (300 if method == "gesvda" else 10 if method == "gesvdp" else 1)
    if method == "gesvda":  # approximate (through a^H a), documented: its errors grow as
        # eps cond(a)^2 (a float64 orthogonality error of 2.1e-5 on one random 16 x 16 item of 50)
        eps = np.finfo(REAL[dtype]).eps
        tol = max(tol, 1e-6, 10 * eps * float(np.linalg.cond(a64).max()) ** 2)
    check_svd(a64, u, s, vh, tol, False)
    if method != "gesvda" or shape[-1] == shape[-2]:
        u, s, vh = gl.linalg.svd(a, full_matrices=True, method=method, device="cuda")
        check_svd(a64, u, s, vh, tol, True)
    s2 = gl.linalg.svdvals(a, method=method, device="cuda")
    ref = np.linalg.svd(a64, compute_uv=False)
    assert np.abs(s2 - ref).max() <= tol * max(shape) * ref.max()


@pytest.mark.gpu
def test_gpu_gesvdp_is_accurate_or_raises(rng, caplog):
    """cusolverDnXgesvdp returned wrong SVDs of Gaussian float32 matrices of order >= 2048 on
    the H200 (CUDA 13.0; reconstruction errors 50-80), saying so only through h_err_sigma: gpula
    raises LinAlgError there, with a warning, and is accurate where it returns."""
    a = rng.standard_normal((2048, 2048)).astype(np.float32)
    caplog.set_level(logging.WARNING, logger="gpula")
    try:
        u, s, vh = gl.linalg.svd(a, method="gesvdp", device="cuda")
    except gl.LinAlgError as e:
        assert "did not converge" in str(e)
        assert "h_err_sigma" in caplog.text
        return
    a64 = a.astype(np.float64)
    rec = (to_np64(u) * to_np64(s)[None, :]) @ to_np64(vh)
    assert np.linalg.norm(rec - a64) <= 1e-3 * np.linalg.norm(a64)


@pytest.mark.gpu
def test_gpu_gesvda_full_matrices_is_not_supported(rng):
    a, _ = _random(rng, (30, 20), "float32")
    with pytest.raises(gl.NotSupported, match="gesvda computes economy u and vh only"):
        gl.linalg.svd(a, full_matrices=True, method="gesvda", device="cuda")


@pytest.mark.parametrize("dtype", ["float32", "complex64"])
@pytest.mark.parametrize("shape", [(60, 40), (40, 60), (3, 30, 30)])
def test_gram_method_matches_numpy(xp, rng, dtype, shape):
    # float64 eigh of a^H a, on every package and device; accurate to the float32 reference.
    a, a64 = _random(rng, shape, dtype)
    x = xp.asarray(a)
    u, s, vh = gl.linalg.svd(x, full_matrices=False, method="gram")
    k = min(shape[-2:])
    xp.empty_like_check(u, dtype, shape[:-1] + (k,))
    xp.empty_like_check(s, REAL[dtype], shape[:-2] + (k,))
    xp.empty_like_check(vh, dtype, shape[:-2] + (k, shape[-1]))
    check_svd(a64, u, s, vh, TOL[dtype], False)
    if shape[-1] == shape[-2]:
        u, s, vh = gl.linalg.svd(x, full_matrices=True, method="gram")
        check_svd(a64, u, s, vh, TOL[dtype], True)
    s2 = gl.linalg.svdvals(x, method="gram")
    np.testing.assert_allclose(to_np64(s2), np.linalg.svd(a64, compute_uv=False),
                               atol=TOL[dtype] * max(shape) * np.abs(a64).max() * 10)


def test_gram_method_falls_back_on_rank_deficient_and_nan(rng, caplog):
    # Rank 3 (the other sigmas at float32 rounding level) fails an accuracy test (sigma below
    # 2 eps64 / eps32 of sigma_1, or u's measured orthogonality): the
    # call reruns as gesvd (logged) and still returns an orthonormal u.
    a = (rng.standard_normal((50, 3)) @ rng.standard_normal((3, 20))).astype(np.float32)
    with caplog.at_level("INFO", logger="gpula"):
        u, s, vh = gl.linalg.svd(a, full_matrices=False, method="gram")
    assert "rerunning with gesvd" in caplog.text
    check_svd(a.astype(np.float64), u, s, vh, TOL["float32"], False)
    bad = np.full((8, 8), np.nan, np.float32)
    assert np.isnan(gl.linalg.svdvals(bad, method="gram", check_finite=False)).all()


def _conditioned(rng, n, cond):
    """float32 n x n matrix with singular values spaced geometrically from 1 to 1 / cond."""
    q1, _ = np.linalg.qr(rng.standard_normal((n, n)))
    q2, _ = np.linalg.qr(rng.standard_normal((n, n)))
    return ((q1 * np.geomspace(1.0, 1.0 / cond, n)) @ q2.T).astype(np.float32)


def test_gram_method_accepts_moderate_condition_and_measures_orthogonality(rng, caplog):
    # cond 1e5 (past the former n eps64 / eps32 bound at n = 200: 3.7e-7): accepted, u
    # orthonormal to the float32 reference's accuracy. cond 1e7: u = a V / sigma loses
    # orthogonality (about eps64 cond^2), the measured ||u^H u - I||_F is past n eps32, and the
    # call reruns as gesvd (logged) with an accurate result.
    n = 200
    a = _conditioned(rng, n, 1e5)
    with caplog.at_level("DEBUG", logger="gpula"):
        u, s, vh = gl.linalg.svd(a, method="gram")
    assert "rerunning" not in caplog.text and "method gram: float64 eigh" in caplog.text
    check_svd(a.astype(np.float64), u, s, vh, TOL["float32"], False)
    caplog.clear()
    a = _conditioned(rng, n, 1e7)
    with caplog.at_level("INFO", logger="gpula"):
        u, s, vh = gl.linalg.svd(a, method="gram")
    assert "||u^H u - I||_F" in caplog.text and "rerunning with gesvd" in caplog.text
    check_svd(a.astype(np.float64), u, s, vh, TOL["float32"], False)


@pytest.mark.gpu
def test_gpu_auto_on_large_float32_takes_gram(rng, caplog):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA torch")
    a, a64 = _random(rng, (1100, 1024), "float32")
    with caplog.at_level("DEBUG", logger="gpula"):
        u, s, vh = gl.linalg.svd(torch.as_tensor(a, device="cuda"), full_matrices=False)
    assert "method gram" in caplog.text
    assert u.is_cuda and u.dtype == torch.float32
    check_svd(a64, u.cpu().numpy(), s.cpu().numpy(), vh.cpu().numpy(), TOL["float32"], False)


def test_gram_method_errors():
    with pytest.raises(gl.InvalidArgument, match="method 'gram' takes float32 or complex64"):
        gl.linalg.svd(np.eye(4), method="gram")
    with pytest.raises(gl.InvalidArgument, match="economy u and vh only"):
        gl.linalg.svd(np.ones((5, 3), np.float32), full_matrices=True, method="gram")
    with pytest.raises(gl.InvalidArgument, match="cannot be combined with check_info=False"):
        gl.linalg.svd(np.eye(4, dtype=np.float32), method="gram", check_info=False)


def _random(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        x = x + 1j * rng.standard_normal(shape)
    a = x.astype(dtype)
    return a, to_np64(a)


def test_docstring_examples():
    module = importlib.import_module("gpula.linalg._svd")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0
    assert result.attempted > 0
