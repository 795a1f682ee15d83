"""One gl.Matmul shared by several threads: every result right, no memory corruption.

Before the plan's locks, eight threads executing one plan wrote their output addresses into one
shared set of output views, so results went into other threads' arrays (wrong values, and writes
into freed memory).
"""

from __future__ import annotations

import threading

import numpy as np
import pytest
from conftest import TOL, rel_err, to_np64

import gpula as gl

THREADS = 8
ITERATIONS = 150


def _run_threads(target, n=THREADS):
    """Runs target(i) in n threads started together; returns the exceptions they raised."""
    errors: list[BaseException] = []
    start = threading.Barrier(n)

    def body(i):
        try:
            start.wait()
            target(i)
        except BaseException as e:  # noqa: BLE001 - reported by the test
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
def test_eight_threads_execute_one_plan(xp, rng, dtype):
    xp.skip_unless(dtype)
    a, a64 = xp.random(rng, (3, 33, 17), dtype)
    b, b64 = xp.random(rng, (17, 29), dtype)
    ref, scale = a64 @ b64, abs(a64) @ abs(b64)
    mm = gl.Matmul(a, b)
    mm.plan()
    kept: list[list] = [[] for _ in range(THREADS)]

    def work(i):
        for _ in range(ITERATIONS):
            r = mm.execute()
            xp.synchronize()
            assert r.shape == ref.shape
            err = rel_err(r, ref, scale)
            assert err <= TOL[dtype], err
            kept[i].append(r)

    errors = _run_threads(work)
    assert not errors, errors[0]
    # Every call got its own array, and none was overwritten by a later call.
    results = [r for rs in kept for r in rs]
    assert len({id(r) for r in results}) == THREADS * ITERATIONS
    for r in results[:: ITERATIONS // 3]:
        assert rel_err(r, ref, scale) <= TOL[dtype]
    mm.free()


def test_threads_execute_while_one_resets_operands_and_replans(rng):
    # The swapped-in operands hold the same values, so every result has one right answer; the
    # re-plan (same epilogue) and autotune run between executes, never inside one.
    a64 = rng.standard_normal((4, 20, 12))
    b64 = rng.standard_normal((12, 16))
    bias64 = rng.standard_normal(16)
    ref = np.maximum(a64 @ b64 + bias64, 0.0)
    a_copies = [a64.copy(), a64.copy()]
    bias = bias64.copy()
    mm = gl.Matmul(a_copies[0], b64)
    mm.plan(epilog="RELU_BIAS", epilog_inputs={"bias": bias})
    done = threading.Event()

    def execute(i):
        try:
            for _ in range(ITERATIONS):
                r = mm.execute()
                np.testing.assert_allclose(r, ref, rtol=1e-12, atol=1e-12)
        finally:
            done.set()

    def mutate(_):
        k = 0
        while not done.is_set():
            mm.reset_operands(a=a_copies[k % 2])
            if k % 8 == 0:
                mm.plan(epilog="RELU_BIAS", epilog_inputs={"bias": bias})
            if k % 8 == 4:
                mm.autotune(iterations=1)
            k += 1

    def role(i):
        (mutate if i == THREADS else execute)(i)

    errors = _run_threads(role, THREADS + 1)
    assert not errors, errors[0]
    for x, x0 in ((a_copies[0], a64), (b64, b64), (bias, bias64)):
        np.testing.assert_array_equal(x, x0)  # inputs never modified


def test_replan_with_other_outputs_in_another_thread_is_a_clear_error(rng):
    # A plan() with another epilogue changes what execute returns: a concurrent execute either
    # returns a right result for one of the two plans or raises gl.InvalidArgument saying so.
    a64, b64 = rng.standard_normal((16, 8)), rng.standard_normal((8, 12))
    bias64 = rng.standard_normal(12)
    plain = a64 @ b64
    with_aux = np.maximum(plain + bias64, 0.0)
    mm = gl.Matmul(a64, b64)
    mm.plan()
    done = threading.Event()
    refused = []

    def execute(_):
        try:
            for _ in range(ITERATIONS):
                try:
                    r = mm.execute()
                except gl.InvalidArgument as e:
                    assert "plan changed" in str(e), e
                    refused.append(e)
                    continue
                if isinstance(r, tuple):
                    np.testing.assert_allclose(r[0], with_aux, rtol=1e-12, atol=1e-12)
                    assert set(r[1]) == {"relu_aux"}
                else:
                    np.testing.assert_allclose(r, plain, rtol=1e-12, atol=1e-12)
        finally:
            done.set()

    def replan(_):
        k = 0
        while not done.is_set():
            if k % 2:
                mm.plan()
            else:
                mm.plan(epilog="RELU_AUX_BIAS", epilog_inputs={"bias": bias64})
            k += 1

    errors = _run_threads(lambda i: (replan if i == 0 else execute)(i), 5)
    assert not errors, errors[0]


def test_free_while_threads_execute(rng):
    a64, b64 = rng.standard_normal((32, 16)), rng.standard_normal((16, 8))
    ref = a64 @ b64
    mm = gl.Matmul(a64, b64)
    mm.plan()
    outcomes = {"ok": 0, "refused": 0}
    lock = threading.Lock()

    def work(i):
        if i == 0:
            mm.free()
            return
        for _ in range(ITERATIONS):
            try:
                r = mm.execute()
            except gl.InvalidArgument as e:
                assert "after free()" in str(e), e
                with lock:
                    outcomes["refused"] += 1
                continue
            np.testing.assert_allclose(r, ref, rtol=1e-12, atol=1e-12)
            with lock:
                outcomes["ok"] += 1

    errors = _run_threads(work, 5)
    assert not errors, errors[0]
    assert outcomes["ok"] + outcomes["refused"] == 4 * ITERATIONS
    with pytest.raises(gl.InvalidArgument, match="after free"):
        mm.execute()


def test_function_form_with_c_in_threads(xp, rng):
    # gl.matmul from 8 threads with c and beta: per-thread caches, results equal NumPy.
    dtype = "float32"
    work = []
    for i in range(THREADS):
        a, a64 = xp.random(rng, (8 + i, 12), dtype)
        b, b64 = xp.random(rng, (12, 10), dtype)
        c, c64 = xp.random(rng, (8 + i, 10), dtype)
        work.append((a, b, c, 2.0 * (a64 @ b64) + 0.5 * c64))

    def run(i):
        a, b, c, ref = work[i]
        for _ in range(ITERATIONS // 3):
            r = gl.matmul(a, b, c, alpha=2.0, beta=0.5)
            xp.synchronize()
            np.testing.assert_allclose(to_np64(r), ref, rtol=1e-5, atol=1e-5)

    errors = _run_threads(run)
    assert not errors, errors[0]
