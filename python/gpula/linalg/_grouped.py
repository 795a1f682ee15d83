"""Grouped calls: a Python list of matrices of different sizes through one batched call per
distinct (shape, dtype, package, device), results back in the list's order; and the renaming of
errors raised by the calls a composed function makes (svd, eigh, matmul) after that function."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from .. import _interop
from .._gpula import Error, InvalidArgument
from ._operands import array_module, as_array, out_of_memory


class MatrixGroup(list):  # type: ignore[type-arg]
    """A list of matrices marked for a grouped call (:func:`group`)."""


def group(matrices: Any) -> MatrixGroup:
    """Marks a list (or tuple) of matrices of different sizes for a grouped call of the
    NumPy/SciPy-named functions: ``gl.linalg.eigh(gl.linalg.group(blocks))`` returns a list of
    results, one per item in order, computed by one batched call per distinct shape, dtype and
    device; an error names the list item. A plain list keeps NumPy's meaning there (one stacked
    array: ``eigh([a, b])`` is eigh of a batch of two). The gpula-named functions
    (orthogonalize, polar, inv_root, sqrtm_psd) take plain lists as groups too.

    Example:
        >>> import numpy as np, gpula as gl
        >>> [r.eigenvalues for r in gl.linalg.eigh(gl.linalg.group([np.eye(2), 2 * np.eye(3)]))]
        [array([1., 1.]), array([2., 2., 2.])]
    """
    if not isinstance(matrices, (list, tuple)):
        raise InvalidArgument(f"[linalg.group] matrices must be a list or tuple of matrices, got "
                              f"{type(matrices).__name__}")
    return MatrixGroup(matrices)


def is_group(a: Any, marked_only: bool = False) -> bool:
    """Whether a is a grouped call's list: a MatrixGroup (:func:`group`); unless marked_only
    (the NumPy-named functions), also a list (or tuple) of arrays, as opposed to one array or
    nested sequences of numbers: one item with a shape and a dtype (a NumPy, CuPy or torch
    array) makes the list a group, its other items read as arrays (nested sequences too) or
    refused naming their index. An empty list is an empty group."""
    if isinstance(a, MatrixGroup):
        return True
    if marked_only or not isinstance(a, (list, tuple)):
        return False
    return not a or any(hasattr(x, "shape") and hasattr(x, "dtype") for x in a)


@contextlib.contextmanager
def named_errors(op: str, arg: str) -> Iterator[None]:
    """Errors of what runs inside as errors of ``op`` naming ``arg``: a gpula error of an inner
    call (``[linalg.svd] ...``) gets op's prefix (its class and attributes kept); NumPy's
    MemoryError and torch's allocation failures become gl.OutOfMemory."""
    try:
        yield
    except Error as e:
        msg = str(e.args[0]) if e.args else str(e)
        if not msg.startswith(f"[{op}]"):
            inner, sep, rest = msg.partition("] ")
            where = f" (in {inner[1:]})" if sep and inner.startswith("[") else ""
            text = rest if where else msg
            named = text.startswith((f"{arg}:", f"{arg} "))  # "a: out of memory ..."
            e.args = (f"[{op}] {text if named else f'{arg}: {text}'}{where}",)
        raise
    except (MemoryError, RuntimeError) as e:
        oom = out_of_memory(op, arg, e)
        if oom is None:
            raise
        raise oom from None


def _stack(op: str, arg: str, xs: list[Any], idx: list[int]) -> Any:
    with named_errors(op, f"{arg}[{idx[0]}], ... (list items {', '.join(map(str, idx))})"):
        return array_module(xs[0]).stack(xs)


def _in_item(e: BaseException, item: int, matrices: int) -> BaseException:
    """e, its message naming the list item it is about; its batch index that item's where the
    item is one matrix (``matrices``: how many the item holds)."""
    e.args = (f"{e.args[0] if e.args else e} (list item {item})",)
    if matrices == 1 and isinstance(getattr(e, "batch_index", None), int):
        e.batch_index = item
    return e


def _matrices(x: Any) -> int:
    n = 1
    for d in x.shape[:-2]:
        n *= int(d)
    return n


def grouped(op: str, items: Any, fn: Callable[[Any], Any], arg: str = "a") -> list[Any]:
    """[fn(x) for x in items], computed as fn(stack(bucket)) for each bucket of items of one
    shape, dtype, package and device (an item alone in its bucket: fn(item), not stacked); fn
    takes a batch (b, ...) and returns an array or a (named, possibly nested) tuple of arrays
    batched the same way. Empty
    list: []. Items keep their own batch dimensions. An item that is no array of at least two
    dimensions raises naming it (``a[i]``); so does an error of fn on a bucket: ``(list item
    i)`` added to its message, the item found by its batch index or, where the error has none,
    by running the bucket's items one at a time."""
    arrays = []
    for i, x in enumerate(items):
        x = as_array(x, op, f"{arg}[{i}]")
        if len(x.shape) < 2:
            raise InvalidArgument(f"[{op}] {arg}[{i}] must be a matrix (..., m, n), got shape "
                                  f"{tuple(x.shape)}")
        arrays.append(x)
    buckets: dict[tuple, list[int]] = {}
    for i, x in enumerate(arrays):
        pkg = _interop.package_of(x)
        key = (tuple(x.shape), str(x.dtype), pkg.name, str(pkg.device_of(x)))
        buckets.setdefault(key, []).append(i)
    out: list[Any] = [None] * len(arrays)
    for idx in buckets.values():
        per = _matrices(arrays[idx[0]])
        if len(idx) == 1:
            try:
                out[idx[0]] = fn(arrays[idx[0]])
            except Error as e:
                raise _in_item(e, idx[0], per) from None
            continue
        stacked = _stack(op, arg, [arrays[i] for i in idx], idx)
        try:
            r = fn(stacked)
        except Error as e:  # a failing item: name it in the list, not in the stack
            batch_index = getattr(e, "batch_index", None)
            if isinstance(batch_index, int) and per and 0 <= batch_index < len(idx) * per:
                raise _in_item(e, idx[batch_index // per], per) from None
            for i in idx:  # which item? each alone
                try:
                    fn(arrays[i])
                except Error as one:
                    raise _in_item(one, i, per) from None
            e.args = (f"{e.args[0] if e.args else e} (list items {', '.join(map(str, idx))})",)
            raise
        for j, i in enumerate(idx):
            out[i] = _item_of(r, j)
    return out


def _item_of(r: Any, j: int) -> Any:
    """Item j of a batched result: r[j] of an array; of a tuple (a named tuple keeps its type,
    nested tuples such as ``(EighResult(w, v), info)`` their shape) each member's item j."""
    if not isinstance(r, tuple):
        return r[j]
    members = [_item_of(t, j) for t in r]
    return type(r)(*members) if hasattr(r, "_fields") else tuple(members)
