"""Probe: where gpula.torch.nn.FusedMLP's FFN step spends its time on the GPU (issue 19).

bench_torch.py measured (H100, 2026-12-07, before the registration rework) the bf16 FFN step
T=65536 1024->4096->1024 at 7.77 ms for gpula against 5.80 for torch eager and 4.67 for its six
GEMMs alone (T=16384 4096->16384->4096: 20.13 / 19.74 / 18.12). This lists, for one forward +
backward step of each, every GPU kernel (torch.profiler, CUPTI) with its mean time and count,
so that the extra time is attributed: a cuBLASLt epilogue kernel slower than the plain GEMM of
the same shape, memsets or copies, a reduction for the bias gradient, zero-filled gradients.
It found DGELU_BGRAD run as a separate 2.27 ms epilogue kernel (H100, 2026-12-07): the backward
now uses DGELU and takes the bias gradient on the weight GEMM (gpula/torch/_ops.py).
Reports only.

    python bench/probes/probe_ffn.py [--tokens 65536 --d 1024 --h 4096]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import kernel_times  # noqa: E402


def main() -> None:
    import torch

    import gpula.torch as gt

    p = argparse.ArgumentParser()
    p.add_argument("--tokens", type=int, default=65536)
    p.add_argument("--d", type=int, default=1024)
    p.add_argument("--h", type=int, default=4096)
    args = p.parse_args()
    bf16, dev = torch.bfloat16, "cuda"
    torch.manual_seed(0)
    fused = gt.nn.FusedMLP([args.d, args.h, args.d], activation="gelu", device=dev, dtype=bf16)
    ref = torch.nn.Sequential(torch.nn.Linear(args.d, args.h),
                              torch.nn.GELU(approximate="tanh"),
                              torch.nn.Linear(args.h, args.d)).to(dev, bf16)
    x = torch.randn(args.tokens, args.d, device=dev, dtype=bf16, requires_grad=True)
    gy = torch.randn(args.tokens, args.d, device=dev, dtype=bf16)

    def step(model):
        def run():
            x.grad = None
            for q in model.parameters():
                q.grad = None
            model(x).backward(gy)
        return run

    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}; "
          f"FFN bf16 T={args.tokens} {args.d}->{args.h}->{args.d}, forward + backward")
    for name, model in (("gpula FusedMLP", fused), ("torch eager", ref)):
        rows = kernel_times(step(model))
        print(f"\n{name}: {sum(r[0] for r in rows) / 1e3:.3f} ms of kernels per step")
        print("| us per step | calls per step | kernel |")
        print("|---|---|---|")
        for us, calls, key in rows:
            print(f"| {us:.1f} | {calls:g} | {key[:110]} |")


if __name__ == "__main__":
    main()
