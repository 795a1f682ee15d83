"""Train a small MLP with gpula.torch.nn.FusedMLP and the same model in torch.nn, step by step.

A student MLP (in -> hidden -> hidden -> out, tanh-GELU) learns a fixed random teacher network by
Adam on fresh batches. Both models start from the same weights and see the same batches; each
step's loss is compared (the fused forward is one gpula call per layer, the backward GEMMs carry
the activation derivative and bias gradient in their epilogues). Exits nonzero if the losses
part by more than the dtype's tolerance, or if the gpula model misses the target loss
(--target, a fraction of the first step's loss). Prints per-step times (medians), not asserted.

    python examples/python/train_mlp_torch.py [--device cuda|cpu] [--dtype float32|bfloat16|float64]
        [--steps 200] [--batch 256] [--hidden 512] [--target 0.2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch

import gpula.torch as gt

TOL = {torch.float64: 1e-9, torch.float32: 2e-3, torch.bfloat16: 8e-2, torch.float16: 2e-2}


def torch_mlp(fused: gt.nn.FusedMLP) -> torch.nn.Sequential:
    """torch.nn's version of the same network, with a copy of its weights."""
    layers: list[torch.nn.Module] = []
    for i, lin in enumerate(fused.layers):
        ref = torch.nn.Linear(lin.in_features, lin.out_features, device=lin.weight.device,
                              dtype=lin.weight.dtype)
        ref.load_state_dict(lin.state_dict())
        layers.append(ref)
        if i < len(fused.layers) - 1:
            layers.append(torch.nn.GELU(approximate="tanh"))
    return torch.nn.Sequential(*layers)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16",
                                                          "float64"])
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--hidden", type=int, default=512)
    p.add_argument("--target", type=float, default=0.2,
                   help="final loss as a fraction of the first step's (default 0.2)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    dtype, dev = getattr(torch, args.dtype), torch.device(args.device)
    if dev.type == "cpu" and dtype in (torch.float16, torch.bfloat16):
        print(f"{args.dtype} runs on a GPU only here (the CPU backend widens it anyway)")
        return 2
    torch.manual_seed(args.seed)
    d_in, d_out = 64, 16
    teacher = torch.nn.Sequential(torch.nn.Linear(d_in, 128), torch.nn.Tanh(),
                                  torch.nn.Linear(128, d_out)).to(dev, torch.float32)
    model = gt.nn.FusedMLP([d_in, args.hidden, args.hidden, d_out], activation="gelu",
                           device=dev, dtype=dtype)
    ref = torch_mlp(model)
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    ref_opt = torch.optim.Adam(ref.parameters(), lr=1e-3)

    def step(net, optimizer, x, y):
        optimizer.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(net(x).float(), y)
        loss.backward()
        optimizer.step()
        return loss.detach()

    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    losses, ref_losses, times, ref_times = [], [], [], []
    for _ in range(args.steps):
        x = torch.randn(args.batch, d_in, device=dev)
        with torch.no_grad():
            y = teacher(x)
        x = x.to(dtype)
        for net, optimizer, out, tl in ((model, opt, losses, times),
                                        (ref, ref_opt, ref_losses, ref_times)):
            sync()
            t = time.perf_counter()
            out.append(step(net, optimizer, x, y))
            sync()
            tl.append(time.perf_counter() - t)
    losses = torch.stack(losses).cpu().double()
    ref_losses = torch.stack(ref_losses).cpu().double()
    gap = ((losses - ref_losses).abs() / ref_losses.abs().clamp_min(1e-30)).max().item()
    goal = args.target * losses[0].item()
    final = losses[-10:].mean().item()
    for i in sorted({0, 1, args.steps // 2, args.steps - 1}):
        print(f"step {i:4d}: loss gpula {losses[i].item():.6g}   torch.nn {ref_losses[i].item():.6g}")
    skip = min(10, args.steps - 1)  # the first steps include one-time setup
    ms = statistics.median(times[skip:]) * 1e3
    ref_ms = statistics.median(ref_times[skip:]) * 1e3
    print(f"{args.device} {args.dtype}, batch {args.batch}, hidden {args.hidden}: step "
          f"{ms:.3f} ms (gpula.torch.nn.FusedMLP) vs {ref_ms:.3f} ms (torch.nn), "
          f"ratio {ref_ms / ms:.2f}")
    ok = True
    if gap > TOL[dtype]:
        print(f"FAIL: the losses part by {gap:.2e} relative (tolerance {TOL[dtype]:.0e})")
        ok = False
    if not final <= goal:
        print(f"FAIL: final loss {final:.4g} above the target {goal:.4g}")
        ok = False
    if ok:
        print(f"OK: losses within {gap:.1e} of torch.nn's at every step; final loss {final:.4g} "
              f"<= target {goal:.4g}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
