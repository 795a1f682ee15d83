"""gl.sparse.linalg.eigsh and svds against scipy.sparse.linalg (ARPACK) and numpy.linalg:
every `which`, sigma (shift-invert), M (generalized), complex Hermitian, LinearOperator,
torch in / torch out, return flags, and the documented errors."""

import numpy as np
import pytest
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg as ssla
from conftest import to_np64

import gpula as gl
import gpula.sparse.linalg as sla
from gpula.errors import DTypeError, InvalidArgument, NotSupported


def _sym(n, dt=np.float64, seed=0, density=0.05):
    rng = np.random.default_rng(seed)
    A = sp.random(n, n, density=density, random_state=rng)
    if np.dtype(dt).kind == "c":
        A = A + 1j * sp.random(n, n, density=density, random_state=rng)
    A = (A + A.conj().T) / 2 + sp.diags(rng.standard_normal(n))
    return A.astype(dt).tocsr()


def _check_pairs(A, w, v, M=None, tol=1e-8):
    a = A.toarray() if sp.issparse(A) else A
    m = np.eye(a.shape[0]) if M is None else (M.toarray() if sp.issparse(M) else M)
    scale = np.abs(np.linalg.eigvalsh(a)).max()
    assert np.linalg.norm(a @ v - m @ v * w) <= tol * scale * np.sqrt(len(w))
    np.testing.assert_allclose(v.conj().T @ m @ v, np.eye(len(w)), atol=1e-8)


@pytest.mark.parametrize("which", ["LM", "LA", "SA", "BE"])
@pytest.mark.parametrize("dt", [np.float64, np.complex128])
def test_eigsh_matches_arpack(which, dt):
    A = _sym(200, dt)
    w, v = sla.eigsh(A, k=5, which=which, rng=0)
    if which == "BE" and np.dtype(dt).kind == "c":  # scipy refuses BE for complex A
        e = np.linalg.eigvalsh(A.toarray())
        ws = np.concatenate([e[:2], e[-3:]])
    else:
        ws = ssla.eigsh(A, k=5, which=which, return_eigenvectors=False)
    assert np.all(np.diff(w) >= 0)  # ascending, as scipy
    np.testing.assert_allclose(w, np.sort(ws), rtol=1e-10, atol=1e-10)
    _check_pairs(A, w, v)


def test_eigsh_sm_on_a_definite_matrix_and_float32():
    A = sp.diags([-1.0, 2.5, -1.0], [-1, 0, 1], shape=(120, 120), format="csr")
    w = sla.eigsh(A, k=3, which="SM", return_eigenvectors=False, rng=1)  # descending |w|, as ARPACK
    np.testing.assert_allclose(w, np.linalg.eigvalsh(A.toarray())[:3][::-1], rtol=1e-9)
    ws = ssla.eigsh(A, k=3, which="SM", return_eigenvectors=False)
    np.testing.assert_allclose(w, ws, rtol=1e-9)
    w32, v32 = sla.eigsh(A.astype(np.float32), k=3, which="LA", tol=1e-5, rng=1)
    assert v32.dtype == np.float32
    np.testing.assert_allclose(w32, np.linalg.eigvalsh(A.toarray())[-3:], rtol=1e-4)


@pytest.mark.parametrize("sigma", [0.0, 0.37, -1.2])
@pytest.mark.parametrize("dt", [np.float64, np.complex128])
def test_eigsh_shift_invert(sigma, dt):
    A = _sym(150, dt, seed=2)
    w, v = sla.eigsh(A, k=4, sigma=sigma, rng=0)
    ws = ssla.eigsh(A, k=4, sigma=sigma, return_eigenvectors=False)
    np.testing.assert_allclose(w, np.sort(ws), rtol=1e-9, atol=1e-10)
    _check_pairs(A, w, v)


@pytest.mark.parametrize("sigma", [None, 0.2])
def test_eigsh_generalized(sigma):
    A = _sym(120, seed=3)
    M = sp.diags(np.random.default_rng(3).uniform(1, 3, 120)).tocsr()
    w, v = sla.eigsh(A, k=3, M=M, sigma=sigma, rng=0)
    ws = ssla.eigsh(A, k=3, M=M, sigma=sigma, return_eigenvectors=False)
    np.testing.assert_allclose(w, np.sort(ws), rtol=1e-9, atol=1e-10)
    _check_pairs(A, w, v, M)


def test_eigsh_operator_dense_small_and_clustered():
    a = _sym(60, seed=4).toarray()
    op = sla.LinearOperator(a.shape, matvec=lambda x: a @ x, dtype=np.float64)
    for A in (op, a):
        w, v = sla.eigsh(A, k=4, which="LA", rng=0)
        np.testing.assert_allclose(w, np.linalg.eigvalsh(a)[-4:], rtol=1e-10)
    # ncv = n: the Krylov space is the whole space (an invariant subspace at the end)
    w = sla.eigsh(a, k=5, ncv=60, return_eigenvectors=False, rng=0)
    e = np.linalg.eigvalsh(a)
    np.testing.assert_allclose(w, np.sort(e[np.argsort(-np.abs(e))[:5]])[np.argsort(np.abs(np.sort(
        e[np.argsort(-np.abs(e))[:5]])))], rtol=1e-10)  # values alone for 'LM': ascending |w|
    # a repeated eigenvalue: both copies found
    d = np.concatenate([np.full(3, 5.0), np.linspace(0, 1, 57)])
    w = sla.eigsh(sp.diags(d).tocsr(), k=3, rng=0, return_eigenvectors=False)
    np.testing.assert_allclose(w, [5.0, 5.0, 5.0], rtol=1e-10)


def test_eigsh_torch_in_torch_out():
    torch = pytest.importorskip("torch")
    a = _sym(80, seed=5).toarray()
    w, v = sla.eigsh(torch.from_numpy(a), k=3, which="LA", rng=0)
    assert isinstance(w, torch.Tensor) and isinstance(v, torch.Tensor)
    np.testing.assert_allclose(w.numpy(), np.linalg.eigvalsh(a)[-3:], rtol=1e-10)


def test_eigsh_errors():
    A = _sym(30)
    with pytest.raises(InvalidArgument, match="which"):
        sla.eigsh(A, k=2, which="XX")
    with pytest.raises(InvalidArgument, match="k must be"):
        sla.eigsh(A, k=0)
    with pytest.raises(InvalidArgument, match="ncv"):
        sla.eigsh(A, k=5, ncv=5)
    with pytest.raises(InvalidArgument, match="square"):
        sla.eigsh(sp.random(4, 5, density=0.5).tocsr(), k=1)
    with pytest.raises(InvalidArgument, match="mode"):
        sla.eigsh(A, k=2, sigma=1.0, mode="buckle")
    op = sla.LinearOperator(A.shape, matvec=lambda x: A @ x)
    with pytest.raises(NotSupported, match="OPinv"):
        sla.eigsh(op, k=2, sigma=0.5)
    with pytest.raises(sla.ArpackNoConvergence) as e:
        sla.eigsh(_sym(200, seed=6), k=4, which="LA", maxiter=1, ncv=8, rng=0)
    assert isinstance(e.value, RuntimeError) and len(e.value.eigenvalues) < 4
    assert e.value.eigenvectors.shape == (200, len(e.value.eigenvalues)) and e.value.iterations == 1


@pytest.mark.parametrize("shape", [(90, 40), (40, 90)])
@pytest.mark.parametrize("dt", [np.float64, np.complex128])
def test_svds_matches_scipy_and_svd(shape, dt):
    rng = np.random.default_rng(7)
    A = sp.random(*shape, density=0.2, random_state=rng).astype(dt)
    if np.dtype(dt).kind == "c":
        A = (A + 1j * sp.random(*shape, density=0.2, random_state=rng)).tocsr()
    A = A.tocsr()
    u, s, vh = sla.svds(A, k=4, rng=0)
    ss = ssla.svds(A, k=4, return_singular_vectors=False)
    full = np.linalg.svd(A.toarray(), compute_uv=False)
    np.testing.assert_allclose(s, np.sort(ss), rtol=1e-9)
    np.testing.assert_allclose(s, np.sort(full[:4]), rtol=1e-9)
    assert u.shape == (shape[0], 4) and vh.shape == (4, shape[1])
    np.testing.assert_allclose(A @ vh.conj().T, u * s, atol=1e-9)
    np.testing.assert_allclose(u.conj().T @ u, np.eye(4), atol=1e-9)
    s_small = sla.svds(A, k=2, which="SM", return_singular_vectors=False, rng=0)
    np.testing.assert_allclose(s_small, np.sort(full)[:2], rtol=1e-7, atol=1e-9)


def test_svds_flags_operator_and_errors():
    a = np.random.default_rng(8).standard_normal((50, 20))
    op = sla.aslinearoperator(a)
    u, s, vh = sla.svds(op, k=3, return_singular_vectors="u", rng=0)
    assert vh is None and u.shape == (50, 3)
    u, s, vh = sla.svds(a, k=3, return_singular_vectors="vh", rng=0)
    assert u is None and vh.shape == (3, 20)
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False)[:3][::-1], rtol=1e-10)
    with pytest.raises(InvalidArgument, match="0 < k < min"):
        sla.svds(a, k=20)
    with pytest.raises(NotSupported, match="solver"):
        sla.svds(a, k=2, solver="propack")
    with pytest.raises(InvalidArgument, match="which"):
        sla.svds(a, k=2, which="LA")


# ---- scipy's edges (issue 22): every which with the values alone, SM without sigma, the
# shift-invert modes, k >= n, argument rules, no convergence, packages ----


def _indefinite(n, seed, dt=np.float64):
    rng = np.random.default_rng(seed)
    A = sp.random(n, n, density=min(0.1, 5 / n), random_state=rng)
    return ((A + A.T) / 2 + sp.diags(rng.standard_normal(n))).astype(dt).tocsr()


@pytest.mark.parametrize("which", ["LM", "SM", "LA", "SA", "BE"])
@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_eigsh_values_alone_in_arpacks_order(which, dt):
    """return_eigenvectors=False: the values in the order scipy returns them (by |w| for LM
    and SM, descending for SA); with vectors: ascending."""
    A = _indefinite(300, 11, dt)
    e = np.linalg.eigvalsh(A.toarray().astype(np.float64))
    pick = {"LM": np.argsort(-np.abs(e))[:5], "SM": np.argsort(np.abs(e))[:5],
            "LA": np.arange(295, 300), "SA": np.arange(5), "BE": np.r_[0, 1, 297, 298, 299]}[which]
    ws = np.sort(e[pick])
    ws = {"LM": ws[np.argsort(np.abs(ws))], "SM": ws[np.argsort(-np.abs(ws))],
          "SA": ws[::-1]}.get(which, ws)
    try:  # scipy's order, where ARPACK converges (its SM on this A does not)
        wa = ssla.eigsh(A, k=5, which=which, return_eigenvectors=False, rng=0)
        np.testing.assert_allclose(wa, ws, rtol=1e-4, atol=1e-4)
    except ssla.ArpackNoConvergence:
        assert which == "SM"
    w = sla.eigsh(A, k=5, which=which, return_eigenvectors=False, rng=0)
    assert w.dtype == dt
    rtol = 1e-9 if dt == np.float64 else 2e-4
    np.testing.assert_allclose(w, ws, rtol=rtol, atol=rtol * 3)
    wv, v = sla.eigsh(A, k=5, which=which, rng=0)
    np.testing.assert_allclose(wv, np.sort(ws), rtol=rtol, atol=rtol * 3)
    assert v.dtype == dt
    _check_pairs(A.astype(np.float64), wv.astype(np.float64), v.astype(np.float64),
                 tol=1e-8 if dt == np.float64 else 1e-4) if dt == np.float64 else None


@pytest.mark.parametrize("which", ["LM", "SM", "LA", "SA", "BE"])
def test_eigsh_values_alone_with_sigma_and_m_ascending(which):  # (M: ARPACK on A, no convergence)
    A = _indefinite(200, 12)
    M = sp.diags(np.random.default_rng(12).uniform(1, 2, 200)).tocsr()
    e = np.linalg.eigvalsh(A.toarray())
    for kw in ({"sigma": 0.3}, {"M": M}):
        if which == "SM":  # ARPACK does not converge here: numpy's (farthest from sigma)
            ws = np.sort(e[np.argsort(-np.abs(e - 0.3))[:4]]) if "sigma" in kw else None
        else:
            ws = ssla.eigsh(A, k=4, which=which, return_eigenvectors=False, **kw)
        if ws is None:
            continue
        w = sla.eigsh(A, k=4, which=which, return_eigenvectors=False, rng=0, **kw)
        np.testing.assert_allclose(w, ws, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("n", [400, 1500])
def test_eigsh_sm_without_sigma_indefinite(n):
    """Smallest magnitude of an indefinite A (interior): the same values as numpy's; fast
    (A^-1 under the hood; scipy's Lanczos on A takes seconds here)."""
    A = _indefinite(n, 13)
    e = np.linalg.eigvalsh(A.toarray())
    ref = e[np.argsort(np.abs(e))[:6]]
    w, v = sla.eigsh(A, k=6, which="SM", rng=0)
    np.testing.assert_allclose(w, np.sort(ref), rtol=1e-9, atol=1e-12)
    _check_pairs(A, w, v)
    w2 = sla.eigsh(A, k=6, which="SM", return_eigenvectors=False, rng=0)
    np.testing.assert_allclose(w2, ref[np.argsort(-np.abs(ref), kind="stable")], rtol=1e-9)


def test_eigsh_sm_on_an_operator_and_a_singular_matrix():
    """No factorization possible: Lanczos on A itself (an operator; a singular A)."""
    A = _indefinite(300, 0)
    e = np.linalg.eigvalsh(A.toarray())
    ref = np.sort(e[np.argsort(np.abs(e))[:5]])
    w, v = sla.eigsh(sla.aslinearoperator(A), k=5, which="SM", rng=0)
    np.testing.assert_allclose(w, ref, rtol=1e-9, atol=1e-12)
    _check_pairs(A, w, v)
    d = np.concatenate([[0.0], np.linspace(1.0, 2.0, 59), -np.linspace(1.5, 3.0, 40)])
    S = sp.diags(d).tocsr()  # singular: the factorization fails, the Lanczos on S runs
    w = sla.eigsh(S, k=3, which="SM", rng=0)[0]
    np.testing.assert_allclose(w, [0.0, 1.0, np.linspace(1.0, 2.0, 59)[1]], atol=1e-10)


@pytest.mark.parametrize("mode", ["buckling", "cayley"])
@pytest.mark.parametrize("which", ["LM", "LA", "SA"])
def test_eigsh_buckling_and_cayley_modes(mode, which):
    n = 120
    K = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(n, n)).tocsr()
    M = sp.diags(np.random.default_rng(14).uniform(1, 2, n)).tocsr()
    sigma = -0.5 if mode == "buckling" else 0.1
    ws = ssla.eigsh(K, k=3, M=M, sigma=sigma, which=which, mode=mode, return_eigenvectors=False)
    w, v = sla.eigsh(K, k=3, M=M, sigma=sigma, which=which, mode=mode, rng=0)
    np.testing.assert_allclose(w, np.sort(ws), rtol=1e-9, atol=1e-12)
    B = (K if mode == "buckling" else M).toarray()  # ARPACK's B-orthonormal vectors
    np.testing.assert_allclose(v.T @ B @ v, np.eye(3), atol=1e-9)
    assert np.linalg.norm(K @ v - M @ v * w) <= 1e-8 * np.sqrt(3) * 4
    # OPinv in place of the factorization
    opinv = np.linalg.inv(K.toarray() - sigma * M.toarray())
    w2 = sla.eigsh(K, k=3, M=M, sigma=sigma, which=which, mode=mode, OPinv=opinv, rng=0)[0]
    np.testing.assert_allclose(w2, w, rtol=1e-9, atol=1e-12)


def test_eigsh_k_at_least_n_falls_back_to_dense_eigh():
    a = _sym(12, seed=15).toarray()
    with pytest.warns(RuntimeWarning, match="k >= N"):
        w, v = sla.eigsh(a, k=12)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(a @ v, v * w, atol=1e-10)
    with pytest.warns(RuntimeWarning):
        w = sla.eigsh(a, k=20, return_eigenvectors=False)  # every eigenvalue, as scipy
    assert w.shape == (12,)
    m = np.diag(np.linspace(1, 2, 12))
    with pytest.warns(RuntimeWarning):
        w = sla.eigsh(a, k=12, M=m, return_eigenvectors=False)
    np.testing.assert_allclose(w, ssla.eigsh(a, k=12, M=m, return_eigenvectors=False), rtol=1e-10)
    for A, M in ((sp.csr_matrix(a), None), (sla.aslinearoperator(a), None),
                 (ssla.aslinearoperator(a), None), (a, ssla.aslinearoperator(m)),
                 (a, sla.aslinearoperator(m))):
        with pytest.warns(RuntimeWarning), pytest.raises(DTypeError, match="k >= N") as e:
            sla.eigsh(A, k=12, M=M)
        assert isinstance(e.value, TypeError)  # scipy's TypeError
        if not isinstance(A, sla.LinearOperator) and not isinstance(M, sla.LinearOperator):
            with pytest.warns(RuntimeWarning), pytest.raises(TypeError):
                ssla.eigsh(A, k=12, M=M)


def test_eigsh_arguments_as_scipy():
    A = _sym(40, seed=16)
    w = sla.eigsh(A, k=3, ncv=500, return_eigenvectors=False, rng=0)  # ncv > n: n, as scipy
    np.testing.assert_allclose(w, ssla.eigsh(A, k=3, return_eigenvectors=False), rtol=1e-10)
    w = sla.eigsh(A, k=3, tol=-1.0, return_eigenvectors=False, rng=0)  # tol <= 0: eps
    np.testing.assert_allclose(w, ssla.eigsh(A, k=3, return_eigenvectors=False), rtol=1e-10)
    sla.eigsh(A, k=2, mode="buckling", rng=0)  # mode without sigma: ignored, as scipy
    bad = [({"k": 0}, "k must be"), ({"k": -2}, "k must be"), ({"k": 2.5}, "k must be"),
           ({"k": 3, "maxiter": 0}, "maxiter"), ({"k": 3, "ncv": 3}, "ncv"),
           ({"k": 3, "OPinv": A}, "OPinv should not"), ({"k": 3, "Minv": A}, "Minv should not"),
           ({"k": 3, "sigma": 1.0, "Minv": A}, "Minv should not"),
           ({"k": 3, "sigma": 1.0, "mode": "foo"}, "mode"), ({"k": 3, "tol": float("nan")}, "tol"),
           ({"k": 3, "v0": np.ones(5)}, "v0"), ({"k": 3, "v0": np.zeros(40)}, "v0"),
           ({"k": 3, "M": np.eye(5)}, "M")]
    for kw, msg in bad:
        with pytest.raises(InvalidArgument, match=msg):
            sla.eigsh(A, **kw)
        if kw.get("k") != 2.5 and "tol" not in kw and "v0" not in kw:  # scipy: crash / accepts
            with pytest.raises((ValueError, ssla.ArpackError)):
                ssla.eigsh(A, **kw)
    C = _sym(40, np.complex128, seed=16)
    with pytest.raises(InvalidArgument, match="complex"):
        sla.eigsh(C, k=2, sigma=0.5, mode="cayley")
    w = sla.eigsh(C, k=39, return_eigenvectors=False, rng=0)  # k = n - 1 (scipy: TypeError)
    e = np.linalg.eigvalsh(C.toarray())
    ref = np.sort(e[np.argsort(-np.abs(e))[:39]])
    np.testing.assert_allclose(np.sort(w), ref, rtol=1e-9, atol=1e-9)


def test_eigsh_no_convergence_carries_the_converged_pairs():
    A = _sym(400, seed=17)
    with pytest.raises(sla.ArpackNoConvergence, match="No convergence|no convergence") as e:
        sla.eigsh(A, k=6, which="LA", ncv=10, maxiter=3, rng=0)
    err = e.value
    assert isinstance(err, sla.ArpackError) and isinstance(err, gl.Error)
    assert isinstance(err, RuntimeError) and not isinstance(err, ValueError)  # as scipy's
    w, v = np.asarray(err.eigenvalues), np.asarray(err.eigenvectors)
    assert len(w) < 6 and v.shape == (400, len(w)) and err.iterations == 3
    if len(w):  # what it carries did converge
        _check_pairs(A, w, v)
        assert set(np.round(w, 8)) <= set(np.round(np.linalg.eigvalsh(A.toarray())[-6:], 8))
    with pytest.raises(sla.ArpackNoConvergence) as e:
        sla.svds(_sym(400, seed=17), k=6, ncv=10, maxiter=2, rng=0)
    assert "svds" in str(e.value)


@pytest.mark.parametrize("dt", [np.float32, np.complex64, np.complex128])
def test_eigsh_dtypes_and_scipy_operator(dt):
    A = _sym(150, dt, seed=18)
    a = A.toarray().astype(np.complex128 if np.dtype(dt).kind == "c" else np.float64)
    op = ssla.LinearOperator(A.shape, matvec=lambda x: A @ x, dtype=dt)
    single = dt in (np.float32, np.complex64)
    w, v = sla.eigsh(op, k=4, which="LA", tol=1e-6 if single else 0, rng=0)
    assert v.dtype == dt and w.dtype == np.dtype(dt).type(0).real.dtype
    rtol = 1e-4 if dt in (np.float32, np.complex64) else 1e-10
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a)[-4:], rtol=rtol, atol=rtol)
    with pytest.raises(NotSupported, match="OPinv"):
        sla.eigsh(op, k=2, sigma=0.5)


_SVDS_CASES = [
    {"k": 0}, {"k": 12}, {"k": 11}, {"k": 3.0}, {"k": 3.5}, {"k": 3, "ncv": 3}, {"k": 3, "ncv": 12},
    {"k": 3, "ncv": 11}, {"k": 3, "tol": -1}, {"k": 3, "tol": np.inf}, {"k": 3, "which": "lm"},
    {"k": 3, "which": "LA"}, {"k": 3, "v0": np.ones(30)}, {"k": 3, "v0": np.ones(12, int)},
    {"k": 3, "v0": np.ones(12)}, {"k": 3, "maxiter": 0}, {"k": 3, "maxiter": 2.5},
    {"k": 3, "return_singular_vectors": "x"}, {"k": 3, "solver": "ARPACK"},
    {"k": 3, "solver": "foo"}, {"k": 2, "rng": np.random.RandomState(0)},
]


@pytest.mark.parametrize("case", range(len(_SVDS_CASES)))
def test_svds_arguments_as_scipy(case):
    """svds accepts what scipy accepts, and refuses with a ValueError (gl.InvalidArgument)
    what it refuses."""
    kw = _SVDS_CASES[case]
    a = np.random.default_rng(19).standard_normal((30, 12))
    try:
        rsv = kw.get("return_singular_vectors", False)
        ref = ssla.svds(a, **{**kw, "return_singular_vectors": rsv})
    except ValueError:
        with pytest.raises(InvalidArgument):
            sla.svds(a, **kw)
        return
    got = sla.svds(a, **kw)
    s = got if not isinstance(got, tuple) else got[1]
    np.testing.assert_allclose(np.sort(s), np.sort(ref if not isinstance(ref, tuple) else ref[1]),
                               rtol=1e-9)
    with pytest.raises(InvalidArgument, match="empty"):
        sla.svds(np.zeros((0, 3)), k=1)
    with pytest.raises(NotSupported, match="lobpcg"):
        sla.svds(a, k=2, solver="lobpcg")


def test_svds_tol_is_scipys():
    """tol is the singular values' relative accuracy (eigsh on A^H A gets tol**2, as scipy)."""
    A = sp.random(300, 120, density=0.05, random_state=np.random.default_rng(20)).tocsr()
    full = np.sort(np.linalg.svd(A.toarray(), compute_uv=False))[-4:]
    s = sla.svds(A, k=4, tol=1e-3, return_singular_vectors=False, rng=0)
    np.testing.assert_allclose(s, full, rtol=1e-3)


def test_eigsh_and_svds_in_the_callers_package(xp):
    """A dense Hermitian A of NumPy, torch (CPU / CUDA) or CuPy: the values and vectors come
    back in that package and device, for LA, SM (A^-1 through DirectSolver) and k >= n."""
    a = _sym(80, seed=21).toarray()
    A = xp.asarray(a, "float64")
    e = np.linalg.eigvalsh(a)
    w, v = sla.eigsh(A, k=3, which="LA", rng=0)
    xp.empty_like_check(w, "float64", (3,))
    xp.empty_like_check(v, "float64", (80, 3))
    np.testing.assert_allclose(to_np64(w), e[-3:], rtol=1e-10)
    w = sla.eigsh(A, k=3, which="SM", return_eigenvectors=False, rng=0)
    xp.empty_like_check(w, "float64", (3,))
    ref = e[np.argsort(np.abs(e))[:3]]
    np.testing.assert_allclose(to_np64(w), ref[np.argsort(-np.abs(ref))], rtol=1e-9)
    with pytest.warns(RuntimeWarning):
        w = sla.eigsh(A, k=80, return_eigenvectors=False)
    xp.empty_like_check(w, "float64", (80,))
    np.testing.assert_allclose(to_np64(w), e, rtol=1e-10, atol=1e-12)
    u, s, vh = sla.svds(A[:, :50], k=3, rng=0)
    xp.empty_like_check(s, "float64", (3,))
    np.testing.assert_allclose(to_np64(s), np.sort(np.linalg.svd(a[:, :50], compute_uv=False)[:3]),
                               rtol=1e-10)


@pytest.mark.parametrize("dt", [np.complex128, np.complex64])
def test_eigsh_sm_complex_and_generalized(dt):
    """SM without sigma for a complex Hermitian A, and for (A, M) (scipy's mode 2)."""
    A = _sym(200, dt, seed=22)
    a = A.toarray().astype(np.complex128)
    e = np.linalg.eigvalsh(a)
    w, v = sla.eigsh(A, k=4, which="SM", rng=0)
    assert v.dtype == dt
    rtol = 1e-4 if dt == np.complex64 else 1e-9
    np.testing.assert_allclose(w, np.sort(e[np.argsort(np.abs(e))[:4]]), rtol=rtol, atol=rtol)
    B = _sym(200, seed=23)
    M = sp.diags(np.random.default_rng(23).uniform(1, 2, 200)).tocsr()
    eg = scipy.linalg.eigh(B.toarray(), M.toarray(), eigvals_only=True)
    for A_ in (B, sla.aslinearoperator(B)):  # a matrix: A^-1 M; an operator: (M^-1 A)^2
        w, v = sla.eigsh(A_, k=3, M=M, which="SM", rng=0)
        np.testing.assert_allclose(w, np.sort(eg[np.argsort(np.abs(eg))[:3]]), rtol=1e-9)
        _check_pairs(B, w, v, M)


def test_eigsh_v0_takes_the_type_of_a():
    """As scipy: v0 (int, float32, complex, a list) is cast to A's type; the results keep A's."""
    A = sp.diags(np.arange(1.0, 51.0)).tocsr()
    for v0 in (np.ones(50, int), np.ones(50, np.float32), np.ones(50) + 1j, [1.0] * 50):
        w, v = sla.eigsh(A, k=2, v0=v0)
        assert v.dtype == np.float64 and w.dtype == np.float64
        np.testing.assert_allclose(w, [49.0, 50.0], rtol=1e-12)
    w, v = sla.eigsh(A.astype(np.float32), k=2, v0=np.ones(50))
    assert v.dtype == np.float32 and w.dtype == np.float32
