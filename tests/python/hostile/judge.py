"""Runs one case in this process and judges it by the contract in hostile.core.

A verdict is a dict: ``{"status": "ok" | "fail", "kind": ..., "detail": ...}``. Kinds of
failure: wrong (a result unlike the reference's), accepts-bad (a result where the reference
raises), rejects-good (an error for input the contract says is accepted), untyped (not a
gl.Error), not-builtin, prefix (message does not start with "[op]"), no-arg / no-value (message
does not name the argument / the value), stderr (printed something), modified (an input
changed), state (gpula left broken after the call), user-error-lost, harness (the suite itself).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
import tempfile
import warnings
import zlib
from typing import Any, Iterator

import numpy as np

from . import mutations
from .catalog import all_mutations
from .core import Case, NonFinite, is_torch, judge_error, same, snapshot

_libc = ctypes.CDLL(None)


@contextlib.contextmanager
def captured_output() -> Iterator[list[str]]:
    """What is written to file descriptors 1 and 2 inside the block (C stdio included)."""
    box = [""]
    sys.stdout.flush()
    sys.stderr.flush()
    saved = (os.dup(1), os.dup(2))
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 1)
        os.dup2(tmp.fileno(), 2)
        try:
            yield box
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            _libc.fflush(None)
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            os.close(saved[0])
            os.close(saved[1])
            tmp.seek(0)
            box[0] = tmp.read().decode(errors="replace")


def prepare(case: Case, seed: int) -> tuple[dict, dict]:
    """(arguments for gpula, arguments for the reference), drawn fresh for this seed and case."""
    e = case.entry
    rng = np.random.default_rng([seed, zlib.crc32(case.id.encode())])
    args = e.make(rng)
    gargs, rargs = dict(args), dict(args)
    todo: dict[str, str] = {}
    if case.kind == "mut":
        todo = {case.arg: case.mutation}
    elif case.kind == "all":
        todo = all_mutations(e, case.mutation)
    for name, m in todo.items():
        arg = next(a for a in e.args if a.name == name)
        gargs[name], rargs[name] = mutations.get(arg, m)(args[name], arg)
    if case.kind == "opt":
        kw = {**args.get("kw", {}), **case.opt.kw}
        gargs["kw"], rargs["kw"] = kw, dict(kw)
    return gargs, rargs


def _summary(x: Any) -> str:
    if isinstance(x, tuple):
        return "(" + ", ".join(_summary(v) for v in x[:4]) + ")"
    shape = getattr(x, "shape", None)
    return f"{type(x).__name__}{list(shape) if shape is not None else ''}"


def _mention(case: Case) -> Any:
    if case.kind == "mut":
        arg = next(a for a in case.entry.args if a.name == case.arg)
        if case.mutation in mutations.SHAPE_CHANGES:  # a mismatch: naming either side is right
            return tuple(n for a in case.entry.args for n in (a.name, *a.aliases))
        return (arg.name, *arg.aliases)
    if case.kind == "opt":
        return case.opt.mention
    if case.kind == "valid":
        return case.entry.mention
    return None


def _must_accept(case: Case) -> bool:
    if case.kind == "valid" or (case.kind == "opt" and case.opt.expect == "ref"):
        return True
    if case.kind == "all":  # every array as a torch tensor (of any view or layout) ...
        if case.mutation in mutations.NOT_WRITABLE and case.entry.outputs:
            return False  # ... except outputs gpula cannot write in place (a typed error)
        # requires_grad: gpula.sparse's products refuse it (not differentiable), typed
        return case.mutation.startswith("torch") and case.mutation not in mutations.AUTOGRAD
    if case.kind == "mut":
        arg = next(a for a in case.entry.args if a.name == case.arg)
        return mutations.must_accept(arg, case.mutation, case.entry.numpy_inputs)
    return False


def _python_signature_error(e: BaseException) -> bool:
    """Python's (or nanobind's) own TypeError for a call that does not match the signature."""
    msg = str(e)
    return type(e) is TypeError and any(s in msg for s in (
        "unexpected keyword argument", "positional argument", "incompatible function arguments"))


def _want_torch(case: Case) -> bool | None:
    """Whether results must be torch tensors (None: not decided by this case)."""
    if case.entry.torch_results:
        return True
    if case.kind == "all" and case.mutation.startswith("torch"):
        return True
    if case.kind in ("valid", "opt"):
        return False
    return None


def _package_of_results(result: Any, want: bool | None) -> str | None:
    if want is None:
        return None
    items = result if isinstance(result, tuple) else (result,)
    for r in items:
        if isinstance(r, np.ndarray) and want:
            return "result is a NumPy array for torch inputs"
        if is_torch(r) and not want:
            return "result is a torch tensor for NumPy inputs"
    return None


def fail(kind: str, detail: str) -> dict:
    return {"status": "fail", "kind": kind, "detail": detail.replace("\n", " ")[:220]}


OK = {"status": "ok", "kind": "", "detail": ""}


def run_case(case: Case, seed: int) -> dict:
    e = case.entry
    try:
        gargs, rargs = prepare(case, seed)
        snaps = {k: snapshot(v) for k, v in gargs.items() if k not in e.outputs}
    except Exception as x:  # noqa: BLE001
        return fail("harness", f"preparing the case: {type(x).__name__}: {x}")
    opt_expect = case.opt.expect if case.kind == "opt" else None
    must_raise = e.ref is None or opt_expect in ("raise", "signature", "user")
    user = e.user_error or opt_expect == "user"
    ref: Any = None
    ref_exc: BaseException | None = None
    if not must_raise:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                ref = e.ref(rargs)
            except NonFinite as x:
                ref = x
            except Exception as x:  # noqa: BLE001
                ref_exc = x
    exc: BaseException | None = None
    result: Any = None
    with captured_output() as out, warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        try:
            result = e.call(gargs)
        except Exception as x:  # noqa: BLE001
            exc = x
    try:
        state = e.after(gargs, exc is not None) if e.after else None
        changed = [k for k, s in snaps.items() if not same(s, snapshot(gargs[k]))]
    except Exception as x:  # noqa: BLE001
        return fail("harness", f"after the call: {type(x).__name__}: {x}")
    if out[0].strip():
        return fail("stderr", f"printed: {out[0].strip()[:160]!r}")
    if changed:
        return fail("modified", f"input {', '.join(changed)} changed by the call")
    if state:
        return fail("state", state)
    if exc is not None:
        msg = f"{type(exc).__name__}: {str(exc).strip()[:170]}"
        if user:
            return OK if "user-raised" in str(exc) else fail("user-error-lost", msg)
        if opt_expect == "signature" and _python_signature_error(exc):
            return OK
        if not must_raise and ref_exc is None and _must_accept(case):
            return fail("rejects-good", msg)
        extra = mutations.value_words(case.mutation) if case.kind == "mut" else None
        bad = judge_error(exc, e.op, _mention(case), extra)
        return fail(*bad) if bad else OK
    if must_raise or user:
        return fail("accepts-bad", f"returns {_summary(result)}; expected an error")
    if ref_exc is not None:
        return fail("accepts-bad", f"returns {_summary(result)} where the reference raises "
                                   f"{type(ref_exc).__name__}: {str(ref_exc)[:90]}")
    try:
        with np.errstate(all="ignore"):
            wrong = e.check(result, ref, gargs, case.kind == "valid")
            wrong = wrong or _package_of_results(result, _want_torch(case))
    except Exception as x:  # noqa: BLE001
        wrong = f"result {_summary(result)} not comparable: {type(x).__name__}: {x}"
    return fail("wrong", wrong) if wrong else OK

