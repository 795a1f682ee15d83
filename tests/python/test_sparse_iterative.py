"""gpula.sparse.linalg cg / gmres / bicgstab / minres against scipy.sparse.linalg."""

import numpy as np
import pytest
import scipy.sparse as sps
import scipy.sparse.linalg as ssl

import gpula as gl
import gpula.sparse.linalg as sla
from gpula.errors import DTypeError, InvalidArgument, NotPositiveDefinite, SingularMatrix


def poisson2d(g, dtype=np.float64):
    t = sps.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(g, g))
    eye = sps.identity(g)
    return (sps.kron(eye, t) + sps.kron(t, eye)).tocsr().astype(dtype)


def nonsym(n, seed):
    rng = np.random.default_rng(seed)
    a = sps.random(n, n, density=0.1, random_state=seed, format="csr")
    d = np.asarray(abs(a).sum(axis=1)).ravel() + 1.0 + rng.random(n)
    return (a + sps.diags(d)).tocsr()


def sym_indefinite(n, seed):
    a = sps.random(n, n, density=0.1, random_state=seed)
    a = a + a.T
    d = np.asarray(abs(a).sum(axis=1)).ravel() + 1.0
    d[1::2] *= -1
    return (a + sps.diags(d)).tocsr()


def rel_res(a, x, b):
    return np.linalg.norm(b - a @ x) / np.linalg.norm(b)


@pytest.mark.parametrize("M", [None, "jacobi", "ilu0", "ic0"])
@pytest.mark.parametrize("method", ["cg", "gmres", "bicgstab", "minres"])
def test_poisson_matches_scipy(method, M):
    a = poisson2d(15)
    b = np.random.default_rng(0).standard_normal(a.shape[0])
    x, info = getattr(sla, method)(a, b, rtol=1e-10, M=M, maxiter=2000)
    assert info == 0
    ref = np.linalg.solve(a.toarray(), b)
    assert np.linalg.norm(x - ref) / np.linalg.norm(ref) < 1e-7
    assert rel_res(a, x, b) <= 1e-10 * 1.0001


def test_cg_iterations_close_to_scipy():
    a = poisson2d(20)
    b = np.random.default_rng(1).standard_normal(a.shape[0])
    its = {"gl": 0, "sp": 0}
    sla.cg(a, b, rtol=1e-8, callback=lambda xk: its.__setitem__("gl", its["gl"] + 1))
    ssl.cg(a, b, rtol=1e-8, callback=lambda xk: its.__setitem__("sp", its["sp"] + 1))
    assert abs(its["gl"] - its["sp"]) <= 3


@pytest.mark.parametrize("method", ["gmres", "bicgstab"])
@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.float32])
def test_nonsymmetric(method, dtype):
    a = nonsym(80, 2).astype(dtype)
    if np.iscomplexobj(a):
        a = a + 1j * nonsym(80, 3) * 0.1
    b = np.random.default_rng(2).standard_normal(80).astype(dtype)
    rtol = 1e-5 if dtype == np.float32 else 1e-10
    x, info = getattr(sla, method)(a, b, rtol=rtol, M="ilu0")
    assert info == 0 and x.dtype == np.dtype(dtype)
    assert rel_res(a.astype(np.complex128), x.astype(np.complex128), b) < 2 * rtol


def test_minres_indefinite_vs_scipy():
    a = sym_indefinite(70, 4)
    b = np.random.default_rng(3).standard_normal(70)
    x, info = sla.minres(a, b, rtol=1e-10)
    xs, infos = ssl.minres(a, b, rtol=1e-10)
    assert info == 0 and infos == 0
    assert np.linalg.norm(x - xs) / np.linalg.norm(xs) < 1e-7


def test_linear_operators_and_custom_M():
    a = poisson2d(10)
    b = np.ones(a.shape[0])
    op = sla.LinearOperator(a.shape, matvec=lambda v: a @ v, dtype=np.float64)
    x, info = sla.cg(op, b, rtol=1e-10)
    assert info == 0 and rel_res(a, x, b) < 1e-9
    sop = ssl.aslinearoperator(a)
    minv = ssl.LinearOperator(a.shape, matvec=lambda r: r / 4.0)
    x, info = sla.bicgstab(sop, b, rtol=1e-10, M=minv)
    assert info == 0 and rel_res(a, x, b) < 1e-9
    x, info = sla.gmres(a, b, rtol=1e-10, M=lambda r: r / 4.0, restart=40)
    assert info == 0 and rel_res(a, x, b) < 1e-9


def test_info_semantics_and_inputs_untouched():
    a = poisson2d(10)
    b = np.random.default_rng(5).standard_normal(a.shape[0])
    b0 = b.copy()
    x, info = sla.cg(a, b, rtol=1e-14, maxiter=2)
    assert info == 2
    exact = np.linalg.solve(a.toarray(), b)
    calls = []
    x, info = sla.cg(a, b, x0=exact, callback=calls.append)
    assert info == 0 and calls == []
    x, info = sla.gmres(a, np.zeros_like(b), x0=np.ones_like(b))
    assert info == 0 and np.all(x == 0)
    np.testing.assert_array_equal(b, b0)


def test_errors():
    a = poisson2d(4)
    with pytest.raises(InvalidArgument, match="ilu7"):
        sla.cg(a, np.ones(16), M="ilu7")
    with pytest.raises(InvalidArgument, match=r"\(16,\)"):
        sla.cg(a, np.ones(15))
    with pytest.raises(InvalidArgument, match="square"):
        sla.cg(sps.random(3, 4, format="csr"), np.ones(3))
    with pytest.raises(DTypeError):
        sla.cg(a, np.ones(16, dtype="S1"))
    z = sps.csr_matrix(np.array([[0.0, 1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, 3.0]]))
    with pytest.raises(SingularMatrix, match="ic0"):
        sla.cg(z, np.ones(3), M="ic0")
    with pytest.raises(SingularMatrix, match="ilu0"):
        sla.gmres(z, np.ones(3), M="ilu0")
    with pytest.raises(NotPositiveDefinite):
        sla.cg(sps.csr_matrix(np.array([[1.0, 2.0], [2.0, 1.0]])), np.ones(2), M="ic0")
    op = sla.LinearOperator((3, 3), matvec=lambda v: v)
    with pytest.raises(InvalidArgument, match="LinearOperator"):
        sla.cg(op, np.ones(3), M="jacobi")
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(InvalidArgument, match="triangular_sweeps"):
            sla.cg(a, np.ones(16), M="ic0", triangular_sweeps=bad)


@pytest.mark.parametrize("method", ["cg", "gmres", "bicgstab", "minres"])
def test_errors_name_the_argument(method):
    a = poisson2d(4)
    solve = getattr(sla, method)
    op = rf"^\[sparse\.linalg\.{method}\] "
    for name, bad in (("rtol", "x"), ("rtol", None), ("atol", True), ("atol", [1.0])):
        with pytest.raises(DTypeError, match=op + f"{name} must be a real number"):
            solve(a, np.ones(16), **{name: bad})
    with pytest.raises(DTypeError, match=op + "callback must be None or a callable"):
        solve(a, np.ones(16), callback=5)
    for bad in (None, "abc", {}, np.ones(16, object)):
        with pytest.raises(DTypeError, match=op + "b has dtype"):
            solve(a, bad)


def test_linear_operator_matvec_result_is_checked():
    def op(matvec):
        return sla.LinearOperator((16, 16), matvec=matvec, dtype=np.float64)

    with pytest.raises(InvalidArgument, match=r"^\[sparse\.linalg\.cg\] A\.matvec must return shape \(16,\), got ndarray of shape \(17,\)"):
        sla.cg(op(lambda x: np.ones(17)), np.ones(16))
    with pytest.raises(DTypeError, match=r"^\[sparse\.linalg\.cg\] A\.matvec must return a numeric array .* got NoneType"):
        sla.cg(op(lambda x: None), np.ones(16))
    with pytest.raises(InvalidArgument, match=r"^\[sparse\.linalg\.gmres\] M must return shape \(16,\)"):
        sla.gmres(poisson2d(4), np.ones(16), M=lambda x: np.ones(3))


def _cupy():
    cp = pytest.importorskip("cupy")
    try:
        if cp.cuda.runtime.getDeviceCount() == 0:
            pytest.skip("no GPU")
    except Exception:
        pytest.skip("no GPU")
    return cp


@pytest.mark.gpu
@pytest.mark.parametrize("M", [None, "jacobi", "ic0"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cupy_cg_matches_cpu(M, dtype):
    cp = _cupy()
    import cupyx.scipy.sparse as csps

    a = poisson2d(30, dtype)
    b = np.random.default_rng(7).standard_normal(a.shape[0]).astype(dtype)
    rtol = 1e-5 if dtype == np.float32 else 1e-10
    xc, infoc = sla.cg(a, b, rtol=rtol, M=M)
    calls = []
    xg, infog = sla.cg(csps.csr_matrix(a), cp.asarray(b), rtol=rtol, M=M, callback=calls.append)
    assert isinstance(xg, cp.ndarray) and xg.dtype == np.dtype(dtype)
    assert infoc == 0 and infog == 0 and len(calls) > 0 and isinstance(calls[0], cp.ndarray)
    x = cp.asnumpy(xg)
    # ic0 on the GPU applies the factor by Jacobi sweeps (a different, equally valid M than the
    # CPU's exact solves): the iterates then agree to about cond(A) rtol only.
    f32 = dtype == np.float32
    bound = (1e-3 if f32 else 1e-8) if M != "ic0" else (1e-2 if f32 else 1e-6)
    assert np.linalg.norm(x - xc) / np.linalg.norm(xc) < bound


@pytest.mark.gpu
def test_cupy_cg_callback_may_run_gpula_work():
    """A callback that runs gpula products of its own (cuSPARSE and cuBLAS handles of the same
    thread, on CuPy's stream) leaves the device-resident CG loop's results unchanged."""
    cp = _cupy()
    import cupyx.scipy.sparse as csps

    import gpula as gl

    a = poisson2d(30)
    b = np.random.default_rng(4).standard_normal(a.shape[0])
    ag = csps.csr_matrix(a)
    A = gl.sparse.csr_matrix((ag.data, ag.indices, ag.indptr), shape=a.shape)
    x0, info0 = sla.cg(ag, cp.asarray(b), rtol=1e-10)
    norms = []
    x1, info1 = sla.cg(
        ag, cp.asarray(b), rtol=1e-10,
        callback=lambda xk: norms.append(float(cp.linalg.norm(A @ xk))),
    )
    assert info0 == 0 and info1 == 0 and len(norms) > 0
    np.testing.assert_allclose(cp.asnumpy(x1), cp.asnumpy(x0), rtol=1e-12, atol=1e-14)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cupy_cg_ic0(dtype):
    cp = _cupy()
    import cupyx.scipy.sparse as csps

    a = poisson2d(30, dtype)
    b = np.random.default_rng(3).standard_normal(a.shape[0]).astype(dtype)
    rtol = 1e-5 if dtype == np.float32 else 1e-10
    ag = csps.csr_matrix(a)
    data_before = ag.data.copy()
    its = {}
    for M in (None, "ic0"):
        calls = []
        xg, info = sla.cg(ag, cp.asarray(b), rtol=rtol, M=M, callback=calls.append)
        assert info == 0
        its[M] = len(calls)
    assert its["ic0"] < its[None]
    assert cp.array_equal(ag.data, data_before)  # the factorization works on a copy
    x = cp.asnumpy(xg).astype(np.float64)
    slack = 100.0 if dtype == np.float32 else 1.01
    assert rel_res(a.astype(np.float64), x, b.astype(np.float64)) <= slack * rtol
    _, infoc = sla.cg(a, b, rtol=rtol, M="ic0")
    assert infoc == 0


@pytest.mark.gpu
@pytest.mark.parametrize("sweeps", [0, 1, 3])
def test_cupy_cg_ic0_triangular_sweeps(sweeps):
    """Exact (0) and approximate (Jacobi sweeps) triangular solves with the IC(0) factor all
    converge to the tolerance in fewer iterations than no preconditioner."""
    cp = _cupy()
    import cupyx.scipy.sparse as csps

    a = poisson2d(40)
    b = np.random.default_rng(5).standard_normal(a.shape[0])
    ag = csps.csr_matrix(a)
    its = {}
    for M, ts in ((None, None), ("ic0", sweeps)):
        calls = []
        xg, info = sla.cg(
            ag, cp.asarray(b), rtol=1e-10, M=M, callback=calls.append, triangular_sweeps=ts
        )
        assert info == 0
        its[M] = len(calls)
        assert rel_res(a, cp.asnumpy(xg), b) <= 1.01e-10
    assert its["ic0"] < its[None]


@pytest.mark.gpu
def test_cupy_cg_ic0_errors():
    cp = _cupy()
    import cupyx.scipy.sparse as csps

    ind = csps.csr_matrix(cp.asarray(np.array([[1.0, 2.0], [2.0, 1.0]])))
    with pytest.raises(NotPositiveDefinite, match="ic0"):
        sla.cg(ind, cp.ones(2), M="ic0")
    for ts in (0, 1, None):
        with pytest.raises(NotPositiveDefinite, match="ic0"):
            sla.cg(ind, cp.ones(2), M="ic0", triangular_sweeps=ts)


@pytest.mark.gpu
def test_cupy_not_supported_yet():
    cp = _cupy()
    import cupyx.scipy.sparse as csps

    from gpula.errors import NotSupported

    a = csps.csr_matrix(poisson2d(4))
    with pytest.raises(NotSupported, match="ilu0"):
        sla.cg(a, cp.ones(16), M="ilu0")
    for method in ("gmres", "bicgstab", "minres"):
        for M in ("ilu0", "ic0", lambda r: r):
            with pytest.raises(NotSupported, match=method):
                getattr(sla, method)(a, cp.ones(16), M=M)
    with pytest.raises(InvalidArgument, match="ilu7"):
        sla.gmres(a, cp.ones(16), M="ilu7")
    ac = csps.csr_matrix(poisson2d(4).astype(np.complex128))
    with pytest.raises(NotSupported):
        sla.bicgstab(ac, cp.ones(16, dtype=np.complex128))


# ---- gmres / bicgstab / minres on CuPy arrays ----


def varied(a):
    """a + diag(0, 1, 2, 0, ...): a diagonal that is not constant, so jacobi is not a scaling."""
    return (a + sps.diags((np.arange(a.shape[0]) % 3).astype(float))).tocsr()


def convection_diffusion(g, c=0.4):
    t = sps.diags([-1.0 - c, 2.0, -1.0 + c], [-1, 0, 1], shape=(g, g))
    eye = sps.identity(g)
    return (sps.kron(eye, t) + sps.kron(t, eye)).tocsr()


def blocks_indefinite(blocks):
    """Symmetric indefinite with a positive diagonal (so jacobi is SPD): 2 x 2 blocks
    [[a, 3a], [3a, a]] (eigenvalues 4a, -2a) coupled by |e| <= 0.3."""
    j = np.arange(blocks)
    a = 1.0 + 0.25 * (j % 5)
    e = 0.3 * np.sin(j[:-1] + 1.0)
    main = np.repeat(a, 2)
    off = np.zeros(2 * blocks - 1)
    off[0::2] = 3.0 * a
    off[1::2] = e
    return sps.diags([off, main, off], [-1, 0, 1], format="csr")


_PROBLEMS = {
    "poisson": lambda: varied(poisson2d(20)),
    "convdiff": lambda: varied(convection_diffusion(20)),
    "indefinite": lambda: blocks_indefinite(200),
}


class _Csr64:
    """A duck-typed CSR matrix of CuPy arrays with int64 indices (cupyx keeps int32)."""

    format = "csr"

    def __init__(self, a, cp):
        self.shape = a.shape
        self.data = cp.asarray(a.data)
        self.indices = cp.asarray(a.indices.astype(np.int64))
        self.indptr = cp.asarray(a.indptr.astype(np.int64))


def _on_gpu(a, itype, cp):
    import cupyx.scipy.sparse as csps

    return csps.csr_matrix(a) if itype == np.int32 else _Csr64(a, cp)


def _scipy_M(a, M):
    if M != "jacobi":
        return None
    d = 1.0 / a.diagonal()
    return ssl.LinearOperator(a.shape, matvec=lambda r: d * r.ravel(), dtype=a.dtype)


@pytest.mark.gpu
@pytest.mark.parametrize("itype", [np.int32, np.int64])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("M", [None, "jacobi"])
@pytest.mark.parametrize(
    "method,problem",
    [
        ("bicgstab", "poisson"),
        ("bicgstab", "convdiff"),
        ("gmres", "poisson"),
        ("gmres", "convdiff"),
        ("minres", "poisson"),
        ("minres", "indefinite"),
    ],
)
def test_cupy_krylov_matches_scipy(method, problem, M, dtype, itype):
    cp = _cupy()
    a64 = _PROBLEMS[problem]()
    n = a64.shape[0]
    a = a64.astype(dtype)
    b64 = np.random.default_rng(8).standard_normal(n)
    b = b64.astype(dtype)
    f32 = dtype == np.float32
    rtol = 1e-5 if f32 else 1e-10
    kw = {"restart": 15} if method == "gmres" else {}
    xs, infos = getattr(ssl, method)(a64, b64, rtol=1e-12, M=_scipy_M(a64, M), maxiter=5000, **kw)
    assert infos == 0
    xg, info = getattr(sla, method)(_on_gpu(a, itype, cp), cp.asarray(b), rtol=rtol, M=M, **kw)
    assert info == 0
    assert isinstance(xg, cp.ndarray) and xg.dtype == np.dtype(dtype)
    x = cp.asnumpy(xg).astype(np.float64)
    assert rel_res(a.astype(np.float64), x, b64) <= (100.0 if f32 else 10.0) * rtol
    assert np.linalg.norm(x - xs) / np.linalg.norm(xs) < (5e-2 if f32 else 1e-6)
    # and the gpula CPU backend on the same problem: the same number of callbacks, nearly
    calls = {"cpu": 0, "gpu": 0}
    getattr(sla, method)(
        a, b, rtol=rtol, M=M, callback=lambda _: calls.__setitem__("cpu", calls["cpu"] + 1), **kw
    )
    getattr(sla, method)(
        _on_gpu(a, itype, cp),
        cp.asarray(b),
        rtol=rtol,
        M=M,
        callback=lambda xk: calls.__setitem__("gpu", calls["gpu"] + 1),
        **kw,
    )
    assert abs(calls["gpu"] - calls["cpu"]) <= max(3, calls["cpu"] // 4)


@pytest.mark.gpu
@pytest.mark.parametrize("method", ["gmres", "bicgstab", "minres"])
def test_cupy_krylov_info_semantics(method):
    cp = _cupy()
    import cupyx.scipy.sparse as csps

    a = varied(poisson2d(15))
    ag = csps.csr_matrix(a)
    b = np.random.default_rng(9).standard_normal(a.shape[0])
    kw = {"restart": 5} if method == "gmres" else {}
    x, info = getattr(sla, method)(ag, cp.asarray(b), rtol=1e-14, maxiter=2, **kw)
    xc, infoc = getattr(sla, method)(a, b, rtol=1e-14, maxiter=2, **kw)
    assert info == infoc == 2  # gmres: restart cycles
    np.testing.assert_allclose(cp.asnumpy(x), xc, rtol=1e-9, atol=1e-12)
    exact = np.linalg.solve(a.toarray(), b)
    calls = []
    x, info = getattr(sla, method)(ag, cp.asarray(b), x0=cp.asarray(exact), callback=calls.append)
    assert info == 0 and calls == []
    x, info = getattr(sla, method)(ag, cp.zeros_like(cp.asarray(b)), x0=cp.ones(a.shape[0]))
    assert info == 0 and bool(cp.all(x == 0))


@pytest.mark.parametrize("method", ["minres", "cg"])
def test_complex_hermitian(method):
    rng = np.random.default_rng(11)
    n = 60
    a = sps.random(n, n, density=0.1, random_state=11) * (1 + 0.5j)
    a = a + a.conj().T
    d = np.asarray(abs(a).sum(axis=1)).ravel() + 1.0
    if method == "minres":
        d[::3] *= -1
    a = (a + sps.diags(d)).tocsr()
    b = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    x, info = getattr(sla, method)(a, b, rtol=1e-10)
    assert info == 0 and x.dtype == np.complex128
    ref = np.linalg.solve(a.toarray(), b)
    assert np.linalg.norm(x - ref) / np.linalg.norm(ref) < 1e-7


def test_integer_matrix_promotes_to_float64_and_torch_cpu():
    a = sps.csr_matrix(np.array([[4, 1], [1, 3]]))
    x, info = sla.cg(a, [1, 2], rtol=1e-12)
    assert info == 0 and x.dtype == np.float64
    np.testing.assert_allclose(x, np.linalg.solve(a.toarray(), [1.0, 2.0]), rtol=1e-10)
    torch = pytest.importorskip("torch")
    xt, info = sla.bicgstab(a, torch.tensor([1.0, 2.0], dtype=torch.float64), rtol=1e-12)
    assert isinstance(xt, torch.Tensor) and info == 0


def _torch_device(xp):
    if not xp.name.startswith("torch"):
        pytest.skip("torch only")
    return "cuda" if xp.gpu else "cpu"


@pytest.mark.parametrize("method", ["cg", "gmres", "bicgstab", "minres"])
def test_torch_tensors_on_their_device(xp, method):
    """Torch sparse A and torch b, on the CPU and on a GPU (issue 17: CUDA torch tensors raised
    NotSupported): x is a torch tensor on b's device, as accurate as the CPU solve; maxiter=0
    does not report convergence there either."""
    device = _torch_device(xp)
    import torch

    a = poisson2d(8)
    b = np.random.default_rng(21).standard_normal(a.shape[0])
    ref = np.linalg.solve(a.toarray(), b)
    dense = torch.from_numpy(a.toarray()).to(device)
    bt = torch.from_numpy(b).to(device)
    b_before = bt.clone()
    for A in (dense.to_sparse_csr(), dense.to_sparse(), gl.sparse.csr_matrix(dense.to_sparse_csr())):
        x, info = getattr(sla, method)(A, bt, rtol=1e-10, M="jacobi")
        assert info == 0 and isinstance(x, torch.Tensor) and x.device.type == device
        assert x.dtype == torch.float64
        xn = x.cpu().numpy()
        assert np.linalg.norm(xn - ref) / np.linalg.norm(ref) < 1e-7
    assert torch.equal(bt, b_before)
    x, info = getattr(sla, method)(dense.to_sparse_csr(), bt, maxiter=0)
    assert info > 0 and not bool(torch.any(x != 0))
    with pytest.raises(InvalidArgument, match=rf"\[sparse.linalg.{method}\] maxiter must be >= 0"):
        getattr(sla, method)(dense.to_sparse_csr(), bt, maxiter=-1)
    # float32 b with a float64 A computes in float64, as scipy.
    x, info = getattr(sla, method)(dense.to_sparse_csr(), bt.float(), rtol=1e-10)
    assert info == 0 and x.dtype == torch.float64
