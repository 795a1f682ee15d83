"""gl.sparse.linalg.lsqr and lsmr against scipy.sparse.linalg's (same return tuples), and
against numpy.linalg.lstsq; matrix-free, damped, complex, empty, ill-conditioned, torch."""

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as ssla

import gpula.sparse.linalg as sla
from gpula.errors import InvalidArgument

TOL = dict(atol=1e-12, btol=1e-12, conlim=1e12)


def _problem(rng, m, n, dt):
    A = (sp.random(m, n, density=0.3, random_state=rng) + sp.eye(m, n)).astype(dt).tocsr()
    if np.dtype(dt).kind == "c":
        A = (A + 1j * sp.random(m, n, density=0.2, random_state=rng)).astype(dt).tocsr()
    b = rng.standard_normal(m).astype(dt)
    return A, b


def _lstsq(A, b, damp=0.0):
    a = A.toarray() if sp.issparse(A) else A
    n = a.shape[1]
    if damp:
        a = np.vstack([a, damp * np.eye(n)])
        b = np.concatenate([b, np.zeros(n)])
    return np.linalg.lstsq(a, b, rcond=None)[0]


@pytest.mark.parametrize("name", ["lsqr", "lsmr"])
@pytest.mark.parametrize("dt", [np.float64, np.complex128])
@pytest.mark.parametrize("shape", [(40, 15), (15, 40), (25, 25)])
@pytest.mark.parametrize("damp", [0.0, 0.7])
def test_matches_scipy_and_lstsq(name, dt, shape, damp):
    rng = np.random.default_rng(0)
    A, b = _problem(rng, *shape, dt)
    kw = dict(damp=damp, **TOL)
    if name == "lsmr":
        kw["maxiter"] = 500
    got = getattr(sla, name)(A, b, **kw)
    want = getattr(ssla, name)(A, b, **kw)
    assert len(got) == len(want)
    assert got[0].dtype == want[0].dtype
    assert got[1] == want[1] and got[2] == want[2]
    np.testing.assert_allclose(got[0], want[0], rtol=1e-8, atol=1e-10)
    # the residual norms as scipy's; the estimates of ||A|| and cond(A) (indices 5, 6) drift in
    # the last steps, where the bidiagonalization has lost orthogonality at rounding level
    # (a max / min over those steps for lsmr's cond: the same order of magnitude)
    for i in (3, 4, 5, 7):
        np.testing.assert_allclose(float(got[i]), float(want[i]), rtol=5e-2 if i == 5 else 1e-6,
                                   atol=1e-9, err_msg=f"{name}[{i}]")
    assert want[6] / 3 <= got[6] <= 3 * want[6]
    if shape[0] >= shape[1] or damp:
        np.testing.assert_allclose(got[0], _lstsq(A, b, damp), rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", ["lsqr", "lsmr"])
def test_matrix_free_and_dense_and_x0(name):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((30, 12))
    b = rng.standard_normal(30)
    op = sla.LinearOperator(a.shape, matvec=lambda v: a @ v, rmatvec=lambda v: a.T @ v)
    want = _lstsq(a, b)
    for A in (op, a, sp.csr_matrix(a)):
        x = getattr(sla, name)(A, b, **TOL)[0]
        np.testing.assert_allclose(x, want, rtol=1e-8, atol=1e-10)
    x = getattr(sla, name)(op, b, x0=want + 1e-3, **TOL)[0]
    np.testing.assert_allclose(x, want, rtol=1e-7, atol=1e-9)


@pytest.mark.parametrize("name", ["lsqr", "lsmr"])
def test_ill_conditioned_float32_and_zero_b(name):
    rng = np.random.default_rng(2)
    u, _ = np.linalg.qr(rng.standard_normal((40, 10)))
    v, _ = np.linalg.qr(rng.standard_normal((10, 10)))
    a = (u * np.logspace(0, -6, 10)) @ v.T
    b = a @ rng.standard_normal(10)
    got = getattr(sla, name)(a.astype(np.float32), b.astype(np.float32), iter_lim=400) if name == "lsqr" \
        else sla.lsmr(a.astype(np.float32), b.astype(np.float32), maxiter=400)
    assert got[0].dtype == np.float64  # scipy's x is float64 for float32 input
    assert np.linalg.norm(a @ got[0] - b) <= 1e-4 * np.linalg.norm(b)
    zero = getattr(sla, name)(a, np.zeros(40))
    assert zero[1] == 0 and not np.any(zero[0])


def test_empty_iteration_limit_and_errors():
    A = sp.csr_matrix((5, 3))
    x, istop, itn = sla.lsqr(A, np.ones(5))[:3]
    assert x.shape == (3,) and istop == 0 and itn == 0
    a = np.random.default_rng(3).standard_normal((20, 8))
    r = sla.lsqr(a, np.ones(20), atol=0, btol=0, conlim=0, iter_lim=3)
    assert r[1] == 7 and r[2] == 3
    r = sla.lsmr(a, np.ones(20), atol=0, btol=0, conlim=0, maxiter=3)
    assert r[1] == 7 and r[2] == 3
    with pytest.raises(InvalidArgument, match="b must have shape"):
        sla.lsqr(a, np.ones(7))
    with pytest.raises(InvalidArgument, match="iter_lim"):
        sla.lsqr(a, np.ones(20), iter_lim=-1)
    with pytest.raises(InvalidArgument, match="damp"):
        sla.lsmr(a, np.ones(20), damp="x")


def test_torch_in_torch_out():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    a = rng.standard_normal((25, 9))
    b = rng.standard_normal(25)
    for name in ("lsqr", "lsmr"):
        x = getattr(sla, name)(torch.from_numpy(a), torch.from_numpy(b), **TOL)[0]
        assert isinstance(x, torch.Tensor)
        np.testing.assert_allclose(x.numpy(), _lstsq(a, b), rtol=1e-8, atol=1e-10)
