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

import sys

import numpy as np
import scipy.sparse as sps
import scipy.sparse.linalg as ssl
from common import (
    append_summary,
    arg_parser,
    device_time,
    fmt,
    gpu_cupy,
    host_time,
    md_table,
    poisson2d,
    poisson3d,
    save_json,
    today,
)


def convection_diffusion(g, peclet=20.0):
    h = 1.0 / (g + 1)
    c = peclet * h / 2.0
    t = sps.diags([-1.0 - c, 2.0, -1.0 + c], [-1, 0, 1], shape=(g, g))
    i = sps.identity(g)
    return (sps.kron(i, t) + sps.kron(t, i)).tocsr()


def counted(fn, repeats):
    """Median seconds after a warm-up, and (x, info, iterations) of the last run."""

    def run():
        its = [0]
        x, info = fn(lambda xk: its.__setitem__(0, its[0] + 1))
        return x, info, its[0]

    t = host_time(run, repeats)
    return t.ms / 1e3, t.out


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
    cp = gpu_cupy()  # None: no CuPy or no GPU (said on stderr)
    if cp is None:
        return
    import cupyx.scipy.sparse as csps
    import cupyx.scipy.sparse.linalg as csl

    import gpula.sparse.linalg as gsl

    def cupyx_cg(ad, bd, cb=None):
        try:
            return csl.cg(ad, bd, tol=1e-8, maxiter=20000, callback=cb)
        except TypeError:  # newer CuPy: rtol
            return csl.cg(ad, bd, rtol=1e-8, maxiter=20000, callback=cb)

    def timed(fn):
        t = device_time(fn, repeats, lib="cupy")
        return t.ms, *t.out

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
                t = device_time(lambda: fn(ad, bd, rtol=1e-8, maxiter=maxiter, **kw), repeats,
                                lib="cupy")
            except TypeError:  # older CuPy: tol
                t = device_time(lambda: fn(ad, bd, tol=1e-8, maxiter=maxiter, **kw), repeats,
                                lib="cupy")
            x, info = t.out
            r.update(ms=t.ms, info=int(info))
            r["residual"] = float(cp.linalg.norm(bd - ad @ x) / cp.linalg.norm(bd))
        except Exception as e:  # report, never fail the run
            print(f"{impl} {case} failed: {e!r}", file=sys.stderr)
        rows.append(r)


def main(argv=None):
    p = arg_parser(__doc__)
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
    date = today()
    lines = [f"## Sparse iterative solvers, {date}{' (quick sizes)' if args.quick else ''}", ""]
    lines += md_table(
        ["case", "implementation", "n", "ms (median)", "iterations", "info", "||b-Ax||/||b||"],
        [[r["case"], r["impl"], r["n"], fmt(r["ms"], ".1f"), r["iterations"], r["info"],
          fmt(r["residual"], ".2e")] for r in rows],
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
    save_json(args.json, {"date": date, "rows": rows, "table": lines})
    append_summary(args.summary, summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
