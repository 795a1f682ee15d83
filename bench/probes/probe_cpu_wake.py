"""Probe: what a small threaded CPU matmul costs on this host, and why (issue 17's 16-core rows).

The cpubench stage measured gl.matmul 128x256x512 f32 at ~8 ms a call on the lent 16-core host
(0.07 ms for NumPy's a @ b, 0.43 ms for gl.matmul on the 2-core VM), with the host's load
average at 17-21 from the stages before it. gpula's OpenBLAS threads sleep 2^16 cycles after a
call (python/gpula/_openblas_core.py); NumPy's spin ~0.1 s. This separates the candidates:
  - the host was busy: the share of CPU time busy on the whole host over 1 s, before each row;
  - waking sleeping threads is slow here: gpula with OPENBLAS_THREAD_TIMEOUT 16 (gpula's
    default), 20 and 24, and NumPy beside it, each in a fresh process;
  - too many threads for the size: gpula's OpenBLAS limited to 1, 2, 4, 8 threads
    (scipy_openblas_set_num_threads, in process);
  - NumPy's pool spinning: gl.matmul (DEFAULT, and RELU_BIAS, which the interleave bench saw
    unharmed) timed right after a NumPy a @ b, with each thread cap.
Each row: median ms of 200 back-to-back calls, and of 50 calls 2 ms apart (every pool asleep).
Reports only.

    python bench/probes/probe_cpu_wake.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from common import host_busy  # noqa: E402

CHILD = r"""
import ctypes, json, sys, time
import numpy as np
import gpula as gl

def lib(name):
    with open("/proc/self/maps") as f:
        for line in f:
            if name in line:
                return ctypes.CDLL(line.split()[-1])
    return None

threads = int(sys.argv[1])
if threads:
    gl_blas = lib("libscipy_openblas.so")
    gl_blas.scipy_openblas_set_num_threads(threads)
rng = np.random.default_rng(0)
a = rng.standard_normal((128, 256), dtype=np.float32)
b = rng.standard_normal((256, 512), dtype=np.float32)

def median_ms(fn, n, gap):
    fn()
    ts = []
    for _ in range(n):
        if gap:
            time.sleep(gap)
        t = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t) * 1e3)
    return float(np.median(ts))

def after_numpy_ms(fn, n):
    # fn timed right after a NumPy a @ b, while NumPy's OpenBLAS threads spin (~0.1 s).
    ts = []
    for _ in range(n):
        a @ b
        t = time.perf_counter()
        fn()
        ts.append((time.perf_counter() - t) * 1e3)
    return float(np.median(ts))

bias = rng.standard_normal(512, dtype=np.float32)
out = {}
for name, fn in (("gpula", lambda: gl.matmul(a, b)), ("numpy", lambda: a @ b)):
    out[name] = (median_ms(fn, 200, 0.0), median_ms(fn, 50, 0.002))
out["after_numpy"] = (after_numpy_ms(lambda: gl.matmul(a, b), 50),
                      after_numpy_ms(lambda: gl.matmul(a, b, epilog="RELU_BIAS",
                                                       epilog_inputs={"bias": bias}), 50))
print(json.dumps(out))
"""


def row(label, env, threads):
    busy, load = host_busy()
    e = {**os.environ, **env}
    r = subprocess.run([sys.executable, "-c", CHILD, str(threads)], env=e, capture_output=True,
                       text=True, timeout=100)
    if r.returncode != 0:
        print(f"| {label} | failed: {r.stderr.strip().splitlines()[-1:]} |", flush=True)
        return
    d = json.loads(r.stdout.strip().splitlines()[-1])
    (gb, gs), (nb, ns), (ad, ar) = d["gpula"], d["numpy"], d["after_numpy"]
    print(f"| {label} | {busy:.0%} | {load:.1f} | {gb:.3f} | {gs:.3f} | {nb:.3f} | {ns:.3f} "
          f"| {ad:.3f} | {ar:.3f} |", flush=True)


def main():
    print(f"cores {os.cpu_count()}; 128x256 @ 256x512 float32, ms per call (medians)")
    print("| gpula's OpenBLAS | host busy | load | gpula back-to-back | gpula 2 ms apart "
          "| numpy back-to-back | numpy 2 ms apart | gpula right after numpy a @ b "
          "| gpula RELU_BIAS right after numpy |")
    print("|---|---|---|---|---|---|---|---|---|")
    row("THREAD_TIMEOUT 16 (default), all threads", {}, 0)
    for t in (20, 24):
        row(f"THREAD_TIMEOUT {t}, all threads", {"OPENBLAS_THREAD_TIMEOUT": str(t)}, 0)
    for n in (1, 2, 4, 8):
        row(f"THREAD_TIMEOUT 16, {n} threads", {}, n)
    row("THREAD_TIMEOUT 16 (default), all threads, again", {}, 0)


if __name__ == "__main__":
    main()
