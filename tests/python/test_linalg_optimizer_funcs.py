"""Matrix functions for second-order optimizers (issue 20): orthogonalize (Muon's Newton-Schulz),
polar, inv_root, sqrtm_psd, cholesky(jitter="auto"), and their grouped (list) forms, against
NumPy/SciPy float64 references on fresh random inputs and edge cases."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import scipy.linalg as sl
from conftest import to_np64

import gpula as gl

L = gl.linalg


def reference_newton_schulz(g, steps=5, coefficients=(3.4445, -4.7750, 2.0315)):
    """Muon's iteration in float64 NumPy."""
    a, b, c = coefficients
    tall = g.shape[-2] > g.shape[-1]
    x = np.swapaxes(g, -1, -2) if tall else g
    x = x / (np.linalg.norm(x, axis=(-2, -1), keepdims=True) + 1e-7)
    for _ in range(steps):
        s = x @ np.swapaxes(x, -1, -2)
        x = a * x + (b * s + c * s @ s) @ x
    return np.swapaxes(x, -1, -2) if tall else x


def spd(rng, n, *batch, floor=0.1):
    x = rng.standard_normal((*batch, n, n))
    return x @ np.swapaxes(x, -1, -2) / n + floor * np.eye(n)


@pytest.mark.parametrize("shape", [(12, 20), (20, 12), (3, 16, 16), (2, 2, 5, 9)])
def test_orthogonalize_is_muons_iteration(xp, rng, shape):
    g, g64 = xp.random(rng, shape, "float32")
    ref = reference_newton_schulz(g64)
    q = L.orthogonalize(g, dtype="float32")
    xp.empty_like_check(q, "float32", shape)
    assert np.abs(to_np64(q) - ref).max() <= 1e-4
    s = np.linalg.svd(to_np64(q), compute_uv=False)
    s_in = np.linalg.svd(g64, compute_uv=False)
    big = s_in >= 0.05 * np.linalg.norm(g64, axis=(-2, -1))[..., None]  # lifted in 5 steps
    assert s.max() < 1.3 and s[big].min() > 0.5  # Muon's coefficients: near 1, not exactly


@pytest.mark.parametrize("shape", [(64, 96), (96, 64), (3, 64, 64), (2, 2, 32, 48)])
def test_orthogonalize_symmetric_products_are_the_same_iteration(xp, rng, shape):
    """symmetric_products=True (the lower-triangle blocks of X X^T and A A, one strided batch
    per block diagonal, mirrored) on every package: the same iteration as the plain products."""
    g, g64 = xp.random(rng, shape, "float32")
    plain = L.orthogonalize(g, dtype="float32", symmetric_products=False)
    q = L.orthogonalize(g, dtype="float32", symmetric_products=True)
    xp.empty_like_check(q, "float32", shape)
    assert np.abs(to_np64(q) - to_np64(plain)).max() <= 1e-5
    assert np.abs(to_np64(q) - reference_newton_schulz(g64)).max() <= 1e-4
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.orthogonalize\] symmetric_products"):
        L.orthogonalize(g[..., :3, :], symmetric_products=True)  # 3 rows: not 4 blocks
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.orthogonalize\] symmetric_products"):
        L.orthogonalize(g, symmetric_products="yes")


@pytest.mark.gpu
def test_orthogonalize_takes_symmetric_products_on_large_gpu_iterates(rng):
    torch = pytest.importorskip("torch")
    g = torch.from_numpy(rng.standard_normal((4096, 2048))).float().cuda()
    q = L.orthogonalize(g, dtype="float32")  # tall: iterated on g^T, 2048 rows: the blocks
    plain = L.orthogonalize(g, dtype="float32", symmetric_products=False)
    assert q.shape == g.shape and float((q - plain).abs().max()) <= 1e-4
    ref = reference_newton_schulz(g.double().cpu().numpy())
    assert np.abs(q.double().cpu().numpy() - ref).max() <= 1e-3


def test_orthogonalize_in_bfloat16_and_float64(rng):
    g = rng.standard_normal((3, 24, 40))
    ref = reference_newton_schulz(g)
    assert np.abs(L.orthogonalize(g, dtype="float64") - ref).max() <= 1e-12
    q = L.orthogonalize(g)  # bfloat16 iteration, result in g's dtype
    assert q.dtype == np.float64 and np.abs(q - ref).max() <= 0.1
    many = L.orthogonalize(g, steps=30, coefficients=(1.5, -0.5, 0.0), dtype="float64")
    u, _, vh = np.linalg.svd(g, full_matrices=False)  # the cubic iteration converges to u vh
    assert np.abs(many - u @ vh).max() <= 1e-8


def test_orthogonalize_grouped_matches_one_by_one(rng):
    gs = [rng.standard_normal(s) for s in [(8, 16), (16, 8), (8, 16), (5, 5), (2, 3, 4)]]
    out = L.orthogonalize(gs, dtype="float64")
    assert isinstance(out, list) and len(out) == len(gs)
    for g, q in zip(gs, out):
        np.testing.assert_allclose(q, L.orthogonalize(g, dtype="float64"), rtol=1e-12, atol=1e-12)
    assert L.orthogonalize([]) == []


def test_orthogonalize_edge_cases_and_errors(rng):
    z = np.zeros((4, 6))
    assert not L.orthogonalize(z, dtype="float64").any()  # eps keeps zero at zero
    assert L.orthogonalize(np.zeros((0, 3))).shape == (0, 3)
    np.testing.assert_allclose(np.abs(L.orthogonalize(np.array([[3.0]]), steps=10,
                                                      dtype="float64")), 1.0, atol=0.3)
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.orthogonalize\] steps"):
        L.orthogonalize(z, steps=-1)
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.orthogonalize\] coefficients"):
        L.orthogonalize(z, coefficients=(1.0, 2.0))
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.orthogonalize\] dtype"):
        L.orthogonalize(z, dtype="int8")
    with pytest.raises(gl.DTypeError, match=r"\[linalg.orthogonalize\] g has dtype complex"):
        L.orthogonalize(z.astype(complex))
    q = L.orthogonalize(np.arange(24).reshape(4, 6), dtype="float64")  # integers: float64
    assert q.dtype == np.float64
    np.testing.assert_allclose(q, reference_newton_schulz(np.arange(24.0).reshape(4, 6)),
                               atol=1e-12)
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.orthogonalize\] g must be a matrix"):
        L.orthogonalize(np.ones(3))
    g = rng.standard_normal((5, 7))
    g0 = g.copy()
    L.orthogonalize(g)
    np.testing.assert_array_equal(g, g0)


@pytest.mark.parametrize("side", ["right", "left"])
@pytest.mark.parametrize("shape", [(7, 4), (4, 7), (5, 5), (3, 6, 4)])
def test_polar_matches_scipy(xp, rng, side, shape):
    a, a64 = xp.random(rng, shape, "float64")
    u, p = L.polar(a, side=side)
    u, p = to_np64(u), to_np64(p)
    flat = a64.reshape(-1, *shape[-2:])
    for i, m in enumerate(flat):
        ru, rp = sl.polar(m, side=side)
        np.testing.assert_allclose(u.reshape(-1, *u.shape[-2:])[i], ru, atol=1e-10)
        np.testing.assert_allclose(p.reshape(-1, *p.shape[-2:])[i], rp, atol=1e-10)


def test_polar_complex_grouped_and_errors(rng):
    a = rng.standard_normal((5, 3)) + 1j * rng.standard_normal((5, 3))
    u, p = L.polar(a)
    ru, rp = sl.polar(a)
    np.testing.assert_allclose(u, ru, atol=1e-12)
    np.testing.assert_allclose(p, rp, atol=1e-12)
    pairs = L.polar([rng.standard_normal((4, 3)), rng.standard_normal((6, 6))])
    assert [x[0].shape for x in pairs] == [(4, 3), (6, 6)]
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.polar\] side"):
        L.polar(a, side="up")
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.polar\] a must not contain infs"):
        L.polar(np.array([[np.nan, 1.0], [0.0, 1.0]]))


@pytest.mark.parametrize("method", ["eigh", "newton"])
@pytest.mark.parametrize("p", [1, 2, 4])
def test_inv_root_matches_fractional_matrix_power(xp, rng, method, p):
    a64 = spd(rng, 6, 3)
    a = xp.asarray(a64)
    r = to_np64(L.inv_root(a, p, method=method))
    for i in range(3):
        np.testing.assert_allclose(r[i], sl.fractional_matrix_power(a64[i], -1.0 / p).real,
                                   rtol=1e-9, atol=1e-9)


def test_inv_root_eps_clip_grouped_and_errors(rng, caplog):
    a = spd(rng, 5, floor=0.0)
    a = a - np.eye(5) * np.linalg.eigvalsh(a)[0]  # singular: smallest eigenvalue 0
    with pytest.raises(gl.NotPositiveDefinite, match=r"\[linalg.inv_root\].*batch index 0"):
        L.inv_root(a, 2)
    r = L.inv_root(a, 2, eps=1e-3)
    np.testing.assert_allclose(r, sl.fractional_matrix_power(a + 1e-3 * np.eye(5), -0.5).real,
                               rtol=1e-7)
    assert np.isfinite(L.inv_root(a, 2, clip=True)).all()
    blocks = [spd(rng, n) for n in (3, 7, 3, 1)]
    out = L.inv_root(blocks, 4)
    for b, r in zip(blocks, out):
        np.testing.assert_allclose(r, sl.fractional_matrix_power(b, -0.25).real, rtol=1e-9)
    with pytest.raises(gl.NotPositiveDefinite, match=r"list item 2"):
        L.inv_root([blocks[0], blocks[2], -blocks[2]], 2)
    assert L.inv_root([], 2) == []
    for bad, match in [(dict(p=0), "p must be an int from 1"), (dict(p=2.5), "p must be"),
                       (dict(p=2, method="qr"), "method"), (dict(p=2, eps=-1.0), "eps"),
                       (dict(p=2, method="newton", clip=True), "clip=True needs")]:
        with pytest.raises(gl.InvalidArgument, match=match):
            L.inv_root(blocks[0], **bad)
    with pytest.raises(gl.InvalidArgument, match="must be square"):
        L.inv_root(np.ones((2, 3)), 2)
    with pytest.raises(gl.NotPositiveDefinite, match="Newton iteration did not converge"):
        L.inv_root(-blocks[0], 2, method="newton")


def test_sqrtm_psd(xp, rng):
    a64 = spd(rng, 5, 2, floor=0.0)
    r = to_np64(L.sqrtm_psd(xp.asarray(a64)))
    for i in range(2):
        np.testing.assert_allclose(r[i] @ r[i], a64[i], atol=1e-10)
        np.testing.assert_allclose(r[i], sl.sqrtm(a64[i]).real, atol=1e-7)
    x = rng.standard_normal((4, 2))
    low_rank = x @ x.T  # eigenvalues 0, 0 up to rounding
    np.testing.assert_allclose(L.sqrtm_psd(low_rank) @ L.sqrtm_psd(low_rank), low_rank, atol=1e-10)
    with pytest.raises(gl.NotPositiveDefinite, match=r"\[linalg.sqrtm_psd\].*semidefinite"):
        L.sqrtm_psd(-np.eye(3), clip=False)
    assert L.sqrtm_psd(np.zeros((0, 0))).shape == (0, 0)


def test_cholesky_jitter(xp, rng, caplog):
    x = rng.standard_normal((15, 2))
    x = np.concatenate([x, x])  # duplicated points: a singular RBF kernel
    k = np.exp(-0.5 * ((x[:, None] - x[None]) ** 2).sum(-1))
    a = xp.asarray(np.stack([np.eye(30), k]))
    with pytest.raises(gl.NotPositiveDefinite):
        L.cholesky(a)
    caplog.set_level(logging.WARNING, logger="gpula")
    c = to_np64(L.cholesky(a, jitter="auto"))
    np.testing.assert_array_equal(c[0], np.eye(30))  # the good item is untouched
    assert np.abs(c[1] @ c[1].T - k).max() <= 1e-5
    assert "item 1 is not positive definite: factored with jitter" in caplog.text
    bad = xp.asarray(np.stack([np.eye(2), -np.eye(2)]))
    with pytest.raises(gl.NotPositiveDefinite, match=r"batch index 1\), also with jitter"):
        L.cholesky(bad, jitter="auto")
    c, info = L.cholesky(bad, jitter="auto", check_info=False)
    assert to_np64(info).tolist() == [0, 1]
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.cholesky\] jitter"):
        L.cholesky(np.eye(2), jitter=1e-6)


def test_eigh_eigvalsh_cholesky_take_groups(xp, rng):
    """The grouped forms of eigh, eigvalsh and cholesky: gl.linalg.group of matrices of several
    sizes (two of one size: one batched call), each result as the single call's, in the caller's
    package."""
    sizes = [6, 3, 6, 4]
    mats = [spd(rng, n) for n in sizes]
    items = L.group([xp.asarray(m) for m in mats])
    res = L.eigh(items)
    assert isinstance(res, list) and len(res) == len(items)
    for m, r in zip(mats, res):
        w, v = to_np64(r.eigenvalues), to_np64(r.eigenvectors)
        np.testing.assert_allclose(w, np.linalg.eigvalsh(m), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(m @ v, v * w, atol=1e-11)
        xp.empty_like_check(r.eigenvectors, "float64", m.shape)
    for m, w in zip(mats, L.eigvalsh(items)):
        np.testing.assert_allclose(to_np64(w), np.linalg.eigvalsh(m), rtol=1e-12, atol=1e-12)
    for m, w in zip(mats, L.eigh(items, eigvals_only=True)):
        np.testing.assert_allclose(to_np64(w), np.linalg.eigvalsh(m), rtol=1e-12, atol=1e-12)
    for m, r in zip(mats, L.eigh(items, k=2)):  # the top-k form per item
        np.testing.assert_allclose(to_np64(r.eigenvalues), np.linalg.eigvalsh(m)[-2:],
                                   rtol=1e-10)
    for m, c in zip(mats, L.cholesky(items, lower=False)):
        np.testing.assert_allclose(to_np64(c), np.linalg.cholesky(m).T, atol=1e-12)
    assert L.eigh(L.group([])) == [] and L.cholesky(L.group(())) == []
    assert len(L.orthogonalize(L.group([mats[0], mats[1]]), dtype="float64")) == 2


def test_plain_list_keeps_numpys_meaning(rng):
    """A plain list of same-shape arrays is one stacked batch, as numpy.linalg reads it (never a
    grouped call that would unpack as (w, v) wrongly); different shapes raise as NumPy does."""
    a, b = spd(rng, 4), spd(rng, 4)
    w, v = L.eigh([a, b])
    np.testing.assert_allclose(w, np.linalg.eigh(np.stack([a, b]))[0], rtol=1e-12)
    assert v.shape == (2, 4, 4)
    np.testing.assert_allclose(L.cholesky([a, b]), np.linalg.cholesky(np.stack([a, b])),
                               atol=1e-12)
    with pytest.raises(gl.InvalidArgument, match="not a regular array"):
        L.eigvalsh([a, spd(rng, 3)])
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.group\] matrices must be a list"):
        L.group(a)


def test_grouped_cholesky_and_eigh_errors_name_the_item(rng):
    good, bad = spd(rng, 4), -spd(rng, 3)
    with pytest.raises(gl.NotPositiveDefinite, match=r"list item 1"):
        L.cholesky(L.group([good, bad, good]))
    pairs = L.cholesky(L.group([good, bad, good]), check_info=False)
    assert [int(info) for _, info in pairs] == [0, 1, 0]
    c = L.cholesky(L.group([good, -np.eye(3)]), jitter="auto", check_info=False)
    assert [int(info) for _, info in c] == [0, 1]  # negative definite: every jitter fails
    with pytest.raises(gl.InvalidArgument, match=r"infs or NaNs \(list item 2\)"):
        L.eigh(L.group([good, good[:3, :3], np.full((3, 3), np.nan)]))
    with pytest.raises(gl.InvalidArgument, match=r"a\[1\]"):
        L.eigvalsh(L.group([good, np.ones(3)]))
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.eigh\] b .* group"):
        L.eigh(L.group([good]), good)
