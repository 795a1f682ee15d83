"""Several threads at once: each with gl.matmul (per-thread plan caches) or its own gl.Matmul."""

from __future__ import annotations

import threading

import numpy as np
from conftest import rel_err

import gpula as gl

THREADS = 6
ROUNDS = 20


def _run_threads(target):
    errors = []

    def wrapped(i):
        try:
            target(i)
        except BaseException as e:  # reported in the main thread
            errors.append((i, e))

    threads = [threading.Thread(target=wrapped, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_function_form_in_threads(xp, rng):
    seeds = rng.integers(0, 2**31, THREADS)

    def work(i):
        r = np.random.default_rng(seeds[i])
        for j in range(ROUNDS):
            m, k, n = 16 + i, 24 + j % 3, 8 + 2 * i  # some shapes shared, some not
            a, a64 = xp.random(r, (m, k), "float64")
            b, b64 = xp.random(r, (k, n), "float64")
            bias, bias64 = xp.random(r, (n,), "float64")
            out = gl.matmul(a, b, epilog="RELU_BIAS", epilog_inputs={"bias": bias})
            assert rel_err(out, np.maximum(a64 @ b64 + bias64, 0)) < 1e-12

    _run_threads(work)


def test_matmul_objects_in_threads(xp, rng):
    seeds = rng.integers(0, 2**31, THREADS)

    def work(i):
        r = np.random.default_rng(seeds[i])
        a, _ = xp.random(r, (3, 32, 40), "float32")
        b, b64 = xp.random(r, (40, 24), "float32")
        with gl.Matmul(a, b) as mm:
            mm.plan(epilog=gl.Epilog.GELU_AUX)
            for _ in range(ROUNDS):
                a2, a2_64 = xp.random(r, (3, 32, 40), "float32")
                mm.reset_operands(a=a2)
                _out, aux = mm.execute()
                xp.synchronize()
                pre = a2_64 @ b64
                assert rel_err(aux["gelu_aux"][..., :24], pre) < 1e-5

    _run_threads(work)
