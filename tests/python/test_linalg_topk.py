"""Top-k SVD and top-k eigh (gpula.linalg._topk, gpula.linalg._eigh) against NumPy float64
references."""

import numpy as np
import pytest

import gpula as gl
from gpula.linalg._eigh import eigh_topk
from gpula.linalg._topk import svd_topk

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def _tol(dt):
    return 2e-4 if np.dtype(dt) in (np.float32, np.complex64) else 1e-10


def _decaying(rng, m, n, dt, batch=()):
    r = min(m, n)
    u, _ = np.linalg.qr(rng.standard_normal(batch + (m, r)))
    v, _ = np.linalg.qr(rng.standard_normal(batch + (n, r)))
    s = 0.7 ** np.arange(r)
    a = (u * s[..., None, :]) @ np.swapaxes(v, -1, -2)
    if np.issubdtype(dt, np.complexfloating):
        a = a * np.exp(0.3j)
    return a.astype(dt)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("shape", [(60, 40), (40, 60)])
def test_svd_topk_matches_full(dt, shape):
    rng = np.random.default_rng(0)
    a = _decaying(rng, *shape, dt)
    a0 = a.copy()
    k = 6
    u, s, vh = svd_topk(a, k=k)
    ref = np.linalg.svd(a.astype(np.complex128), compute_uv=False)[:k]
    assert u.shape == (shape[0], k) and s.shape == (k,) and vh.shape == (k, shape[1])
    np.testing.assert_allclose(s, ref, atol=_tol(dt) * ref[0])
    assert np.all(np.diff(s) <= 0)
    np.testing.assert_allclose(u.conj().T @ u, np.eye(k), atol=_tol(dt) * 10)
    np.testing.assert_allclose(vh @ vh.conj().T, np.eye(k), atol=_tol(dt) * 10)
    assert np.linalg.norm(a @ vh.conj().T - u * s) <= _tol(dt) * 10 * ref[0]
    np.testing.assert_array_equal(a, a0)


@pytest.mark.parametrize("dt", DTYPES)
def test_svd_topk_rank_deficient_and_zero(dt):
    # k above the rank, and a zero matrix: U stays orthonormal, the extra sigmas are zero.
    rng = np.random.default_rng(5)
    a = (rng.standard_normal((80, 4)) @ rng.standard_normal((4, 50))).astype(dt)
    k = 8
    u, s, vh = svd_topk(a, k=k)
    ref = np.linalg.svd(a.astype(np.complex128), compute_uv=False)[:k]
    np.testing.assert_allclose(s, ref, atol=_tol(dt) * ref[0])
    np.testing.assert_allclose(u.conj().T @ u, np.eye(k), atol=_tol(dt) * 10)
    assert np.linalg.norm(a - (u * s) @ vh) <= _tol(dt) * 10 * ref[0]
    u0, s0, vh0 = svd_topk(np.zeros((30, 20), dt), k=3)
    np.testing.assert_array_equal(s0, np.zeros(3))
    np.testing.assert_allclose(u0.conj().T @ u0, np.eye(3), atol=_tol(dt) * 10)


def test_svd_topk_batched_values_only_and_full_k():
    rng = np.random.default_rng(1)
    a = _decaying(rng, 20, 12, np.float64, batch=(3,))
    s = svd_topk(a, k=12, compute_uv=False)
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), atol=1e-12)
    s1 = svd_topk(a, k=1, compute_uv=False)
    np.testing.assert_allclose(s1[..., 0], np.linalg.svd(a, compute_uv=False)[..., 0], rtol=1e-12)


def test_svd_topk_deterministic_and_transposed_input():
    rng = np.random.default_rng(2)
    a = _decaying(rng, 30, 25, np.float64)
    s_a = svd_topk(a, k=4, compute_uv=False)
    np.testing.assert_array_equal(s_a, svd_topk(a, k=4, compute_uv=False))
    np.testing.assert_allclose(svd_topk(a.T, k=4, compute_uv=False), s_a, rtol=1e-12)


@pytest.mark.parametrize(
    "kwargs, err",
    [
        ({"k": 0}, ValueError),
        ({"k": 11}, ValueError),
        ({"k": 2.0}, ValueError),
        ({"k": 2, "method": "bad"}, ValueError),
        ({"k": 2, "options": {"power_iterations": -1}}, ValueError),
    ],
)
def test_svd_topk_errors(kwargs, err):
    with pytest.raises(err, match=r"\[linalg.svd\]"):
        svd_topk(np.ones((10, 12)), **kwargs)


def test_svd_topk_wrong_dtype_and_ndim():
    with pytest.raises(TypeError, match=r"\[linalg.svd\]"):
        svd_topk(np.ones((4, 4), dtype=np.int32), k=1)
    with pytest.raises(ValueError, match=r"\[linalg.svd\]"):
        svd_topk(np.ones(4), k=1)


def _herm(rng, n, dt, batch=()):
    x = rng.standard_normal(batch + (n, n))
    if np.issubdtype(dt, np.complexfloating):
        x = x + 1j * rng.standard_normal(batch + (n, n))
    return ((x + np.conj(np.swapaxes(x, -1, -2))) / 2).astype(dt)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("which", ["largest", "smallest"])
def test_eigh_topk_matches_full(dt, which):
    rng = np.random.default_rng(3)
    n, k = 48, 5
    a = _herm(rng, n, dt)
    w, v = eigh_topk(a, k=k, which=which)
    ref = np.linalg.eigvalsh(a.astype(np.complex128))
    ref = ref[-k:] if which == "largest" else ref[:k]
    np.testing.assert_allclose(w, ref, atol=_tol(dt) * 10 * np.abs(ref).max())
    assert np.all(np.diff(w) >= 0)
    norm = np.linalg.norm(a)
    assert np.linalg.norm(a @ v - v * w) <= _tol(dt) * 10 * norm
    np.testing.assert_allclose(v.conj().T @ v, np.eye(k), atol=_tol(dt) * 10)


def test_eigh_k_through_gl_linalg_and_upper_triangle():
    rng = np.random.default_rng(4)
    a = _herm(rng, 40, np.float64)
    w, v = gl.linalg.eigh(a, k=3)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a)[-3:], atol=1e-10)
    junk = a.copy()
    junk[np.tril_indices(40, -1)] = 7.0  # upper triangle defines the matrix
    np.testing.assert_allclose(
        gl.linalg.eigvalsh(junk, lower=False, k=4, which="smallest"),
        np.linalg.eigvalsh(a)[:4],
        atol=1e-10,
    )
    full = gl.linalg.eigh(a)
    np.testing.assert_allclose(full[0], np.linalg.eigvalsh(a), atol=1e-10)


def test_eigh_topk_batched_and_full_method():
    rng = np.random.default_rng(5)
    a = _herm(rng, 30, np.float64, batch=(2,))
    w = eigh_topk(a, k=4, eigvals_only=True, method="full")
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a)[..., -4:], atol=1e-10)
    w2 = eigh_topk(a, k=4, eigvals_only=True, method="subspace")
    np.testing.assert_allclose(w2, w, atol=1e-9)


@pytest.mark.parametrize(
    "kwargs",
    [{"k": 0}, {"k": 9}, {"k": 2, "which": "middle"}, {"k": 2, "method": "x"}, {"k": "2"}],
)
def test_eigh_topk_errors(kwargs):
    with pytest.raises(ValueError, match=r"\[linalg.eigh\]"):
        eigh_topk(np.eye(8), **kwargs)


def test_eigh_k_errors_name_eigh():
    with pytest.raises(ValueError, match=r"linalg.eigh\] k"):
        gl.linalg.eigh(np.eye(4), k=0)
    with pytest.raises(ValueError, match=r"linalg.eigh\] which"):
        gl.linalg.eigh(np.eye(4), k=1, which="top")
    with pytest.raises(ValueError, match=r"\[linalg.eigh\]"):
        eigh_topk(np.ones((3, 4)), k=1)


@pytest.mark.skipif(not hasattr(gl.linalg, "svd"), reason="gl.linalg.svd not merged yet")
def test_gl_linalg_svd_k():
    rng = np.random.default_rng(6)
    a = _decaying(rng, 30, 20, np.float64)
    s = gl.linalg.svd(a, k=3, compute_uv=False)
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False)[:3], rtol=1e-10)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_svd_topk_routes(dt, caplog):
    """Each route of svd_topk against the full SVD: orthonormalizing after every product or only
    after each product with A (chosen from the first sample's spread), and the float64 Gram or
    the QR route for the projected problem (a steep spectrum takes QR: sigma_1 / sigma_k is
    beyond what keeps v orthonormal through the Gram matrix in float32)."""
    import logging

    rng = np.random.default_rng(9)
    m, n, k = 120, 90, 6
    for decay in (0.97, 0.3):  # flat: few QRs and Gram; steep: every product, QR (float32)
        u0, _ = np.linalg.qr(rng.standard_normal((m, n)))
        v0, _ = np.linalg.qr(rng.standard_normal((n, n)))
        a = ((u0 * decay ** np.arange(n)) @ v0.T).astype(dt)
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="gpula"):
            u, s, vh = svd_topk(a, k=k, options={"power_iterations": 6})
        text = caplog.text
        if decay == 0.97:
            assert "after each product with A" in text
            assert "projected problem by QR" not in text
        elif dt == np.float32:
            assert "after every product" in text and "projected problem by QR" in text
        ref = np.linalg.svd(a.astype(np.float64), compute_uv=False)[:k]
        np.testing.assert_allclose(s, ref, rtol=5e-3 if decay == 0.97 else _tol(dt) * 10)
        np.testing.assert_allclose(u.T @ u, np.eye(k), atol=_tol(dt) * 10)
        np.testing.assert_allclose(vh @ vh.T, np.eye(k), atol=_tol(dt) * 10)


def _flat_kernel(n, rng):
    # A wide RBF kernel of points in 20 dimensions: a few large eigenvalues, then a spectrum
    # with no gap, where the subspace iteration for k = 30 stalls at its rounding floor.
    x = rng.standard_normal((n, 20))
    d = ((x[:, None, :] - x[None, :, :]) ** 2).sum(-1)
    return np.exp(-d / 50.0)


def test_eigh_topk_flat_spectrum_switches_to_full_and_warns_once(caplog, monkeypatch):
    import logging

    from gpula.linalg import _topk

    monkeypatch.setattr(_topk, "_switched", set())
    rng = np.random.default_rng(10)
    a = _flat_kernel(400, rng)
    ref = np.linalg.eigvalsh(a)
    with caplog.at_level(logging.INFO, logger="gpula"):
        for _ in range(2):
            w, v = eigh_topk(a, k=30, method="subspace")
            np.testing.assert_allclose(w, ref[-30:], atol=1e-12 * ref[-1])
            assert np.linalg.norm(a @ v - v * w) <= 1e-10 * ref[-1]
    switches = [r for r in caplog.records if "full eigh" in r.getMessage()]
    assert [r.levelname for r in switches] == ["WARNING", "INFO"]
    assert "stalled" in switches[0].getMessage()
    # Stopped within a few iterations, not max_iter's 30.
    assert int(switches[0].getMessage().split(" after ")[1].split()[0]) <= 8


def test_eigh_topk_auto_cost_model():
    """auto takes the full eigh where three subspace iterations cost more (a large k), the
    subspace iteration where they are cheap, and within its budget switches instead of
    spending many times the full eigh's work."""
    from gpula.linalg._eigh import _budget

    a = np.eye(1000)
    assert not _budget(a, 100, False, {}).affordable(3)
    assert _budget(a, 10, False, {}).affordable(3)
    b = _budget(a, 10, False, {})
    reasons = [b.give_up(1e12 / 10**i) for i in range(3)]
    assert reasons == [None, None, None]  # falling fast
    assert "stalled" in b.give_up(5e10)  # less than 4x below two iterations before
    b = _budget(a, 10, False, {})
    while (why := b.give_up(1e12)) is None or "stalled" in why:
        b.errs.clear()  # never stalls: only the budget stops it
    assert "cost of the full" in why and b.spent <= b.full < b.spent + b.step


@pytest.mark.parametrize("dt", [np.float64, np.complex128])
def test_eigh_k_flat_spectrum_auto_matches_full(dt, caplog):
    rng = np.random.default_rng(11)
    a = _flat_kernel(300, rng).astype(dt)
    w = gl.linalg.eigvalsh(a, k=20)
    ref = np.linalg.eigvalsh(a)[-20:]
    np.testing.assert_allclose(w, ref, atol=1e-12 * ref[-1])


def _slow_decay(rng, m, n, dt, batch=()):
    # A slowly decaying spectrum (0.97^j): the fixed power iterations leave ~1e-3 errors.
    u, _ = np.linalg.qr(rng.standard_normal(batch + (m, n)))
    v, _ = np.linalg.qr(rng.standard_normal(batch + (n, n)))
    if np.issubdtype(dt, np.complexfloating):
        u = u * np.exp(0.5j)
    return ((u * 0.97 ** np.arange(n)) @ np.swapaxes(v, -1, -2)).astype(dt)


@pytest.mark.parametrize("dt", DTYPES)
@pytest.mark.parametrize("tol", [1e-3, 1e-6, 0.0])
def test_svd_k_tol_bounds_the_error(dt, tol):
    import scipy.sparse.linalg as spl

    rng = np.random.default_rng(12)
    a = _slow_decay(rng, 150, 100, dt)
    k = 5
    u, s, vh = gl.linalg.svd(a, k=k, tol=tol)
    ref = np.linalg.svd(a.astype(np.complex128), compute_uv=False)[:k]
    floor = 10 * np.sqrt(150) * np.finfo(np.real(np.ones(1, dt)).dtype).eps
    bound = max(tol, floor) * ref[0]
    assert np.max(np.abs(s - ref)) <= bound * (1 + 1e-6) + 4 * floor * ref[0]
    np.testing.assert_allclose(u.conj().T @ u, np.eye(k), atol=_tol(dt) * 10)
    np.testing.assert_allclose(vh @ vh.conj().T, np.eye(k), atol=_tol(dt) * 10)
    assert np.linalg.norm(a @ vh.conj().T - u * s) <= max(bound, _tol(dt) * ref[0]) * 10
    if dt == np.float64:  # the same values as ARPACK's svds to the tolerance
        s_arpack = np.sort(spl.svds(a, k=k, return_singular_vectors=False))[::-1]
        assert np.max(np.abs(s - s_arpack)) <= bound * 2 + 1e-13


def test_svd_k_tol_beats_the_default_and_batches():
    rng = np.random.default_rng(13)
    a = _slow_decay(rng, 120, 90, np.float64, batch=(2,))
    ref = np.linalg.svd(a, compute_uv=False)[..., :8]
    loose = gl.linalg.svd(a, k=8, compute_uv=False)
    tight = gl.linalg.svd(a, k=8, compute_uv=False, tol=1e-9)
    assert tight.shape == (2, 8)
    assert np.max(np.abs(tight - ref)) <= 1e-9 * ref[..., :1].max()
    assert np.max(np.abs(tight - ref)) < np.max(np.abs(loose - ref)) / 100
    e = gl.linalg.svd(np.zeros((0, 6, 4)), k=2, tol=1e-6)
    assert e[1].shape == (0, 2)


def test_svd_k_tol_switches_to_full_or_raises(caplog):
    import logging

    rng = np.random.default_rng(14)
    x = rng.standard_normal((200, 150))  # no decay at all: the full SVD is cheaper
    with caplog.at_level(logging.INFO, logger="gpula"):
        s = gl.linalg.svd(x, k=30, tol=1e-10, compute_uv=False)
    np.testing.assert_allclose(s, np.linalg.svd(x, compute_uv=False)[:30], rtol=1e-12)
    assert "full SVD" in caplog.text
    # Without a full SVD to switch to (svd_topk called directly), max_iter ends it.
    with pytest.raises(gl.LinAlgError, match=r"\[linalg.svd\] tol .* max_iter"):
        svd_topk(x, k=30, tol=1e-10, options={"max_iter": 2})


@pytest.mark.parametrize("tol", [-1e-3, 1.0, True, "1e-3", float("nan")])
def test_svd_tol_errors(tol):
    with pytest.raises(ValueError, match=r"\[linalg.svd\] tol"):
        gl.linalg.svd(np.eye(6), k=2, tol=tol)


def test_svd_tol_needs_k():
    with pytest.raises(ValueError, match=r"\[linalg.svd\] tol .* with k"):
        gl.linalg.svd(np.eye(6), tol=1e-6)
