"""Which public callables of gpula have hostile cases: a name is covered by an entry called the
same, or called the same followed by "[" (a variant) or "." (a method or a call order)."""

from __future__ import annotations

import enum
import importlib
import inspect
import types
from typing import Any

from .core import HAS_TORCH

# Public names that are data, not operations to attack.
EXEMPT = {"Epilog", "ComputeType", "distributed.ProcessGroup", "__version__"}
# Entries whose names do not start with what they cover.
ALIASES = {"matmul_cache_size": "matmul_cache", "matmul_cache_clear": "matmul_cache"}
MODULES = ("", "linalg.", "sparse.", "sparse.linalg.", "distributed.")
# gpula.torch's modules (optim's Muon and Shampoo too), covered where torch is installed (gpula.torch imports it).
TORCH_MODULES = ("torch.linalg.", "torch.functional.", "torch.nn.", "torch.optim.")


def modules() -> tuple[str, ...]:
    return MODULES + (TORCH_MODULES if HAS_TORCH else ())


def public_names(gl: Any) -> list[str]:
    """"<module>.<name>" of every public callable of gl and its public modules (exception classes,
    enums, result named tuples and modules left out)."""
    if HAS_TORCH:
        importlib.import_module(f"{gl.__name__}.torch")  # not imported by ``import gpula``
    out = []
    for prefix in modules():
        mod = gl
        for part in prefix.rstrip(".").split(".") if prefix else ():
            mod = getattr(mod, part)
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name)
            if isinstance(obj, types.ModuleType) or not callable(obj):
                continue
            if inspect.isclass(obj) and issubclass(obj, (BaseException, enum.Enum)):
                continue
            if inspect.isclass(obj) and issubclass(obj, tuple) and hasattr(obj, "_fields"):
                continue  # a result type (SVDResult, ...): covered by the function returning it
            out.append(prefix + name)
    return out


def covered(name: str, entry_names: list[str]) -> bool:
    name = ALIASES.get(name, name)
    return any(e == name or e.startswith((name + "[", name + ".")) for e in entry_names)


def uncovered(gl: Any) -> list[str]:
    from . import catalog

    names = [e.name for e in catalog.entries()]
    return [n for n in public_names(gl) if n not in EXEMPT and not covered(n, names)]
