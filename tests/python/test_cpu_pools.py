"""gpula's CPU thread pools sleep once a call is done, so that NumPy's threads keep their cores.

``import gpula`` sets OPENBLAS_THREAD_TIMEOUT and OMP_WAIT_POLICY=passive for the loading of its
OpenBLAS and libgomp only (python/gpula/_openblas_core.py), leaves a user's own values alone, and
removes its own from the environment again.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from gpula._openblas_core import POOL_SETTINGS, pool_settings

POOL_VARIABLES = ("OPENBLAS_THREAD_TIMEOUT", "OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "OMP_DISPLAY_ENV")


def test_pool_settings_fill_what_the_user_left_unset():
    assert pool_settings({}) == POOL_SETTINGS
    assert set(POOL_SETTINGS) == {"OPENBLAS_THREAD_TIMEOUT", "OMP_WAIT_POLICY"}
    assert pool_settings({"OPENBLAS_THREAD_TIMEOUT": "30"}) == {"OMP_WAIT_POLICY": "passive"}
    assert "OMP_WAIT_POLICY" not in pool_settings({"OMP_WAIT_POLICY": "active"})
    # GOMP_SPINCOUNT sets libgomp's spinning too: the user's choice, so no wait policy either.
    assert "OMP_WAIT_POLICY" not in pool_settings({"GOMP_SPINCOUNT": "0"})
    assert pool_settings({"OPENBLAS_THREAD_TIMEOUT": "4", "OMP_WAIT_POLICY": "active"}) == {}


CHILD = """
import json, os, resource, sys, time
import numpy as np
import gpula as gl, gpula._openblas_core as c
env = {k: os.environ.get(k) for k in ("OPENBLAS_THREAD_TIMEOUT", "OMP_WAIT_POLICY")}
rng = np.random.default_rng(0)
a = rng.standard_normal((512, 512)).astype(np.float32)
bias = rng.standard_normal(512).astype(np.float32)
for _ in range(3):  # threaded gemm (OpenBLAS) and a threaded GELU pass (OpenMP)
    gl.matmul(a, a, epilog=gl.Epilog.GELU_BIAS, epilog_inputs={"bias": bias})
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
t0 = cpu()
time.sleep(0.3)
print(json.dumps({"env": env, "pools_set": c.pools_set, "idle_cpu_s": cpu() - t0}))
"""


def run_child(**env_changes: str) -> tuple[dict, str]:
    env = {k: v for k, v in os.environ.items() if k not in POOL_VARIABLES}
    env.update(env_changes, OMP_DISPLAY_ENV="TRUE")  # libgomp prints what it read, at load
    p = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1]), p.stderr


def omp_wait_policy(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if "OMP_WAIT_POLICY" in line]
    if not lines:
        pytest.skip("this OpenMP runtime does not print OMP_DISPLAY_ENV")
    return lines[0].split("=", 1)[1].strip().strip("'")


def test_import_makes_the_pools_sleep_and_cleans_up():
    r, stderr = run_child()
    assert r["pools_set"] == POOL_SETTINGS
    assert r["env"] == {"OPENBLAS_THREAD_TIMEOUT": None, "OMP_WAIT_POLICY": None}
    assert omp_wait_policy(stderr) == "PASSIVE"
    # Once the calls are done, no pool burns a core: OpenBLAS by default spins ~0.1 s per helper
    # thread after a threaded call, libgomp's active wait some milliseconds.
    assert r["idle_cpu_s"] < 0.03, r


def test_users_settings_are_kept():
    r, stderr = run_child(OPENBLAS_THREAD_TIMEOUT="20", OMP_WAIT_POLICY="active")
    assert r["pools_set"] == {}
    assert r["env"] == {"OPENBLAS_THREAD_TIMEOUT": "20", "OMP_WAIT_POLICY": "active"}
    assert omp_wait_policy(stderr) == "ACTIVE"


NESTED = r"""
import ctypes, threading
import torch  # its OpenMP runtime in the global scope lets OpenBLAS see gpula's OpenMP loops
import numpy as np
import gpula as gl

rng = np.random.default_rng(0)
r = rng.standard_normal((9, 64, 64))
a = r @ r.transpose(0, 2, 1) + 64 * np.eye(64)
lib = ctypes.CDLL([l.split()[-1] for l in open("/proc/self/maps") if "libscipy_openblas.so" in l][0])
before = lib.scipy_openblas_get_num_threads()

def work():
    for _ in range(3):
        w, v = gl.linalg.eigh(a)
        u, s, vh = gl.linalg.svd(a)
        x = gl.linalg.solve(a, a)
        assert np.allclose(x, np.broadcast_to(np.eye(64), a.shape), atol=1e-8)
        assert np.allclose(s, np.linalg.svd(a, compute_uv=False))

threads = [threading.Thread(target=work) for _ in range(3)]
for t in threads: t.start()
for t in threads: t.join()
work()
print(before, lib.scipy_openblas_get_num_threads())
"""


def test_batched_lapack_never_nests_openblas_threads_in_openmp():
    """The CPU LAPACK backends factor small matrices of a batch one per OpenMP thread; gpula's
    OpenBLAS (pthreads) must run single-threaded inside those loops: no "Detect OpenMP Loop ...
    may hang" on stderr (OpenBLAS prints it once torch's OpenMP runtime is global), correct
    results from several Python threads at once, and its thread count restored afterwards."""
    pytest.importorskip("torch")
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "2"}
    p = subprocess.run([sys.executable, "-c", NESTED], capture_output=True, text=True,
                       timeout=300, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "OpenMP Loop" not in p.stderr, p.stderr[:500]
    before, after = p.stdout.split()[-2:]
    assert before == after == "2"
