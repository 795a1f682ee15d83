"""Grouped calls: a Python list of matrices of different sizes through one batched call per
distinct (shape, dtype, package, device), results back in the list's order."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import _interop
from ..errors import InvalidArgument
from ._operands import array_module, as_array


def is_group(a: Any) -> bool:
    """A list (or tuple) of arrays, as opposed to one array or nested sequences of numbers."""
    if not isinstance(a, (list, tuple)):
        return False
    return all(hasattr(x, "shape") and hasattr(x, "dtype") for x in a)


def _stack(xs: list[Any]) -> Any:
    xp = array_module(xs[0])
    return xp.stack(xs)


def grouped(op: str, items: Any, fn: Callable[[Any], Any]) -> list[Any]:
    """[fn(x) for x in items], computed as fn(stack(bucket)) for each bucket of items of one
    shape, dtype, package and device; fn takes a batch (b, ...) and returns an array or a tuple
    of arrays batched the same way. Empty list: []. Items keep their own batch dimensions."""
    arrays = [as_array(x, op, f"a[{i}]") for i, x in enumerate(items)]
    buckets: dict[tuple, list[int]] = {}
    for i, x in enumerate(arrays):
        pkg = _interop.package_of(x)
        key = (tuple(x.shape), str(x.dtype), pkg.name, str(pkg.device_of(x)))
        buckets.setdefault(key, []).append(i)
    out: list[Any] = [None] * len(arrays)
    for idx in buckets.values():
        try:
            r = fn(_stack([arrays[i] for i in idx]))
        except InvalidArgument:
            raise
        except Exception as e:  # a failing item: name it in the list, not in the stack
            batch_index = getattr(e, "batch_index", None)
            per = 1
            for d in arrays[idx[0]].shape[:-2]:
                per *= int(d)
            if isinstance(batch_index, int) and per and 0 <= batch_index < len(idx) * per:
                item = idx[batch_index // per]
                e.args = (f"{e.args[0] if e.args else e} (list item {item})",)
                if per == 1:
                    e.batch_index = item
            raise
        for j, i in enumerate(idx):
            out[i] = tuple(t[j] for t in r) if isinstance(r, tuple) else r[j]
    return out
