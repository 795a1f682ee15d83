#!/usr/bin/env python3
"""The CPU backend next to NumPy: gpula calls alone, NumPy calls alone, and the two alternating.

  python3 bench/bench_cpu_interleave.py [--repeats N] [--json PATH]

A pipeline that alternates gpula and NumPy/SciPy calls should cost about the sum of each alone.
Several thread pools live in one process (gpula's OpenBLAS and OpenMP, the system OpenBLAS of
SuiteSparse, NumPy's and SciPy's OpenBLAS); a pool that spins after its call steals the cores
the next library's threads need. Each row times a gpula call alone, its NumPy neighbour alone,
and the two alternating ("interleaved", per pair); "ratio to sum" is the interleaved median over
the sum of the two medians alone (goal: <= 1.2). All float32 unless said:
  - gl.matmul 128x256 @ 256x512 (DEFAULT, fused RELU_BIAS, fused GELU_AUX_BIAS) beside a @ b;
  - examples/python/mlp_demo.py's step (5 fused matmuls, 128 -> 256 -> 512 -> 128) beside its
    plain NumPy reference;
  - gl.linalg.cholesky and gl.linalg.solve (n = 256, float64), gl.sparse.spsolve and
    gl.sparse.linalg.cg (2-D Poisson, n = 1024, float64) beside a @ b.
The three loops of a row run in interleaved rounds; times are per call, medians over all rounds.
A second table gives the CPU time the process burns in the 0.3 s after a call: threads that
spin instead of sleeping, whatever the machine's load. Prints the thread settings of every pool
it finds. About 5 s a row (--budget), < 60 s in all. Times are reported, never asserted.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import scipy.sparse  # noqa: F401 (loaded before gpula: the pools load in the same order)
from common import gpula_description, host_busy, poisson2d, save_json

import gpula as gl

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples" / "python"))
import mlp_demo  # noqa: E402

ENV_KEYS = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "OPENBLAS_THREAD_TIMEOUT",
    "OMP_WAIT_POLICY",
    "GOMP_SPINCOUNT",
    "KMP_BLOCKTIME",
)


def pools() -> list[str]:
    """One line per OpenBLAS / OpenMP runtime mapped into this process, with its thread count."""
    paths = []
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1] if len(line.split()) >= 6 else ""
            name = os.path.basename(path)
            if ("openblas" in name or "libgomp" in name or "libomp" in name) and path not in paths:
                paths.append(path)
    out = []
    for path in paths:
        lib = ctypes.CDLL(path)  # already loaded: the same handle
        name = os.path.basename(path)
        for sym in (
            "scipy_openblas_get_num_threads64_",
            "scipy_openblas_get_num_threads",
            "openblas_get_num_threads",
            "omp_get_max_threads",
        ):
            fn = getattr(lib, sym, None)
            if fn is not None:
                fn.restype = ctypes.c_int
                out.append(f"{name}: {sym}() = {fn()}")
                break
    return out


def settings() -> list[str]:
    lines = [f"{k}={os.environ[k]}" for k in ENV_KEYS if k in os.environ] or ["(no env set)"]
    cpu = gpula_description().split("\n")[0]
    busy, load = host_busy()
    return [f"cores {os.cpu_count()}, load {load:.2f}, host {busy:.0%} busy over 1 s before the run",
            cpu, *lines, *pools()]


def per_call(fn, n):
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    return (time.perf_counter() - t0) / n * 1e3


def compare(name, gfn, nfn, repeats, budget_s, rounds=5):
    """Medians (ms) of gfn alone, nfn alone and gfn; nfn alternating, over interleaved rounds.

    Calls per loop and round: `repeats`, fewer (at least 3) where the row would take longer
    than `budget_s`.
    """

    def pair():
        gfn()
        nfn()

    for fn in (gfn, nfn, pair):
        fn()
    first = per_call(pair, 1) / 1e3
    repeats = max(3, min(repeats, int(budget_s / (2 * rounds * max(first, 1e-6)))))
    g, n, p = [], [], []
    for _ in range(rounds):
        for fn, acc in ((gfn, g), (nfn, n), (pair, p)):
            fn()  # the first call after a switch belongs to the loop, not the previous one
            acc.extend(per_call(fn, 1) for _ in range(repeats))
    gm, nm, pm = statistics.median(g), statistics.median(n), statistics.median(p)
    row = {"case": name, "gpula_ms": gm, "numpy_ms": nm, "pair_ms": pm, "ratio": pm / (gm + nm)}
    row["calls"] = rounds * repeats
    print(
        f"| {name} | {gm:.3f} | {nm:.3f} | {pm:.3f} | {row['ratio']:.2f} | {row['calls']} |",
        flush=True,
    )
    return row


def idle_cpu_ms(fn, wait_s=0.3):
    """CPU time (ms) this process burns in the `wait_s` after three calls of fn: spinning pools."""

    def cpu():
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    time.sleep(wait_s)  # pools woken by the calls before settle first
    for _ in range(3):
        fn()
    t0 = cpu()
    time.sleep(wait_s)
    return (cpu() - t0) * 1e3


def main(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--repeats", type=int, default=20, help="calls per loop and round, at most")
    p.add_argument(
        "--budget", type=float, default=5.0, help="seconds per row, about (fewer repeats)"
    )
    p.add_argument("--json")
    args = p.parse_args(argv)
    r, bud = args.repeats, args.budget
    print("## gpula next to NumPy on the CPU (ms per call, medians)")
    for line in settings():
        print(f"  {line}")
    print()
    print("| case | gpula alone | numpy alone | interleaved | ratio to sum | calls |")
    print("|---|---|---|---|---|---|", flush=True)
    rng = np.random.default_rng(0)
    f32 = np.float32
    a = rng.standard_normal((128, 256)).astype(f32)
    b = rng.standard_normal((256, 512)).astype(f32)
    bias = rng.standard_normal(512).astype(f32)

    def np_mm():
        return a @ b

    mm = {
        "DEFAULT": lambda: gl.matmul(a, b),
        "RELU_BIAS": lambda: gl.matmul(
            a, b, epilog=gl.Epilog.RELU_BIAS, epilog_inputs={"bias": bias}
        ),
        "GELU_AUX_BIAS": lambda: gl.matmul(
            a, b, epilog=gl.Epilog.GELU_AUX_BIAS, epilog_inputs={"bias": bias}
        ),
    }
    rows_b = [
        compare(f"matmul 128x256x512 {e} + a @ b", fn, np_mm, r, bud) for e, fn in mm.items()
    ]

    x, w1, b1, w2, b2, t = (
        rng.standard_normal((128, 256)).astype(f32),
        (rng.standard_normal((256, 512)) / 16).astype(f32),
        (0.1 * rng.standard_normal(512)).astype(f32),
        (rng.standard_normal((512, 128)) / 22.6).astype(f32),
        (0.1 * rng.standard_normal(128)).astype(f32),
        rng.standard_normal((128, 128)).astype(f32),
    )
    rows_c = [
        compare(
            "mlp_demo step + numpy step",
            lambda: mlp_demo.step(x, w1, b1, w2, b2, t, lambda m: m.T),
            lambda: mlp_demo.reference(x, w1, b1, w2, b2, t),
            r,
            bud,
        )
    ]

    n = 256
    m = rng.standard_normal((n, n))
    spd = m @ m.T + n * np.eye(n)
    rhs = rng.standard_normal((n, 1))
    s = poisson2d(32)
    sb = np.ones(s.shape[0])
    rows_d = [
        compare(
            "linalg.cholesky n=256 f64 + a @ b", lambda: gl.linalg.cholesky(spd), np_mm, r, bud
        ),
        compare("linalg.solve n=256 f64 + a @ b", lambda: gl.linalg.solve(spd, rhs), np_mm, r, bud),
        compare("sparse.spsolve n=1024 + a @ b", lambda: gl.sparse.spsolve(s, sb), np_mm, r, bud),
        compare(
            "sparse.linalg.cg n=1024 + a @ b",
            lambda: gl.sparse.linalg.cg(s, sb, rtol=1e-6),
            np_mm,
            r,
            bud,
        ),
    ]

    rows = rows_b + rows_c + rows_d

    # Independent of the machine's load: what the pools burn once their call is done.
    print()
    print("| idle after the call (0.3 s) | CPU ms burned |")
    print("|---|---|")
    big = rng.standard_normal((512, 512)).astype(f32)
    bias_big = rng.standard_normal(512).astype(f32)
    idle = {
        "gl.matmul 512^3": lambda: gl.matmul(big, big),
        "gl.matmul 512^3 GELU_BIAS": lambda: gl.matmul(
            big, big, epilog=gl.Epilog.GELU_BIAS, epilog_inputs={"bias": bias_big}
        ),
        "gl.linalg.cholesky n=256": lambda: gl.linalg.cholesky(spd),
        "numpy 512^3 a @ b": lambda: big @ big,
    }
    idle_rows = []
    for name, fn in idle.items():
        ms = idle_cpu_ms(fn)
        idle_rows.append({"case": name, "idle_cpu_ms": ms})
        print(f"| {name} | {ms:.1f} |", flush=True)
    save_json(args.json, {"settings": settings(), "rows": rows, "idle": idle_rows})


if __name__ == "__main__":
    main()
