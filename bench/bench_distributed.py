#!/usr/bin/env python3
"""gpula.distributed strong scaling: cusolverMg over 1, 2, 4, 8 GPUs of one node against the
single-GPU gpula.linalg path, in one process. Not part of bench/run_all.py (the full sizes take
far longer than the GPU script's budget); --quick runs small sizes on whatever GPUs exist.

Cases (fp64 unless noted):
  chol   solve(a, b, assume_a="pos"), a SPD n x n, b n x 1    (n = 32768, 65536; quick 4096)
  lu     solve(a, b, assume_a="gen")                           (n = 32768, 65536; quick 4096)
  eigh   eigh(a), a symmetric n x n                            (n = 32768;        quick 2048)
  gemm   bf16 matmul 32768^3 over cuBLASMp: gl.distributed.matmul is not implemented yet, so
         its rows read n/a (the single-GPU gl.matmul number is still given as the baseline)

Peers, side by side in the same run:
  gl.linalg (1 GPU, device data)  torch CUDA tensors, the single-GPU gpula path
  gl.linalg (1 GPU, host data)    NumPy input with device="cuda": copies in and out, as mg does
  gl.distributed (G GPUs)         cusolverMg over devices [0..G-1] for G in 1, 2, 4, 8 <= count;
                                  host NumPy in and out (the staging copies are included)

Timing: CUDA events on device 0 around each call (cusolverMg returns only when every device is
done, so the events bracket all of them), one warm-up, median over --repeats; spread is
(max - min) / median. rel_res = ||a x - b|| / (||a|| ||x||) for solves, max |a v - v w| / ||a||
for eigh, checked once per case. FLOPs: n^3/3 (Cholesky), 2n^3/3 (LU), 4n^3/3 (eigh without
counting eigenvectors' back-transformation), 2 m n k (gemm). Benchmarks never assert times.

  python3 bench/bench_distributed.py [--quick] [--cases chol,lu,eigh,gemm] [--repeats 3]
                                     [--json out.json] [--out bench/results]
The cuSOLVERMp / cuBLASMp rows (mpirun -n P python3 bench/bench_distributed.py ...) will come
with those engines; today every rank count above 1 reads n/a.
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import statistics
import sys
import traceback

import numpy as np
import torch

import gpula as gl

NA = "n/a"


def log(*args):
    print(*args, flush=True)


def time_call(fn, repeats):
    """Median and spread in ms of fn() bracketed by CUDA events on device 0, after a warm-up."""
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    med = statistics.median(times)
    return med, (max(times) - min(times)) / med if med else 0.0


def make_inputs(case, n, seed=0):
    """Host float64 a (SPD for chol, symmetric for eigh, general for lu) and b, built on the GPU."""
    g = torch.Generator(device="cuda").manual_seed(seed)
    a = torch.randn(n, n, device="cuda", dtype=torch.float64, generator=g)
    if case == "chol":
        a = a @ a.T / n + torch.eye(n, device="cuda", dtype=torch.float64)
    elif case == "eigh":
        a = (a + a.T) / 2
    b = torch.randn(n, 1, device="cuda", dtype=torch.float64, generator=g)
    return a, b


def residual(case, a, b, out):
    a = torch.as_tensor(a, device="cuda")
    na = torch.linalg.matrix_norm(a, ord=2 if a.shape[0] <= 4096 else "fro").item()
    if case == "eigh":
        w, v = (torch.as_tensor(x, device="cuda") for x in out)
        return (a @ v - v * w[None, :]).abs().max().item() / na
    x = torch.as_tensor(out, device="cuda")
    r = torch.linalg.vector_norm(a @ x - torch.as_tensor(b, device="cuda")).item()
    return r / (na * torch.linalg.vector_norm(x).item())


def flops(case, n):
    return {"chol": n**3 / 3, "lu": 2 * n**3 / 3, "eigh": 4 * n**3 / 3}[case]


def run_case(case, n, gpus, repeats):
    rows = []
    a_dev, b_dev = make_inputs(case, n)
    a_host, b_host = a_dev.cpu().numpy(), b_dev.cpu().numpy()
    fl = flops(case, n)

    def single_device():
        if case == "eigh":
            return gl.linalg.eigh(a_dev)
        return gl.linalg.solve(a_dev, b_dev, assume_a="pos" if case == "chol" else "gen")

    def single_host():
        if case == "eigh":
            return gl.linalg.eigh(a_host, device="cuda")
        return gl.linalg.solve(
            a_host, b_host, assume_a="pos" if case == "chol" else "gen", device="cuda"
        )

    peers = [("gl.linalg 1 GPU (device data)", 1, single_device),
             ("gl.linalg 1 GPU (host data)", 1, single_host)]
    for g in gpus:
        devs = list(range(g))

        def mg(devs=devs):
            if case == "eigh":
                return gl.distributed.eigh(a_host, devices=devs)
            return gl.distributed.solve(
                a_host, b_host, assume_a="pos" if case == "chol" else "gen", devices=devs
            )

        peers.append((f"gl.distributed cusolverMg {g} GPU", g, mg))
    base = None
    for name, g, fn in peers:
        row = {"case": case, "n": n, "dtype": "float64", "impl": name, "gpus": g}
        try:
            ms, spread = time_call(fn, repeats)
            out = fn()
            if case != "eigh" and isinstance(out, torch.Tensor):
                out = out.cpu().numpy()
            if case == "eigh":
                out = tuple(o.cpu().numpy() if isinstance(o, torch.Tensor) else o for o in out)
            row.update(ms=ms, spread=spread, tflops=fl / ms / 1e9,
                       rel_res=residual(case, a_host, b_host, out))
            if name.endswith("(host data)"):
                base = ms
            if base and "cusolverMg" in name:
                row["speedup_vs_1gpu_host"] = base / ms
        except Exception as e:  # noqa: BLE001 - a failing peer reads n/a, the run goes on
            row["error"] = f"{type(e).__name__}: {e}"
            traceback.print_exc()
        log(json.dumps(row))
        rows.append(row)
    del a_dev, b_dev
    torch.cuda.empty_cache()
    return rows


def run_gemm(n, repeats):
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    rows = []
    fl = 2.0 * n**3
    for name, fn in [("gl.matmul 1 GPU", lambda: gl.matmul(a, b)),
                     ("gl.distributed.matmul cuBLASMp", lambda: gl.distributed.matmul(a, b))]:
        row = {"case": "gemm", "n": n, "dtype": "bfloat16", "impl": name, "gpus": 1}
        try:
            ms, spread = time_call(fn, repeats)
            row.update(ms=ms, spread=spread, tflops=fl / ms / 1e9)
        except Exception as e:  # noqa: BLE001
            row["error"] = f"{type(e).__name__}: {e}"
        log(json.dumps(row))
        rows.append(row)
    return rows


def fmt(x, spec):
    return NA if x is None else format(x, spec)


def table(rows, gpu_name, count):
    today = datetime.date.today().isoformat()
    lines = [f"# gpula.distributed strong scaling ({today})", "",
             f"{count} x {gpu_name}; torch {torch.__version__}; gpula {gl.__version__}", "",
             "| case | n | dtype | impl | GPUs | median ms | spread | TFLOP/s | rel_res | "
             "speedup vs 1 GPU (host data) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['case']} | {r['n']} | {r['dtype']} | {r['impl']} | {r['gpus']} "
                         f"| n/a | | | | {r['error'][:80]} |")
            continue
        lines.append(f"| {r['case']} | {r['n']} | {r['dtype']} | {r['impl']} | {r['gpus']} | "
                     f"{r['ms']:.1f} | {r['spread']:.2f} | {r['tflops']:.2f} | "
                     f"{fmt(r.get('rel_res'), '.1e')} | "
                     f"{fmt(r.get('speedup_vs_1gpu_host'), '.2f')} |")
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="small sizes (one GPU in minutes)")
    p.add_argument("--cases", default="chol,lu,eigh,gemm")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--json", default=None)
    p.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results"))
    args = p.parse_args()
    if not torch.cuda.is_available():
        log("bench_distributed: no CUDA device; nothing to time")
        return 0
    count = torch.cuda.device_count()
    gpus = [g for g in (1, 2, 4, 8) if g <= count]
    sizes = {"chol": [4096] if args.quick else [32768, 65536],
             "lu": [4096] if args.quick else [32768, 65536],
             "eigh": [2048] if args.quick else [32768],
             "gemm": [4096] if args.quick else [32768]}
    rows = []
    for case in args.cases.split(","):
        for n in sizes[case]:
            log(f"== {case} n={n} over {gpus} GPUs")
            rows += run_gemm(n, args.repeats) if case == "gemm" else run_case(
                case, n, gpus, args.repeats)
    text = table(rows, torch.cuda.get_device_name(0), count)
    print(text)
    os.makedirs(args.out, exist_ok=True)
    name = f"distributed_{datetime.date.today().isoformat()}{'_quick' if args.quick else ''}.md"
    with open(os.path.join(args.out, name), "w") as f:
        f.write(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    for r in rows:  # summary lines
        if "cusolverMg" in r["impl"] and "ms" in r:
            log(f"summary: distributed {r['case']} n={r['n']} {r['gpus']} GPU: {r['ms']:.1f} ms "
                f"({r['tflops']:.2f} TFLOP/s, x{fmt(r.get('speedup_vs_1gpu_host'), '.2f')} "
                "vs 1 GPU host data)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
