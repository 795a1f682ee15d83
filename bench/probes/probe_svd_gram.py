"""Probe: how often svd(method="auto") keeps its gram path on Gaussian 4096 x 4096 float32
matrices (fresh ones, seeds 0-7), and what the result costs and how accurate it is each time.

For each matrix: the time of gl.linalg.svd (median of 3, CUDA events, bench_linalg.gpu_time), whether the call reran
as gesvd (gpula's log), sigma_1 / sigma_n from the returned s, the reconstruction error
||a - u s vh||_F / ||a||_F and the orthogonality max(||u^H u - I||_F, ||vh vh^H - I||_F), both
in float64. Reports only.

    python bench/probes/probe_svd_gram.py [--n 4096] [--count 8]
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

import torch

import gpula as gl

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench_linalg import gpu_time  # noqa: E402  (the benchmarks' CUDA-event timer)


class Notes(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--n", type=int, default=4096)
    p.add_argument("--count", type=int, default=8)
    args = p.parse_args()
    notes = Notes()
    log = logging.getLogger("gpula")
    log.addHandler(notes)
    gl.set_log_level("debug")
    eye = torch.eye(args.n, dtype=torch.float64, device="cuda")
    print(f"svd auto, Gaussian {args.n}^2 float32 | seed | ms | path | cond | reconstruction | "
          "orthogonality")
    for seed in range(args.count):
        g = torch.Generator(device="cuda").manual_seed(seed)
        a = torch.randn(args.n, args.n, dtype=torch.float32, device="cuda", generator=g)
        notes.lines.clear()
        ms, (u, s, vh) = gpu_time(lambda: gl.linalg.svd(a), 3)
        path = "gesvd (rerun)" if any("rerunning" in m for m in notes.lines) else "gram"
        a64, u64, s64, vh64 = a.double(), u.double(), s.double(), vh.double()
        rec = float(torch.linalg.matrix_norm(a64 - (u64 * s64) @ vh64) / torch.linalg.matrix_norm(a64))
        orth = max(float(torch.linalg.matrix_norm(u64.mT @ u64 - eye)),
                   float(torch.linalg.matrix_norm(vh64 @ vh64.mT - eye)))
        print(f"| {seed} | {ms:.1f} | {path} | {float(s64[0] / s64[-1]):.2e} | {rec:.1e} | "
              f"{orth:.1e} |", flush=True)


if __name__ == "__main__":
    main()
