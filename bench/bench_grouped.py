#!/usr/bin/env python3
"""gpula grouped (mixture-of-experts) matmul side by side with torch, on one GPU.

Cases (bf16; routed-token counts per expert from Dirichlet(0.5), fixed seed):
  moe       64 experts, 65536 routed tokens, K=4096, N=1536 (an FFN up-projection)
  moe_gelu  the same with bias + GELU: gpula's fused per-group epilogue vs grouped_mm followed by
            a separate bias add and GELU (tanh form, as gpula's)
  many      1024 experts of few tokens each (16384 tokens, K=1024, N=1024)
  mid       256 experts of ~256 tokens each (65536 tokens, K=N=2048): near the mean group size
            where gpula's "auto" switches from grouped_gemm to per_group (256 rows), to place it
Libraries: gpula planned GroupedMatmul with grouped_algo auto / grouped_gemm / per_group (host
offsets: no sync), gpula auto with the offsets on the device (one D2H copy and a wait per call),
torch F.grouped_mm (or torch._grouped_mm; the row is left out when torch has neither), a loop of
torch.matmul over the experts, and one dense GEMM of the same FLOPs ((T x K) @ (K x N)).
Timing: torch CUDA events around loops of calls in interleaved rounds (common.time_group),
medians; TFLOP/s counts 2 T K N. Each result is checked once against torch's float32 loop.

  python3 bench/bench_grouped.py [--quick] [--json PATH] [--summary PATH]
"""
from __future__ import annotations

import argparse

import numpy as np

from common import (append_summary, gpula_description, group_rows, log, save_json,
                    time_group, versions)

LIBS = ("gpula auto", "gpula grouped_gemm", "gpula per_group", "gpula auto (device offsets)",
        "torch grouped_mm", "torch loop", "dense GEMM")


def counts(experts, tokens, seed=0):
    rng = np.random.default_rng(seed)
    return rng.multinomial(tokens, rng.dirichlet(np.full(experts, 0.5)))


def grouped_mm_fn(torch):
    f = getattr(torch.nn.functional, "grouped_mm", None)
    return f if f is not None else getattr(torch, "_grouped_mm", None)


def run_case(name, e, t, k, n, gelu, repeats, target_ms):
    import torch

    import gpula as gl

    dev, bf = "cuda", torch.bfloat16
    cnt = counts(e, t)
    ends = np.cumsum(cnt).astype(np.int32)
    gen = torch.Generator(device=dev).manual_seed(1)
    a = torch.randn(t, k, device=dev, dtype=bf, generator=gen)
    b = torch.randn(e, k, n, device=dev, dtype=bf, generator=gen) / k**0.5
    bias = torch.randn(e, n, device=dev, dtype=bf, generator=gen)
    offs_dev = torch.from_numpy(ends).to(dev)
    row_bias = bias.repeat_interleave(torch.from_numpy(cnt).to(dev), dim=0)
    flops = 2.0 * t * k * n
    epilog = "GELU_BIAS" if gelu else None
    inputs = {"bias": bias} if gelu else None

    def post(y):
        return torch.nn.functional.gelu(y + row_bias, approximate="tanh") if gelu else y

    fns, notes, plans = {}, {}, []
    for label, algo, offs in (("gpula auto", "auto", ends), ("gpula grouped_gemm", "grouped_gemm", ends),
                              ("gpula per_group", "per_group", ends),
                              ("gpula auto (device offsets)", "auto", offs_dev)):
        try:
            g = gl.GroupedMatmul(a, b, grouped_algo=algo)
            g.plan(epilog=epilog, epilog_inputs=inputs)
            plans.append(g)
            fns[label] = (lambda g, o: lambda i: g.execute(offsets=o))(g, offs)
            notes[label] = g.algorithm
        except gl.Error as exc:
            notes[label] = f"n/a: {exc}"
    gmm = grouped_mm_fn(torch)
    if gmm is not None:
        fns["torch grouped_mm"] = lambda i: post(gmm(a, b, offs=offs_dev))
        notes["torch grouped_mm"] = "+ bias, GELU" if gelu else ""
    bounds = [0, *ends.tolist()]

    def loop(i):
        out = torch.empty(t, n, device=dev, dtype=bf)
        for g_ in range(e):
            s0, s1 = bounds[g_], bounds[g_ + 1]
            if s1 > s0:
                torch.matmul(a[s0:s1], b[g_], out=out[s0:s1])
        return post(out)

    fns["torch loop"] = loop
    w = b[0]
    fns["dense GEMM"] = lambda i: torch.matmul(a, w)
    notes["dense GEMM"] = "(T x K) @ (K x N), same FLOPs"

    # Correctness, once: every grouped result against torch's float32 loop.
    ref = torch.cat([a[bounds[g_]:bounds[g_ + 1]].float() @ b[g_].float() for g_ in range(e)])
    if gelu:
        ref = torch.nn.functional.gelu(ref + row_bias.float(), approximate="tanh")
    errs = {}
    for lib, fn in fns.items():
        if lib == "dense GEMM":
            continue
        try:
            y = fn(0).float()
            errs[lib] = float(torch.linalg.norm(y - ref) / torch.linalg.norm(ref))
        except Exception as exc:  # noqa: BLE001
            errs[lib] = float("nan")
            log(f"{name} {lib}: {exc}")
    times = time_group(fns, target_ms=target_ms, repeats=repeats)
    head = {"case": name, "experts": e, "tokens": t, "k": k, "n": n}
    rows = group_rows(LIBS, times, notes, head, flops,
                      lambda lib, ms: {"rel_err": errs.get(lib)})
    for g in plans:
        g.free()
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="fewer rounds, smaller cases")
    p.add_argument("--json")
    p.add_argument("--summary")
    args = p.parse_args()
    try:
        import torch
    except ImportError:
        torch = None
    if torch is None or not torch.cuda.is_available():
        append_summary(args.summary, ["grouped: n/a (no CUDA device or no torch)"])
        return
    repeats, target = (3, 20.0) if args.quick else (7, 60.0)
    scale = 4 if args.quick else 1
    cases = [("moe", 64, 65536 // scale, 4096, 1536, False),
             ("moe_gelu", 64, 65536 // scale, 4096, 1536, True),
             ("many", 1024, 16384 // scale, 1024, 1024, False),
             ("mid", 256, 65536 // scale, 2048, 2048, False)]
    rows = []
    log(gpula_description())
    for name, e, t, k, n, gelu in cases:
        case_rows = run_case(name, e, t, k, n, gelu, repeats, target)
        rows += case_rows
        by = {r["lib"]: r for r in case_rows}
        for r in case_rows:
            log(f"{name:9s} {r['lib']:28s} " + (f"{r['ms']:8.3f} ms {r['tflops']:7.1f} TFLOP/s "
                                                  f"spread {r['spread']:.2f} err {r.get('rel_err')}"
                                                  if "ms" in r else r.get("error", "")))
        ours, peer = by.get("gpula auto", {}), by.get("torch grouped_mm", {})
        line = f"grouped {name}: gpula auto " + (f"{ours['ms']:.3f} ms" if "ms" in ours else "n/a")
        if "ms" in peer and "ms" in ours:
            line += f", grouped_mm {peer['ms']:.3f} ms ({peer['ms'] / ours['ms']:.2f}x)"
        dense = by.get("dense GEMM", {})
        if "ms" in dense and "ms" in ours:
            line += f", dense GEMM {dense['ms']:.3f} ms ({ours['ms'] / dense['ms']:.2f}x of dense)"
        append_summary(args.summary, [line])
    save_json(args.json, {"rows": rows, "versions": versions()})


if __name__ == "__main__":
    main()
