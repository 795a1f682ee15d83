"""Every entry of the catalogs, expanded into cases with stable ids ``"<entry>|<what>"``:
``valid``, ``<arg>:<mutation>``, ``opt:<label>``, ``all:<mutation>`` (every array at once)."""

from __future__ import annotations

import functools

import numpy as np

from . import (
    catalog_eigsh,
    catalog_fp8,
    catalog_grouped,
    catalog_krylov,
    catalog_linalg,
    catalog_matmul,
    catalog_misc,
    catalog_optim,
    catalog_sparse,
    catalog_threads,
    catalog_torch,
    catalog_torch_optim,
    catalog_views,
    mutations,
)
from .core import HAS_TORCH, Arg, Case, Entry, NotApplicable

# What each whole-argument mutation is for each kind of argument.
ALL = {"torch": {"mat": "torch", "vec": "torch", "sparse": "torch_csr"},
       "empty": {"mat": "empty", "vec": "empty", "sparse": "empty"},
       "bf16": {"mat": "bf16", "vec": "bf16", "sparse": "f16_data"},
       **{m: {"mat": m, "vec": m, "sparse": "torch_csr"} for m in mutations.TORCH_VIEWS
          if m.startswith("torch_")}}


@functools.cache
def entries() -> tuple[Entry, ...]:
    return (*catalog_matmul.entries(), *catalog_grouped.entries(), *catalog_linalg.entries(),
            *catalog_optim.entries(), *catalog_sparse.entries(),
            *catalog_krylov.entries(), *catalog_eigsh.entries(), *catalog_misc.entries(),
            *catalog_threads.entries(), *catalog_torch.entries(), *catalog_torch_optim.entries(),
            *catalog_fp8.entries(), *catalog_views.entries())


def array_args(e: Entry) -> list[Arg]:
    return [a for a in e.args if a.kind in ("mat", "vec", "sparse")]


def all_mutations(e: Entry, name: str) -> dict[str, str]:
    """{arg name: mutation} for an ``all:<name>`` case."""
    return {a.name: ALL[name][a.kind] for a in array_args(e)}


def _applies(e: Entry, arg: Arg, name: str, base: dict) -> bool:
    if arg.only is not None and name not in arg.only or name in arg.skip:
        return False
    if name == "bf16" and e.torch_results:  # gpula.torch's entries make torch tensors of NumPy
        return False  # values, and torch.from_numpy has no bfloat16
    try:
        mutations.get(arg, name)(base[arg.name], arg)
    except NotApplicable:
        return False
    return True


@functools.cache
def cases() -> dict[str, Case]:
    out: dict[str, Case] = {}

    def add(case: Case) -> None:
        assert case.id not in out, case.id
        out[case.id] = case

    for e in entries():
        add(Case(f"{e.name}|valid", e, "valid"))
        base = e.make(np.random.default_rng(0)) if e.args else {}
        for arg in e.args:
            for m in arg.only or mutations.names_for(arg):
                if _applies(e, arg, m, base):
                    add(Case(f"{e.name}|{arg.name}:{m}", e, "mut", arg.name, m))
        for o in e.options:
            add(Case(f"{e.name}|opt:{o.label}", e, "opt", opt=o))
        if array_args(e):
            for m in ALL:
                if m.startswith("torch") and not (HAS_TORCH and e.all_torch):
                    continue
                if all(_applies(e, a, am, base) for a in array_args(e)
                       for an, am in all_mutations(e, m).items() if an == a.name):
                    add(Case(f"{e.name}|all:{m}", e, "all", mutation=m))
    return out


def entry_of(case_id: str) -> str:
    return case_id.split("|", 1)[0]


@functools.cache
def _by_name() -> dict[str, Entry]:
    return {e.name: e for e in entries()}


def case(case_id: str) -> Case:
    """The case of an id, without expanding the whole catalog (a worker's way)."""
    name, what = case_id.split("|", 1)
    e = _by_name()[name]
    if what == "valid":
        return Case(case_id, e, "valid")
    kind, _, rest = what.partition(":")
    if kind == "opt":
        return Case(case_id, e, "opt", opt=next(o for o in e.options if o.label == rest))
    if kind == "all":
        return Case(case_id, e, "all", mutation=rest)
    return Case(case_id, e, "mut", kind, rest)
