"""gpula.torch.optim: Muon against torch.optim.Muon step by step (same hyperparameters and
batches), its one batched orthogonalization per parameter shape; Shampoo against a float64
NumPy/SciPy reference of its update; one grouped inv_root per preconditioning step; errors."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
import numpy as np  # noqa: E402
import scipy.linalg as sl  # noqa: E402

import gpula as gl  # noqa: E402
import gpula.torch as gt  # noqa: E402

needs_muon = pytest.mark.skipif(not hasattr(torch.optim, "Muon"),
                                reason="this torch has no torch.optim.Muon to compare with")


def model(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(16, 32, bias=False), torch.nn.Tanh(),
                               torch.nn.Linear(32, 32, bias=False), torch.nn.Tanh(),
                               torch.nn.Linear(32, 32, bias=False), torch.nn.Tanh(),
                               torch.nn.Linear(32, 4, bias=False))


@needs_muon
@pytest.mark.parametrize("kw", [{}, {"nesterov": False, "weight_decay": 0.0},
                                {"adjust_lr_fn": "match_rms_adamw", "momentum": 0.9}])
def test_muon_follows_torch_optim_muon(kw, monkeypatch):
    """The optimizer's arithmetic (momentum, nesterov, weight decay, lr adjustment, one batched
    call per shape) equals torch.optim.Muon's when both orthogonalize alike: torch's
    Newton-Schulz is swapped for gpula's (itself checked against a float64 reference in
    test_linalg_optimizer_funcs.py); two bfloat16 iterations differ by ~2% a step, which ten
    steps of training amplify."""
    import torch.optim._muon as muon

    monkeypatch.setattr(muon, "_zeropower_via_newtonschulz",
                        lambda g, coefficients, steps, eps: gl.linalg.orthogonalize(
                            g, steps, coefficients, "bfloat16", eps=eps))
    ours, ref = model(0), model(0)
    opt = gt.optim.Muon(ours.parameters(), lr=0.02, **kw)
    ref_opt = torch.optim.Muon(ref.parameters(), lr=0.02, **kw)
    g = torch.Generator().manual_seed(1)
    for _ in range(10):
        x, y = torch.randn(64, 16, generator=g), torch.randn(64, 4, generator=g)
        for net, o in ((ours, opt), (ref, ref_opt)):
            o.zero_grad()
            torch.nn.functional.mse_loss(net(x), y).backward()
            o.step()
    for p, q in zip(ours.parameters(), ref.parameters()):
        torch.testing.assert_close(p, q, rtol=1e-5, atol=1e-6)


@needs_muon
def test_bfloat16_orthogonalization_is_as_accurate_as_torchs():
    """On real gradients (some with condition numbers ~1e5, whose small singular directions are
    rounding noise in bfloat16) gpula's bfloat16 Newton-Schulz stays as close to the float64
    iteration as torch.optim.Muon's own."""
    from torch.optim._muon import _zeropower_via_newtonschulz as torch_ns

    net = model(0)
    torch.nn.functional.mse_loss(net(torch.randn(64, 16)), torch.randn(64, 4)).backward()
    coefficients = (3.4445, -4.7750, 2.0315)
    for p in net.parameters():
        exact = gl.linalg.orthogonalize(p.grad.double(), dtype="float64")
        ours = gl.linalg.orthogonalize(p.grad).double()
        theirs = torch_ns(p.grad, coefficients, 5, 1e-7).double()
        err, ref_err = ((x - exact).norm() / exact.norm() for x in (ours, theirs))
        assert err <= ref_err + 0.02, (tuple(p.shape), float(err), float(ref_err))


@needs_muon
def test_same_shapes_share_one_orthogonalize_call(monkeypatch):
    net = model(0)  # two 32 x 32 layers, one 32 x 16, one 4 x 32
    calls = []
    real = gl.linalg.orthogonalize

    def spy(g, *a, **k):
        calls.append(tuple(g.shape))
        return real(g, *a, **k)

    monkeypatch.setattr(gl.linalg, "orthogonalize", spy)
    opt = gt.optim.Muon(net.parameters(), lr=0.02)
    net(torch.randn(8, 16)).sum().backward()
    opt.step()
    assert sorted(calls) == sorted([(1, 32, 16), (2, 32, 32), (1, 4, 32)])


def test_muon_reduces_the_loss_and_takes_closures():
    net = model(3)
    opt = gt.optim.Muon(net.parameters(), lr=0.02)
    x, y = torch.randn(128, 16), torch.randn(128, 4)

    def closure():
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(net(x), y)
        loss.backward()
        return loss

    first = opt.step(closure).item()
    for _ in range(30):
        last = opt.step(closure).item()
    assert last < 0.8 * first


@pytest.mark.parametrize("kw, match", [
    ({"lr": -1.0}, "lr must be >= 0"), ({"momentum": -0.1}, "momentum"),
    ({"weight_decay": -1.0}, "weight_decay"), ({"adjust_lr_fn": "x"}, "adjust_lr_fn"),
    ({"ns_steps": 100}, "ns_steps"),
])
def test_bad_hyperparameters_raise_value_errors(kw, match):
    with pytest.raises(ValueError, match=match):
        gt.optim.Muon([torch.nn.Parameter(torch.ones(2, 2))], **kw)


def test_non_matrix_parameters_are_refused():
    with pytest.raises(gl.InvalidArgument, match=r"\[torch.optim.Muon\] Muon takes 2-D"):
        gt.optim.Muon([torch.nn.Parameter(torch.ones(3))])


def reference_shampoo(ws, grads, lr, b1, b2, eps, wd, block, freq, adam_eps=1e-8):
    """Shampoo with Adam grafting in float64 NumPy, one block at a time (the docstring's
    algorithm), over a list of steps of gradients; returns the weights after each step."""
    ws = [w.copy() for w in ws]
    st = [{"m": np.zeros_like(w), "v": np.zeros_like(w), "L": {}, "R": {}, "P": {}} for w in ws]
    out = []
    for t, gs in enumerate(grads, start=1):
        for w, g, s in zip(ws, gs, st):
            s["m"] = b1 * s["m"] + (1 - b1) * g
            s["v"] = b2 * s["v"] + (1 - b2) * g * g
            m_hat, v_hat = s["m"] / (1 - b1 ** t), s["v"] / (1 - b2 ** t)
            adam = m_hat / (np.sqrt(v_hat) + adam_eps)
            d = adam.copy()
            if w.ndim == 2:
                for i in range(0, w.shape[0], block):
                    for j in range(0, w.shape[1], block):
                        key = (i, j)
                        gb = g[i:i + block, j:j + block]
                        L = s["L"].get(key, 0.0) * b2 + (1 - b2) * gb @ gb.T
                        R = s["R"].get(key, 0.0) * b2 + (1 - b2) * gb.T @ gb
                        s["L"][key], s["R"][key] = L, R
                        if (t - 1) % freq == 0:
                            s["P"][key] = tuple(
                                sl.fractional_matrix_power(x + eps * np.eye(len(x)), -0.25).real
                                for x in (L, R))
                        pl, pr = s["P"][key]
                        db = pl @ m_hat[i:i + block, j:j + block] @ pr
                        ab = adam[i:i + block, j:j + block]
                        d[i:i + block, j:j + block] = db * np.linalg.norm(ab) / np.linalg.norm(db)
            w -= lr * (d + wd * w)
        out.append([w.copy() for w in ws])
    return out


def test_shampoo_follows_its_float64_reference(rng):
    shapes = [(7, 5), (5, 5), (4,)]  # blocks of 3: a 3 x 2 grid, a 2 x 2 grid; a vector (Adam)
    ws = [rng.standard_normal(s) for s in shapes]
    grads = [[rng.standard_normal(s) for s in shapes] for _ in range(7)]
    kw = dict(lr=0.05, b1=0.9, b2=0.99, eps=1e-3, wd=0.01, block=3, freq=3)
    ref = reference_shampoo(ws, grads, **kw)
    params = [torch.nn.Parameter(torch.from_numpy(w.copy())) for w in ws]
    opt = gt.optim.Shampoo(params, lr=0.05, betas=(0.9, 0.99), epsilon=1e-3, weight_decay=0.01,
                           max_preconditioner_dim=3, precondition_frequency=3)
    for gs, want in zip(grads, ref):
        for p, g in zip(params, gs):
            p.grad = torch.from_numpy(g)
        opt.step()
        for p, w in zip(params, want):
            np.testing.assert_allclose(p.detach().numpy(), w, rtol=1e-9, atol=1e-11)


def test_shampoo_roots_every_block_in_one_grouped_call(monkeypatch):
    calls = []
    real = gl.linalg.inv_root

    def spy(a, *args, **kw):
        calls.append(len(a))
        return real(a, *args, **kw)

    monkeypatch.setattr(gl.linalg, "inv_root", spy)
    net = model(0)  # 32x16, 32x32, 32x32, 4x32 weights; blocks of 16: 2 + 4 + 4 + 2 blocks
    opt = gt.optim.Shampoo(net.parameters(), lr=0.01, max_preconditioner_dim=16,
                           precondition_frequency=2)
    for _ in range(3):
        opt.zero_grad()
        net(torch.randn(8, 16)).sum().backward()
        opt.step()
    assert calls == [24, 24]  # steps 1 and 3; L and R of 12 blocks, one call each time


def test_shampoo_reduces_the_loss_and_checks_its_arguments():
    net = model(3)
    opt = gt.optim.Shampoo(net.parameters(), lr=0.01, precondition_frequency=5)
    x, y = torch.randn(128, 16), torch.randn(128, 4)
    losses = []
    for _ in range(30):
        opt.zero_grad()
        loss = torch.nn.functional.mse_loss(net(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.8 * losses[0]
    for kw, match in [({"lr": -1.0}, "lr"), ({"betas": (0.9, 1.0)}, "betas"),
                      ({"max_preconditioner_dim": 0}, "max_preconditioner_dim"),
                      ({"precondition_frequency": 1.5}, "precondition_frequency")]:
        with pytest.raises(gl.InvalidArgument, match=match):
            gt.optim.Shampoo(net.parameters(), **kw)
