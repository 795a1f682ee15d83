"""gl.linalg's matrix functions for optimizers (issue 20): orthogonalize (Muon's Newton-Schulz),
polar, inv_root, sqrtm_psd, each also on a list of matrices (the grouped form: one batched call
per size), and cholesky(jitter="auto"), with valid arguments and their NumPy/SciPy references;
the grouped forms of eigvalsh (eigh's) and cholesky.

References: orthogonalize is Muon's iteration in float64 NumPy (as in
tests/python/test_linalg_optimizer_funcs.py), its tolerance that of the dtype it iterates in;
polar is scipy.linalg.polar (checked as p, u p = a and u's orthonormality, which hold for
rank-deficient a too); inv_root is scipy.linalg.fractional_matrix_power(a, -1/p) on positive
definite input, where an eigenvalue at or below the rounding floor (n eps max|w|, eps the
dtype's) must raise gl.NotPositiveDefinite (with clip=True: that floor instead, from NumPy's
eigh); sqrtm_psd is scipy.linalg.sqrtm on positive definite input, V sqrt(max(w, 0)) V^H from
NumPy's eigh otherwise; cholesky(jitter="auto") is NumPy's cholesky of each item, retried with
1e-8 ... 1e-4 times its mean |diagonal| added. eigh-based forms read the lower triangle.

Dtypes follow gl.linalg's rule: bool and integer input gives float64; orthogonalize keeps float16,
bfloat16, float32 and float64 (its result has g's dtype) and refuses complex with gl.DTypeError;
polar, inv_root and sqrtm_psd promote as numpy.linalg (float16 and bfloat16 to float32). Every
check compares the result's dtype with that rule and its package with the input's (each item's,
in a list), in every case, not only the valid one.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np
import scipy.linalg as sla

import gpula as gl

from .catalog_linalg import (
    N,
    _finite_unless,
    _h,
    _huge_batch,
    _kw,
    _lower_sym,
    _spd,
    _sq,
    _std_opts,
)
from .core import HAS_TORCH, Arg, Entry, Opt, close, first, is_torch, tol_of, torch_module

MUON = (3.4445, -4.7750, 2.0315)
NS_DTYPES = ("bfloat16", "float16", "float32", "float64")
JITTERS = (1e-8, 1e-7, 1e-6, 1e-5, 1e-4)
# The iteration's own error against float64 (relative, Frobenius): Muon's quintic does not
# converge, so rounding in a short float is carried along, not damped.
NS_TOL = {"bfloat16": 8e-2, "float16": 2e-2, "float32": 2e-4, "float64": 1e-8}


@dataclasses.dataclass
class Ref:
    """A reference result: value(s) in float64/complex128, the dtype the result must have, the
    relative tolerance, the argument whose package the result must have (looked up in the
    arguments gpula got: the torch mutation gives the reference the NumPy array), and what its
    check needs."""

    value: Any
    dtype: str
    tol: float
    src: str
    extra: dict = dataclasses.field(default_factory=dict)


# ---------------------------------------------------------------------------------------------
# Inputs: dtypes, packages, NumPy views


def _dtype(x: Any) -> str:
    """The dtype name of an array of any package (torch's bfloat16 too), or of what NumPy makes
    of x (a list)."""
    if is_torch(x):
        return str(x.dtype).replace("torch.", "")
    return np.asarray(x).dtype.name


def _linalg_dtype(x: Any) -> str:
    """numpy.linalg's promotion (gl.linalg's operands_of): bool and integers to float64, float16
    and bfloat16 to float32; TypeError for what is no number."""
    name = _dtype(x)
    if name in ("float16", "bfloat16"):
        return "float32"
    if name in ("float32", "float64", "complex64", "complex128"):
        return name
    if name == "bool" or name.startswith(("int", "uint")):
        return "float64"
    raise TypeError(f"dtype {name}")


def _ns_dtype(x: Any) -> str:
    """orthogonalize's rule: real floating dtypes kept, bool and integers to float64."""
    name = _dtype(x)
    if name in NS_DTYPES:
        return name
    if name == "bool" or name.startswith(("int", "uint")):
        return "float64"
    raise TypeError(f"orthogonalize takes real input, not {name}")


def _arr(x: Any) -> np.ndarray:
    """x as a NumPy array of numbers (a torch tensor's values, bfloat16 as float32), no copy of a
    NumPy array."""
    if is_torch(x):
        t = x.detach().cpu().resolve_conj()
        if str(t.dtype) == "torch.bfloat16":
            t = t.float()
        return t.numpy()
    a = np.asarray(x)
    if a.dtype.kind not in "biufc":
        raise TypeError(f"no numbers: dtype {a.dtype}")
    return a


def _wide(m: np.ndarray) -> np.ndarray:
    """One matrix in float64 (complex128 for complex), native byte order."""
    return m.astype(np.complex128 if m.dtype.kind == "c" else np.float64)


def _np64(x: Any) -> np.ndarray:
    """A result (any package, bfloat16 too) as a float64/complex128 NumPy array."""
    return _wide(_arr(x))


def _per_matrix(f: Callable[[np.ndarray], Any], a: np.ndarray) -> Any:
    """f on every matrix of a (..., m, n), stacked in a's batch shape; a broadcast (zero-stride)
    batch axis is computed once and broadcast again; f of the identity gives the shapes of an
    empty batch."""
    if a.ndim == 2:
        return f(a)
    batch = a.shape[:-2]
    if 0 in batch:
        one = f(np.eye(*a.shape[-2:], dtype=a.dtype))
        items = one if isinstance(one, tuple) else (one,)
        out = tuple(np.zeros(batch + np.shape(o), np.asarray(o).dtype) for o in items)
        return out if isinstance(one, tuple) else out[0]
    core = a[tuple(slice(0, 1) if st == 0 and n > 1 else slice(None)
                   for n, st in zip(batch, a.strides[:-2]))]
    outs = [f(core[idx]) for idx in np.ndindex(core.shape[:-2])]
    first_out = outs[0]
    items = list(zip(*outs)) if isinstance(first_out, tuple) else [outs]
    stacked = tuple(np.broadcast_to(np.stack(o).reshape(core.shape[:-2] + np.shape(o[0])),
                                    batch + np.shape(o[0])) for o in items)
    return stacked if isinstance(first_out, tuple) else stacked[0]


def _is_int(v: Any) -> bool:
    return isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_))


def _is_real(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(
        v, (bool, np.bool_))


def _is_bool(v: Any) -> bool:
    return isinstance(v, (bool, np.bool_))


def _square(a: np.ndarray) -> None:
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError("a must be square")


def _finite(d: dict, a: np.ndarray) -> None:
    """SciPy's check_finite=True (a bool check_finite; the bogus ones are the options')."""
    if not _is_bool(_kw(d).get("check_finite", True)):
        raise ValueError("check_finite must be a bool")
    _finite_unless(d, a)


def _square_operand(d: dict) -> tuple[np.ndarray, str]:
    """d["a"] as NumPy (finite unless check_finite=False, square) and the dtype of its
    promotion: what the square-matrix references start from."""
    want = _linalg_dtype(d["a"])
    x = _arr(d["a"])
    _finite(d, x)
    _square(x)
    return x, want


def _eye(n: int, like: np.ndarray) -> np.ndarray:
    return np.eye(n, dtype=like.dtype)


def _floor(w: np.ndarray, dtype: str) -> float:
    """gpula's rounding floor of eigenvalues w (ascending) in dtype: n eps max|w|."""
    eps = np.finfo(np.dtype(dtype.replace("complex128", "float64").replace("complex64",
                                                                          "float32"))).eps
    return float(len(w) * eps * max(np.abs(w).max(initial=0.0), np.finfo(np.float64).tiny))


# ---------------------------------------------------------------------------------------------
# Checks


def _item_wrong(r: Any, ref: Ref, d: dict, what: str = "result") -> str | None:
    """What is wrong with one result array: its package or dtype."""
    if not hasattr(r, "shape") or not hasattr(r, "dtype"):
        return f"{what} is a {type(r).__name__}, not an array"
    torch = is_torch(d[ref.src])
    if is_torch(r) != torch:
        return f"{what} is a {'torch tensor' if is_torch(r) else type(r).__name__}, the input " \
               f"{'a torch tensor' if torch else 'not'}"
    if _dtype(r) != ref.dtype:
        return f"{what} dtype {_dtype(r)}, expected {ref.dtype}"
    return None


def check_one(r: Any, ref: Ref, d: dict, strict: bool) -> str | None:
    return _item_wrong(r, ref, d) or close(_np64(r), ref.value, tol=ref.tol)


def check_polar(r: Any, ref: Ref, d: dict, strict: bool) -> str | None:
    """p as SciPy's; u p = a (p u = a, side="left"); u's columns (rows, where m < n)
    orthonormal."""
    if not (isinstance(r, tuple) and len(r) == 2):
        return f"returns {type(r).__name__}, not (u, p)"
    bad = _item_wrong(r[0], ref, d, "u") or _item_wrong(r[1], ref, d, "p")
    if bad:
        return bad
    u, p = _np64(r[0]), _np64(r[1])
    ru, rp = ref.value
    if u.shape != ru.shape or p.shape != rp.shape:
        return f"u, p shapes {u.shape}, {p.shape}; SciPy's {ru.shape}, {rp.shape}"
    a = ref.extra["a"]
    m, n = u.shape[-2:]
    gram = _h(u) @ u if m >= n else u @ _h(u)
    k = min(m, n)
    eye = np.broadcast_to(np.eye(k), gram.shape) if gram.size else gram
    return first(close(p, rp, "p", ref.tol),
                 close(u @ p if ref.extra["side"] == "right" else p @ u, a, "u p", ref.tol),
                 close(gram, eye, "u's orthonormality", ref.tol))


def check_jitter(r: Any, ref: Ref, d: dict, strict: bool) -> str | None:
    """Each item that a factorization (jitter included) succeeds on: c c^H (c^H c) equals the
    item with the reference's jitter added, and c is triangular with a real positive diagonal
    (which makes it that matrix's unique Cholesky factor; c itself is not compared with NumPy's:
    the items are ill-conditioned, their factors known to cond x eps only). With
    check_info=False, info is nonzero exactly where every jitter fails."""
    failed, shift, lower = ref.extra["failed"], ref.extra["shift"], ref.extra["lower"]
    if ref.extra["with_info"]:
        if not (isinstance(r, tuple) and len(r) == 2):
            return f"returns {type(r).__name__}, not (c, info) for check_info=False"
        c, info = r
        info = np.asarray(_arr(info))
        if info.shape != failed.shape or not np.array_equal(info != 0, failed):
            return f"info {info.tolist()}, nonzero expected where {failed.tolist()}"
    else:
        c = r
    bad = _item_wrong(c, ref, d, "c")
    if bad:
        return bad
    c = _np64(c)
    if c.shape != ref.value.shape:
        return f"c shape {c.shape}, reference {ref.value.shape}"
    ok = ~failed
    cc, s = c[ok], ref.extra["s"][ok]
    prod = cc @ _h(cc) if lower else _h(cc) @ cc
    target = s + shift[ok][..., None, None] * np.eye(c.shape[-1])
    other = np.triu(cc, 1) if lower else np.tril(cc, -1)
    diag = np.diagonal(cc, axis1=-2, axis2=-1)
    if not (np.all(np.isreal(diag)) and np.all(np.real(diag) > 0)):
        return "c's diagonal is not real and positive"
    # A matrix singular to rounding may be factored with no jitter or the first: either is
    # right, and differs from the other by that jitter.
    scale = np.abs(np.real(np.diagonal(s, axis1=-2, axis2=-1))).mean(axis=-1)
    slack = JITTERS[0] * np.sqrt(c.shape[-1]) * np.linalg.norm(scale) / max(
        np.linalg.norm(target), 1.0)
    return first(close(prod, target, "c c^H - (a + jitter I)", ref.tol + 2 * slack),
                 close(other, 0 * other, "c's other triangle", 0.0))


def check_list(check: Callable) -> Callable:
    def c(r: Any, ref: list, d: dict, strict: bool) -> str | None:
        if not isinstance(r, list) or len(r) != len(ref):
            return f"returns {type(r).__name__} of {len(r) if hasattr(r, '__len__') else '?'}, " \
                   f"not a list of {len(ref)}"
        for i, (x, y) in enumerate(zip(r, ref)):
            bad = check(x, y, d, strict)
            if bad:
                return f"item {i}: {bad}"
        return None

    return c


# ---------------------------------------------------------------------------------------------
# References


def _ns_options(kw: dict) -> tuple[int, tuple[float, float, float], str | None, float]:
    steps = kw.get("steps", 5)
    if not _is_int(steps) or steps < 0:
        raise ValueError("steps must be an int >= 0")
    coefficients = kw.get("coefficients", MUON)
    if not (isinstance(coefficients, (tuple, list)) and len(coefficients) == 3
            and all(_is_real(v) for v in coefficients)):
        raise ValueError("coefficients must be three numbers")
    dtype = kw.get("dtype", "bfloat16")
    if dtype is not None and dtype not in NS_DTYPES:
        raise ValueError("dtype")
    eps = kw.get("eps", 1e-7)
    if not _is_real(eps) or not np.isfinite(eps) or eps < 0:
        raise ValueError("eps must be a finite number >= 0")
    if kw.get("symmetric_products") is not None and not _is_bool(kw["symmetric_products"]):
        raise ValueError("symmetric_products must be None, True or False")
    return int(steps), tuple(float(v) for v in coefficients), dtype, float(eps)


def newton_schulz(g: np.ndarray, steps: int = 5, coefficients: tuple = MUON,
                  eps: float = 1e-7) -> np.ndarray:
    """Muon's iteration in float64 NumPy (tests/python/test_linalg_optimizer_funcs.py's)."""
    a, b, c = coefficients
    tall = g.shape[-2] > g.shape[-1]
    x = np.swapaxes(g, -1, -2) if tall else g
    x = x / (np.linalg.norm(x, axis=(-2, -1), keepdims=True) + eps)
    for _ in range(steps):
        s = x @ np.swapaxes(x, -1, -2)
        x = a * x + (b * s + c * s @ s) @ x
    return np.swapaxes(x, -1, -2) if tall else x


def ref_orthogonalize(d: dict) -> Ref:
    g = d["g"]
    steps, coefficients, dtype, eps = _ns_options(_kw(d))
    want = _ns_dtype(g)
    a = _arr(g)
    if a.ndim < 2:
        raise ValueError("g must be a matrix")
    if _kw(d).get("symmetric_products") and a.size and min(a.shape[-2:]) % 4:
        raise ValueError("symmetric_products=True needs the iterate's rows to be a multiple of 4")
    value = _per_matrix(lambda m: newton_schulz(_wide(m), steps, coefficients, eps), a)
    tol = max(NS_TOL[dtype or want], tol_of(want))
    return Ref(value, want, tol, "g")


def ref_polar(d: dict) -> Ref:
    a = d["a"]
    side = _kw(d).get("side", "right")
    if side not in ("right", "left"):
        raise ValueError("side")
    want = _linalg_dtype(a)
    x = _arr(a)
    _finite(d, x)
    if x.ndim < 2:
        raise ValueError("a must be a matrix")

    def one(m: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        m = _wide(m)
        if m.size == 0:
            k = m.shape[-1] if side == "right" else m.shape[-2]
            return np.zeros(m.shape, m.dtype), np.zeros((k, k), m.dtype)
        return sla.polar(m, side)

    value = _per_matrix(one, x)
    return Ref(value, want, tol_of(want), "a", {"a": _per_matrix(_wide, x), "side": side})


def _root_options(d: dict) -> tuple[int, float, str, bool]:
    kw = {"p": d.get("p"), **_kw(d)}
    p, eps, method, clip = (kw["p"], kw.get("eps", 0.0), kw.get("method", "eigh"),
                            kw.get("clip", False))
    if not _is_int(p) or not 1 <= p <= 2**31 - 1:
        raise ValueError("p must be an int from 1 to 2**31 - 1")
    if not _is_real(eps) or not np.isfinite(eps) or eps < 0:
        raise ValueError("eps must be a finite number >= 0")
    if method not in ("eigh", "newton"):
        raise ValueError("method")
    if not _is_bool(clip) or (clip and method != "eigh"):
        raise ValueError("clip must be a bool, True only with method='eigh'")
    return int(p), float(eps), method, bool(clip)


def ref_inv_root(d: dict) -> Ref:
    p, eps, method, clip = _root_options(d)
    x, want = _square_operand(d)

    def one(m: np.ndarray) -> np.ndarray:
        m = _wide(m)
        if m.size == 0:
            return m.copy()
        if method == "newton" and not np.allclose(m, _h(m), rtol=1e-12, atol=0):
            raise ValueError("the Newton iteration takes symmetric (Hermitian) matrices")
        s = _lower_sym(m) + eps * _eye(m.shape[-1], m)
        w, v = np.linalg.eigh(s)
        floor = _floor(w, want)
        if clip:
            r = (v * np.maximum(w, floor) ** (-1.0 / p)) @ _h(v)
        elif w[0] <= floor:
            raise np.linalg.LinAlgError("not positive definite")
        else:
            r = sla.fractional_matrix_power(s, -1.0 / p)
        return r if m.dtype.kind == "c" else r.real

    return Ref(_per_matrix(one, x), want, tol_of(want), "a")


def ref_sqrtm_psd(d: dict) -> Ref:
    clip = _kw(d).get("clip", True)
    if not _is_bool(clip):
        raise ValueError("clip must be a bool")
    x, want = _square_operand(d)
    tols = [tol_of(want)]

    def one(m: np.ndarray) -> np.ndarray:
        m = _wide(m)
        if m.size == 0:
            return m.copy()
        s = _lower_sym(m)
        w, v = np.linalg.eigh(s)
        floor = _floor(w, want)
        if not clip and w[0] < -floor:
            raise np.linalg.LinAlgError("not positive semidefinite")
        if w[0] > np.sqrt(floor) * np.abs(w).max():  # well inside the cone: SciPy's sqrtm
            r = sla.sqrtm(s)
            return r if m.dtype.kind == "c" else r.real
        # Eigenvalues within rounding (floor) of zero: their square roots are known to sqrt(floor)
        r = (v * np.sqrt(np.maximum(w, 0))) @ _h(v)
        tols.append(4 * np.sqrt(len(w) * floor) / max(np.linalg.norm(r), 1.0))
        return r

    value = _per_matrix(one, x)
    return Ref(value, want, max(tols), "a")


def ref_cholesky_jitter(d: dict) -> Ref:
    kw = _kw(d)
    lower, check_info, jitter = kw.get("lower", True), kw.get("check_info", True), kw.get("jitter")
    if not (_is_bool(lower) and _is_bool(check_info)) or jitter not in (None, "auto"):
        raise ValueError("lower, check_info: bools; jitter: None or 'auto'")
    x, want = _square_operand(d)

    def one(m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        m = _wide(m)
        s = _lower_sym(m, lower)  # the triangle read, as a Hermitian matrix
        n = m.shape[-1]
        scale = float(np.abs(np.real(np.diagonal(m))).mean()) if n else 0.0
        for shift in (0.0, *((j * scale for j in JITTERS) if jitter else ())):
            try:
                c = np.linalg.cholesky(s + shift * _eye(n, m))
            except np.linalg.LinAlgError:
                continue
            return (c if lower else _h(c)), s, np.array(False), np.array(shift)
        return np.full_like(m, np.nan), s, np.array(True), np.array(np.nan)

    c, s, failed, shift = _per_matrix(one, x)
    if check_info and failed.any():
        raise np.linalg.LinAlgError("not positive definite, also with jitter")
    return Ref(c, want, tol_of(want), "a",
               {"failed": np.asarray(failed), "shift": np.asarray(shift), "s": s,
                "lower": lower, "with_info": not check_info})


def ref_eigvalsh(d: dict) -> Ref:
    """numpy.linalg.eigvalsh of the triangle read, in the real dtype of a's promotion."""
    lower = _kw(d).get("lower", True)
    if not _is_bool(lower):
        raise ValueError("lower: a bool")
    x, want = _square_operand(d)
    w = _per_matrix(lambda m: np.linalg.eigvalsh(_lower_sym(_wide(m), lower)), x)
    return Ref(w, want.replace("complex128", "float64").replace("complex64", "float32"),
               tol_of(want), "a")


def ref_list(ref: Callable[[dict], Ref], names: tuple[str, ...], arg: str) -> Callable:
    """The single form's reference on each item (raising where one item's does)."""

    def r(d: dict) -> list[Ref]:
        out = [ref({**d, arg: d[n]}) for n in names]
        for n, one in zip(names, out):
            one.src = n
        return out

    return r


# ---------------------------------------------------------------------------------------------
# Calls


def _bf16(make: Callable, *names: str) -> Callable:
    """make, the arrays ``names`` as torch bfloat16 tensors (values rounded to bfloat16)."""

    def m(g: np.random.Generator) -> dict:
        torch = torch_module()
        d = make(g)
        return {**d, **{n: torch.from_numpy(d[n]).to(torch.bfloat16) for n in names}}

    return m


def _cast(make: Callable, dtype: Any, *names: str) -> Callable:
    def m(g: np.random.Generator) -> dict:
        d = make(g)
        return {**d, **{n: d[n].astype(dtype) for n in names}}

    return m


_RAISED: dict[str, Any] = {}


def _recording(call: Callable[[dict], Any]) -> Callable[[dict], Any]:
    """call, its exception kept for ``_dtype_error`` (which the judge's ``after`` runs)."""

    def c(d: dict) -> Any:
        _RAISED.clear()
        try:
            return call(d)
        except Exception as e:
            _RAISED["exc"] = e
            raise

    return c


def _dtype_error(d: dict, raised: bool) -> str | None:
    """The refusal of a dtype is a gl.DTypeError (also a TypeError), not any InvalidArgument."""
    e = _RAISED.get("exc")
    if e is not None and isinstance(e, gl.Error) and not isinstance(e, gl.DTypeError):
        return f"{type(e).__name__}, not gl.DTypeError, for a dtype it does not take: {e}"
    return None


def _opts(*labels: str) -> tuple[Opt, ...]:
    """catalog_linalg's standard options with these labels."""
    return tuple(o for o in _std_opts() if o.label in labels)


FINITE = ("check_finite_false", "check_finite_bogus", "unknown_kw")


# What the items after the first two (of a shape already in the list: stacked with it) get.
LATER_ITEM = ("nan", "float16", "int64", "negstride", "bcast_batch", "list", "none", "giant",
              "torch")


def _items(prefix: str, shapes: tuple[tuple[int, ...], ...]) -> tuple[Arg, ...]:
    """The list's items as arguments, each named by its index as gpula's messages name it; the
    first two get every mutation, the others LATER_ITEM's."""
    return tuple(Arg(f"{prefix}{i}", "mat", batch=True, huge=_huge_batch,
                     aliases=(f"{prefix}[{i}]", f"list item {i}"),
                     only=None if i < 2 else LATER_ITEM,
                     skip=("bf16",) if prefix == "g" else ()) for i in range(len(shapes)))


def _list_entries(name: str, prefix: str, shapes: tuple[tuple[int, ...], ...], draw: Callable,
                  fn: Callable, ref: Callable, check: Callable, kw: dict,
                  options: tuple[Opt, ...] = (), extra: dict | None = None) -> list[Entry]:
    """The grouped form: a list of matrices of several shapes (two of one shape: a batched call
    of two), each item an argument; and the empty list."""
    names = tuple(f"{prefix}{i}" for i in range(len(shapes)))
    op = f"linalg.{name}"

    def make(g: np.random.Generator) -> dict:
        return {**{n: draw(g, s) for n, s in zip(names, shapes)}, "kw": dict(kw),
                **(extra or {})}

    return [
        Entry(f"{op}[list]", op, make, lambda d: fn([d[n] for n in names], d),
              ref_list(ref, names, prefix), check_list(check), _items(prefix, shapes),
              numpy_inputs=True, options=options),
        Entry(f"{op}[empty list]", op, lambda g: {"kw": dict(kw), **(extra or {})},
              lambda d: fn([], d), lambda d: [], check_list(check)),
    ]


# ---------------------------------------------------------------------------------------------
# Entries


def _normal(g: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return g.standard_normal(shape)


def _spd_of(g: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """A diagonally dominant SPD matrix of shape (n, n) (catalog_linalg's _spd for n = N)."""
    n = shape[-1]
    x = g.standard_normal((n, n))
    return np.where(np.eye(n, dtype=bool), n + abs(x), -abs(x + x.T) / 4)


def _hpd(g: np.random.Generator) -> np.ndarray:
    """A Hermitian positive definite complex matrix."""
    x = g.standard_normal((N, N)) + 1j * g.standard_normal((N, N))
    return x @ _h(x) / N + np.eye(N)


def _orthogonalize_entries(L: Any) -> list[Entry]:
    call = lambda d: L.orthogonalize(d["g"], **_kw(d))  # noqa: E731
    # orthogonalize keeps bfloat16 (the float32 its reference gets for it would expect float32).
    G = Arg("g", "mat", batch=True, huge=_huge_batch, skip=("bf16",))
    options = (
        Opt("dtype_default", {"dtype": "bfloat16"}, expect="ref"),
        Opt("dtype_none", {"dtype": None}, expect="ref"),
        Opt("dtype_float32", {"dtype": "float32"}, expect="ref"),
        Opt("dtype_float16", {"dtype": "float16"}, expect="ref"),
        Opt("dtype_bogus", {"dtype": "int8"}, mention="dtype"),
        Opt("dtype_complex", {"dtype": "complex64"}, mention="dtype"),
        Opt("steps_zero", {"steps": 0}, expect="ref"),
        Opt("steps_npint", {"steps": np.int64(3)}, expect="ref"),
        Opt("steps_neg", {"steps": -1}, mention="steps"),
        Opt("steps_bool", {"steps": True}, mention="steps"),
        Opt("steps_float", {"steps": 2.0}, mention="steps"),
        Opt("steps_str", {"steps": "5"}, mention="steps"),
        Opt("coefficients_cubic", {"coefficients": (1.5, -0.5, 0.0)}, expect="ref"),
        Opt("coefficients_list", {"coefficients": [3.4445, -4.7750, 2.0315]}, expect="ref"),
        Opt("coefficients_short", {"coefficients": (1.5, -0.5)}, mention="coefficients"),
        Opt("coefficients_str", {"coefficients": ("a", "b", "c")}, mention="coefficients"),
        Opt("coefficients_none", {"coefficients": None}, mention="coefficients"),
        Opt("eps_zero", {"eps": 0.0}, expect="ref"),
        Opt("eps_neg", {"eps": -1.0}, mention="eps"),
        Opt("eps_nan", {"eps": float("nan")}, mention="eps"),
        Opt("eps_str", {"eps": "small"}, mention="eps"),
        Opt("symmetric_true", {"symmetric_products": True}, expect="ref"),
        Opt("symmetric_false", {"symmetric_products": False}, expect="ref"),
        Opt("symmetric_npbool", {"symmetric_products": np.True_}, expect="ref"),
        Opt("symmetric_int", {"symmetric_products": 1}, mention="symmetric_products"),
        Opt("symmetric_str", {"symmetric_products": "yes"}, mention="symmetric_products"),
        Opt("device_bogus", {"device": "tpu"}, mention="device"),
        Opt("unknown_kw", {"foo": 1}, expect="signature", mention="foo"),
    )
    f64 = {"dtype": "float64"}

    def make(shape: tuple[int, ...], kw: dict) -> Callable:
        return lambda g: {"g": g.standard_normal(shape), "kw": dict(kw)}

    op = "linalg.orthogonalize"
    out = [
        Entry(op, op, make((4, 6), f64), call, ref_orthogonalize, check_one, (G,),
              numpy_inputs=True, options=options),
        Entry(f"{op}[tall]", op, make((6, 4), f64), call, ref_orthogonalize, check_one,
              (Arg("g", "mat", batch=True, skip=("bf16",)),), numpy_inputs=True,
              options=(Opt("dtype_default", {"dtype": "bfloat16"}, expect="ref"),)),
        Entry(f"{op}[batch]", op, make((2, 3, 5, 7), f64), call, ref_orthogonalize, check_one,
              options=(Opt("symmetric_true", {"symmetric_products": True},
                           mention="symmetric_products"),)),
        Entry(f"{op}[zero]", op, lambda g: {"g": np.zeros((4, 6)), "kw": {}}, call,
              ref_orthogonalize, check_one),
        Entry(f"{op}[float32, dtype=None]", op, _cast(make((4, 6), {"dtype": None}), np.float32,
                                                      "g"),
              call, ref_orthogonalize, check_one),
        Entry(f"{op}[float16, default]", op, _cast(make((4, 6), {}), np.float16, "g"), call,
              ref_orthogonalize, check_one),
        Entry(f"{op}[int64]", op, lambda g: {"g": g.integers(-5, 5, (4, 6)), "kw": {}}, call,
              ref_orthogonalize, check_one),
        Entry(f"{op}[complex]", op, _cast(make((4, 6), f64), np.complex128, "g"),
              _recording(call), None, check_one, mention="g", after=_dtype_error),
        Entry(f"{op}[complex64]", op, _cast(make((4, 6), {}), np.complex64, "g"),
              _recording(call), None, check_one, mention="g", after=_dtype_error),
        Entry(f"{op}[object]", op, _cast(make((4, 6), f64), object, "g"),
              _recording(call), None, check_one, mention="g", after=_dtype_error),
    ]
    if HAS_TORCH:
        out.append(Entry(f"{op}[bfloat16]", op, _bf16(make((4, 6), {}), "g"), call,
                         ref_orthogonalize, check_one, torch_results=True))
    out += _list_entries("orthogonalize", "g", ((4, 6), (6, 4), (4, 6)), _normal,
                         lambda xs, d: L.orthogonalize(xs, **_kw(d)), ref_orthogonalize,
                         check_one, f64,
                         (Opt("dtype_default", {"dtype": "bfloat16"}, expect="ref"),
                          Opt("steps_neg", {"steps": -1}, mention="steps")))
    return out


def _polar_entries(L: Any) -> list[Entry]:
    call = lambda d: L.polar(d["a"], **_kw(d))  # noqa: E731
    options = (Opt("side_left", {"side": "left"}, expect="ref"),
               Opt("side_bogus", {"side": "up"}, mention="side"),
               Opt("side_none", {"side": None}, mention="side"), *_opts(*FINITE))

    def make(shape: tuple[int, ...]) -> Callable:
        return lambda g: {"a": g.standard_normal(shape), "kw": {}}

    op = "linalg.polar"
    out = [
        Entry(op, op, make((5, 3)), call, ref_polar, check_polar,
              (Arg("a", "mat", batch=True, huge=_huge_batch),), numpy_inputs=True,
              options=options),
        Entry(f"{op}[wide]", op, make((3, 5)), call, ref_polar, check_polar,
              (Arg("a", "mat", batch=True),), numpy_inputs=True,
              options=(Opt("side_left", {"side": "left"}, expect="ref"),)),
        Entry(f"{op}[batch]", op, make((2, 4, 4)), call, ref_polar, check_polar,
              options=(Opt("side_left", {"side": "left"}, expect="ref"),)),
        Entry(f"{op}[rank-deficient]", op,
              lambda g: {"a": np.outer(g.standard_normal(5), g.standard_normal(3)), "kw": {}},
              call, ref_polar, check_polar,
              options=(Opt("side_left", {"side": "left"}, expect="ref"),)),
        Entry(f"{op}[complex]", op,
              lambda g: {"a": g.standard_normal((5, 3)) + 1j * g.standard_normal((5, 3)),
                         "kw": {}}, call, ref_polar, check_polar,
              options=(Opt("side_left", {"side": "left"}, expect="ref"),)),
        Entry(f"{op}[float32]", op, _cast(make((5, 3)), np.float32, "a"), call, ref_polar,
              check_polar),
    ]
    if HAS_TORCH:
        out.append(Entry(f"{op}[bfloat16]", op, _bf16(make((5, 3)), "a"), call, ref_polar,
                         check_polar, torch_results=True))
    out += _list_entries("polar", "a", ((5, 3), (3, 3), (5, 3)), _normal,
                         lambda xs, d: L.polar(xs, **_kw(d)), ref_polar, check_polar, {},
                         (Opt("side_left", {"side": "left"}, expect="ref"),
                          Opt("side_bogus", {"side": "up"}, mention="side")))
    return out


def _inv_root_entries(L: Any) -> list[Entry]:
    def call(d: dict) -> Any:
        kw = {"p": d["p"], **_kw(d)}
        return L.inv_root(d["a"], kw.pop("p"), **kw)

    options = (
        Opt("eps", {"eps": 0.5}, expect="ref"),
        Opt("eps_int", {"eps": 1}, expect="ref"),
        Opt("eps_neg", {"eps": -1.0}, mention="eps"),
        Opt("eps_nan", {"eps": float("nan")}, mention="eps"),
        Opt("eps_inf", {"eps": float("inf")}, mention="eps"),
        Opt("eps_str", {"eps": "small"}, mention="eps"),
        Opt("method_newton", {"method": "newton"}, expect="ref"),
        Opt("method_bogus", {"method": "qr"}, mention="method"),
        Opt("clip", {"clip": True}, expect="ref"),
        Opt("clip_bogus", {"clip": "yes"}, mention="clip"),
        Opt("clip_newton", {"clip": True, "method": "newton"}, mention="clip"),
        Opt("p_4", {"p": 4}, expect="ref"),
        Opt("p_npint", {"p": np.int32(3)}, expect="ref"),
        *_opts(*FINITE),
    )

    def make(draw: Callable, p: int, kw: dict | None = None) -> Callable:
        return lambda g: {"a": draw(g), "p": p, "kw": dict(kw or {})}

    spd = make(_spd, 2)
    op = "linalg.inv_root"
    newton = {"method": "newton"}
    out = [
        Entry(op, op, spd, call, ref_inv_root, check_one, (_sq("a"), Arg("p", "int")),
              numpy_inputs=True, options=options),
        Entry(f"{op}[newton]", op, make(_spd, 4, newton), call, ref_inv_root, check_one,
              (_sq("a"),), numpy_inputs=True,
              options=(Opt("p_1", {"p": 1}, expect="ref"), Opt("eps", {"eps": 0.5}, expect="ref"),
                       Opt("p_zero", {"p": 0}, mention="p"))),
        Entry(f"{op}[p=1]", op, make(_spd, 1), call, ref_inv_root, check_one),
        Entry(f"{op}[batch]", op,
              lambda g: {"a": np.stack([_spd(g) for _ in range(3)]), "p": 3, "kw": {}},
              call, ref_inv_root, check_one, options=(Opt("newton", newton, expect="ref"),)),
        # Smallest eigenvalue -1e-9: not positive definite; eps moves it off
        Entry(f"{op}[singular]", op,
              lambda g: {"a": _singular(g), "p": 2, "kw": {}}, call, ref_inv_root, check_one,
              mention="a",
              options=(Opt("eps", {"eps": 1e-2}, expect="ref"),
                       Opt("newton", newton, expect="ref"),
                       Opt("newton_eps", {**newton, "eps": 1e-2}, expect="ref"))),
        Entry(f"{op}[indefinite]", op, lambda g: {"a": -_spd(g), "p": 2, "kw": {}}, call,
              ref_inv_root, check_one, mention="a",
              options=(Opt("newton", newton, expect="ref"), Opt("clip", {"clip": True},
                                                                expect="ref"))),
        Entry(f"{op}[complex]", op, make(_hpd, 2), call, ref_inv_root, check_one,
              options=(Opt("newton", newton, expect="ref"),)),
        Entry(f"{op}[float32]", op, _cast(spd, np.float32, "a"), call, ref_inv_root, check_one,
              options=(Opt("newton", newton, expect="ref"),)),
    ]
    if HAS_TORCH:
        out.append(Entry(f"{op}[bfloat16]", op, _bf16(spd, "a"), call, ref_inv_root, check_one,
                         torch_results=True))
    out += _list_entries("inv_root", "a", ((N, N), (3, 3), (N, N)), _spd_of,
                         lambda xs, d: L.inv_root(xs, d["p"], **_kw(d)), ref_inv_root,
                         check_one, {}, (Opt("newton", newton, expect="ref"),
                                         Opt("eps_neg", {"eps": -1.0}, mention="eps")),
                         extra={"p": 2})
    return out


def _singular(g: np.random.Generator) -> np.ndarray:
    """Symmetric, eigenvalues -1e-9, 1, 2, 3 in a random orthonormal basis: singular to working
    accuracy and, unlike an exactly singular matrix (smallest eigenvalue at rounding level, on
    either side of gpula's floor), clearly on the side "not positive semidefinite" of it."""
    return _with_eigenvalues(g, (-1e-9, 1.0, 2.0, 3.0))


def _with_eigenvalues(g: np.random.Generator, w: tuple[float, ...]) -> np.ndarray:
    q, _ = np.linalg.qr(g.standard_normal((len(w), len(w))))
    a = (q * np.array(w)) @ q.T
    return (a + a.T) / 2


def _sqrtm_entries(L: Any) -> list[Entry]:
    call = lambda d: L.sqrtm_psd(d["a"], **_kw(d))  # noqa: E731
    options = (Opt("clip_false", {"clip": False}, expect="ref"),
               Opt("clip_bogus", {"clip": "yes"}, mention="clip"),
               Opt("clip_none", {"clip": None}, mention="clip"), *_opts(*FINITE))

    def make(draw: Callable) -> Callable:
        return lambda g: {"a": draw(g), "kw": {}}

    op = "linalg.sqrtm_psd"
    clip_false = (Opt("clip_false", {"clip": False}, expect="ref"),)
    out = [
        Entry(op, op, make(_spd), call, ref_sqrtm_psd, check_one, (_sq("a"),),
              numpy_inputs=True, options=options),
        Entry(f"{op}[singular]", op, make(_singular), call, ref_sqrtm_psd, check_one,
              options=clip_false),
        # Two eigenvalues at rounding level (either sign): clip=True's zeros
        Entry(f"{op}[low rank]", op,
              make(lambda g: (lambda x: x @ x.T)(g.standard_normal((N, 2)))), call,
              ref_sqrtm_psd, check_one),
        Entry(f"{op}[indefinite]", op, make(lambda g: -_spd(g)), call, ref_sqrtm_psd,
              check_one, mention="a", options=clip_false),
        Entry(f"{op}[batch]", op, make(lambda g: np.stack([_spd(g), _singular(g)])), call,
              ref_sqrtm_psd, check_one, options=clip_false),
        Entry(f"{op}[complex]", op, make(_hpd), call, ref_sqrtm_psd, check_one),
        Entry(f"{op}[float32]", op, _cast(make(_spd), np.float32, "a"), call, ref_sqrtm_psd,
              check_one),
    ]
    if HAS_TORCH:
        out.append(Entry(f"{op}[bfloat16]", op, _bf16(make(_spd), "a"), call, ref_sqrtm_psd,
                         check_one, torch_results=True))
    out += _list_entries("sqrtm_psd", "a", ((N, N), (3, 3), (N, N)), _spd_of,
                         lambda xs, d: L.sqrtm_psd(xs, **_kw(d)), ref_sqrtm_psd, check_one, {},
                         (*clip_false, Opt("clip_bogus", {"clip": "yes"}, mention="clip")))
    return out


def _near_indefinite(lam: float) -> Callable:
    """Symmetric, eigenvalues lam < 0, 1, 2, 3 (mean diagonal 1.5) in a random basis: not
    positive definite, definite from the first jitter j with 1.5 j > |lam| on; lam is taken far
    (in the dtype's rounding) from every 1.5 j, so that NumPy and gpula decide alike."""
    return lambda g: _with_eigenvalues(g, (lam, 1.0, 2.0, 3.0))


def _laplacian_item(g: np.random.Generator) -> np.ndarray:
    """A graph Laplacian (weights 1/4 ... 1: exact in binary, 4 times it an integer matrix)
    minus 0.5e-6 x its mean diagonal: eigenvalue -0.5e-6 x mean diagonal, the third jitter's
    the first to make it definite. Its bool mutation is the identity, its integer mutations
    (round(4 a)) and float16 the Laplacian itself, singular, which the first jitter makes
    definite (or none: rounding decides)."""
    w = np.triu(g.integers(1, 5, (N, N)) / 4, 1)
    w = w + w.T
    lap = np.diag(w.sum(1)) - w
    return lap - 0.5e-6 * np.diag(lap).mean() * np.eye(N)


def _cholesky_entries(L: Any) -> list[Entry]:
    call = lambda d: L.cholesky(d["a"], **_kw(d))  # noqa: E731
    auto = {"jitter": "auto"}
    op = "linalg.cholesky"
    options = (
        *_std_opts(),
        Opt("upper", {"lower": False}, expect="ref"),
        Opt("check_info_false", {"check_info": False}, expect="ref"),
        Opt("jitter_none", {"jitter": None}, expect="ref"),
        Opt("jitter_bogus", {"jitter": "yes"}, mention="jitter"),
        Opt("jitter_float", {"jitter": 1e-6}, mention="jitter"),
        Opt("jitter_upper_case", {"jitter": "AUTO"}, mention="jitter"),
    )
    return [
        Entry(f"{op}[jitter]", op,
              lambda g: {"a": np.stack([_spd(g), _laplacian_item(g)]), "kw": dict(auto)},
              call, ref_cholesky_jitter, check_jitter,
              (Arg("a", "mat", batch=True, huge=_huge_batch),), numpy_inputs=True,
              options=options),
        Entry(f"{op}[jitter, spd]", op, lambda g: {"a": _spd(g), "kw": dict(auto)}, call,
              ref_cholesky_jitter, check_jitter,
              options=(Opt("upper", {"lower": False}, expect="ref"),)),
        Entry(f"{op}[jitter, indefinite]", op,
              lambda g: {"a": np.stack([_spd(g), -_spd(g)]), "kw": dict(auto)}, call,
              ref_cholesky_jitter, check_jitter, mention=("a", "batch index"),
              options=(Opt("check_info_false", {"check_info": False}, expect="ref"),)),
        Entry(f"{op}[jitter, float32]", op,
              _cast(lambda g: {"a": np.stack([_spd(g), _near_indefinite(-5e-5)(g)]),
                               "kw": dict(auto)}, np.float32, "a"),
              call, ref_cholesky_jitter, check_jitter),
    ]


def _check_group(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    if type(r).__name__ != "MatrixGroup" or len(r) != len(d["xs"]):
        return f"returns {type(r).__name__}, not a MatrixGroup of {len(d['xs'])}"
    return None if all(x is y for x, y in zip(r, d["xs"])) else "items are not the list's"


def _grouped_eigh_cholesky_entries(L: Any) -> list[Entry]:
    """gl.linalg.group, and the grouped forms it marks for eigvalsh (eigh's grouped path, values
    compared) and cholesky with jitter="auto"."""
    return [
        Entry("linalg.group", "linalg.group",
              lambda g: {"xs": [np.eye(2), np.eye(3)], "kw": {}},
              lambda d: L.group(d["xs"]), lambda d: True, _check_group),
        Entry("linalg.group[not a list]", "linalg.group", lambda g: {"xs": np.eye(2), "kw": {}},
              lambda d: L.group(d["xs"]), None, _check_group, mention="matrices"),
        *_list_entries("eigvalsh", "a", ((N, N), (3, 3), (N, N)), _spd_of,
                       lambda xs, d: L.eigvalsh(L.group(xs), **_kw(d)), ref_eigvalsh,
                       check_one, {}, (Opt("upper", {"lower": False}, expect="ref"),)),
        *_list_entries("cholesky", "a", ((N, N), (3, 3), (N, N)), _spd_of,
                       lambda xs, d: L.cholesky(L.group(xs), **_kw(d)), ref_cholesky_jitter,
                       check_jitter, {"jitter": "auto"},
                       (Opt("upper", {"lower": False}, expect="ref"),)),
    ]


def entries() -> list[Entry]:
    L = gl.linalg
    return [*_orthogonalize_entries(L), *_polar_entries(L), *_inv_root_entries(L),
            *_sqrtm_entries(L), *_cholesky_entries(L), *_grouped_eigh_cholesky_entries(L)]
