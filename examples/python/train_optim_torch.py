"""Train an MLP with gpula.torch.optim.Muon or Shampoo beside AdamW, same start, same batches.

--optimizer muon: the usual split, Muon for the hidden 2-D weights (the four same-shaped ones
orthogonalized in one batched call) and AdamW for the first and last layers and the biases.
--optimizer shampoo: Shampoo (Adam grafting) for every parameter, the preconditioner roots of all
blocks in one grouped call. The reference run uses AdamW for everything. A student learns a fixed
random teacher network. Exits nonzero if the final loss (mean of the last 10 steps) is worse than
AdamW's. Prints per-step times (medians).

    python examples/python/train_optim_torch.py [--optimizer muon|shampoo] [--device cuda|cpu]
        [--steps 300] [--width 256]
"""

from __future__ import annotations

import argparse
import copy
import statistics
import sys
import time

import torch

import gpula.torch as gt


def mlp(d_in: int, width: int, d_out: int, depth: int) -> torch.nn.Sequential:
    layers: list[torch.nn.Module] = [torch.nn.Linear(d_in, width), torch.nn.GELU()]
    for _ in range(depth):
        layers += [torch.nn.Linear(width, width), torch.nn.GELU()]
    layers.append(torch.nn.Linear(width, d_out))
    return torch.nn.Sequential(*layers)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--optimizer", default="muon", choices=["muon", "shampoo"])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--width", type=int, default=256)
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    dev = torch.device(args.device)
    torch.manual_seed(args.seed)
    d_in, d_out = 32, 8
    teacher = torch.nn.Sequential(torch.nn.Linear(d_in, 64), torch.nn.Tanh(),
                                  torch.nn.Linear(64, d_out)).to(dev)
    net = mlp(d_in, args.width, d_out, depth=4).to(dev)
    ref = copy.deepcopy(net)
    if args.optimizer == "muon":
        hidden = [m.weight for m in list(net)[2:-1] if isinstance(m, torch.nn.Linear)]
        rest = [q for q in net.parameters() if all(q is not h for h in hidden)]
        opts = [gt.optim.Muon(hidden, lr=0.02, weight_decay=0.0),
                torch.optim.AdamW(rest, lr=1e-3, weight_decay=0.0)]
    else:
        opts = [gt.optim.Shampoo(net.parameters(), lr=1e-3, precondition_frequency=10)]
    label = {"muon": "Muon+AdamW", "shampoo": "Shampoo"}[args.optimizer]
    ref_opt = torch.optim.AdamW(ref.parameters(), lr=1e-3, weight_decay=0.0)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    losses: dict[str, list[float]] = {"muon": [], "adamw": []}
    times: dict[str, list[float]] = {"muon": [], "adamw": []}
    for _ in range(args.steps):
        x = torch.randn(args.batch, d_in, device=dev)
        with torch.no_grad():
            y = teacher(x)
        for name, model, optimizers in (("muon", net, opts), ("adamw", ref, [ref_opt])):
            sync()
            t = time.perf_counter()
            for o in optimizers:
                o.zero_grad(set_to_none=True)
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            for o in optimizers:
                o.step()
            sync()
            times[name].append(time.perf_counter() - t)
            losses[name].append(loss.item())
    final = {k: statistics.mean(v[-10:]) for k, v in losses.items()}
    for i in sorted({0, args.steps // 2, args.steps - 1}):
        print(f"step {i:4d}: loss {label} {losses['muon'][i]:.5g}   AdamW {losses['adamw'][i]:.5g}")
    skip = min(10, args.steps - 1)
    ms = {k: statistics.median(v[skip:]) * 1e3 for k, v in times.items()}
    print(f"{args.device}, width {args.width}: step {ms['muon']:.2f} ms ({label}) "
          f"vs {ms['adamw']:.2f} ms (AdamW)")
    if final["muon"] > final["adamw"]:
        print(f"FAIL: {label}'s final loss {final['muon']:.4g} is above AdamW's {final['adamw']:.4g}")
        return 1
    print(f"OK: final loss {final['muon']:.4g} with {label}, {final['adamw']:.4g} with AdamW alone")
    return 0


if __name__ == "__main__":
    sys.exit(main())
