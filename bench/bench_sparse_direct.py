#!/usr/bin/env python3
"""Sparse direct solve benchmark: 2-D Poisson (5-point), float64.

  python3 bench/bench_sparse_direct.py [--m 1000] [--out DIR] [--scipy-timeout 60]

Side by side: gpula's CPU DirectSolver first solve (plan + factorize + solve) and refactorize +
solve, twice: assume_a="pos" (SuiteSparse CHOLMOD supernodal Cholesky, the speedup target) and
assume_a="gen" (UMFPACK LU; skip with --no-umfpack), scipy.sparse.linalg.spsolve (run ONCE: it is slow at n = 1e6,
12.3 s measured on the H200 host; skipped past --scipy-timeout via a child process), and
cupyx.scipy.sparse.linalg.spsolve when CuPy and a GPU are present (CUDA events, in a spawned
process stopped after --cupyx-timeout), and gpula's
DirectSolver on CuPy operands (cuDSS): first solve and refactorize + solve.
Timing: wall clock (perf_counter) on the host, median of --repeats after one warm-up where the
call is cheap enough; the CPU rows also give each phase's time. Writes a dated markdown table to
DIR and prints summary lines. Never asserts.
"""
from __future__ import annotations

import argparse
import multiprocessing as mp
import queue
import statistics
import time

import numpy as np
import scipy.sparse.linalg as spla
from common import Events, fmt, gpu_cupy, md_table, poisson2d, today, write_result


def _scipy_child(m, q):
    a = poisson2d(m)
    b = np.ones(a.shape[0])
    t0 = time.perf_counter()
    x = spla.spsolve(a, b)
    q.put((time.perf_counter() - t0, float(np.linalg.norm(a @ x - b) / np.linalg.norm(b))))


def _stop(p):
    """Ends child process p: SIGTERM, then SIGKILL if it has not exited 5 s later (a child
    inside a CUDA call may not act on SIGTERM)."""
    p.terminate()
    p.join(5)
    if p.is_alive():
        p.kill()
        p.join()


def time_scipy_once(m, timeout):
    q = mp.get_context("fork").Queue()
    p = mp.get_context("fork").Process(target=_scipy_child, args=(m, q))
    p.start()
    p.join(timeout)
    if p.is_alive():
        _stop(p)
        return None, None
    return q.get() if not q.empty() else (None, None)


def time_gpula_cpu(a, b, repeats, assume="gen"):
    import gpula as gl

    clock = time.perf_counter
    t0 = clock()
    s = gl.sparse.DirectSolver(a, b, {"assume_a": assume})
    t1 = clock()
    s.plan()
    t2 = clock()
    s.factorize()
    t3 = clock()
    x = s.solve()
    t4 = clock()
    first = t4 - t0
    phases = (
        f"construct {t1 - t0:.2f} + plan {t2 - t1:.2f} + factorize {t3 - t2:.2f} + "
        f"solve {t4 - t3:.2f} s"
    )
    resid = float(np.linalg.norm(a @ x - b) / np.linalg.norm(b))
    refac, refac_phases = [], []
    for r in range(repeats):
        a2 = a.copy()
        a2.data = a2.data * (1.0 + 0.01 * (r + 1))
        t0 = clock()
        s.reset_operands(a=a2)
        t1 = clock()
        s.factorize()
        t2 = clock()
        s.solve()
        t3 = clock()
        refac.append(t3 - t0)
        refac_phases.append(
            (t3 - t0, f"reset {t1 - t0:.2f} + factorize {t2 - t1:.2f} + solve {t3 - t2:.2f} s")
        )
    s.free()
    median = statistics.median(refac)
    closest = min(refac_phases, key=lambda p: abs(p[0] - median))[1]
    return first, median, resid, f"first: {phases}; refactorize (median run): {closest}"


def _cupyx_child(m, repeats, q):
    cp = gpu_cupy(report=False)
    if cp is None:
        q.put(None)
        return
    import cupyx.scipy.sparse as csp
    import cupyx.scipy.sparse.linalg as cspla

    a = poisson2d(m)
    da = csp.csr_matrix(a)
    db = cp.asarray(np.ones(a.shape[0]))
    times, ev = [], Events("cupy")
    for _ in range(repeats + 1):  # the first is the warm-up
        ev.record()
        cspla.spsolve(da, db)
        times.append(ev.stop() / 1e3)
        # After each call, so that a child stopped at the timeout leaves what it measured.
        q.put(statistics.median(times[1:]) if len(times) > 1 else times[0])


def time_cupyx(m, repeats, timeout):
    """cupyx's spsolve in a fresh (spawned) process, stopped after `timeout` seconds: the median
    of the timed repeats, or the warm-up call's time when only it finished, or None."""
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_cupyx_child, args=(m, repeats, q))
    p.start()
    p.join(timeout)
    timed_out = p.is_alive()
    if timed_out:
        _stop(p)
    last = None
    while True:  # a get() without a timeout can block on what a killed child left half-written
        try:
            last = q.get(timeout=1)
        except queue.Empty:
            break
    return last, timed_out


def time_gpula_gpu(a, b, repeats, assume="gen", ordering="auto"):
    """gpula's DirectSolver on CuPy operands (cuDSS): first solve (plan + factorize + solve, the
    solver's construction included) and refactorize + solve with new values of the same pattern,
    CUDA events: (first, refactorize, residual, the ordering used). None without a GPU or in a
    build without cuDSS."""
    cp = gpu_cupy(report=False)
    if cp is None:
        return None
    import cupyx.scipy.sparse as csp

    import gpula as gl

    da = csp.csr_matrix(a)
    db = cp.asarray(b)
    ev = Events("cupy")

    try:
        opts = {"assume_a": assume, "ordering": ordering}
        warm = gl.sparse.DirectSolver(da, db, opts)  # cuDSS loads and initializes once per process
        warm.plan(); warm.factorize(); warm.solve(); warm.free()
        firsts, refacs, phases, x = [], [], [], None
        for r in range(repeats):
            ev.record()
            t0 = time.perf_counter()
            solver = gl.sparse.DirectSolver(da, db, opts)
            solver.plan()
            t1 = time.perf_counter()  # plan() and factorize() return after their device work
            solver.factorize()
            t2 = time.perf_counter()
            x = solver.solve()
            firsts.append(ev.stop() / 1e3)
            used = solver.ordering
            phases.append((t1 - t0, t2 - t1, time.perf_counter() - t2))
            a2 = csp.csr_matrix(a * (1.0 + 0.01 * (r + 1)))
            ev.record()
            solver.reset_operands(a=a2); solver.factorize(); solver.solve()
            refacs.append(ev.stop() / 1e3)
            solver.free()
        resid = float(cp.linalg.norm(da @ x - db) / cp.linalg.norm(db))
        p = phases[firsts.index(sorted(firsts)[len(firsts) // 2])]
        print(f"  gpula GPU {assume}, ordering {used}: construct + plan {p[0]:.3f} s, factorize "
              f"{p[1]:.3f} s, solve {p[2]:.3f} s (the median first solve's phases, host clock)",
              flush=True)
        return statistics.median(firsts), statistics.median(refacs), resid, used
    except Exception as e:  # a build without cuDSS, or a failure: reported, never fatal
        print(f"gpula GPU direct solve failed: {e!r}")
        return None


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--m", type=int, default=1000, help="grid side: n = m * m")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--scipy-timeout", type=float, default=40.0)
    p.add_argument("--cupyx-timeout", type=float, default=40.0)
    p.add_argument("--out", default=None)
    p.add_argument("--no-umfpack", action="store_true", help="skip the assume_a='gen' (UMFPACK) run")
    args = p.parse_args(argv)
    a = poisson2d(args.m)
    n, nnz = a.shape[0], a.nnz
    b = np.ones(n)
    t0 = time.perf_counter()

    def progress(what):
        print(f"  [{time.perf_counter() - t0:6.1f} s] {what}", flush=True)

    g = time_gpula_gpu(a, b, args.repeats, "pos")
    progress(f"gpula GPU pos (cuDSS): {g}")
    g_lib = time_gpula_gpu(a, b, args.repeats, "pos", "library")
    progress(f"gpula GPU pos (cuDSS, its own ordering): {g_lib}")
    g_gen = time_gpula_gpu(a, b, args.repeats, "gen")
    progress(f"gpula GPU gen (cuDSS): {g_gen}")
    first, refac, resid, chol_phases = time_gpula_cpu(a, b, args.repeats, "pos")
    progress(f"gpula CPU pos (CHOLMOD): first {first:.3f} s, refactorize+solve {refac:.3f} s "
             f"({chol_phases})")
    umf = None if args.no_umfpack else time_gpula_cpu(a, b, args.repeats, "gen")
    progress(f"gpula CPU gen (UMFPACK): {umf}")
    t_scipy, r_scipy = time_scipy_once(args.m, args.scipy_timeout)
    progress(f"scipy spsolve: {t_scipy}")
    t_cupyx, cupyx_timed_out = time_cupyx(args.m, args.repeats, args.cupyx_timeout)
    progress(f"cupyx spsolve: {t_cupyx}{' (stopped at the timeout)' if cupyx_timed_out else ''}")
    date = today()

    rows = [
        ("gpula CPU pos (CHOLMOD) plan+factorize+solve", first, f"residual {resid:.1e}"),
        ("gpula CPU pos (CHOLMOD) refactorize+solve (median)", refac,
         f"{refac / first:.2f} of the first solve; {chol_phases}"),
        ("gpula CPU gen (UMFPACK) plan+factorize+solve", umf and umf[0],
         f"residual {umf[2]:.1e}" if umf else "skipped (--no-umfpack)"),
        ("gpula CPU gen (UMFPACK) refactorize+solve (median)", umf and umf[1],
         f"{umf[1] / umf[0]:.2f} of the first solve; {umf[3]}" if umf else ""),
        ("scipy.sparse.linalg.spsolve (once)", t_scipy,
         "timed out" if t_scipy is None else f"residual {r_scipy:.1e}"),
        ("cupyx.scipy.sparse.linalg.spsolve (median)", t_cupyx,
         f"stopped after {args.cupyx_timeout:.0f} s" + (" (time of the calls that finished)" if t_cupyx else "")
         if cupyx_timed_out else ("" if t_cupyx else "no CuPy/GPU")),
        ("gpula GPU pos (cuDSS) plan+factorize+solve (median)", g and g[0],
         f"ordering {g[3]}, residual {g[2]:.1e}" if g else "no GPU or no cuDSS"),
        ("gpula GPU pos (cuDSS) refactorize+solve (median)", g and g[1],
         f"{g[1] / g[0]:.2f} of the first solve" if g else ""),
        ("gpula GPU pos (cuDSS), ordering='library', plan+factorize+solve (median)",
         g_lib and g_lib[0], f"ordering {g_lib[3]}, residual {g_lib[2]:.1e}" if g_lib else ""),
        ("gpula GPU gen (cuDSS) plan+factorize+solve (median)", g_gen and g_gen[0],
         f"ordering {g_gen[3]}, residual {g_gen[2]:.1e}" if g_gen else "no GPU or no cuDSS"),
        ("gpula GPU gen (cuDSS) refactorize+solve (median)", g_gen and g_gen[1],
         f"{g_gen[1] / g_gen[0]:.2f} of the first solve" if g_gen else ""),
    ]
    md = [f"# Sparse direct solve, 2-D Poisson 5-point, n = {n}, nnz = {nnz}, float64 ({date})", ""]
    md += md_table(["solver", "seconds", "note"], [(r[0], fmt(r[1]), r[2]) for r in rows])
    summary = [f"sparse direct (Poisson n={n}): gpula CPU pos (CHOLMOD) first {fmt(first)} s, "
               f"refactorize+solve {fmt(refac)} s ({refac / first:.2f}x of first, target <= 0.25)",
               f"sparse direct: gpula CPU gen (UMFPACK) first {fmt(umf and umf[0])} s, "
               f"refactorize+solve {fmt(umf and umf[1])} s",
               f"sparse direct: scipy spsolve {fmt(t_scipy)} s"
               + (f", gpula CPU pos speedup {t_scipy / first:.1f}x (target >= 3x)" if t_scipy else "")
               + (f", refactorize+solve {t_scipy / refac:.1f}x" if t_scipy else ""),
               f"sparse direct: cupyx spsolve {fmt(t_cupyx)} s"]
    for label, r in (("pos", g), ("pos, ordering='library'", g_lib), ("gen", g_gen)):
        if r:
            summary.append(f"sparse direct: gpula GPU {label} (cuDSS, ordering {r[3]}) first {r[0]:.3f} s"
                           + (f", {t_scipy / r[0]:.1f}x scipy (target >= 20x)" if t_scipy else "")
                           + f"; refactorize+solve {r[1]:.3f} s ({r[1] / r[0]:.2f}x of first, target <= 0.25)")
        else:
            summary.append(f"sparse direct: gpula GPU {label} (cuDSS) n/a (no GPU or built without cuDSS)")
    text = "\n".join(md) + "\n\n```\n" + "\n".join(summary) + "\n```\n"
    if args.out:
        write_result(args.out, f"{date}-sparse-direct.md", text)
    print(text, flush=True)


if __name__ == "__main__":
    main()
