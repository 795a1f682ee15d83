#!/usr/bin/env python3
"""Sparse products: gpula.sparse SpMV / SpMM / SDDMM vs cupyx.scipy.sparse, torch sparse CSR and
scipy.sparse.

  python3 bench/bench_sparse_products.py [--json PATH] [--summary PATH] [--small] [--repeats N]

Matrices (CSR, int32 indices): the 2-D Poisson 5-point matrix with n = 1000^2 = 1e6 and
n = 3000^2 = 9e6 (float64), the 3-D Poisson 7-point matrix 100^3 (float64), and a power-law
random graph (Chung-Lu, degree exponent 2.2, n = 1e6, 1e7 sampled edges, float32).
--small: 100^2, 300^2, 20^3 and a graph of n = 2e4 (CPU-only runs, a check that the script works).

SpMV y = A x on every matrix: gpula on the GPU (CuPy operands, else torch), cupyx (A @ x),
torch (torch.mv on a sparse CSR tensor), and on the CPU gpula and scipy. SpMM with k = 64
dense columns and SDDMM with k = 64 on the graph: gpula, cupyx (SpMM), torch (torch.sparse.mm /
torch.sparse.sampled_addmm), CPU rows in --small only.

Timing: GPU with CUDA events around 20 back-to-back calls (time per call: the GPU's, with the
host queueing ahead as in a solver loop; bench/probes/probe_spmv.py reports the one-call latency
apart), medians over >= 20 repeats after 3 warm-up calls;
CPU wall clock (perf_counter), medians. The gpula matrix is built once outside the timed loop and
its cuSPARSE plan (kept by the csr_matrix) is reused; "first ms" is the first call on a fresh
matrix (plan creation included). gpula SDDMM makes its plan per call (no kept SDDMM plan in
Python yet). Effective bandwidth of SpMV:
  GB/s = (nnz (sizeof(val) + sizeof(idx)) + (m + 1) sizeof(idx) + (n + m) sizeof(val)) / t;
SpMM and SDDMM: GFLOP/s = 2 nnz k / t. Times are reported, never asserted.
Budget: well under 90 s on the H200 host. Peers absent (no CuPy, torch, GPU): their rows are
skipped with a note on stderr.
"""

# ruff: noqa: B023 (the closures are called inside the loop that defines them)
from __future__ import annotations

import sys
import time

import common
import numpy as np
import scipy.sparse as sps
from common import (
    NA,
    append_summary,
    arg_parser,
    cuda_torch,
    device_time,
    first_call_s,
    fmt,
    gpu_cupy,
    host_time,
    md_table,
    save_json,
    today,
)


def poisson2d(g):
    return _int32(common.poisson2d(g))


def poisson3d(g):
    return _int32(common.poisson3d(g))


def powerlaw_graph(n, edges, gamma=2.2, seed=0):
    """Chung-Lu: endpoints drawn with probability proportional to w_i = i^(-1/(gamma-1))."""
    rng = np.random.default_rng(seed)
    w = np.arange(1, n + 1, dtype=np.float64) ** (-1.0 / (gamma - 1.0))
    cdf = np.cumsum(w)
    cdf /= cdf[-1]
    perm = rng.permutation(n)
    r = perm[np.minimum(np.searchsorted(cdf, rng.random(edges)), n - 1)]
    c = perm[np.minimum(np.searchsorted(cdf, rng.random(edges)), n - 1)]
    a = sps.csr_matrix((np.ones(edges, np.float32), (r, c)), shape=(n, n))
    a.sum_duplicates()
    a.data = rng.random(a.nnz).astype(np.float32)
    return _int32(a)


def _int32(a):
    a.indices = a.indices.astype(np.int32)
    a.indptr = a.indptr.astype(np.int32)
    a.sort_indices()
    return a


def spmv_bytes(a):
    m, n = a.shape
    v, i = a.data.itemsize, 4
    return a.nnz * (v + i) + (m + 1) * i + n * v + m * v


# ---- timers ----------------------------------------------------------------------------------


def cpu_median(fn, repeats):
    """Median seconds on the host clock after one warm-up call."""
    return host_time(fn, repeats).ms / 1e3


BURST = 20


def gpu_median(fn, repeats, lib):
    """(median seconds per call over `lib`'s CUDA events around BURST back-to-back calls after 3
    warm-up calls, seconds of the first call, plan creation included): call it on a fresh
    matrix. Back to back, the host queues the next call while the GPU runs this one, as in a
    solver's loop: the time is the GPU's, not the host's latency to the first launch (which
    probe_spmv.py reports apart)."""
    first = first_call_s(fn, lib)

    def burst():
        for _ in range(BURST):
            out = fn()
        return out

    return device_time(burst, repeats, warmup=1, lib=lib).ms / 1e3 / BURST, first


def row(kind, case, impl, a, sec, metric, value, first=None, note=None):
    return {
        "kind": kind,
        "case": case,
        "impl": impl,
        "n": a.shape[0],
        "nnz": int(a.nnz),
        "ms": None if sec is None else sec * 1e3,
        "first_ms": None if first is None else first * 1e3,
        "metric": metric,
        "value": value,
        "note": note,
    }


def safe(rows, fn, kind, case, impl, a, metric):
    """Runs one measurement; a failure is reported as a row with a note, never raised."""
    try:
        rows.append(fn())
    except Exception as e:  # report, never fail the run
        print(f"{kind} {case} {impl} failed: {e!r}", file=sys.stderr)
        rows.append(row(kind, case, impl, a, None, metric, None, note=f"failed: {e!r}"[:200]))


# ---- SpMV ------------------------------------------------------------------------------------


def spmv_cases(rows, mats, repeats, cp, th):
    import gpula as gl

    for case, a in mats:
        nbytes = spmv_bytes(a)
        x = np.random.default_rng(1).standard_normal(a.shape[1]).astype(a.dtype)
        ref = a @ x
        big = a.nnz > 2e7
        cpu_rep = 3 if big else max(5, repeats // 4)

        def gbs(sec):
            return nbytes / sec / 1e9

        def scipy_cpu():
            sec = cpu_median(lambda: a @ x, cpu_rep)
            return row("spmv", case, "scipy cpu", a, sec, "GB/s", gbs(sec))

        safe(rows, scipy_cpu, "spmv", case, "scipy cpu", a, "GB/s")

        def gpula_cpu():
            t0 = time.perf_counter()
            A = gl.sparse.as_csr(a, "bench")
            y = A @ x
            first = time.perf_counter() - t0
            err = float(np.max(np.abs(y - ref)) / (np.max(np.abs(ref)) + 1e-30))
            sec = cpu_median(lambda: A @ x, cpu_rep)
            return row("spmv", case, "gpula cpu", a, sec, "GB/s", gbs(sec), first, f"err {err:.1e}")

        safe(rows, gpula_cpu, "spmv", case, "gpula cpu", a, "GB/s")

        if cp is not None:
            import cupyx.scipy.sparse as csps

            ad = csps.csr_matrix(a)
            xd = cp.asarray(x)

            def cupyx_gpu():
                sec, first = gpu_median(lambda: ad @ xd, repeats, "cupy")
                return row("spmv", case, "cupyx gpu", a, sec, "GB/s", gbs(sec), first)

            safe(rows, cupyx_gpu, "spmv", case, "cupyx gpu", a, "GB/s")

            def gpula_gpu():
                A = gl.sparse.csr_matrix((ad.data, ad.indices, ad.indptr), shape=a.shape)
                sec, first = gpu_median(lambda: A @ xd, repeats, "cupy")
                y = A @ xd
                err = float(cp.max(cp.abs(y - cp.asarray(ref))) / (np.max(np.abs(ref)) + 1e-30))
                return row(
                    "spmv", case, "gpula gpu", a, sec, "GB/s", gbs(sec), first, f"err {err:.1e}"
                )

            safe(rows, gpula_gpu, "spmv", case, "gpula gpu", a, "GB/s")
            del ad, xd
        if th is not None:
            at = torch_csr(th, a)
            xt = th.from_numpy(x).cuda()

            def mv():
                return th.mv(at, xt)

            def torch_gpu():
                sec, first = gpu_median(mv, repeats, "torch")
                return row("spmv", case, "torch gpu", a, sec, "GB/s", gbs(sec), first)

            safe(rows, torch_gpu, "spmv", case, "torch gpu", a, "GB/s")
            if cp is None:  # gpula on torch operands

                def gpula_gpu_torch():
                    A = gl.sparse.as_csr(at, "bench")
                    sec, first = gpu_median(lambda: A @ xt, repeats, "torch")
                    return row("spmv", case, "gpula gpu", a, sec, "GB/s", gbs(sec), first)

                safe(rows, gpula_gpu_torch, "spmv", case, "gpula gpu", a, "GB/s")
            del at, xt


def torch_csr(th, a):
    return th.sparse_csr_tensor(
        th.from_numpy(a.indptr.astype(np.int32)),
        th.from_numpy(a.indices.astype(np.int32)),
        th.from_numpy(a.data),
        size=a.shape,
    ).cuda()


# ---- SpMM and SDDMM on the graph ---------------------------------------------------------------


def graph_cases(rows, case, g, k, repeats, cp, th, small):
    import gpula as gl

    flops = 2.0 * g.nnz * k
    rng = np.random.default_rng(2)
    X = rng.standard_normal((g.shape[1], k)).astype(np.float32)
    H = rng.standard_normal((g.shape[0], k)).astype(np.float32)
    Ht = np.ascontiguousarray(rng.standard_normal((g.shape[1], k)).astype(np.float32).T)

    def gf(sec):
        return flops / sec / 1e9

    if small:
        A = gl.sparse.as_csr(g, "bench")
        ref = g @ X

        def gpula_cpu_spmm():
            sec = cpu_median(lambda: A @ X, 3)
            err = float(np.max(np.abs((A @ X) - ref)) / (np.max(np.abs(ref)) + 1e-30))
            return row("spmm", case, "gpula cpu", g, sec, "GFLOP/s", gf(sec), note=f"err {err:.1e}")

        safe(rows, gpula_cpu_spmm, "spmm", case, "gpula cpu", g, "GFLOP/s")

        def scipy_cpu_spmm():
            sec = cpu_median(lambda: g @ X, 3)
            return row("spmm", case, "scipy cpu", g, sec, "GFLOP/s", gf(sec))

        safe(rows, scipy_cpu_spmm, "spmm", case, "scipy cpu", g, "GFLOP/s")

        def gpula_cpu_sddmm():
            sec = cpu_median(lambda: gl.sparse.sddmm(A, H, Ht), 3)
            return row("sddmm", case, "gpula cpu", g, sec, "GFLOP/s", gf(sec))

        safe(rows, gpula_cpu_sddmm, "sddmm", case, "gpula cpu", g, "GFLOP/s")

    if cp is not None:
        import cupyx.scipy.sparse as csps

        gd = csps.csr_matrix(g)
        Xd, Hd, Htd = cp.asarray(X), cp.asarray(H), cp.asarray(Ht)

        def cupyx_spmm():
            sec, first = gpu_median(lambda: gd @ Xd, repeats, "cupy")
            return row("spmm", case, "cupyx gpu", g, sec, "GFLOP/s", gf(sec), first)

        safe(rows, cupyx_spmm, "spmm", case, "cupyx gpu", g, "GFLOP/s")

        A = gl.sparse.csr_matrix((gd.data, gd.indices, gd.indptr), shape=g.shape)

        def gpula_spmm():
            sec, first = gpu_median(lambda: A @ Xd, repeats, "cupy")
            return row("spmm", case, "gpula gpu", g, sec, "GFLOP/s", gf(sec), first)

        safe(rows, gpula_spmm, "spmm", case, "gpula gpu", g, "GFLOP/s")

        def gpula_sddmm():
            sec, first = gpu_median(lambda: gl.sparse.sddmm(A, Hd, Htd), repeats, "cupy")
            return row(
                "sddmm", case, "gpula gpu", g, sec, "GFLOP/s", gf(sec), first, "plan made per call"
            )

        safe(rows, gpula_sddmm, "sddmm", case, "gpula gpu", g, "GFLOP/s")
        del gd, Xd, Hd, Htd, A
    if th is not None:
        gt = torch_csr(th, g)
        Xt, Ht_, Htt = (th.from_numpy(v).cuda() for v in (X, H, Ht))

        def torch_spmm():
            sec, first = gpu_median(lambda: th.sparse.mm(gt, Xt), repeats, "torch")
            return row("spmm", case, "torch gpu", g, sec, "GFLOP/s", gf(sec), first)

        safe(rows, torch_spmm, "spmm", case, "torch gpu", g, "GFLOP/s")
        if hasattr(th.sparse, "sampled_addmm"):

            def sampled():
                return th.sparse.sampled_addmm(gt, Ht_, Htt, beta=0.0, alpha=1.0)

            def torch_sddmm():
                sec, first = gpu_median(sampled, repeats, "torch")
                return row("sddmm", case, "torch gpu", g, sec, "GFLOP/s", gf(sec), first)

            safe(rows, torch_sddmm, "sddmm", case, "torch gpu", g, "GFLOP/s")
        if cp is None:
            A = gl.sparse.as_csr(gt, "bench")

            def gpula_spmm_torch():
                sec, first = gpu_median(lambda: A @ Xt, repeats, "torch")
                return row("spmm", case, "gpula gpu", g, sec, "GFLOP/s", gf(sec), first)

            safe(rows, gpula_spmm_torch, "spmm", case, "gpula gpu", g, "GFLOP/s")


# ---- output ----------------------------------------------------------------------------------


def table(rows, small):
    date = today()
    lines = [f"## Sparse products, {date}{' (small sizes)' if small else ''}", ""]
    lines += md_table(
        ["op", "case", "implementation", "n", "nnz", "ms (median)", "first ms", "rate", "note"],
        [[r["kind"], r["case"], r["impl"], r["n"], r["nnz"], fmt(r["ms"], ".3f"),
          fmt(r["first_ms"], ".2f"),
          NA if r["value"] is None else f"{r['value']:.1f} {r['metric']}", r["note"] or ""]
         for r in rows],
    )
    return date, lines


def summary(rows):
    out = [
        "sparse products (SpMV GB/s, SpMM/SDDMM GFLOP/s, plan reused; ratio = gpula gpu / best"
        " GPU peer, > 1: gpula faster; reported, not asserted):"
    ]
    keys = []
    for r in rows:
        if (r["kind"], r["case"]) not in keys:
            keys.append((r["kind"], r["case"]))
    for kind, case in keys:
        group = [r for r in rows if r["kind"] == kind and r["case"] == case and r["value"]]
        if not group:
            continue
        g = next((r for r in group if r["impl"] == "gpula gpu"), None)
        gpu_peers = [r for r in group if r["impl"] in ("cupyx gpu", "torch gpu")]
        parts = [f"{r['impl'].split()[0]} {r['value']:.1f}" for r in group if r is not g]
        if g is None:
            best_cpu = max(group, key=lambda r: r["value"])
            out.append(
                f"  {kind} {case}: no gpula gpu row; "
                f"{', '.join(parts)} {group[0]['metric']} (best {best_cpu['impl']})"
            )
            continue
        best = max(gpu_peers, key=lambda r: r["value"]) if gpu_peers else None
        ratio = f"{g['value'] / best['value']:.2f}x vs {best['impl']}" if best else "no GPU peer"
        out.append(
            f"  {kind} {case} gpula gpu: {g['ms']:.3f} ms, {g['value']:.1f} "
            f"{g['metric']}, first call {fmt(g['first_ms'], '.1f')} ms "
            f"({', '.join(parts)}); {ratio}"
        )
    return out


def main(argv=None):
    p = arg_parser(__doc__, quick="same as --small (run_all.py --quick)")
    p.add_argument("--small", action="store_true", help="small sizes (CPU check of the script)")
    p.add_argument("--repeats", type=int, default=20)
    args = p.parse_args(argv)
    small = args.small or args.quick
    repeats = max(20, args.repeats) if not small else max(3, min(args.repeats, 5))
    t0 = time.time()
    cp, th = gpu_cupy(), cuda_torch()
    if small:
        mats = [
            ("poisson2d 5pt f64", poisson2d(100)),
            ("poisson2d 5pt f64", poisson2d(300)),
            ("poisson3d 7pt f64", poisson3d(20)),
            ("powerlaw graph f32", powerlaw_graph(20_000, 200_000)),
        ]
    else:
        mats = [
            ("poisson2d 5pt f64", poisson2d(1000)),
            ("poisson2d 5pt f64", poisson2d(3000)),
            ("poisson3d 7pt f64", poisson3d(100)),
            ("powerlaw graph f32", powerlaw_graph(1_000_000, 10_000_000)),
        ]
    # Distinct case names per size.
    mats = [(f"{name} n={a.shape[0]}", a) for name, a in mats]
    print(f"matrices built in {time.time() - t0:.1f} s", file=sys.stderr)
    rows = []
    spmv_cases(rows, mats, repeats, cp, th)
    graph_name, graph = mats[-1]
    graph_cases(rows, f"{graph_name} k=64", graph, 64, repeats, cp, th, small)
    date, lines = table(rows, small)
    print("\n".join(lines))
    summ = summary(rows)
    print("\n".join(summ))
    print(f"bench_sparse_products.py: {time.time() - t0:.1f} s in all", file=sys.stderr)
    save_json(args.json, {"date": date, "rows": rows, "table": lines})
    append_summary(args.summary, summ)
    return 0


if __name__ == "__main__":
    sys.exit(main())
