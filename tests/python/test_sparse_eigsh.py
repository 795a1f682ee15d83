"""gl.sparse.linalg.eigsh and svds against scipy.sparse.linalg (ARPACK) and numpy.linalg:
every `which`, sigma (shift-invert), M (generalized), complex Hermitian, LinearOperator,
torch in / torch out, return flags, and the documented errors."""

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as ssla

import gpula.sparse.linalg as sla
from gpula.errors import InvalidArgument, NotSupported


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
    np.testing.assert_allclose(w, ssla.eigsh(A, k=3, which="SM", return_eigenvectors=False), rtol=1e-9)
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
    with pytest.raises(InvalidArgument, match="k must be less"):
        sla.svds(a, k=20)
    with pytest.raises(NotSupported, match="solver"):
        sla.svds(a, k=2, solver="propack")
    with pytest.raises(InvalidArgument, match="which"):
        sla.svds(a, k=2, which="LA")
