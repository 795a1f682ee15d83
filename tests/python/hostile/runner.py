"""Runs cases in worker subprocesses so that a crash or a hang names its case and ends nothing
else.

A worker reads case ids on stdin and writes ``S <id>`` before each case and ``R <json>`` after
it on its stdout. The parent keeps two workers busy (one per core), each on a chunk of cases;
a case past its entry's timeout is a hang (the worker is killed, the chunk goes on in a new one).
A worker that dies is analysed once the run is over: its running case is re-run alone; when that
passes, the cases the worker ran before are bisected to find the one that broke the heap.

``python -m hostile.runner [--seed N] [ids or entry names...]`` runs cases from the command line
and prints the failures grouped by kind.
"""

from __future__ import annotations

import ctypes
import faulthandler
import json
import logging
import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from collections import deque
from typing import Any

CHUNK = 300
JOBS = 2
SELFTEST = "selftest|"  # the runner's own test cases: ok, ok2, segfault, hang
SELFTEST_TIMEOUT = 5.0
START_TIMEOUT = 120.0  # a worker's imports, on a loaded machine
_HERE = os.path.dirname(os.path.abspath(__file__))


def _env() -> dict[str, str]:
    import gpula

    paths = [os.path.dirname(_HERE), os.path.dirname(os.path.dirname(gpula.__file__))]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(paths + [p for p in [env.get("PYTHONPATH")] if p])
    env["PYTHONFAULTHANDLER"] = "1"
    env["MALLOC_PERTURB_"] = "165"  # freed memory poisoned: a use after free shows as a wrong value
    debug = "/lib/x86_64-linux-gnu/libc_malloc_debug.so.0"
    if os.path.exists(debug) and "LD_PRELOAD" not in env:
        env["LD_PRELOAD"] = debug  # glibc's checks on every malloc/free: a corruption crashes early
        env["MALLOC_CHECK_"] = "3"
    return env


class Worker:
    """One subprocess running a list of case ids."""

    def __init__(self, ids: list[str], seed: int, env: dict[str, str]):
        self.ids = list(ids)
        self.done: list[str] = []
        self.results: dict[str, dict] = {}
        self.current: str | None = None
        self.since = time.monotonic()
        self.buffer = b""
        self.finished = False
        self.err = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [sys.executable, "-c", "from hostile.runner import worker_main; worker_main()",
             str(seed)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.err, env=env,
            start_new_session=True)
        self.proc.stdin.write(("\n".join(ids) + "\n").encode())
        self.proc.stdin.close()

    def feed(self, data: bytes) -> None:
        self.buffer += data
        while b"\n" in self.buffer:
            line, self.buffer = self.buffer.split(b"\n", 1)
            text = line.decode(errors="replace")
            if text.startswith("S "):
                self.current, self.since = text[2:], time.monotonic()
            elif text.startswith("R "):
                r = json.loads(text[2:])
                self.results[r.pop("id")] = r
                self.done.append(self.current)
                self.current, self.since = None, time.monotonic()
            elif text == "DONE":
                self.finished = True

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()

    def stderr_tail(self) -> str:
        self.err.seek(0)
        lines = [ln for ln in self.err.read().decode(errors="replace").splitlines() if ln.strip()]
        useful = [ln for ln in lines if not ln.startswith(("  File", "    "))]
        return " | ".join(useful[-3:])[:200]

    def remaining(self) -> list[str]:
        return [i for i in self.ids if i not in self.results and i != self.current]


def _describe(rc: int | None) -> str:
    if rc is not None and rc < 0:
        try:
            return signal.Signals(-rc).name
        except ValueError:
            return f"signal {-rc}"
    return f"exit code {rc}"


def _timeout(case_id: str) -> float:
    if case_id.startswith(SELFTEST):
        return SELFTEST_TIMEOUT
    from . import catalog

    return catalog.case(case_id).entry.timeout


def run(ids: list[str], seed: int, jobs: int = JOBS, chunk: int = CHUNK) -> dict[str, dict]:
    """Verdicts of the cases ids (see hostile.judge), crashes and hangs included."""
    env = _env()
    ids = sorted(ids, key=_needs_torch)  # stable; torch's import (seconds) in as few workers
    queue = deque(ids[i:i + chunk] for i in range(0, len(ids), chunk))
    results: dict[str, dict] = {}
    alone: set[str] = set()  # cases re-run alone after their worker died running them
    crashes: list[tuple[list[str], str | None, str]] = []
    sel = selectors.DefaultSelector()
    live: list[Worker] = []
    while queue or live:
        while queue and len(live) < jobs:
            w = Worker(queue.popleft(), seed, env)
            sel.register(w.proc.stdout, selectors.EVENT_READ, w)
            live.append(w)
        for key, _ in sel.select(timeout=0.5):
            w = key.data
            data = os.read(key.fileobj.fileno(), 65536)
            if data:
                w.feed(data)
                continue
            sel.unregister(key.fileobj)
            rc = w.proc.wait()
            live.remove(w)
            results.update(w.results)
            if rc != 0 or not w.finished:
                how = f"{_describe(rc)}: {w.stderr_tail()}"
                if w.current in alone:  # it dies on its own: its own crash
                    results[w.current] = _crash(how)
                    continue
                crashes.append((list(w.done), w.current, how))
                rest = w.remaining()
                if rest:
                    queue.appendleft(rest)
                if w.current is not None:  # first, alone, while the other workers go on
                    alone.add(w.current)
                    queue.appendleft([w.current])
        now = time.monotonic()
        for w in list(live):
            limit = _timeout(w.current) if w.current else START_TIMEOUT if not w.done else 60.0
            if now - w.since > limit:
                sel.unregister(w.proc.stdout)
                w.kill()
                live.remove(w)
                results.update(w.results)
                if w.current:
                    results[w.current] = {"status": "fail", "kind": "hang",
                                          "detail": f"no answer after {limit:.0f} s (killed)"}
                rest = w.remaining()
                if rest:
                    queue.appendleft(rest)
    for done, culprit, how in crashes:
        _isolate(done, culprit, how, seed, env, results)
    return results


def _needs_torch(case_id: str) -> bool:
    return "torch" in case_id  # a torch mutation, or an entry of gpula.torch


def _crashes(ids: list[str], seed: int, env: dict[str, str]) -> tuple[bool, str, dict]:
    """Whether a fresh worker running ids dies (or hangs); how; the verdicts it gave."""
    w = Worker(ids, seed, env)
    deadline = time.monotonic() + START_TIMEOUT + sum(_timeout(i) for i in ids)
    with selectors.DefaultSelector() as sel:
        sel.register(w.proc.stdout, selectors.EVENT_READ)
        while time.monotonic() < deadline:
            if not sel.select(timeout=0.5):
                continue
            data = os.read(w.proc.stdout.fileno(), 65536)
            if not data:
                break
            w.feed(data)
        else:
            w.kill()
            return True, "hang", w.results
    rc = w.proc.wait()
    return rc != 0 or not w.finished, f"{_describe(rc)}: {w.stderr_tail()}", w.results


def _crash(detail: str) -> dict:
    return {"status": "fail", "kind": "crash", "detail": detail[:220]}


def _isolate(done: list[str], culprit: str | None, how: str, seed: int, env: dict[str, str],
             results: dict[str, dict]) -> None:
    """Names the case behind a dead worker: the running case if it died alone (run() re-ran it
    so), else the earlier case (found by bisection) after which it dies."""
    if culprit is not None and results.get(culprit, {}).get("kind") in ("crash", "hang"):
        return
    tail = [culprit] if culprit else []
    candidates = list(done)
    while len(candidates) > 1:
        half = candidates[: len(candidates) // 2]
        candidates = half if _crashes(half + tail, seed, env)[0] else candidates[len(half):]
    if candidates and _crashes(candidates + tail, seed, env)[0]:
        later = f"in {culprit}" if culprit else "at exit"
        results[candidates[0]] = _crash(f"the process died later ({later}: {how}); the heap "
                                        "or state is broken by this case")
    else:
        where = culprit or (done[-1] if done else "?")
        results[where] = _crash(f"{how} (not reproduced alone or after any one earlier case)")


# ---------------------------------------------------------------------------------------------
# The worker side


def _selftest(case_id: str) -> dict:
    """The runner's own cases (test_hostile_api checks that a crash and a hang are named)."""
    what = case_id[len(SELFTEST):]
    if what == "segfault":
        ctypes.string_at(0)
    elif what == "hang":
        time.sleep(10 * SELFTEST_TIMEOUT)
    return {"status": "ok", "kind": "", "detail": ""}


def worker_main() -> None:
    seed = int(sys.argv[-1])
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    # A crash's traceback goes to the real stderr, not to a case's captured output.
    faulthandler.enable(file=os.fdopen(os.dup(2), "w"))
    logging.getLogger("gpula").addHandler(logging.NullHandler())  # logs are not stderr prints
    from . import catalog, judge

    for line in sys.stdin.read().splitlines():
        if not line:
            continue
        proto.write(f"S {line}\n")
        proto.flush()
        t0 = time.monotonic()
        if line.startswith(SELFTEST):
            verdict = _selftest(line)
        else:
            verdict = judge.run_case(catalog.case(line), seed)
        verdict["seconds"] = round(time.monotonic() - t0, 4)
        proto.write("R " + json.dumps({"id": line, **verdict}) + "\n")
        proto.flush()
    proto.write("DONE\n")
    proto.flush()


# ---------------------------------------------------------------------------------------------
# Command line


def failures(results: dict[str, dict]) -> list[str]:
    """One line per failing case."""
    return [f"{cid}: {r['kind']}: {r['detail']}" for cid, r in results.items()
            if r["status"] != "ok"]


def main(argv: list[str]) -> int:
    """[--seed N] [--json FILE] [ids or entry names...]"""
    from . import catalog

    seed = int(os.environ.get("GPULA_TEST_SEED") or int.from_bytes(os.urandom(4), "little"))
    dump = None
    while argv[:1] in (["--seed"], ["--json"]):
        if argv[0] == "--seed":
            seed = int(argv[1])
        else:
            dump = argv[1]
        argv = argv[2:]
    ids = [i for i in catalog.cases() if not argv or i in argv or catalog.entry_of(i) in argv]
    t0 = time.monotonic()
    results = run(ids, seed)
    if dump:
        with open(dump, "w") as f:
            json.dump(results, f, indent=0)
    by_kind: dict[str, list[str]] = {}
    for line in failures(results):
        by_kind.setdefault(line.split(": ", 2)[1], []).append(line)
    for kind, lines in sorted(by_kind.items()):
        print(f"== {kind} ({len(lines)})")
        print("\n".join(lines))
    n_fail = sum(map(len, by_kind.values()))
    print(f"{len(ids)} cases, {n_fail} failing, seed {seed}, {time.monotonic() - t0:.1f} s")
    return 1 if n_fail else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
