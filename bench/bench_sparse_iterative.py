#!/usr/bin/env python3
"""Iterative solvers: gpula.sparse.linalg vs scipy.sparse.linalg (CPU) and cupyx (GPU).

  python3 bench/bench_sparse_iterative.py [--json PATH] [--summary PATH] [--quick]

Cases: CG to rtol 1e-8 on the 2-D Poisson 5-point matrix (CPU: n = 316^2 ~ 1e5; GPU peer
cupyx.scipy.sparse.linalg.cg: n = 1000^2 = 1e6), with M = None / jacobi / ic0 for gpula;
GMRES(30) and BiCGSTAB with ilu0 on a nonsymmetric 2-D convection-diffusion matrix (n ~ 1e5);
CG on the 3-D Poisson 7-point matrix 100^3 (gpula and scipy on the CPU, cupyx on the GPU).
gpula on the GPU: cg with M None / jacobi / ic0 (ic0's triangular solves by 1, 2 (default) or
3 Jacobi sweeps; exact SpSV at the quick size only); ic0 times include the cuSPARSE csric02
factorization, done once per solve. Timed runs have no callback (a callback forces a sync per
iteration); the iteration counts come from one more, untimed run with a counting callback.
GMRES(30), BiCGSTAB (M None / jacobi) on the convection-diffusion matrix 700^2 and MINRES on
the 2-D Poisson matrix 700^2, beside cupyx's gmres and minres where CuPy has them.
Timing: CPU wall clock (perf_counter), GPU CUDA events; medians over repeats after a warm-up.
Each row reports iterations and the true relative residual ||b - A x|| / ||b||.
Budget: ~90 s on the H200 host (16 cores). Times are reported, never asserted.
"""

# ruff: noqa: B023 (the lambdas are called inside the loop that defines them)
from __future__ import annotations

import argparse
import datetime
import json
import statistics
import sys
import time

import numpy as np
import scipy.sparse as sps
import scipy.sparse.linalg as ssl


def poisson2d(g):
    t = sps.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(g, g))
    i = sps.identity(g)
    return (sps.kron(i, t) + sps.kron(t, i)).tocsr()


def poisson3d(g):
    t = sps.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(g, g))
    i = sps.identity(g)
    return (
        sps.kron(sps.kron(i, i), t) + sps.kron(sps.kron(i, t), i) + sps.kron(sps.kron(t, i), i)
    ).tocsr()


def convection_diffusion(g, peclet=20.0):
    h = 1.0 / (g + 1)
    c = peclet * h / 2.0
    t = sps.diags([-1.0 - c, 2.0, -1.0 + c], [-1, 0, 1], shape=(g, g))
    i = sps.identity(g)
    return (sps.kron(i, t) + sps.kron(t, i)).tocsr()


def counted(fn, repeats):
    """Median seconds, and (x, info, iterations) of the last run."""
    times, out = [], None
    for _ in range(repeats + 1):
        its = [0]
        t0 = time.perf_counter()
        x, info = fn(lambda xk: its.__setitem__(0, its[0] + 1))
        times.append(time.perf_counter() - t0)
        out = (x, info, its[0])
    return statistics.median(times[1:]), out


def rel(a, x, b):
    return float(np.linalg.norm(b - a @ x) / np.linalg.norm(b))


def row(case, impl, n, sec, x, info, its, a, b):
    return {
        "case": case,
        "impl": impl,
        "n": n,
        "ms": sec * 1e3,
        "iterations": its,
        "info": int(info),
        "residual": rel(a, np.asarray(x), b),
    }


def cpu_cases(rows, quick, repeats):
    import gpula.sparse.linalg as gsl

    g = 100 if quick else 316
    a = poisson2d(g)
    b = np.ones(a.shape[0])
    for M in (None, "jacobi", "ic0"):
        sec, (x, info, its) = counted(
            lambda cb: gsl.cg(a, b, rtol=1e-8, M=M, callback=cb, maxiter=20000), repeats
        )
        rows.append(row("cg poisson2d", f"gpula cpu M={M}", a.shape[0], sec, x, info, its, a, b))
    sec, (x, info, its) = counted(
        lambda cb: ssl.cg(a, b, rtol=1e-8, callback=cb, maxiter=20000), repeats
    )
    rows.append(row("cg poisson2d", "scipy cpu", a.shape[0], sec, x, info, its, a, b))

    cd = convection_diffusion(g)
    bc = np.ones(cd.shape[0])
    for name, gfn, sfn in (
        ("gmres(30)", gsl.gmres, ssl.gmres),
        ("bicgstab", gsl.bicgstab, ssl.bicgstab),
    ):
        kw = {"restart": 30} if name.startswith("gmres") else {}
        sec, (x, info, its) = counted(
            lambda cb: gfn(cd, bc, rtol=1e-8, M="ilu0", callback=cb, maxiter=2000, **kw), repeats
        )
        rows.append(
            row(f"{name} conv-diff", "gpula cpu M=ilu0", cd.shape[0], sec, x, info, its, cd, bc)
        )
        sec, (x, info, its) = counted(
            lambda cb: gfn(cd, bc, rtol=1e-8, callback=cb, maxiter=2000, **kw), repeats
        )
        rows.append(
            row(f"{name} conv-diff", "gpula cpu M=None", cd.shape[0], sec, x, info, its, cd, bc)
        )
        if name.startswith("gmres"):
            kw["callback_type"] = "x"
        sec, (x, info, its) = counted(
            lambda cb: sfn(cd, bc, rtol=1e-8, callback=cb, maxiter=2000, **kw), repeats
        )
        rows.append(
            row(f"{name} conv-diff", "scipy cpu M=None", cd.shape[0], sec, x, info, its, cd, bc)
        )

    a3 = poisson3d(40 if quick else 100)
    b3 = np.ones(a3.shape[0])
    for M in (None, "ic0"):
        sec, (x, info, its) = counted(lambda cb: gsl.cg(a3, b3, rtol=1e-8, M=M, callback=cb), 1)
        rows.append(row("cg poisson3d", f"gpula cpu M={M}", a3.shape[0], sec, x, info, its, a3, b3))
    sec, (x, info, its) = counted(lambda cb: ssl.cg(a3, b3, rtol=1e-8, callback=cb), 1)
    rows.append(row("cg poisson3d", "scipy cpu", a3.shape[0], sec, x, info, its, a3, b3))


def gpu_cases(rows, quick, repeats):
    try:
        import cupy as cp
        import cupyx.scipy.sparse as csps
        import cupyx.scipy.sparse.linalg as csl

        cp.cuda.runtime.getDeviceCount()
    except Exception as e:  # no CuPy or no GPU
        print(f"cupyx peer skipped: {e}", file=sys.stderr)
        return
    import gpula.sparse.linalg as gsl

    def cupyx_cg(ad, bd, cb=None):
        try:
            return csl.cg(ad, bd, tol=1e-8, maxiter=20000, callback=cb)
        except TypeError:  # newer CuPy: rtol
            return csl.cg(ad, bd, rtol=1e-8, maxiter=20000, callback=cb)

    def timed(fn):
        times, x, info = [], None, None
        for _ in range(repeats + 1):
            s, e = cp.cuda.Event(), cp.cuda.Event()
            s.record()
            x, info = fn()
            e.record()
            e.synchronize()
            times.append(cp.cuda.get_elapsed_time(s, e) / 1e3)
        return statistics.median(times[1:]) * 1e3, x, info

    def counted_once(fn):  # one more, untimed run whose callback counts the iterations
        its = [0]
        fn(lambda xk: its.__setitem__(0, its[0] + 1))
        return its[0]

    # gpula variants: M, triangular_sweeps (ic0's triangular solves: Jacobi sweeps; 0 exact,
    # level-scheduled SpSV, only at the quick size: ~5 s per solve at n = 1e6).
    variants = [(None, None), ("jacobi", None), ("ic0", 1), ("ic0", None), ("ic0", 3)]
    if quick:
        variants.append(("ic0", 0))
    for case, a in (
        ("cg poisson2d", poisson2d(300 if quick else 1000)),
        ("cg poisson3d", poisson3d(40 if quick else 100)),
    ):
        ad = csps.csr_matrix(a)
        bd = cp.ones(a.shape[0])
        ms, x, info = timed(lambda: cupyx_cg(ad, bd))
        r = float(cp.linalg.norm(bd - ad @ x) / cp.linalg.norm(bd))
        rows.append(
            {
                "case": case,
                "impl": "cupyx gpu",
                "n": a.shape[0],
                "ms": ms,
                "iterations": counted_once(lambda cb: cupyx_cg(ad, bd, cb)),
                "info": int(info),
                "residual": r,
            }
        )
        for M, ts in variants:
            impl = f"gpula gpu M={M}" + ("" if ts is None else f" triangular_sweeps={ts}")
            if M == "ic0" and ts is None:
                impl += " (default: 2 sweeps)"

            def run(cb=None):
                return gsl.cg(ad, bd, rtol=1e-8, maxiter=20000, M=M, callback=cb,
                              triangular_sweeps=ts)

            try:
                ms, x, info = timed(run)
                r = float(cp.linalg.norm(bd - ad @ x) / cp.linalg.norm(bd))
                rows.append(
                    {
                        "case": case,
                        "impl": impl,
                        "n": a.shape[0],
                        "ms": ms,
                        "iterations": counted_once(run),
                        "info": int(info),
                        "residual": r,
                    }
                )
            except Exception as e:  # report, never fail the run
                print(f"gpula gpu cg {impl} failed: {e!r}", file=sys.stderr)
                rows.append(
                    {
                        "case": case,
                        "impl": impl,
                        "n": a.shape[0],
                        "ms": None,
                        "iterations": None,
                        "info": None,
                        "residual": None,
                    }
                )


def gpu_time(fn, repeats):
    """Median seconds over CUDA events after a warm-up, and the last (x, info)."""
    import cupy as cp

    times, out = [], None
    for _ in range(repeats + 1):
        s, e = cp.cuda.Event(), cp.cuda.Event()
        s.record()
        out = fn()
        e.record()
        e.synchronize()
        times.append(cp.cuda.get_elapsed_time(s, e) / 1e3)
    return statistics.median(times[1:]), out


def gpu_krylov_cases(rows, quick, repeats):
    """gpula's device-resident gmres / bicgstab / minres, and cupyx's gmres / minres."""
    import cupy as cp
    import cupyx.scipy.sparse as csps
    import cupyx.scipy.sparse.linalg as csl

    import gpula.sparse.linalg as gsl

    g = 300 if quick else 700  # GMRES(30) without M needs many cycles at 1000^2
    cd, pd = convection_diffusion(g), poisson2d(g)
    runs = []
    for M in (None, "jacobi"):
        runs.append(
            ("gmres(30) conv-diff", f"gpula gpu M={M}", cd, gsl.gmres, {"restart": 30, "M": M})
        )
        runs.append(("bicgstab conv-diff", f"gpula gpu M={M}", cd, gsl.bicgstab, {"M": M}))
        runs.append(("minres poisson2d", f"gpula gpu M={M}", pd, gsl.minres, {"M": M}))
    runs.append(("gmres(30) conv-diff", "cupyx gpu", cd, csl.gmres, {"restart": 30}))
    runs.append(("minres poisson2d", "cupyx gpu", pd, getattr(csl, "minres", None), {}))
    for case, impl, a, fn, kw in runs:
        ad, bd = csps.csr_matrix(a), cp.ones(a.shape[0])
        r = {"case": case, "impl": impl, "n": a.shape[0], "ms": None, "iterations": None}
        r.update({"info": None, "residual": None})
        try:
            if fn is None:
                raise RuntimeError("not in this CuPy")
            maxiter = 500 if case.startswith("gmres") else 20000
            try:
                sec, (x, info) = gpu_time(
                    lambda: fn(ad, bd, rtol=1e-8, maxiter=maxiter, **kw), repeats
                )
            except TypeError:  # older CuPy: tol
                sec, (x, info) = gpu_time(
                    lambda: fn(ad, bd, tol=1e-8, maxiter=maxiter, **kw), repeats
                )
            r.update(ms=sec * 1e3, info=int(info))
            r["residual"] = float(cp.linalg.norm(bd - ad @ x) / cp.linalg.norm(bd))
        except Exception as e:  # report, never fail the run
            print(f"{impl} {case} failed: {e!r}", file=sys.stderr)
        rows.append(r)


def main(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--json")
    p.add_argument("--summary")
    p.add_argument("--quick", action="store_true")
    p.add_argument("--gpu-only", action="store_true", help="skip the CPU cases")
    args = p.parse_args(argv)
    rows = []
    repeats = 1 if args.quick else 3
    if not args.gpu_only:
        cpu_cases(rows, args.quick, repeats)
    gpu_cases(rows, args.quick, repeats)
    try:
        gpu_krylov_cases(rows, args.quick, repeats)
    except Exception as e:  # no CuPy or no GPU
        print(f"GPU gmres / bicgstab / minres skipped: {e}", file=sys.stderr)
    date = datetime.date.today().isoformat()
    lines = [
        f"## Sparse iterative solvers, {date}{' (quick sizes)' if args.quick else ''}",
        "",
        "| case | implementation | n | ms (median) | iterations | info | ||b-Ax||/||b|| |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ms = "n/a" if r["ms"] is None else f"{r['ms']:.1f}"
        res = "n/a" if r["residual"] is None else f"{r['residual']:.2e}"
        lines.append(
            f"| {r['case']} | {r['impl']} | {r['n']} | {ms} | {r['iterations']} | {r['info']} "
            f"| {res} |"
        )
    print("\n".join(lines))
    summary = [
        "sparse iterative solvers (targets: gpula gpu cg no slower than cupyx; faster with ic0):"
    ]
    for r in rows:
        if r["ms"] is not None and (r["case"].startswith("cg poisson") or "gpu" in r["impl"]):
            summary.append(
                f"  {r['case']} n={r['n']} {r['impl']}: {r['ms']:.0f} ms, "
                f"{r['iterations']} it, res {r['residual']:.1e}"
            )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"date": date, "rows": rows, "table": lines}, fh, indent=1)
    if args.summary:
        with open(args.summary, "a") as fh:
            fh.write("\n".join(summary) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
