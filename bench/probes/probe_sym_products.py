"""Probe: do symmetric products pay on this GPU (issue 20's orthogonalize route)?

Muon's Newton-Schulz step is A = X X^T, B = c A A + b A, X = B X + a X. A and B are
symmetric, so only the blocks of one triangle need computing: split the n rows into `nb` blocks,
compute the lower blocks with one strided-batched GEMM per block diagonal (nb calls, nb(nb+1)/2
blocks: 62.5% of the FLOPs for nb=4, 56% for nb=8) and mirror them. This measures, with torch's
cuBLAS (bf16, device events, medians of 20), for X of 4096 x 11008 and a stack [16, 3072, 3072]:
  - the full product X X^T and A A;
  - the lower blocks only (the GEMMs of the route, no assembly);
  - the lower blocks plus writing them and their transposes into a full matrix (the route);
and reports the route against the full product, next to the FLOP bound. Reports only.

    python bench/probes/probe_sym_products.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import device_time  # noqa: E402


def timed(fn, reps: int = 20) -> float:
    """Median ms of fn() between CUDA events, after a warm-up call."""
    return device_time(fn, reps).ms


def lower_blocks(x: torch.Tensor, y: torch.Tensor, nb: int) -> list[torch.Tensor]:
    """For x (..., n, k) and y (..., n, k): the blocks (i + d, i) of x y^T, one strided batch per
    block diagonal d: a list of nb tensors (..., nb - d, n/nb, n/nb)."""
    *batch, n, k = x.shape
    h = n // nb
    out = []
    for d in range(nb):
        cnt = nb - d
        xs = x[..., d * h:, :].unfold(-2, h, h)[..., :cnt, :, :].transpose(-1, -2)  # (..., cnt, h, k)
        ys = y[..., : cnt * h, :].unfold(-2, h, h).transpose(-1, -2)
        out.append(torch.matmul(xs, ys.transpose(-1, -2)))
    return out


def assemble(blocks: list[torch.Tensor], n: int, out: torch.Tensor) -> torch.Tensor:
    nb = len(blocks)
    h = n // nb
    for d, blk in enumerate(blocks):
        for i in range(nb - d):
            out[..., (i + d) * h:(i + d + 1) * h, i * h:(i + 1) * h] = blk[..., i, :, :]
            if d:
                out[..., i * h:(i + 1) * h, (i + d) * h:(i + d + 1) * h] = blk[..., i, :, :].transpose(-1, -2)
    return out


def main() -> None:
    if not torch.cuda.is_available():
        print("probe_sym_products: no GPU")
        return
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    print("| case | product | full ms | nb | lower blocks ms | route ms (with mirror) | "
          "route / full | FLOP bound | max err route vs full |")
    print("|---|---|---|---|---|---|---|---|---|")
    g = torch.Generator(device="cuda").manual_seed(0)
    for name, shape in (("4096 x 11008", (4096, 11008)), ("stack 16 x 3072^2", (16, 3072, 3072))):
        x = torch.randn(*shape, device="cuda", dtype=torch.bfloat16, generator=g)
        x = x / x.float().norm(dim=(-2, -1), keepdim=True).to(x.dtype)
        a = x @ x.transpose(-1, -2)
        n = shape[-2]
        for prod, (p, q) in (("X X^T", (x, x)), ("A A", (a, a))):
            full = timed(lambda: p @ q.transpose(-1, -2))
            ref = (p @ q.transpose(-1, -2)).float()
            for nb in (2, 4, 8):
                out = torch.empty(*shape[:-1], n, device="cuda", dtype=x.dtype)
                t_blocks = timed(lambda: lower_blocks(p, q, nb))
                t_route = timed(lambda: assemble(lower_blocks(p, q, nb), n, out))
                err = (assemble(lower_blocks(p, q, nb), n, out).float() - ref).abs().max().item()
                bound = nb * (nb + 1) / 2 / nb ** 2
                print(f"| {name} | {prod} | {full:.3f} | {nb} | {t_blocks:.3f} | {t_route:.3f} | "
                      f"{t_route / full:.3f} | {bound:.3f} | {err:.2e} |")


if __name__ == "__main__":
    main()
