#!/usr/bin/env python3
"""gpula.distributed strong scaling: cusolverMg over 1, 2, 4, 8 GPUs of one node, and the
multi-process cuSOLVERMp / cuBLASMp engines (one process per GPU; 1 rank when run plainly,
P ranks under `torchrun --nproc-per-node P` or `mpirun -n P`), against the single-GPU
gpula.linalg / gl.matmul path. Not part of bench/run_all.py (the full sizes take far longer
than the GPU script's budget); --size small runs small sizes on whatever GPUs exist.

Cases (fp64 unless noted):
  chol   solve(a, b, assume_a="pos"), a SPD n x n, b n x 1    (n = 32768, 65536; quick 4096)
  lu     solve(a, b, assume_a="gen")                           (n = 32768, 65536; quick 4096)
  eigh   eigh(a), a symmetric n x n                            (n = 32768;        quick 2048)
  gemm   bf16 matmul 32768^3: gl.matmul on 1 GPU against gl.distributed.matmul (cuBLASMp)

Peers, side by side in the same run:
  gl.linalg (1 GPU, device data)  torch CUDA tensors, the single-GPU gpula path
  gl.linalg (1 GPU, host data)    NumPy input with device="cuda": copies in and out, as mg does
  gl.distributed (G GPUs)         cusolverMg over devices [0..G-1] for G in 1, 2, 4, 8 <= count;
                                  host NumPy in and out (the staging copies are included)
  gl.distributed Mp (P ranks)     cuSOLVERMp / cuBLASMp, each rank's local piece made on its GPU
                                  (a P = pr x pc grid, blocks --block), in place; the input is
                                  restored before each timed call (not timed). Under a launcher
                                  with P > 1 only these rows run; rank 0 prints the table.

Timing: CUDA events on device 0 around each call (cusolverMg returns only when every device is
done, so the events bracket all of them), one warm-up, median over --repeats; spread is
(max - min) / median. rel_res = ||a x - b|| / (||a|| ||x||) for solves, max |a v - v w| / ||a||
for eigh, checked once per case. FLOPs: n^3/3 (Cholesky), 2n^3/3 (LU), 4n^3/3 (eigh without
counting eigenvectors' back-transformation), 2 m n k (gemm). Benchmarks never assert times.

  python3 bench/bench_distributed.py [--size small|medium|large] [--engines mg,mp]
      [--cases chol,lu,eigh,gemm] [--block 512] [--repeats 3] [--json out.json] [--out DIR]
  torchrun --nproc-per-node 8 bench/bench_distributed.py --engines mp
Sizes: small chol/lu 4096, eigh 2048, gemm 4096 (--quick is --size small); medium (default)
chol/lu 32768, eigh 8192, gemm 32768; large chol/lu 32768 and 65536, eigh 32768, gemm 32768.
Rows of an engine this build lacks (gl.distributed.has_mp() false) read n/a.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import sys
import traceback

import torch
from common import (
    NA,
    Events,
    device_time,
    fmt,
    log,
    md_table,
    save_json,
    summarize,
    today,
    write_result,
)

import gpula as gl


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
            ms, spread, _ = device_time(fn, repeats)
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
        except Exception as e:  # a failing peer reads n/a, the run goes on
            row["error"] = f"{type(e).__name__}: {e}"
            traceback.print_exc()
        log(json.dumps(row))
        rows.append(row)

    torch.cuda.empty_cache()
    return rows


def run_gemm(n, repeats):
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    rows = []
    fl = 2.0 * n**3
    for name, fn in [("gl.matmul 1 GPU", lambda: gl.matmul(a, b))]:  # the Mp row: run_mp
        row = {"case": "gemm", "n": n, "dtype": "bfloat16", "impl": name, "gpus": 1}
        try:
            ms, spread, _ = device_time(fn, repeats)
            row.update(ms=ms, spread=spread, tflops=fl / ms / 1e9)
        except Exception as e:  # the row reads n/a
            row["error"] = f"{type(e).__name__}: {e}"
        log(json.dumps(row))
        rows.append(row)
    return rows


def _grid(p):
    r = math.isqrt(p)
    while p % r:
        r -= 1
    return r, p // r


def _local_indices(d, prow, pcol, device):
    """Global row and column indices of process (prow, pcol)'s local piece."""
    def idx(n, nb, p, nprocs):
        lr = gl.distributed.numroc(n, nb, p, 0, nprocs)
        loc = torch.arange(lr, device=device, dtype=torch.int64)
        return (loc // nb) * nb * nprocs + p * nb + loc % nb
    return idx(d.m, d.mb, prow, d.nprow), idx(d.n, d.nb, pcol, d.npcol)


def _mp_matrix(case, d, prow, pcol, dtype, device):
    """This rank's column-major local piece of a deterministic global matrix: symmetric and
    diagonally dominant (SPD) for chol / eigh, general (diagonally dominant) for lu, random-like
    for gemm and right-hand sides."""
    gi, gj = _local_indices(d, prow, pcol, device)
    i = gi[:, None].to(torch.float64)
    j = gj[None, :].to(torch.float64)
    if case in ("chol", "eigh"):
        v = torch.cos(0.37 * (i + j)) + torch.cos(0.11 * (i - j).abs())
        if case == "chol":
            v = v + (gi[:, None] == gj[None, :]).to(torch.float64) * (2.0 * d.n + 1)
    elif case == "lu":
        v = torch.sin(0.7 * i + 1.3 * j) + (gi[:, None] == gj[None, :]) * (1.0 * d.n)
    else:
        v = torch.sin(0.013 * i * 7 + 0.029 * j * 3 + 0.5)
    out = torch.empty_strided(tuple(v.shape), (1, max(1, v.shape[0])), dtype=dtype, device=device)
    return out.copy_(v)


def run_mp(case, n, repeats, block):
    """One case over every rank of gl.distributed's group (cuSOLVERMp / cuBLASMp)."""
    g = gl.distributed.init()
    nr, nc = _grid(g.size)
    prow, pcol = g.rank % nr, g.rank // nr
    dev = torch.device("cuda", g.device)
    torch.cuda.set_device(dev)
    dtype = torch.bfloat16 if case == "gemm" else torch.float64
    row = {"case": case, "n": n, "dtype": str(dtype).replace("torch.", ""),
           "impl": f"gl.distributed Mp {g.size} rank(s) {nr}x{nc}", "gpus": g.size}
    try:
        if not gl.distributed.has_mp():
            raise RuntimeError("gpula built without cuSOLVERMp / cuBLASMp")
        d = gl.distributed.BlockCyclic(n, n, block, block, nr, nc)
        a0 = _mp_matrix(case, d, prow, pcol, dtype, dev)
        a = a0.clone(memory_format=torch.preserve_format)
        if case == "gemm":
            b = _mp_matrix("gemm", d, prow, pcol, dtype, dev)
            c = torch.empty_like(a)
            fn = lambda: gl.distributed.matmul(a, b, c, layout=(d, d, d))  # noqa: E731
            restore = lambda: None  # noqa: E731
            fl = 2.0 * n**3
        else:
            db = gl.distributed.BlockCyclic(n, 1, block, block, nr, nc)
            b0 = _mp_matrix("gemm", db, prow, pcol, dtype, dev)
            b = b0.clone(memory_format=torch.preserve_format)

            def restore():
                a.copy_(a0)
                b.copy_(b0)

            if case == "eigh":
                fn = lambda: gl.distributed.eigh(a, layout=d)  # noqa: E731
            else:
                fn = lambda: gl.distributed.solve(  # noqa: E731
                    a, b, "pos" if case == "chol" else "gen", lower=True, layout=(d, db))
            fl = flops(case, n)
        times, ev = [], Events()
        for k in range(repeats + 1):  # the first is the warm-up
            restore()  # in place: the input back before each call, not timed
            torch.cuda.synchronize()
            ev.record()
            out = fn()
            ms = ev.stop()
            if k:
                times.append(ms)
        ms, spread, _ = summarize(times)
        row.update(ms=ms, spread=spread, tflops=fl / ms / 1e9)
        if g.size == 1 and case in ("chol", "lu"):  # the whole matrix is local: a residual
            r = a0.to(torch.float64) @ b - b0
            row["rel_res"] = (torch.linalg.vector_norm(r)
                              / (torch.linalg.matrix_norm(a0, "fro") * torch.linalg.vector_norm(b))
                              ).item()
        elif g.size == 1 and case == "eigh":
            w, v = out
            row["rel_res"] = ((a0 @ v - v * w[None, :]).abs().max()
                              / torch.linalg.matrix_norm(a0, "fro")).item()

    except Exception as e:  # a failing engine reads n/a, the run goes on
        row["error"] = f"{type(e).__name__}: {e}"
        if g.rank == 0:
            traceback.print_exc()
    torch.cuda.empty_cache()
    if g.rank == 0:
        log(json.dumps(row))
    return [row]


def table(rows, gpu_name, count):
    lines = [f"# gpula.distributed strong scaling ({today()})", "",
             f"{count} x {gpu_name}; torch {torch.__version__}; gpula {gl.__version__}", ""]
    cells = []
    for r in rows:
        head = [r["case"], r["n"], r["dtype"], r["impl"], r["gpus"]]
        if "error" in r:
            cells.append([*head, NA, "", "", "", r["error"][:80]])
        else:
            cells.append([*head, f"{r['ms']:.1f}", f"{r['spread']:.2f}", f"{r['tflops']:.2f}",
                          fmt(r.get("rel_res"), ".1e"), fmt(r.get("speedup_vs_1gpu_host"), ".2f")])
    lines += md_table(["case", "n", "dtype", "impl", "GPUs", "median ms", "spread", "TFLOP/s",
                       "rel_res", "speedup vs 1 GPU (host data)"], cells)
    return "\n".join(lines) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="the same as --size small")
    p.add_argument("--size", choices=("small", "medium", "large"), default="medium")
    p.add_argument("--engines", default="mg,mp", help="mg (cusolverMg, 1 process), mp")
    p.add_argument("--block", type=int, default=512, help="Mp block size (mb = nb)")
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
    size = "small" if args.quick else args.size
    sizes = {
        "small": {"chol": [4096], "lu": [4096], "eigh": [2048], "gemm": [4096]},
        "medium": {"chol": [32768], "lu": [32768], "eigh": [8192], "gemm": [32768]},
        "large": {"chol": [32768, 65536], "lu": [32768, 65536], "eigh": [32768],
                  "gemm": [32768]},
    }[size]
    engines = args.engines.split(",")
    group = gl.distributed.init()
    multi = group.size > 1
    rows = []
    for case in args.cases.split(","):
        for n in sizes[case]:
            if "mg" in engines and not multi:
                log(f"== {case} n={n} over {gpus} GPUs (cusolverMg)")
                rows += run_gemm(n, args.repeats) if case == "gemm" else run_case(
                    case, n, gpus, args.repeats)
            if "mp" in engines:
                if group.rank == 0:
                    log(f"== {case} n={n} over {group.size} rank(s) (cuSOLVERMp / cuBLASMp)")
                rows += run_mp(case, n, args.repeats, args.block)
    if group.rank != 0:
        return 0
    text = table(rows, torch.cuda.get_device_name(0), count)
    print(text)
    write_result(args.out, f"distributed_{today()}_{size}.md", text)
    save_json(args.json, rows)
    for r in rows:  # summary lines
        if ("cusolverMg" in r["impl"] or "Mp" in r["impl"]) and "ms" in r:
            log(f"summary: distributed {r['case']} n={r['n']} {r['gpus']} GPU: {r['ms']:.1f} ms "
                f"({r['tflops']:.2f} TFLOP/s, x{fmt(r.get('speedup_vs_1gpu_host'), '.2f')} "
                "vs 1 GPU host data)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
