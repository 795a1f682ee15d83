"""8 threads at once, on one shared object and on separate objects: gl.matmul, gl.Matmul,
gl.linalg.solve / svd, gl.sparse.linalg.cg, A @ x, DirectSolver.solve. Every thread's every
result is checked; an error in a thread must be a typed gpula error (a plan that cannot be
shared may say so), never a wrong answer or a crash."""

from __future__ import annotations

import threading
from typing import Any, Callable

import numpy as np

import gpula as gl

from .catalog_sparse import N, _gl, spd_csr
from .core import Entry, close, judge_error

THREADS = 8
ROUNDS = 25


def _run(work: Callable[[int], Any]) -> tuple[list[list[Any]], list[BaseException]]:
    """work(i) in THREADS threads started together, ROUNDS times each."""
    results: list[list[Any]] = [[] for _ in range(THREADS)]
    errors: list[BaseException] = []
    barrier = threading.Barrier(THREADS)

    def body(i: int) -> None:
        try:
            barrier.wait()
            for _ in range(ROUNDS):
                results[i].append(work(i))
        except BaseException as e:  # noqa: BLE001  (reported by the check)
            errors.append(e)

    threads = [threading.Thread(target=body, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results, errors


def _check(op: str) -> Callable[[Any, Any, dict, bool], str | None]:
    def check(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
        results, errors = r
        for e in errors:
            bad = judge_error(e, op, None)
            if bad:
                return f"in a thread: {bad[0]}: {bad[1]}"
        wrong = 0
        for i, rs in enumerate(results):
            for x in rs:
                got = x[0] if isinstance(x, tuple) else x
                if close(got, ref[i], tol=1e-7) is not None:
                    wrong += 1
        if wrong:
            return f"{wrong} of {sum(map(len, results))} results wrong across {THREADS} threads"
        return None

    return check


def _inputs(g: np.random.Generator, shape_a: tuple, shape_b: tuple) -> dict:
    return {"a": [g.standard_normal(shape_a) for _ in range(THREADS)],
            "b": [g.standard_normal(shape_b) for _ in range(THREADS)]}


def _one_matmul(d: dict) -> Any:
    with gl.Matmul(d["a"][0], d["b"][0]) as mm:
        mm.plan()
        return _run(lambda i: mm.execute())


def _separate_matmul(d: dict) -> Any:
    mms = [gl.Matmul(d["a"][i], d["b"][i]) for i in range(THREADS)]
    for mm in mms:
        mm.plan()
    try:
        return _run(lambda i: mms[i].execute())
    finally:
        for mm in mms:
            mm.free()


def _spd_set(g: np.random.Generator) -> dict:
    a = []
    for _ in range(THREADS):
        x = g.standard_normal((32, 32))
        a.append(x @ x.T + 32 * np.eye(32))
    return {"a": a, "b": [g.standard_normal(32) for _ in range(THREADS)]}


def _sparse_set(g: np.random.Generator) -> dict:
    S = spd_csr(g)
    return {"S": S, "G": _gl(S), "Gs": [_gl(S.copy()) for _ in range(THREADS)],
            "x": [g.standard_normal(N) for _ in range(THREADS)]}


def _direct_one(d: dict) -> Any:
    s = gl.sparse.DirectSolver(d["S"], d["x"][0])
    s.plan()
    s.factorize()
    try:
        return _run(lambda i: s.solve())
    finally:
        s.free()


def entries() -> list[Entry]:
    mm_ref = lambda d: [d["a"][0] @ d["b"][0]] * THREADS  # noqa: E731
    mm_refs = lambda d: [d["a"][i] @ d["b"][i] for i in range(THREADS)]  # noqa: E731
    solve_refs = lambda d: [np.linalg.solve(d["a"][i], d["b"][i])  # noqa: E731
                            for i in range(THREADS)]
    spmv_refs = lambda d: [d["S"] @ d["x"][i] for i in range(THREADS)]  # noqa: E731
    mk = lambda g: _inputs(g, (64, 48), (48, 80))  # noqa: E731
    return [
        Entry("threads.matmul", "matmul", mk,
              lambda d: _run(lambda i: gl.matmul(d["a"][i], d["b"][i])), mm_refs,
              _check("matmul"), timeout=60),
        Entry("threads.matmul[shared inputs]", "matmul", mk,
              lambda d: _run(lambda i: gl.matmul(d["a"][0], d["b"][0])), mm_ref,
              _check("matmul"), timeout=60),
        Entry("threads.Matmul[one object]", "matmul", mk, _one_matmul, mm_ref,
              _check("matmul"), timeout=60),
        Entry("threads.Matmul[separate objects]", "matmul", mk, _separate_matmul, mm_refs,
              _check("matmul"), timeout=60),
        Entry("threads.linalg.solve", "linalg.solve", _spd_set,
              lambda d: _run(lambda i: gl.linalg.solve(d["a"][i], d["b"][i])), solve_refs,
              _check("linalg.solve"), timeout=60),
        Entry("threads.linalg.svd[shared input]", "linalg.svd", _spd_set,
              lambda d: _run(lambda i: gl.linalg.svdvals(d["a"][0])),
              lambda d: [np.linalg.svd(d["a"][0], compute_uv=False)] * THREADS,
              _check("linalg.svdvals"), timeout=60),
        Entry("threads.cg[shared A]", "sparse.linalg.cg", _sparse_set,
              lambda d: _run(lambda i: gl.sparse.linalg.cg(d["S"], d["x"][i], rtol=1e-12)),
              lambda d: [np.linalg.solve(d["S"].toarray(), d["x"][i]) for i in range(THREADS)],
              _check("sparse.linalg.cg"), timeout=60),
        Entry("threads.A@x[one object]", "sparse.matmul", _sparse_set,
              lambda d: _run(lambda i: d["G"] @ d["x"][i]), spmv_refs,
              _check("sparse.matmul"), timeout=60),
        Entry("threads.A@x[separate objects]", "sparse.matmul", _sparse_set,
              lambda d: _run(lambda i: d["Gs"][i] @ d["x"][i]), spmv_refs,
              _check("sparse.matmul"), timeout=60),
        Entry("threads.DirectSolver[one object]", "sparse.DirectSolver", _sparse_set,
              _direct_one, lambda d: [np.linalg.solve(d["S"].toarray(), d["x"][0])] * THREADS,
              _check("sparse.DirectSolver"), timeout=60),
    ]
