"""gpula.torch.linalg against torch.linalg: values, and gradients equal to torch.linalg's own
(float64, fresh random inputs), gradcheck and gradgradcheck, torch.library.opcheck of every op,
torch.compile(fullgraph=True), the top-k forms, and typed errors."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

import gpula as gl  # noqa: E402
import gpula.torch as gt  # noqa: E402
from torch.autograd import gradcheck, gradgradcheck  # noqa: E402

F64 = torch.float64
L = gt.linalg


@pytest.fixture
def gen(rng):
    return torch.Generator().manual_seed(int(rng.integers(1 << 30)))


def randn(gen, *shape, grad=True):
    return torch.randn(*shape, generator=gen, dtype=F64).requires_grad_(grad)


def spd(gen, n, *batch):
    x = torch.randn(*batch, n, n, generator=gen, dtype=F64)
    return (x @ x.mT + n * torch.eye(n, dtype=F64)).requires_grad_()


def well_conditioned(gen, n, *batch):
    return (torch.randn(*batch, n, n, generator=gen, dtype=F64)
            + 2 * n ** 0.5 * torch.eye(n, dtype=F64)).requires_grad_()


def same_grads(ours, theirs, inputs, tol=1e-10):
    """The value and the gradient of a scalar loss through ours and through theirs agree."""
    y1, y2 = ours(*inputs), theirs(*inputs)
    torch.testing.assert_close(y1, y2, rtol=tol, atol=tol)
    g1 = torch.autograd.grad(y1, inputs)
    g2 = torch.autograd.grad(y2, inputs)
    for a, b in zip(g1, g2):
        torch.testing.assert_close(a, b, rtol=tol, atol=tol)


@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("batch", [(), (3,)])
def test_cholesky_gradients_are_torchs(gen, upper, batch):
    a = spd(gen, 5, *batch)
    w = torch.randn(5, 5, generator=gen, dtype=F64)
    same_grads(lambda x: (L.cholesky(x, upper=upper) * w).sum(),
               lambda x: (torch.linalg.cholesky(x, upper=upper) * w).sum(), (a,))
    f = lambda x: L.cholesky(0.5 * (x + x.mT), upper=upper)  # noqa: E731 (symmetric input)
    assert gradcheck(f, (a,)) and gradgradcheck(f, (a,))


@pytest.mark.parametrize("left", [True, False])
def test_solve_gradients_are_torchs_and_broadcast(gen, left):
    a = well_conditioned(gen, 4, 2)
    b = randn(gen, 3, 2, 4, 3) if left else randn(gen, 3, 2, 3, 4)  # batch (3, 2) over A's (2,)
    same_grads(lambda x, y: L.solve(x, y, left=left).sin().sum(),
               lambda x, y: torch.linalg.solve(x, y, left=left).sin().sum(), (a, b))
    assert gradcheck(lambda x, y: L.solve(x, y, left=left), (a, b[0]))
    assert gradgradcheck(lambda x, y: L.solve(x, y, left=left), (a, b[0]))


def test_solve_takes_vectors_by_torchs_rule(gen):
    a = well_conditioned(gen, 4, 2)
    for b in (randn(gen, 4), randn(gen, 2, 4)):  # (n,) and a batch of vectors (..., n)
        x = L.solve(a, b)
        ref = torch.linalg.solve(a, b)
        assert x.shape == ref.shape
        torch.testing.assert_close(x, ref)
        same_grads(lambda p, q: L.solve(p, q).sum(), lambda p, q: torch.linalg.solve(p, q).sum(),
                   (a, b))


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("unit", [False, True])
def test_solve_triangular_gradients_are_torchs(gen, left, upper, unit):
    t = torch.randn(2, 4, 4, generator=gen, dtype=F64) + 3 * torch.eye(4, dtype=F64)
    t = (t.triu() if upper else t.tril()).requires_grad_()
    b = randn(gen, 2, 4, 3) if left else randn(gen, 2, 3, 4)
    kw = {"upper": upper, "left": left, "unitriangular": unit}
    same_grads(lambda x, y: L.solve_triangular(x, y, **kw).sin().sum(),
               lambda x, y: torch.linalg.solve_triangular(x, y, **kw).sin().sum(), (t, b))
    f = lambda x, y: L.solve_triangular(x, y, **kw)  # noqa: E731
    assert gradcheck(f, (t, b)) and gradgradcheck(f, (t, b))


@pytest.mark.parametrize("lower", [True, False])
def test_cho_solve_gradients_are_torchs_in_the_factors_triangle(gen, lower):
    c = torch.linalg.cholesky(spd(gen, 4, 2).detach(), upper=not lower).requires_grad_()
    b = randn(gen, 2, 4, 3)
    x = L.cho_solve((c, lower), b)
    torch.testing.assert_close(x, torch.cholesky_solve(b, c, upper=not lower))
    g1 = torch.autograd.grad(x.sin().sum(), (c, b))
    g2 = torch.autograd.grad(torch.cholesky_solve(b, c, upper=not lower).sin().sum(), (c, b))
    keep = torch.tril if lower else torch.triu  # the forward reads only this triangle
    torch.testing.assert_close(g1[0], keep(g2[0]))
    torch.testing.assert_close(g1[1], g2[1])
    f = lambda x, y: L.cho_solve((keep(x), lower), y)  # noqa: E731
    assert gradcheck(f, (c, b)) and gradgradcheck(f, (c, b))


def test_inv_slogdet_logdet(gen):
    a = well_conditioned(gen, 5, 3)
    same_grads(lambda x: L.inv(x).sin().sum(), lambda x: torch.linalg.inv(x).sin().sum(), (a,))
    same_grads(lambda x: L.slogdet(x).logabsdet.sum(),
               lambda x: torch.linalg.slogdet(x).logabsdet.sum(), (a,))
    sign, logabsdet = L.slogdet(a)
    ref = torch.linalg.slogdet(a)
    torch.testing.assert_close(sign, ref.sign)
    assert gradcheck(L.inv, (a,)) and gradgradcheck(L.inv, (a,))
    f = lambda x: L.slogdet(x).logabsdet  # noqa: E731
    assert gradcheck(f, (a,)) and gradgradcheck(f, (a,))
    p = spd(gen, 4)
    same_grads(L.logdet, torch.logdet, (p,))
    neg = torch.diag(torch.tensor([-1.0, 2.0], dtype=F64))
    assert torch.isnan(L.logdet(neg)) and torch.isnan(torch.logdet(neg))
    sing = torch.zeros(2, 2, dtype=F64)
    assert L.logdet(sing) == -torch.inf and L.slogdet(sing).sign == 0


def _fix_signs(v):
    """Eigen/singular vectors up to sign: make each column's first entry nonnegative."""
    return v * torch.where(v[..., :1, :] < 0, -1.0, 1.0)


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_gradients_are_torchs(gen, uplo):
    s = randn(gen, 2, 5, 5)
    same_grads(lambda x: L.eigh(x, uplo).eigenvalues.sin().sum()
               + _fix_signs(L.eigh(x, uplo).eigenvectors).sin().sum(),
               lambda x: torch.linalg.eigh(x, uplo).eigenvalues.sin().sum()
               + _fix_signs(torch.linalg.eigh(x, uplo).eigenvectors).sin().sum(), (s,), tol=1e-9)

    def f(x):
        w, v = L.eigh(x + x.mT, uplo)
        return w, _fix_signs(v)

    assert gradcheck(f, (s,))
    with pytest.raises(gl.NotSupported, match=r"\[torch.linalg.eigh\] double backward"):
        gradgradcheck(f, (s,))


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 6, 4)])
def test_svd_gradients_are_torchs(gen, shape):
    x = randn(gen, *shape)
    r = min(shape[-2:])
    for full in (False, True):  # full: the columns past r are any basis of the rest, not compared
        def ours(a, full=full):
            u, s, vh = L.svd(a, full_matrices=full)
            u, vh = u[..., :r], vh[..., :r, :]
            return _fix_signs(u).sin().sum() + s.sin().sum() + _fix_signs(vh.mT).sin().sum()

        def theirs(a, full=full):
            u, s, vh = torch.linalg.svd(a, full_matrices=full)
            u, vh = u[..., :r], vh[..., :r, :]
            return _fix_signs(u).sin().sum() + s.sin().sum() + _fix_signs(vh.mT).sin().sum()

        same_grads(ours, theirs, (x,), tol=1e-9)

    def f(a):
        u, s, vh = L.svd(a, full_matrices=False)
        return _fix_signs(u), s, _fix_signs(vh.mT)

    assert gradcheck(f, (x,))


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 6, 4)])
def test_qr_gradients_are_torchs(gen, shape):
    x = randn(gen, *shape)
    modes = ["reduced"] + (["complete"] if shape[-2] <= shape[-1] else [])
    for mode in modes:
        same_grads(lambda a, mode=mode: sum(t.sin().sum() for t in L.qr(a, mode)),
                   lambda a, mode=mode: sum(t.sin().sum() for t in torch.linalg.qr(a, mode)),
                   (x,), tol=1e-9)
    assert gradcheck(lambda a: tuple(L.qr(a)), (x,))
    if shape[-2] > shape[-1]:
        q, r = L.qr(x, "complete")
        assert q.shape[-1] == shape[-2]
        with pytest.raises(gl.NotSupported, match="mode='complete' with m > n"):
            (q.sum() + r.sum()).backward()
    q, r = L.qr(x, "r")
    assert q.numel() == 0
    torch.testing.assert_close(r.abs(), torch.linalg.qr(x, "r").R.abs())


@pytest.mark.parametrize("shape", [(6, 3), (3, 6), (4, 4), (2, 6, 4)])
def test_lstsq_matches_the_pseudo_inverse_and_its_gradient(gen, shape):
    a = randn(gen, *shape)
    b = randn(gen, *shape[:-1], 2)
    r = L.lstsq(a, b)
    m, n = shape[-2:]
    assert r.rank.dtype == torch.int64 and (r.rank == min(m, n)).all()
    torch.testing.assert_close(r.singular_values, torch.linalg.svdvals(a))
    assert r.residuals.shape == ((*shape[:-2], 2) if m > n else (0,))
    same_grads(lambda p, q: L.lstsq(p, q).solution.sin().sum(),
               lambda p, q: (torch.linalg.pinv(p) @ q).sin().sum(), (a, b), tol=1e-9)
    assert gradcheck(lambda p, q: L.lstsq(p, q).solution, (a, b))
    v = randn(gen, shape[-2])
    x = L.lstsq(a[0] if a.dim() == 3 else a, v).solution
    assert x.shape == (n,)


def test_lstsq_of_a_rank_deficient_matrix_is_the_minimum_norm_solution(gen):
    u = torch.randn(6, 2, generator=gen, dtype=F64)
    a = (u @ torch.randn(2, 4, generator=gen, dtype=F64)).requires_grad_()  # rank 2
    b = randn(gen, 6, 3)
    r = L.lstsq(a, b)
    assert int(r.rank) == 2
    same_grads(lambda p, q: L.lstsq(p, q).solution.sin().sum(),
               lambda p, q: (torch.linalg.pinv(p) @ q).sin().sum(), (a, b), tol=1e-8)


def test_top_k_forms_differentiate_through_the_values_only(gen):
    x = randn(gen, 8, 8)
    s = (x + x.mT).detach().requires_grad_()
    w, v = L.eigh(s, k=3)
    ref = torch.linalg.eigh(s)
    torch.testing.assert_close(w, ref.eigenvalues[-3:])
    g1 = torch.autograd.grad(w.sum(), s)[0]
    g2 = torch.autograd.grad(ref.eigenvalues[-3:].sum(), s)[0]
    torch.testing.assert_close(g1, g2)
    w, v = L.eigh(s, k=3)
    with pytest.raises(gl.NotSupported, match=r"k=: the gradient through the vectors"):
        v.sum().backward()
    u, sv, vh = L.svd(x, k=2)
    torch.testing.assert_close(sv, torch.linalg.svdvals(x)[:2])
    g1 = torch.autograd.grad(sv.sum(), x)[0]
    g2 = torch.autograd.grad(torch.linalg.svdvals(x)[:2].sum(), x)[0]
    torch.testing.assert_close(g1, g2)
    u, sv, vh = L.svd(x, k=2)
    with pytest.raises(gl.NotSupported, match=r"k=: the gradient through the vectors"):
        u.sum().backward()


OPS = {
    "cholesky": lambda g: (spd(g, 4, 2).detach(), False),
    "solve": lambda g: (well_conditioned(g, 4, 2).detach(), randn(g, 2, 4, 3, grad=False), True),
    "solve_triangular": lambda g: ((torch.randn(4, 4, generator=g, dtype=F64)
                                    + 4 * torch.eye(4, dtype=F64)).triu(),
                                   randn(g, 4, 2, grad=False), True, True, False),
    "cho_solve": lambda g: (torch.linalg.cholesky(spd(g, 4).detach()),
                            randn(g, 4, 2, grad=False), False),
    "inv": lambda g: (well_conditioned(g, 4, 2).detach(),),
    "slogdet": lambda g: (well_conditioned(g, 4, 2).detach(),),
    "lstsq": lambda g: (randn(g, 6, 3, grad=False), randn(g, 6, 2, grad=False), None),
    "qr": lambda g: (randn(g, 5, 3, grad=False), "reduced"),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_ops_pass_opcheck(gen, name):
    args = tuple(x.requires_grad_() if isinstance(x, torch.Tensor) and x.is_floating_point()
                 else x for x in OPS[name](gen))
    torch.library.opcheck(getattr(torch.ops.gpula, name).default, args)


def test_eigh_and_svd_ops_pass_opcheck_without_autograd(gen):
    """Their backward refuses a second derivative, which opcheck's autograd test asks for."""
    s = randn(gen, 5, 5, grad=False)
    tests = ("test_schema", "test_faketensor", "test_aot_dispatch_static")
    torch.library.opcheck(torch.ops.gpula.eigh.default, (s + s.mT, False, None, "largest"),
                          test_utils=tests)
    torch.library.opcheck(torch.ops.gpula.svd.default, (s, False, None), test_utils=tests)


def test_a_gaussian_process_loss_compiles_in_one_graph_and_matches_eager(gen):
    """The GP marginal likelihood through cholesky, cho_solve and the factor's diagonal."""
    x = torch.randn(12, 2, generator=gen, dtype=F64)
    y = torch.randn(12, 1, generator=gen, dtype=F64)
    log_ls = torch.zeros((), dtype=F64, requires_grad=True)

    def nll(log_ls):
        k = torch.exp(-0.5 * torch.cdist(x, x).square() / log_ls.exp() ** 2)
        k = k + 0.1 * torch.eye(12, dtype=F64)
        c = L.cholesky(k)
        alpha = L.cho_solve((c, True), y)
        return 0.5 * (y * alpha).sum() + c.diagonal().log().sum()

    compiled = torch.compile(nll, fullgraph=True, backend="aot_eager")  # a graph break raises
    v1, v2 = nll(log_ls), compiled(log_ls)
    torch.testing.assert_close(v2, v1)
    torch.testing.assert_close(torch.autograd.grad(v2, log_ls)[0],
                               torch.autograd.grad(v1, log_ls)[0])


def test_every_function_compiles_in_one_graph(gen):
    a = well_conditioned(gen, 4, 2)
    b = randn(gen, 2, 4, 3)

    def f(a, b):
        s = a @ a.mT + torch.eye(4, dtype=F64)
        out = L.cho_solve((L.cholesky(s), True), b).sum() + L.solve(a, b).sum()
        out = out + L.solve_triangular(a.triu(), b, upper=True).sum() + L.inv(a).sum()
        out = out + L.logdet(s).sum() + L.slogdet(a).logabsdet.sum() + L.eigh(s).eigenvalues.sum()
        out = out + L.svd(a, full_matrices=False).S.sum() + L.lstsq(a, b).solution.sum()
        return out + L.qr(a).R.abs().sum()

    compiled = torch.compile(f, fullgraph=True, backend="aot_eager")
    v1, v2 = f(a, b), compiled(a, b)
    torch.testing.assert_close(v2, v1)
    for g1, g2 in zip(torch.autograd.grad(v1, (a, b)), torch.autograd.grad(v2, (a, b))):
        torch.testing.assert_close(g2, g1)


BAD = [
    (lambda: L.cholesky(torch.ones(3, 3, dtype=torch.complex128)), gl.DTypeError,
     r"\[torch.linalg.cholesky\] A has dtype torch.complex128"),
    (lambda: L.cholesky(torch.ones(3, dtype=F64)), gl.InvalidArgument,
     r"\[torch.linalg.cholesky\] A must have at least 2 dimensions"),
    (lambda: L.inv(torch.ones(3, 4, dtype=F64)), gl.InvalidArgument,
     r"\[torch.linalg.inv\] A must be square"),
    (lambda: L.solve(torch.eye(3, dtype=F64), torch.ones(4, 2, dtype=F64)), gl.InvalidArgument,
     r"\[torch.linalg.solve\] B must have 3 rows"),
    (lambda: L.solve(torch.eye(3, dtype=F64), torch.ones(3, 2, dtype=torch.float32)),
     gl.DTypeError, r"\[torch.linalg.solve\] B has dtype torch.float32, A has torch.float64"),
    (lambda: L.solve(torch.eye(3).expand(2, 3, 3), torch.ones(4, 3, 1)), gl.InvalidArgument,
     r"\[torch.linalg.solve\] the batch dimensions"),
    (lambda: L.cho_solve(torch.eye(3), torch.ones(3, 1)), gl.InvalidArgument,
     r"\[torch.linalg.cho_solve\] c_and_lower must be a \(factor, lower\) pair"),
    (lambda: L.eigh(torch.eye(3), "X"), gl.InvalidArgument, r"\[torch.linalg.eigh\] UPLO"),
    (lambda: L.qr(torch.eye(3), "full"), gl.InvalidArgument, r"\[torch.linalg.qr\] mode"),
    (lambda: L.cholesky(-torch.eye(3, dtype=F64)), gl.LinAlgError, r"positive definite"),
    (lambda: L.inv([[1.0]]), gl.DTypeError, r"\[torch.linalg.inv\] A must be a torch.Tensor"),
]


@pytest.mark.parametrize("case", range(len(BAD)))
def test_bad_calls_raise_typed_errors_naming_the_op(case):
    fn, exc, match = BAD[case]
    with pytest.raises(exc, match=match):
        fn()


def test_inputs_are_left_unchanged(gen):
    a, b = well_conditioned(gen, 4, 2).detach(), randn(gen, 2, 4, 3, grad=False)
    a0, b0 = a.clone(), b.clone()
    L.solve(a, b), L.lstsq(a, b), L.qr(a), L.svd(a), L.eigh(a), L.inv(a), L.slogdet(a)
    torch.testing.assert_close(a, a0, rtol=0, atol=0)
    torch.testing.assert_close(b, b0, rtol=0, atol=0)


@pytest.mark.gpu
def test_cuda_results_and_gradients_match_the_cpu(gen):
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device")
    a = spd(gen, 16, 3).detach()
    b = randn(gen, 3, 16, 2, grad=False)

    def loss(a, b):
        c = L.cholesky(a)
        out = L.cho_solve((c, True), b).sin().sum() + L.logdet(a).sum()
        out = out + L.solve(a, b).sum() + L.eigh(a).eigenvalues.sum()
        return out + L.svd(a, full_matrices=False).S.sum() + L.lstsq(a, b).solution.sum()

    ac, bc = a.clone().requires_grad_(), b.clone().requires_grad_()
    ag, bg = a.cuda().requires_grad_(), b.cuda().requires_grad_()
    vc, vg = loss(ac, bc), loss(ag, bg)
    torch.testing.assert_close(vg.cpu(), vc)
    for x, y in zip(torch.autograd.grad(vg, (ag, bg)), torch.autograd.grad(vc, (ac, bc))):
        assert x.is_cuda
        torch.testing.assert_close(x.cpu(), y, rtol=1e-8, atol=1e-8)
