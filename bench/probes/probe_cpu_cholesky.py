"""Probe: where the CPU Cholesky's time goes on this host, n = 2048 and 4096 fp64.

gpula's CPU cholesky copies a (row-major) and factors it in place with LAPACK's opposite
triangle: lower=True runs potrf('U'), lower=False potrf('L'). SciPy copies a C-ordered input
into Fortran order and runs potrf on the triangle asked for. This times, in one process, medians
of 7: gpula lower/upper, scipy lower/upper, and LAPACK's dpotrf alone on a Fortran-ordered copy
(scipy's wrapper, its OpenBLAS) for 'L' and 'U', plus gpula's copy cost alone (a plain copy).
Reports only.

    python bench/probes/probe_cpu_cholesky.py
"""

from __future__ import annotations

import time

import numpy as np
import scipy.linalg as sla
import scipy.linalg.lapack as lapack

import gpula as gl


def median_ms(fn, reps=7):
    fn()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t) * 1e3)
    return float(np.median(ts))


def main():
    print(gl.devices()["description"].splitlines()[0])
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            print("transparent huge pages:", f.read().strip())
    except OSError:
        print("transparent huge pages: unknown")
    rng = np.random.default_rng(0)
    for n in (2048, 4096):
        g = rng.standard_normal((n, n))
        a = g @ g.T / n + np.eye(n)
        af = np.asfortranarray(a)
        rows = {
            "gpula lower (potrf U)": lambda: gl.linalg.cholesky(a),
            "gpula upper (potrf L)": lambda: gl.linalg.cholesky(a, lower=False),
            "scipy lower": lambda: sla.cholesky(a, lower=True),
            "scipy upper": lambda: sla.cholesky(a, lower=False),
            "scipy dpotrf L, F copy": lambda: lapack.dpotrf(af, lower=1, overwrite_a=0, clean=0),
            "scipy dpotrf U, F copy": lambda: lapack.dpotrf(af, lower=0, overwrite_a=0, clean=0),
            "numpy copy": lambda: a.copy(),
            "numpy transposing copy": lambda: np.asfortranarray(a),
        }
        for what, fn in rows.items():
            print(f"n={n:5d} {what:28s} {median_ms(fn):9.2f} ms", flush=True)


if __name__ == "__main__":
    main()
