"""Fit a Gaussian process's hyperparameters by Adam through gpula.torch.linalg, beside torch.linalg.

The negative log marginal likelihood of n noisy samples of a 2-D function,

    NLL = 1/2 y^T K^-1 y + 1/2 log|K| + n/2 log(2 pi),   K = s^2 exp(-|x - x'|^2 / 2 l^2) + e^2 I,

is minimised over (log l, log s, log e) by Adam, once with gpula.torch.linalg.cholesky,
cho_solve and logdet and once with torch.linalg.cholesky, torch.cholesky_solve and torch.logdet,
from the same start. Exits nonzero if the two runs' losses or hyperparameters part by more than
the tolerance at any step, or if the NLL does not fall. Prints per-step times (medians).

    python examples/python/gp_train_torch.py [--device cuda|cpu] [--n 2000] [--steps 50]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time

import torch

import gpula.torch as gt


def data(n: int, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    x = torch.rand(n, 2, generator=g, dtype=torch.float64) * 4 - 2
    y = torch.sin(2 * x[:, :1]) * torch.cos(x[:, 1:]) + 0.1 * torch.randn(n, 1, generator=g,
                                                                          dtype=torch.float64)
    return x.to(device), y.to(device)


def nll(params: torch.Tensor, x: torch.Tensor, y: torch.Tensor, lib: str) -> torch.Tensor:
    log_l, log_s, log_e = params.unbind()
    k = (2 * log_s).exp() * torch.exp(-0.5 * torch.cdist(x, x).square() / (2 * log_l).exp())
    k = k + (2 * log_e).exp() * torch.eye(x.shape[0], dtype=x.dtype, device=x.device)
    if lib == "gpula":
        c = gt.linalg.cholesky(k)
        alpha = gt.linalg.cho_solve((c, True), y)
        logdet = gt.linalg.logdet(k)
    else:
        c = torch.linalg.cholesky(k)
        alpha = torch.cholesky_solve(y, c)
        logdet = torch.logdet(k)
    return 0.5 * (y * alpha).sum() + 0.5 * logdet + 0.5 * x.shape[0] * math.log(2 * math.pi)


def fit(x, y, lib: str, steps: int, sync) -> tuple[list[float], list[torch.Tensor], list[float]]:
    params = torch.tensor([0.0, 0.0, -1.0], dtype=torch.float64, device=x.device,
                          requires_grad=True)
    opt = torch.optim.Adam([params], lr=0.05)
    losses, path, times = [], [], []
    for _ in range(steps):
        sync()
        t = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = nll(params, x, y, lib)
        loss.backward()
        opt.step()
        sync()
        times.append(time.perf_counter() - t)
        losses.append(loss.item())
        path.append(params.detach().clone())
    return losses, path, times


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    p.add_argument("--n", type=int, default=2000)
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--tol", type=float, default=1e-8, help="relative (default 1e-8)")
    args = p.parse_args()
    dev = torch.device(args.device)
    x, y = data(args.n, dev)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    runs = {lib: fit(x, y, lib, args.steps, sync) for lib in ("gpula", "torch")}
    (lg, pg, tg), (lt, pt, tt) = runs["gpula"], runs["torch"]
    loss_gap = max(abs(a - b) / abs(b) for a, b in zip(lg, lt))
    param_gap = max((a - b).abs().max().item() for a, b in zip(pg, pt))
    for i in sorted({0, args.steps // 2, args.steps - 1}):
        ls, ss, es = pg[i].exp().tolist()
        print(f"step {i:3d}: NLL gpula {lg[i]:.10g}  torch {lt[i]:.10g}   "
              f"l {ls:.4f} s {ss:.4f} noise {es:.4f}")
    skip = min(3, args.steps - 1)
    ms, ref_ms = (statistics.median(t[skip:]) * 1e3 for t in (tg, tt))
    print(f"{args.device}, n = {args.n}: step {ms:.2f} ms (gpula.torch.linalg) vs {ref_ms:.2f} ms "
          f"(torch.linalg), ratio {ref_ms / ms:.2f}")
    ok = True
    if loss_gap > args.tol or param_gap > args.tol:
        print(f"FAIL: the runs part: NLL by {loss_gap:.2e} relative, hyperparameters by "
              f"{param_gap:.2e} (tolerance {args.tol:.0e})")
        ok = False
    if not lg[-1] < lg[0]:
        print(f"FAIL: the NLL did not fall ({lg[0]:.6g} -> {lg[-1]:.6g})")
        ok = False
    if ok:
        print(f"OK: NLL {lg[0]:.6g} -> {lg[-1]:.6g}; the runs agree to {max(loss_gap, param_gap):.1e}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
