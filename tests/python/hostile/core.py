"""The case model and the contract every case is judged by.

A case calls one public callable on arguments derived from a valid set (an Entry's ``make``), and
its reference (NumPy/SciPy, float64 inputs) on the same arguments. The call must either

(a) return what the reference returns (checked by the Entry's ``check``), where the reference
    accepts the input, or
(b) raise an exception that is a gl.Error AND a builtin (ValueError, TypeError, MemoryError,
    NotImplementedError, RuntimeError; numpy.linalg.LinAlgError is a ValueError), whose message
    starts with the operation ("[<op>] ..." or "<op>: ...") and names the argument,

leave every input unchanged and print nothing (stdout/stderr at the file-descriptor level). A
reference that raises means the input is bad: then only (b) passes. Inputs that NumPy accepts and
the contract says gpula accepts too (odd strides, read-only, lists and integers for NumPy-named
functions, ...) must give (a).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import re
import sys
from typing import Any, Callable

import numpy as np

HAS_TORCH = importlib.util.find_spec("torch") is not None

import gpula as gl

# device="cuda" and GPU-only options are valid where a GPU is; elsewhere a typed error.
HAS_CUDA = gl.devices()["cuda_device_count"] > 0
WITH_GPU = "ref" if HAS_CUDA else "raise"

# The builtins a gl.Error must also be (common.md's hierarchy: InvalidArgument is a ValueError,
# DTypeError a TypeError, OutOfMemory a MemoryError, LinAlgError numpy's (a ValueError),
# NotSupported and vendor errors RuntimeErrors).
ALLOWED_BUILTINS = (ValueError, TypeError, MemoryError, NotImplementedError, RuntimeError)


class NotApplicable(Exception):
    """A mutation that does not apply to this argument (e.g. batch dims on a sparse matrix)."""


class NonFinite(Exception):
    """Raised by a reference whose input holds NaN/Inf where the contract allows either a typed
    error or a result that shows it (the entry's check gets this exception as the reference)."""


@dataclasses.dataclass(frozen=True)
class Arg:
    """An argument the mutations work on. kind: "mat" (..., m, n), "vec" (n,), "sparse" (a
    scipy CSR matrix), "piv" (LAPACK pivots), "int" (a Python int). batch: leading batch
    dimensions are accepted.
    huge: makes a huge zero-stride view of the value (None: no such case)."""

    name: str
    kind: str
    batch: bool = False
    huge: Callable[[Any], Any] | None = None
    aliases: tuple[str, ...] = ()  # other names an error message may use for it
    only: tuple[str, ...] | None = None  # the mutations that apply (None: all of its kind)
    skip: tuple[str, ...] = ()  # mutations that do not apply (a rule the reference lacks)


@dataclasses.dataclass(frozen=True)
class Opt:
    """A change of keyword arguments (``kw`` replaces entries of args["kw"]). expect: "raise" (a
    typed error naming ``mention``), "ref" (the reference decides), or "signature" (Python's own
    TypeError for an unknown keyword is fine too)."""

    label: str
    kw: dict
    expect: str = "raise"
    mention: str | tuple[str, ...] | None = None


@dataclasses.dataclass
class Entry:
    """One public callable (or one scenario of a stateful object).

    make(rng) -> args (a dict; "kw" holds keyword arguments); call(args) -> result of gpula;
    ref(args) -> the reference's result (raising means the input is bad; None: the call must
    raise); check(result, ref, args, strict) -> None or what is wrong (strict: the valid case,
    where return types and shapes are checked too)."""

    name: str
    op: str | tuple[str, ...]  # the operation(s) an error message may start with, in brackets
    make: Callable[[np.random.Generator], dict]
    call: Callable[[dict], Any]
    ref: Callable[[dict], Any] | None
    check: Callable[[Any, Any, dict, bool], str | None]
    args: tuple[Arg, ...] = ()
    numpy_inputs: bool = False  # takes what numpy.asarray takes (lists, integer arrays), as NumPy
    options: tuple[Opt, ...] = ()
    mention: str | tuple[str, ...] | None = None  # what an error of the valid case must name
    outputs: tuple[str, ...] = ()  # arguments the call writes (not checked for changes)
    after: Callable[[dict, bool], str | None] | None = None  # state check after the call
    user_error: bool = False  # the call must pass the user's own exception (a callback's) on
    all_torch: bool = True  # every array input is an argument (so all:torch makes them all torch)
    torch_results: bool = False  # results are torch tensors whatever the inputs (gpula.torch)
    timeout: float = 15.0


@dataclasses.dataclass(frozen=True)
class Case:
    id: str
    entry: Entry
    kind: str  # "valid" | "mut" | "opt" | "all"
    arg: str | None = None
    mutation: str | None = None
    opt: Opt | None = None


# ---------------------------------------------------------------------------------------------
# Values


def torch_module() -> Any:
    """torch, imported on first use (seconds; most cases do not need it)."""
    import torch

    return torch


def is_torch(x: Any) -> bool:
    t = sys.modules.get("torch")
    return t is not None and isinstance(x, t.Tensor)


def as_np(x: Any) -> Any:
    """Arrays of any kind (torch, gl csr_matrix, scipy sparse) as NumPy; other values as is."""
    if is_torch(x):
        if x.layout != torch_module().strided:
            x = x.to_dense()
        return x.detach().cpu().resolve_conj().resolve_neg().numpy()
    if isinstance(x, gl.sparse.csr_matrix):
        return np.asarray(as_np(x.to_dense()))
    if hasattr(x, "toarray") and type(x).__module__.startswith("scipy.sparse"):
        return x.toarray()
    return x


def _csr_like(x: Any) -> bool:
    return all(hasattr(x, k) for k in ("data", "indices", "indptr", "shape"))


def snapshot(x: Any) -> Any:
    """A copy of x's contents to compare with after the call (arrays by value; objects gpula
    cannot change, such as functions, by identity)."""
    if isinstance(x, np.ndarray) and x.size > 10**7:  # a zero-stride giant: its memory's owner
        root, up = x, x.base
        while up is not None:  # as_strided's views hold their array through a DummyArray
            if isinstance(up, np.ndarray):
                root = up
            up = getattr(up, "base", None)
        return ("nd-view", root.copy(), x.dtype, x.shape, x.strides, x.flags.writeable)
    if isinstance(x, np.ndarray):
        return ("nd", x.copy(), x.dtype, x.shape, x.strides, x.flags.writeable)
    if is_torch(x):
        if x.layout != torch_module().strided:
            return ("ts", x.to_dense().clone())
        # The lazy bits and autograd flags too: gpula must not resolve a view in place.
        return ("t", x.detach().clone().resolve_conj().resolve_neg(), x.stride(),
                x.storage_offset(), x.is_conj(), x.is_neg(), x.requires_grad)
    if _csr_like(x) and not isinstance(x, np.ndarray):
        arrays = tuple(snapshot(getattr(x, k)) for k in ("data", "indices", "indptr"))
        return ("csr", arrays, tuple(x.shape))
    if type(x).__module__.startswith("scipy.sparse") and hasattr(x, "row"):
        return ("coo", tuple(snapshot(getattr(x, k)) for k in ("data", "row", "col")))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(snapshot(v) for v in x))
    if isinstance(x, dict):
        return ("dict", tuple((k, snapshot(v)) for k, v in x.items()))
    if x is None or isinstance(x, (bool, int, float, complex, str, bytes, np.generic)):
        return ("v", x)
    return ("id", id(x))


def same(a: Any, b: Any) -> bool:
    """Whether two snapshots are equal (NaN equal to NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, np.ndarray):
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        if a.dtype.kind in "fc":
            return bool(np.array_equal(a, b, equal_nan=True))
        return bool(np.array_equal(a, b))
    if is_torch(a):
        t = torch_module()
        return a.dtype == b.dtype and a.shape == b.shape and bool(t.equal(
            t.nan_to_num(a, nan=1234.5), t.nan_to_num(b, nan=1234.5)))
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and a != a:
        return b != b
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001
        return False


# ---------------------------------------------------------------------------------------------
# Checks used by the catalogs


def tol_of(dtype: Any) -> float:
    """Relative tolerance for results of this dtype (numpy or torch dtype, or its name)."""
    name = str(dtype).replace("torch.", "")
    if name in ("float16", "bfloat16"):
        return 2e-2
    if name in ("float32", "complex64"):
        return 2e-4
    return 1e-8


def close(x: Any, ref: Any, what: str = "result", tol: float | None = None) -> str | None:
    """None when array x equals ref (same shape, NaN where ref is NaN, relative error <= tol)."""
    xn = np.asarray(as_np(x))
    rn = np.asarray(as_np(ref))
    if xn.dtype == object or rn.dtype == object:
        return f"{what} is an object array"
    if xn.shape != rn.shape:
        return f"{what} shape {xn.shape}, reference {rn.shape}"
    if tol is None:
        tol = max(tol_of(xn.dtype), tol_of(rn.dtype))
    ct = np.complex128 if np.iscomplexobj(xn) or np.iscomplexobj(rn) else np.float64
    xf, rf = np.atleast_1d(xn.astype(ct)), np.atleast_1d(rn.astype(ct))  # 0-d: masks index
    xnan, rnan = np.isnan(xf), np.isnan(rf)
    if not np.array_equal(xnan, rnan):
        return f"{what} has NaN at {int(xnan.sum())} places, reference at {int(rnan.sum())}"
    keep = ~rnan
    xi, ri = np.isinf(xf[keep]), np.isinf(rf[keep])
    if not np.array_equal(xi, ri) or not np.array_equal(xf[keep][ri], rf[keep][ri]):
        return f"{what} has Inf where the reference has not (or the other way)"
    finite = keep.copy()
    finite[keep] = ~ri
    if not finite.any():
        return None
    err = np.linalg.norm(xf[finite] - rf[finite]) / max(np.linalg.norm(rf[finite]), 1.0)
    if not err <= tol:
        return f"{what} differs from the reference: relative error {err:.2e} > {tol:.0e}"
    return None


def first(*msgs: str | None) -> str | None:
    for m in msgs:
        if m:
            return m
    return None


def dtype_check(x: Any, ref: Any, what: str = "result") -> str | None:
    xd = str(as_np(x).dtype) if hasattr(as_np(x), "dtype") else type(x).__name__
    rd = str(np.asarray(ref).dtype)
    if xd != rd:
        return f"{what} dtype {xd}, reference {rd}"
    return None


def finite_check(*arrays: Any) -> None:
    """SciPy's check_finite=True rule for the references of dense linalg functions."""
    for a in arrays:
        a = np.asarray(as_np(a))
        if a.dtype.kind in "fc" and not np.isfinite(a).all():
            raise ValueError("array must not contain infs or NaNs")


def names_in(message: str, names: str | tuple[str, ...] | None) -> bool:
    """Whether message names one of names (as a word, or a quoted word)."""
    if names is None:
        return True
    if isinstance(names, str):
        names = (names,)
    for n in names:
        if re.search(r"(?<![A-Za-z0-9_])" + re.escape(n) + r"(?![A-Za-z0-9_])", message, re.I):
            return True
    return False


def starts_with_op(message: str, op: str) -> bool:
    """Whether message starts by naming the operation: "[op] ..." (the library's form) or
    "op: ..." (issue 17's), op optionally written with "gl." or "gpula." in front, or one of
    its methods ("[matmul.reset_operands] ...")."""
    for name in (op, f"gl.{op}", f"gpula.{op}"):
        if message.startswith((f"[{name}]", f"{name}:", f"[{name}.")):
            return True
    return False


def judge_error(e: BaseException, op: str | tuple[str, ...], mention: Any,
                extra: Any = None) -> tuple[str, str] | None:
    """(kinds, detail) of what is wrong with an exception raised by gpula, or None when it keeps
    the contract: a gl.Error and a builtin, the operation first, naming the argument (and, for some
    mutations, the offending value: ``extra``). kinds joins every problem found with "+":
    untyped (not a gpula exception), not-gl.Error (a gpula class outside the gl.Error
    hierarchy), not-builtin, prefix, no-arg, no-value."""
    msg = str(e).strip().replace("\n", " ")
    kinds = []
    if not isinstance(e, gl.Error):
        gpula_class = type(e).__module__.split(".")[0] == "gpula"
        kinds.append("not-gl.Error" if gpula_class else "untyped")
    elif not isinstance(e, ALLOWED_BUILTINS):
        kinds.append("not-builtin")
    ops = (op,) if isinstance(op, str) else op
    if not any(starts_with_op(msg, o) for o in ops):
        kinds.append("prefix")
    elif not names_in(msg, mention):
        kinds.append("no-arg")
    elif extra is not None and not names_in(msg, extra):
        kinds.append("no-value")
    if not kinds:
        return None
    return "+".join(kinds), f"{type(e).__name__}: {msg[:170]}"
