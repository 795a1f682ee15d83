"""gpula.torch.optim.Muon against torch.optim.Muon step by step (same hyperparameters and
batches), its one batched orthogonalization per parameter shape, and its errors."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
if not hasattr(torch.optim, "Muon"):
    pytest.skip("this torch has no torch.optim.Muon to compare with", allow_module_level=True)

import gpula as gl  # noqa: E402
import gpula.torch as gt  # noqa: E402


def model(seed):
    torch.manual_seed(seed)
    return torch.nn.Sequential(torch.nn.Linear(16, 32, bias=False), torch.nn.Tanh(),
                               torch.nn.Linear(32, 32, bias=False), torch.nn.Tanh(),
                               torch.nn.Linear(32, 32, bias=False), torch.nn.Tanh(),
                               torch.nn.Linear(32, 4, bias=False))


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
