"""gl.sparse.linalg.LinearOperator / aslinearoperator against scipy's, dense A in the solvers,
minres(shift=), gmres callback_type, the iteration count (SolveInfo), and the Python loops that
serve a LinearOperator on a GPU (run here on NumPy and torch CPU arrays)."""

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as ssla

import gpula.sparse.linalg as sla
from gpula.errors import InvalidArgument, NotSupported
from gpula.sparse import _iterative

DTYPES = (np.float32, np.float64, np.complex64, np.complex128)


def _tol(dt):
    return 1e-4 if np.dtype(dt) in (np.float32, np.complex64) else 1e-10


def _mat(rng, m, n, dt):
    a = rng.standard_normal((m, n))
    if np.dtype(dt).kind == "c":
        a = a + 1j * rng.standard_normal((m, n))
    return a.astype(dt)


def _spd(n, dt, rng, shift=4.0):
    a = _mat(rng, n, n, dt) / np.sqrt(n)
    return (a @ a.conj().T + shift * np.eye(n)).astype(dt)


@pytest.mark.parametrize("dt", DTYPES)
def test_linear_operator_algebra_matches_scipy(dt):
    rng = np.random.default_rng(0)
    a, c = _mat(rng, 5, 4, dt), _mat(rng, 4, 3, dt)
    ops = [sla.LinearOperator(m.shape, matvec=m.__matmul__, rmatvec=m.conj().T.__matmul__, dtype=dt)
           for m in (a, c)]
    A, C = ops
    x4, x5, X = _mat(rng, 4, 1, dt)[:, 0], _mat(rng, 5, 1, dt)[:, 0], _mat(rng, 4, 2, dt)
    t = _tol(dt)
    np.testing.assert_allclose(A @ x4, a @ x4, rtol=t)
    np.testing.assert_allclose(A.matvec(x4[:, None]), (a @ x4)[:, None], rtol=t)
    np.testing.assert_allclose(A.matmat(X), a @ X, rtol=t)
    np.testing.assert_allclose(A @ X, a @ X, rtol=t)
    np.testing.assert_allclose(A.rmatvec(x5), a.conj().T @ x5, rtol=t)
    np.testing.assert_allclose(A.H @ x5, a.conj().T @ x5, rtol=t)
    np.testing.assert_allclose(A.T @ x5, a.T @ x5, rtol=t)
    np.testing.assert_allclose(A.adjoint().rmatvec(x4), a @ x4, rtol=t)
    np.testing.assert_allclose(A.dot(x4), a @ x4, rtol=t)
    np.testing.assert_allclose((A @ C) @ X[:3, 0], a @ (c @ X[:3, 0]), rtol=t)
    np.testing.assert_allclose((A * C).rmatvec(x5), (a @ c).conj().T @ x5, rtol=t)
    np.testing.assert_allclose((2 * A - A) @ x4, a @ x4, rtol=t)
    np.testing.assert_allclose((A + A) @ x4, 2 * (a @ x4), rtol=t)
    np.testing.assert_allclose((-A) @ x4, -(a @ x4), rtol=t)
    np.testing.assert_allclose(x5 @ A, x5 @ a, rtol=t)
    assert A.shape == (5, 4) and A.T.shape == (4, 5) and (A @ C).shape == (5, 3)
    # same results as scipy's operator built from the same callables
    S = ssla.LinearOperator(a.shape, matvec=a.__matmul__, rmatvec=a.conj().T.__matmul__, dtype=dt)
    np.testing.assert_allclose((S.T @ x5), (A.T @ x5), rtol=t)


def test_linear_operator_errors():
    op = sla.LinearOperator((3, 3), matvec=lambda x: x)
    with pytest.raises(NotSupported, match="rmatvec"):
        op.H @ np.ones(3)
    with pytest.raises(InvalidArgument, match="rows"):
        op @ np.ones(4)
    with pytest.raises(InvalidArgument, match="shape"):
        sla.LinearOperator((3,), matvec=abs)
    with pytest.raises(InvalidArgument, match="matvec"):
        sla.LinearOperator((3, 3))
    with pytest.raises(TypeError, match="callable"):
        sla.LinearOperator((3, 3), matvec=3)
    with pytest.raises(InvalidArgument, match="shapes"):
        op + sla.LinearOperator((2, 2), matvec=lambda x: x)
    with pytest.raises(TypeError):
        sla.aslinearoperator("not a matrix")


@pytest.mark.parametrize("dt", DTYPES)
def test_aslinearoperator_of_sparse_dense_and_scipy(dt):
    rng = np.random.default_rng(1)
    S = sp.random(6, 5, density=0.5, random_state=2, format="csr").astype(dt)
    x5, x6 = _mat(rng, 5, 1, dt)[:, 0], _mat(rng, 6, 1, dt)[:, 0]
    for src in (S, S.toarray(), ssla.aslinearoperator(S)):
        op = sla.aslinearoperator(src)
        assert op.shape == (6, 5)
        np.testing.assert_allclose(op @ x5, S @ x5, rtol=_tol(dt), atol=_tol(dt))
        np.testing.assert_allclose(op.H @ x6, S.conj().T @ x6, rtol=_tol(dt), atol=_tol(dt))
        np.testing.assert_allclose(op.rmatmat(x6[:, None]), (S.conj().T @ x6)[:, None],
                                   rtol=_tol(dt), atol=_tol(dt))
    assert sla.aslinearoperator(op) is op


@pytest.mark.parametrize("method", ["cg", "gmres", "bicgstab", "minres"])
@pytest.mark.parametrize("dt", [np.float64, np.complex128])
def test_solvers_take_dense_and_operators(method, dt):
    rng = np.random.default_rng(3)
    a = _spd(20, dt, rng)
    b = _mat(rng, 20, 1, dt)[:, 0]
    want = np.linalg.solve(a, b)
    op = sla.LinearOperator(a.shape, matvec=lambda v: a @ v, rmatvec=lambda v: a.conj().T @ v, dtype=dt)
    for A in (a, op, op.H.H, sla.aslinearoperator(sp.csr_matrix(a))):
        x, info = getattr(sla, method)(A, b, rtol=1e-11)
        assert info == 0 and isinstance(info, sla.SolveInfo) and info.iterations > 0
        np.testing.assert_allclose(x, want, rtol=1e-8, atol=1e-9)


def test_iteration_count_matches_callback_count():
    A = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(40, 40), format="csr")
    for method in ("cg", "bicgstab", "minres"):
        calls = []
        x, info = getattr(sla, method)(A, np.ones(40), rtol=1e-10, callback=calls.append)
        assert info == 0 and info.iterations == len(calls) > 0, method
        assert info.residual_norm <= 1e-10 * np.sqrt(40) * 1.01
    x, info = sla.cg(A, np.ones(40), maxiter=3)
    assert info == 3 and info.iterations == 3


@pytest.mark.parametrize("shift", [0.5, -1.5, 2.0])
@pytest.mark.parametrize("kind", ["sparse", "dense", "operator"])
def test_minres_shift_matches_scipy(shift, kind):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((30, 30))
    a = a + a.T
    b = rng.standard_normal(30)
    A = {"sparse": sp.csr_matrix(a), "dense": a,
         "operator": sla.LinearOperator(a.shape, matvec=lambda v: a @ v, dtype=np.float64)}[kind]
    x, info = sla.minres(A, b, shift=shift, rtol=1e-12, maxiter=2000)
    xs, _ = ssla.minres(sp.csr_matrix(a), b, shift=shift, rtol=1e-12, maxiter=2000)
    assert info == 0
    want = np.linalg.solve(a - shift * np.eye(30), b)
    np.testing.assert_allclose(x, want, rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(x, xs, rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match="shift"):
        sla.minres(A, b, shift="1")


@pytest.mark.parametrize("callback_type", ["pr_norm", "legacy", "x"])
@pytest.mark.parametrize("dt", [np.float64, np.complex128])
def test_gmres_callback_type_matches_scipy(callback_type, dt):
    rng = np.random.default_rng(5)
    a = (np.eye(25) * 4 + _mat(rng, 25, 25, dt) / 5).astype(dt)
    b = _mat(rng, 25, 1, dt)[:, 0]
    mine, theirs = [], []
    x, info = sla.gmres(a, b, rtol=1e-10, restart=5, maxiter=50, callback=mine.append,
                        callback_type=callback_type)
    xs, infos = ssla.gmres(a, b, rtol=1e-10, restart=5, maxiter=50, callback=theirs.append,
                           callback_type=callback_type)
    assert info == infos == 0
    assert len(mine) == len(theirs)
    if callback_type != "x":
        np.testing.assert_allclose(mine, theirs, rtol=1e-6)
    np.testing.assert_allclose(x, xs, rtol=1e-7, atol=1e-9)
    with pytest.raises(InvalidArgument, match="callback_type"):
        sla.gmres(a, b, callback=print, callback_type="nope")


def test_gmres_legacy_maxiter_counts_inner_steps():
    rng = np.random.default_rng(6)
    a = np.eye(30) * 3 + rng.standard_normal((30, 30))
    b = rng.standard_normal(30)
    mine, theirs = [], []
    _, info = sla.gmres(a, b, rtol=1e-14, restart=10, maxiter=7, callback=mine.append, callback_type="legacy")
    _, infos = ssla.gmres(a, b, rtol=1e-14, restart=10, maxiter=7, callback=theirs.append, callback_type="legacy")
    assert info == infos == 7 and len(mine) == len(theirs) == 7


@pytest.mark.parametrize("method", ["cg", "gmres", "bicgstab", "minres"])
@pytest.mark.parametrize("dt", DTYPES)
def test_python_loops_on_the_callers_arrays(method, dt):
    """The loops a GPU LinearOperator runs, here over torch CPU tensors: the matvec sees the
    caller's tensors, x comes back as one, and the answer matches NumPy."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    a = _spd(24, dt, rng)
    b = _mat(rng, 24, 1, dt)[:, 0]
    at = torch.from_numpy(a)
    seen = []

    def matvec(v):
        seen.append(type(v))
        return at @ v

    op = sla.LinearOperator(a.shape, matvec=matvec, dtype=dt)
    calls = []
    x, info = _iterative._solve_py(f"sparse.linalg.{method}", method, op, torch.from_numpy(b), None,
                                   1e-6 if _tol(dt) > 1e-5 else 1e-11, 0.0, None,
                                   lambda r: r, calls.append, 20, "x")
    assert info == 0 and isinstance(x, torch.Tensor) and set(seen) == {torch.Tensor}
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(a, b), rtol=100 * _tol(dt), atol=100 * _tol(dt))
    assert info.iterations > 0 and len(calls) > 0
    # maxiter=0 runs nothing: not converged; b = 0 gives x = 0
    _, info0 = _iterative._solve_py("op", method, op, torch.from_numpy(b), None, 1e-8, 0.0, 0,
                                    None, None, 20, "x")
    assert info0 > 0
    x0, infoz = _iterative._solve_py("op", method, op, torch.zeros(24, dtype=at.dtype),
                                     torch.ones(24, dtype=at.dtype), 1e-8, 0.0, None, None, None, 20, "x")
    assert infoz == 0 and not x0.any()


def test_python_loop_checks_the_matvec():
    op = sla.LinearOperator((4, 4), matvec=lambda v: np.ones(5))
    with pytest.raises(InvalidArgument, match="matvec"):
        _iterative._solve_py("sparse.linalg.cg", "cg", op, np.ones(4), None, 1e-8, 0.0, None,
                             None, None, 20, "x")
    with pytest.raises(NotSupported, match="ic0"):
        _iterative._solve_py("sparse.linalg.cg", "cg", op, np.ones(4), None, 1e-8, 0.0, None,
                             "ic0", None, 20, "x")
