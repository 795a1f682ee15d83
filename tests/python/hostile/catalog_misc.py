"""gl.devices, gl.set_log_level, gl.matmul_cache_*, gl.MatmulOptions and gl.distributed (what
runs in one process; the multi-GPU calls must raise a typed error where there is no GPU)."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

import gpula as gl

from .core import HAS_CUDA, Arg, Entry, Opt, as_np, close

D = gl.distributed


def _int_ok(*vals: Any) -> None:
    for v in vals:  # bool is an int to Python (operator.index(True) == 1): either answer is fine
        if not isinstance(v, (int, np.integer)):
            raise TypeError("an int")
        if not -(2**63) <= int(v) < 2**63:
            raise ValueError("out of int64")


def _proc_ok(nb: int, nprocs: int, *procs: int) -> None:
    if nb < 1 or nprocs < 1 or any(not 0 <= p < nprocs for p in procs):
        raise ValueError("bad layout")


# ScaLAPACK's index functions, 0-based.
def _numroc(n: int, nb: int, iproc: int, isrc: int, nprocs: int) -> int:
    _int_ok(n, nb, iproc, isrc, nprocs)
    _proc_ok(nb, nprocs, iproc, isrc)
    if n < 0:
        raise ValueError("n < 0")
    dist = (nprocs + iproc - isrc) % nprocs
    nblocks, extra = divmod(n // nb, nprocs)
    num = nblocks * nb
    if dist < extra:
        num += nb
    elif dist == extra:
        num += n % nb
    return num


def _owner(g: int, nb: int, isrc: int, nprocs: int) -> int:
    _int_ok(g, nb, isrc, nprocs)
    _proc_ok(nb, nprocs, isrc)
    if g < 0:
        raise ValueError("g < 0")
    return (isrc + g // nb) % nprocs


def _g2l(g: int, nb: int, nprocs: int) -> int:
    _int_ok(g, nb, nprocs)
    _proc_ok(nb, nprocs)
    if g < 0:
        raise ValueError("g < 0")
    return (g // (nb * nprocs)) * nb + g % nb


def _l2g(l: int, nb: int, iproc: int, isrc: int, nprocs: int) -> int:  # noqa: E741
    _int_ok(l, nb, iproc, isrc, nprocs)
    _proc_ok(nb, nprocs, iproc, isrc)
    if l < 0:
        raise ValueError("l < 0")
    return _in_int64(((l // nb) * nprocs + (nprocs + iproc - isrc) % nprocs) * nb + l % nb)


def _in_int64(v: int) -> int:
    """An index past int64 is an error (OverflowError is not a typed error; no wrap-around)."""
    if not -(2**63) <= v < 2**63:
        raise ValueError("result out of int64")
    return v


def _index_entry(name: str, f: Any, params: tuple[str, ...], values: tuple[int, ...]) -> Entry:
    return Entry(
        f"distributed.{name}", f"distributed.{name}", lambda g: dict(zip(params, values)),
        lambda d: getattr(D, name)(*(d[p] for p in params)),
        lambda d: f(*(d[p] for p in params)),
        lambda r, ref, d, strict: None if r == ref and type(r) is int else f"{r!r} != {ref!r}",
        tuple(Arg(p, "int") for p in params))


def _scatter_ref(d: dict) -> Any:
    a = np.asarray(as_np(d["a"]))
    if a.shape != (5, 4) or a.dtype.kind not in "biufc":
        raise ValueError("a must be (5, 4)")
    rows = [i for i in range(5) if (i // 2) % 2 == d["prow"]]
    return np.asfortranarray(a[rows, :])


def _gather(d: dict) -> Any:
    return D.BlockCyclic(m=5, n=4, mb=2, nb=2, nprow=2).gather(d["local"], 1, 0, d["out"])


def _gather_ref(d: dict) -> Any:
    local, out = np.asarray(as_np(d["local"])), np.asarray(as_np(d["out"]))
    if local.shape != (2, 4) or out.shape != (5, 4) or local.dtype != out.dtype:
        raise ValueError("shapes")
    if not out.flags.writeable:
        raise ValueError("out is read-only")
    r = out.copy()  # rows owned by other processes keep out's values
    r[[2, 3], :] = local
    return r


# ---------------------------------------------------------------------------------------------
# set_log_level: a failed call leaves the level as it was and gpula working.


def _level_ref(d: dict) -> Any:
    v = d["kw"]["level"]
    if isinstance(v, str):
        value = logging.getLevelName(v.upper())
        if not isinstance(value, int):
            raise ValueError("unknown level")
        return value
    if isinstance(v, bool):
        raise TypeError("a bool is not a level")
    _int_ok(v)
    if not 0 <= v < 2**31:
        raise ValueError("level out of range")
    return v


def _level_after(d: dict, raised: bool) -> str | None:
    logger = logging.getLogger("gpula")
    level = d["level_seen"] = logger.level  # for _level_check, which runs after the reset below
    try:
        if raised and level != d["before"]:
            return f"failed call left the level at {level} (was {d['before']})"
        try:
            gl.matmul(np.ones((2, 2)), np.ones((2, 2)))
        except Exception as e:  # noqa: BLE001
            return f"gpula broken after set_log_level: {type(e).__name__}: {str(e)[:80]}"
        return None
    finally:
        logger.setLevel(logging.WARNING)
        gl.set_log_level("WARNING")


def _level_check(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    level = d["level_seen"]
    return None if level == ref else f"level {level}, expected {ref}"


_LEVELS = (("int_40", 40, "ref"), ("lower_name", "debug", "ref"), ("huge", 2**40, "ref"),
           ("overflow", 2**70, "ref"), ("bogus_name", "bogus", "ref"), ("none", None, "ref"),
           ("float", 1.5, "ref"), ("bool", True, "ref"), ("list", [], "ref"))


def _cache_size(d: dict) -> Any:
    gl.matmul(np.ones((2, 3)), np.ones((3, 2)))
    n = gl.matmul_cache_size(**d["kw"])
    gl.matmul_cache_clear()
    return n, gl.matmul_cache_size()


def _dist_ref(kind: str) -> Any:
    def ref(d: dict) -> Any:
        a = np.asarray(as_np(d["a"]))
        if a.dtype.kind in "biu":
            a = a.astype(np.float64)
        if a.dtype not in (np.float32, np.float64) or not np.isfinite(a).all():
            raise ValueError("a")
        if kind == "cholesky":
            return np.linalg.cholesky(a)
        if kind == "solve":
            return np.linalg.solve(a, np.asarray(as_np(d["b"])))
        return np.linalg.eigh(a)[0]

    return ref


def _dist_check(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    return close(r[0] if isinstance(r, tuple) else r, ref)


def _spd(g: np.random.Generator) -> np.ndarray:
    x = g.standard_normal((4, 4))
    return x @ x.T + 4 * np.eye(4)


def entries() -> list[Entry]:
    mat = Arg("a", "mat")
    out = [
        Entry("devices", "devices", lambda g: {"kw": {}}, lambda d: gl.devices(**d["kw"]),
              lambda d: None if d["kw"] else {"cpu"},
              lambda r, ref, d, s: None if "cpu" in r["devices"] else f"devices {r}",
              options=(Opt("unknown_kw", {"foo": 1}, expect="signature", mention="foo"),)),
        Entry("set_log_level", "set_log_level",
              lambda g: {"kw": {"level": "INFO"}, "before": logging.getLogger("gpula").level},
              lambda d: gl.set_log_level(**d["kw"]), _level_ref, _level_check,
              options=tuple(Opt(n, {"level": v}, expect=e, mention="level")
                            for n, v, e in _LEVELS),
              after=_level_after, mention="level"),
        Entry("matmul_cache", "matmul_cache_size", lambda g: {"kw": {}}, _cache_size,
              lambda d: None, lambda r, ref, d, s: None if r[0] >= 1 and r[1] == 0 else f"{r}",
              options=(Opt("unknown_kw", {"foo": 1}, expect="signature", mention="foo"),)),
        Entry("MatmulOptions", "matmul", lambda g: {"kw": {}, "a": g.standard_normal((3, 3))},
              lambda d: gl.matmul(d["a"], d["a"], options=gl.MatmulOptions(**d["kw"])),
              lambda d: d["a"] @ d["a"], lambda r, ref, d, s: close(r, ref),
              options=(Opt("unknown_field", {"foo": 1}, expect="signature", mention="foo"),
                       Opt("compute_type_name", {"compute_type": "COMPUTE_64F"}, expect="ref"),
                       Opt("memory_limit_str", {"memory_limit": "lots"},
                           mention="memory_limit"))),
        _index_entry("numroc", _numroc, ("n", "nb", "iproc", "isrcproc", "nprocs"),
                     (10, 3, 1, 0, 2)),
        _index_entry("owner", _owner, ("g", "nb", "isrcproc", "nprocs"), (10, 3, 1, 2)),
        _index_entry("global_to_local", _g2l, ("g", "nb", "nprocs"), (10, 3, 2)),
        _index_entry("local_to_global", _l2g, ("l", "nb", "iproc", "isrcproc", "nprocs"),
                     (4, 3, 1, 0, 2)),
        Entry("distributed.BlockCyclic.local_shape", ("distributed.local_shape",
                                                      "distributed.BlockCyclic"),
              lambda g: {"prow": 1, "pcol": 0},
              lambda d: D.BlockCyclic(m=5, n=4, mb=2, nb=2, nprow=2).local_shape(
                  d["prow"], d["pcol"]),
              lambda d: (_numroc(5, 2, d["prow"], 0, 2), _numroc(4, 2, d["pcol"], 0, 1)),
              lambda r, ref, d, s: None if r == ref else f"{r} != {ref}",
              (Arg("prow", "int"), Arg("pcol", "int"))),
        Entry("distributed.BlockCyclic[bad fields]", ("distributed.BlockCyclic",
                                                      "distributed.local_shape"),
              lambda g: {}, lambda d: D.BlockCyclic(m=-5, n=4, mb=0).local_shape(0, 0), None,
              lambda r, ref, d, s: None, mention=("m", "mb")),
        Entry("distributed.BlockCyclic.scatter", "distributed.scatter",
              lambda g: {"a": g.standard_normal((5, 4)), "prow": 1},
              lambda d: D.BlockCyclic(m=5, n=4, mb=2, nb=2, nprow=2).scatter(d["a"], d["prow"], 0),
              _scatter_ref, lambda r, ref, d, s: close(r, ref), (mat, Arg("prow", "int"))),
        Entry("distributed.BlockCyclic.gather", "distributed.gather",
              lambda g: {"local": g.standard_normal((2, 4)), "out": np.zeros((5, 4))}, _gather,
              _gather_ref, lambda r, ref, d, s: close(r, ref),
              (Arg("local", "mat"), Arg("out", "mat")), outputs=("out",)),
        Entry("distributed.init", "distributed.init", lambda g: {"kw": {}},
              lambda d: D.init(**d["kw"]), lambda d: 1,
              lambda r, ref, d, s: None if r.size == 1 and r.rank == 0 else f"{r}",
              options=(Opt("comm_bogus", {"comm": "bogus"}, mention="comm"),
                       Opt("comm_int", {"comm": 5}, mention="comm"),
                       Opt("backend_bogus", {"backend": "mpi"}, mention="backend"),
                       Opt("device_neg", {"device": -1}, mention="device"))),
        Entry("distributed.has_mp", "distributed.has_mp", lambda g: {}, lambda d: D.has_mp(),
              lambda d: None, lambda r, ref, d, s: None if isinstance(r, bool) else f"{r!r}"),
        Entry("distributed.matmul[no layout]", "distributed.matmul",
              lambda g: {"a": np.ones((2, 2))}, lambda d: D.matmul(d["a"], d["a"], d["a"]),
              None, lambda r, ref, d, s: None, mention="layout"),
        Entry("distributed.communicator", "distributed.communicator", lambda g: {},
              lambda d: D.communicator(), (lambda d: "any") if D.has_mp() else None,
              lambda r, ref, d, s: None),
    ]
    # Without a GPU the distributed solvers must refuse with a typed error naming the operation
    # (NotSupported); their argument cases apply only where they run.
    gpu = HAS_CUDA
    for kind in ("cholesky", "solve", "eigh"):
        make = (lambda g: {"a": _spd(g), "b": g.standard_normal(4)}) if kind == "solve" else (
            lambda g: {"a": _spd(g)})
        call = {"cholesky": lambda d: D.cholesky(d["a"]),
                "solve": lambda d: D.solve(d["a"], d["b"]),
                "eigh": lambda d: D.eigh(d["a"])}[kind]
        out.append(Entry(f"distributed.{kind}", f"distributed.{kind}", make, call,
                         _dist_ref(kind) if gpu else None, _dist_check, (mat,) if gpu else ()))
    return out

