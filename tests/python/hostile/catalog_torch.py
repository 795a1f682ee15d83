"""gpula.torch (issue 19): gpula.torch.linalg, gpula.torch.functional and gpula.torch.nn with valid
arguments and their references.

``make`` draws NumPy inputs (the mutations work on NumPy); ``call`` turns every array argument
into the tensor torch.from_numpy makes of it: same dtype, same memory and strides (zero strides
through ``expand``). Where torch cannot express the array (negative strides, big-endian) or must
not share it (a read-only array: torch warns, and its tensors are writable) the tensor is a copy
of the same values, checked unchanged after the call. What is no tensor at all (lists, scalars,
None, str, dict, object arrays) is passed as it is: the call must refuse it.

References follow torch.linalg's rules and compute with catalog_linalg's NumPy/SciPy references
(torch.linalg.lstsq in float64 for lstsq's fields): tensors of float32/float64 (linalg) or of one
floating dtype (layers), else the call must raise gl.DTypeError naming the op (``after`` checks
the class: a type or dtype error is a DTypeError, any other an InvalidArgument, LinAlgError or
OutOfMemory); NaN/Inf into linalg: NonFinite (torch checks nothing: a typed error, a result that
shows them, or LAPACK's own result for them). Results are torch tensors in every case
(Entry.torch_results).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import gpula as gl

from .catalog_linalg import (
    N,
    _gen,
    _h,
    _huge_batch,
    _lower_sym,
    _ref_cho_solve,
    _ref_cholesky,
    _ref_eigh,
    _ref_numpy,
    _ref_qr,
    _ref_solve,
    _ref_solve_triangular,
    _ref_svd,
    _spd,
    _sq,
    check_array,
    check_eigh,
    check_qr,
    check_slogdet,
    check_svd,
)
from .core import (HAS_TORCH, Arg, Entry, NonFinite, Opt, as_np, close, dtype_check, first,
                   is_torch, same, snapshot, torch_module)

LINALG_DTYPES = ("float32", "float64")
LAYER_DTYPES = ("float16", "bfloat16", "float32", "float64")

# ---------------------------------------------------------------------------------------------
# NumPy inputs as torch tensors, and what the call left behind for ``after``

_LAST: dict[str, Any] = {}


def as_tensor(x: Any, name: str, copies: list) -> Any:
    """x as torch.from_numpy shares it (see the module's docstring); copies made are recorded as
    (name, tensor, snapshot)."""
    if is_torch(x) or not isinstance(x, np.ndarray) or x.dtype == object:
        return x
    torch = torch_module()
    if not x.dtype.isnative:  # torch has no big-endian tensors: the same values, native order
        x = x.astype(x.dtype.newbyteorder("="))
    zero = [i for i, (n, s) in enumerate(zip(x.shape, x.strides)) if s == 0 and n > 1]
    if zero:  # a broadcast view: its one row (or matrix) as a tensor, expanded by torch
        one = x[tuple(slice(0, 1) if i in zero else slice(None) for i in range(x.ndim))]
        return as_tensor(one, name, copies).expand(x.shape)
    if x.flags.writeable and all(s >= 0 for s in x.strides):
        return torch.from_numpy(x)
    t = torch.from_numpy(np.array(x))  # read-only or reversed: a copy, strides made positive
    copies.append((name, t, snapshot(t)))
    return t


def _dtype_name(t: Any) -> str:
    return str(t.dtype).replace("torch.", "")


def _bad_types(values: list, dtypes: tuple[str, ...]) -> bool:
    """Whether torch's rules refuse these tensors by type or dtype (a DTypeError is due)."""
    if any(not is_torch(v) or _dtype_name(v) not in dtypes for v in values):
        return True
    return len({_dtype_name(v) for v in values}) > 1


def torch_call(fn: Callable[[dict], Any], names: tuple[str, ...],
               dtypes: tuple[str, ...] = LINALG_DTYPES, optional: tuple[str, ...] = ()) -> Any:
    """A call: the arguments ``names`` as tensors, ``kw["requires_grad"]`` (an option of the suite,
    not of gpula) making the floating ones require grad; then fn(args)."""

    def call(d: dict) -> Any:
        copies: list = []
        t = {**d, **{n: as_tensor(d[n], n, copies) for n in names}}
        kw = dict(d.get("kw", {}))
        if kw.pop("requires_grad", False):
            for n in names:
                if is_torch(t[n]) and t[n].is_floating_point():
                    t[n] = t[n].detach().requires_grad_()
        t["kw"] = kw
        checked = [t[n] for n in names if not (n in optional and t[n] is None)]
        _LAST.clear()
        _LAST.update(copies=copies, bad=_bad_types(checked, dtypes), exc=None)
        try:
            return fn(t)
        except Exception as e:
            _LAST["exc"] = e
            raise

    return call


def after(d: dict, raised: bool) -> str | None:
    """Tensor copies unchanged; the class of a gpula error fits its cause."""
    for name, t, snap in _LAST.get("copies", ()):
        if not same(snap, snapshot(t)):
            return f"input {name} changed by the call (its tensor, a copy of the array)"
    e = _LAST.get("exc")
    if e is None or not isinstance(e, gl.Error):
        return None  # no error, or the judge's to report
    if _LAST["bad"]:
        if not isinstance(e, gl.DTypeError):
            return f"{type(e).__name__}, not gl.DTypeError, for a wrong type or dtype: {e}"
    elif not isinstance(e, (gl.InvalidArgument, gl.LinAlgError, gl.OutOfMemory)):
        return f"{type(e).__name__}, not gl.InvalidArgument, LinAlgError or OutOfMemory: {e}"
    return None


# ---------------------------------------------------------------------------------------------
# References: torch's input rules, then NumPy/SciPy


def arrays(d: dict, *names: str, dtypes: tuple[str, ...] = LINALG_DTYPES,
           optional: tuple[str, ...] = ()) -> list[Any]:
    """The arguments as NumPy arrays (native byte order) after torch's rules: tensors of one of
    dtypes, all of one dtype, else TypeError."""
    out: list[Any] = []
    for n in names:
        v = d[n]
        if v is None and n in optional:
            out.append(None)
            continue
        a = as_np(v)
        if not isinstance(a, np.ndarray) or a.dtype.name not in dtypes:
            raise TypeError(f"{n} is no tensor of {'/'.join(dtypes)}")
        out.append(a if a.dtype.isnative else a.astype(a.dtype.newbyteorder("=")))
    if len({a.dtype.name for a in out if a is not None}) > 1:
        raise TypeError("the tensors' dtypes differ")
    return out


def _nonfinite(d: dict, names: tuple[str, ...]) -> bool:
    return any(isinstance(a, np.ndarray) and a.dtype.kind == "f" and not np.isfinite(a).all()
               for a in (as_np(d[n]) for n in names))


def linalg_ref(f: Callable[[dict], Any], names: tuple[str, ...]) -> Callable[[dict], Any]:
    """f, computed as LAPACK would (no finite check, as torch); for NaN/Inf input a NonFinite
    whose ``.result()`` computes f's result (None where f raises) only if asked (NumPy's SVD of
    an Inf may not return)."""

    def ref(d: dict) -> Any:
        if not _nonfinite(d, names):
            return f(d)
        arrays(d, *names)  # a wrong type or dtype: the input is bad all the same

        def result() -> Any:
            try:
                return f(d)
            except Exception:  # noqa: BLE001
                return None

        x = NonFinite("non-finite input")
        x.result = result  # type: ignore[attr-defined]
        raise x

    return ref


def _kw(d: dict) -> dict:
    return d.get("kw", {})


def _results(r: Any) -> list[np.ndarray]:
    items = r if isinstance(r, tuple) else (r,)
    return [np.asarray(as_np(x)) for x in items]


def shows_nonfinite(check: Callable) -> Callable:
    """check, where a NonFinite reference passes a result holding NaN or Inf somewhere, or the
    reference's own result for the same input (LAPACK's, unchecked)."""

    def c(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
        if isinstance(ref, NonFinite):
            if any(x.dtype.kind == "f" and not np.isfinite(x).all() for x in _results(r)):
                return None
            unchecked = ref.result()  # type: ignore[attr-defined]
            wrong = "no reference" if unchecked is None else check(r, unchecked, d, strict)
            return None if wrong is None else f"finite results for a non-finite input ({wrong})"
        return check(r, ref, d, strict)

    return c


def _vector_rhs(a: np.ndarray, b: np.ndarray) -> bool:
    """torch.linalg.solve's rule: B is a (batch of) vector(s)."""
    return b.ndim == 1 or (b.ndim == a.ndim - 1 and b.shape == a.shape[:-1])


def ref_cholesky(d: dict) -> Any:
    (a,) = arrays(d, "A")
    upper = _kw(d).get("upper", False)
    a = _lower_sym(a, not upper)  # only the triangle named is read
    return _ref_cholesky({"a": a, "kw": {"lower": not upper, "check_finite": False}})


def ref_cho_solve(d: dict) -> Any:
    c, b = arrays(d, "c", "B")
    if b.ndim < 2:
        raise ValueError("B must be a matrix")
    lower = _kw(d).get("lower", True)
    c = np.tril(c) if lower else np.triu(c)  # only the factor's triangle is read (as torch)
    return _ref_cho_solve({"c": c, "b": b, "lower": lower, "kw": {"check_finite": False}})


def ref_solve(d: dict) -> Any:
    a, b = arrays(d, "A", "B")
    left = _kw(d).get("left", True)
    fin = {"check_finite": False}
    if _vector_rhs(a, b):
        if not left:
            raise ValueError("left=False takes a matrix B")
        return _ref_solve({"a": a, "b": b[..., None], "kw": fin})[..., 0]
    if left:
        return _ref_solve({"a": a, "b": b, "kw": fin})
    return _h(_ref_solve({"a": _h(a), "b": _h(b), "kw": fin}))


def ref_solve_triangular(d: dict) -> Any:
    a, b = arrays(d, "A", "B")
    kw = _kw(d)
    if b.ndim < 2:
        raise ValueError("B must be a matrix")
    if a.ndim > 2 and a.size and not any(a.strides[:-2]) and b.ndim == 2:  # one A, broadcast
        one = ref_solve_triangular({**d, "A": a[(0,) * (a.ndim - 2)]})
        return np.broadcast_to(one, a.shape[:-2] + one.shape)
    if b.ndim > 2 and 0 in b.shape[:-2]:  # an empty batch (SciPy refuses it): shapes checked
        one = ref_solve_triangular({**d, "B": np.zeros(b.shape[-2:], b.dtype)})
        return np.zeros(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + one.shape[-2:],
                        one.dtype)
    base = {"lower": not kw["upper"], "unit_diagonal": kw.get("unitriangular", False),
            "check_finite": False}
    if kw.get("left", True):
        return _ref_solve_triangular({"a": a, "b": b, "kw": base})
    return _h(_ref_solve_triangular({"a": a, "b": _h(b), "kw": {**base, "trans": 1}}))


def ref_numpy(name: str) -> Callable[[dict], Any]:
    f = _ref_numpy(name)
    return lambda d: f({"a": arrays(d, "A")[0], "kw": {"check_finite": False}})


def ref_logdet(d: dict) -> Any:
    (a,) = arrays(d, "A")
    sign, logabsdet = np.linalg.slogdet(a)
    return np.where(sign < 0, np.nan, logabsdet).astype(logabsdet.dtype)


def _np_eigh(d: dict) -> dict:
    """catalog_linalg's form of an eigh call."""
    kw = _kw(d)
    out = {"lower": kw.get("UPLO", "L") == "L", "check_finite": False}
    if kw.get("k") is not None:
        out.update(k=kw["k"], which=kw.get("which", "largest"))
    return {"a": as_np(d["A"]), "kw": out}


def ref_eigh(d: dict) -> Any:
    (a,) = arrays(d, "A")
    return _ref_eigh({**_np_eigh(d), "a": a})


def _np_svd(d: dict) -> dict:
    kw = _kw(d)
    out = {"full_matrices": kw.get("full_matrices", True), "check_finite": False}
    if kw.get("k") is not None:
        out["k"] = kw["k"]
    return {"a": as_np(d["A"]), "kw": out}


def ref_svd(d: dict) -> Any:
    (a,) = arrays(d, "A")
    return _ref_svd({**_np_svd(d), "a": a})


def ref_lstsq(d: dict) -> Any:
    """torch.linalg.lstsq (driver gelsd: every field) in float64, as the input's dtype. B is a
    (batch of) vector(s) where it has one dimension fewer than A (torch's rule); batch
    dimensions broadcast, as gpula.torch.linalg's other solvers (torch's lstsq refuses an A of
    fewer dimensions than B). Where gelsd leaves the residuals of a tall A empty (A
    rank-deficient), gpula computes them."""
    a, b = arrays(d, "A", "B")
    torch = torch_module()
    vector = b.ndim == a.ndim - 1
    bm = b[..., None] if vector else b
    if a.ndim < 2 or bm.ndim < 2 or a.shape[-2] != bm.shape[-2]:
        raise ValueError("A (..., m, n) and B (..., m, k) or (..., m)")
    batch = np.broadcast_shapes(a.shape[:-2], bm.shape[:-2])
    a64 = torch.from_numpy(np.broadcast_to(a, batch + a.shape[-2:]).astype(np.float64))
    b64 = torch.from_numpy(np.broadcast_to(bm, batch + bm.shape[-2:]).astype(np.float64))
    k = b64.shape[-1]  # torch fails on k = 0: solved with one zero column, sliced
    rhs = b64 if k else b64.new_zeros((*batch, bm.shape[-2], 1))
    x, res, rank, sv = torch.linalg.lstsq(a64, rhs, rcond=_kw(d).get("rcond"), driver="gelsd")
    x, res = x[..., :k], res[..., :k]
    m, n = a.shape[-2:]
    if m > n and res.numel() == 0 and k:
        res = (a64 @ x - b64).square().sum(-2)
    x = x[..., 0] if vector else x
    return tuple(v.numpy().astype(a.dtype) for v in (x, res, sv)) + (rank.numpy(),)


def check_lstsq(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    if not (isinstance(r, tuple) and len(r) == 4):
        return f"returns {type(r).__name__}, not (solution, residuals, rank, singular_values)"
    if strict and not hasattr(r, "singular_values"):
        return "returns a plain tuple, not torch's (solution, residuals, rank, singular_values)"
    x, res, sv, rank = ref
    return first(close(r[0], x, "solution"), close(r[1], res, "residuals"),
                 close(np.asarray(as_np(r[2])), rank, "rank", tol=0.0),
                 close(r[3], sv, "singular_values"),
                 dtype_check(r[2], rank, "rank"),
                 dtype_check(r[0], x, "solution") if strict else None)


def ref_qr(d: dict) -> Any:
    (a,) = arrays(d, "A")
    return _ref_qr({"a": a, "kw": {"mode": _kw(d).get("mode", "reduced"), "check_finite": False}})


def check_torch_qr(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    if _kw(d).get("mode") == "r":  # torch's (Q empty, R); R up to the signs of its rows
        if not (isinstance(r, tuple) and len(r) == 2):
            return f"returns {type(r).__name__}, not (Q, R)"
        return first(None if r[0].numel() == 0 else f"Q of mode='r' has shape {tuple(r[0].shape)}",
                     close(np.abs(as_np(r[1])), np.abs(ref), "|R|"))
    return check_qr(r, ref, {"a": as_np(d["A"])}, strict)


def _act(y: np.ndarray, activation: str | None) -> np.ndarray:
    """torch's relu and gelu(approximate="tanh")."""
    if activation == "relu":
        return np.where(np.isnan(y), y, np.maximum(y, 0))
    if activation == "gelu":
        c = np.sqrt(2 / np.pi)
        return 0.5 * y * (1 + np.tanh(c * (y + 0.044715 * y**3)))
    return y


def _layer(x: np.ndarray, w: np.ndarray, b: np.ndarray | None, activation: str | None) -> Any:
    """act(x @ w.T + b) in float64, after torch.nn.functional.linear's shape rules."""
    if w.ndim != 2 or x.ndim < 1 or x.shape[-1] != w.shape[1]:
        raise ValueError("input's last dimension must be weight's in_features")
    if b is not None and b.shape != (w.shape[0],):
        raise ValueError("bias must have shape (out_features,)")
    y = x.astype(np.float64) @ w.T.astype(np.float64)
    if b is not None:
        y = y + b
    return _act(y, activation)


def ref_linear(d: dict) -> Any:
    x, w, b = arrays(d, "input", "weight", "bias", dtypes=LAYER_DTYPES, optional=("bias",))
    return _layer(x, w, b, _kw(d).get("activation")).astype(x.dtype)


def ref_mlp(d: dict) -> Any:
    """Layers act(h @ W_i.T + b_i), none after the last; biases: one tensor per layer."""
    x, w0, w1, b0, b1 = arrays(d, "input", "w0", "w1", "b0", "b1", dtypes=LAYER_DTYPES)
    act = _kw(d).get("activation", "gelu")
    return _layer(_layer(x, w0, b0, act), w1, b1, None).astype(x.dtype)


def check_layer(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    return first(close(r, ref), dtype_check(r, ref) if strict else None)


# ---------------------------------------------------------------------------------------------
# Entries


def _gt() -> Any:
    import gpula.torch as gt

    return gt


def _rows(rng: np.random.Generator, m: int, k: int | None) -> np.ndarray:
    return rng.standard_normal(m) if k is None else rng.standard_normal((m, k))


def _std(*extra: Opt) -> tuple[Opt, ...]:
    return (*extra, Opt("requires_grad", {"requires_grad": True}, expect="ref"),
            Opt("unknown_kw", {"foo": 1}, expect="signature", mention="foo"))


def _bool_opt(name: str) -> Opt:
    return Opt(f"{name}_bogus", {name: "yes"}, mention=name)


def _k_opts() -> tuple[Opt, ...]:
    return (Opt("k_zero", {"k": 0}, mention="k"), Opt("k_neg", {"k": -1}, mention="k"),
            Opt("k_str", {"k": "1"}, mention="k"), Opt("k_float", {"k": 1.5}, mention="k"),
            Opt("k_big", {"k": 99}, mention="k"))


def _cast(make: Callable, names: tuple[str, ...], dtype: Any) -> Callable:
    def m(g: np.random.Generator) -> dict:
        d = make(g)
        return {**d, **{n: d[n].astype(dtype) for n in names}}

    return m


def _linalg(name: str, make: Callable, fn: Callable, ref: Callable, check: Callable,
            args: tuple[Arg, ...], options: tuple[Opt, ...] = (), variant: str = "",
            names: tuple[str, ...] | None = None) -> list[Entry]:
    """The entry, and (for the main form) its float32 and complex variants: the valid case
    only, float32 against the reference, complex (taken by torch.linalg, not by gpula.torch)
    a DTypeError."""
    names = names or tuple(a.name for a in args)
    op = f"torch.linalg.{name}"
    call = torch_call(fn, names)
    ref = linalg_ref(ref, names)
    base = f"{op}{variant}"
    out = [Entry(base, op, make, call, ref, shows_nonfinite(check), args, options=options,
                 after=after, torch_results=True)]
    if not variant:
        out += [Entry(f"{op}[float32]", op, _cast(make, names, np.float32), call, ref,
                      shows_nonfinite(check), after=after, torch_results=True),
                Entry(f"{op}[complex]", op, _cast(make, names, np.complex128), call, None,
                      check, after=after, torch_results=True, mention=names)]
    return out


def linalg_entries() -> list[Entry]:
    def L() -> Any:
        return _gt().linalg

    A = _sq("A")
    out: list[Entry] = []
    out += _linalg("cholesky", lambda g: {"A": _spd(g), "kw": {}},
                   lambda d: L().cholesky(d["A"], **d["kw"]), ref_cholesky, check_array, (A,),
                   _std(Opt("upper", {"upper": True}, expect="ref"), _bool_opt("upper")))
    # Only the lower (upper) triangle is read: the other holds large values of no SPD matrix.
    out += _linalg("cholesky", lambda g: {"A": np.tril(_spd(g)) + np.triu(
                       100 * g.standard_normal((N, N)), 1), "kw": {}},
                   lambda d: L().cholesky(d["A"], **d["kw"]), ref_cholesky, check_array, (),
                   variant="[other triangle unread]", names=("A",))
    out += _linalg("cho_solve",
                   lambda g: {"c": np.linalg.cholesky(_spd(g)), "B": _rows(g, N, 2),
                              "kw": {"lower": True}},
                   lambda d: L().cho_solve((d["c"], d["kw"].pop("lower")), d["B"], **d["kw"]),
                   ref_cho_solve, check_array,
                   (Arg("c", "mat", batch=True, aliases=("c_and_lower",)),
                    Arg("B", "mat", batch=True)),
                   _std(Opt("lower_false", {"lower": False}, expect="ref"),
                        _bool_opt("lower")))
    out += _linalg("cho_solve",
                   lambda g: {"c": np.linalg.cholesky(_spd(g)).T.copy(), "B": _rows(g, N, 2),
                              "kw": {"lower": False}},
                   lambda d: L().cho_solve((d["c"], d["kw"].pop("lower")), d["B"]),
                   ref_cho_solve, check_array, (), variant="[upper factor]", names=("c", "B"))
    solve = lambda d: L().solve(d["A"], d["B"], **d["kw"])  # noqa: E731
    out += _linalg("solve", lambda g: {"A": _gen(g), "B": _rows(g, N, None), "kw": {}}, solve,
                   ref_solve, check_array, (A, Arg("B", "vec")), _std(_bool_opt("left")))
    out += _linalg("solve", lambda g: {"A": _gen(g), "B": _rows(g, N, 2), "kw": {}}, solve,
                   ref_solve, check_array, (A, Arg("B", "mat", batch=True)),
                   _std(_bool_opt("left")), variant="[B 2-D]")
    out += _linalg("solve", lambda g: {"A": _gen(g), "B": _rows(g, 3, N), "kw": {"left": False}},
                   solve, ref_solve, check_array, (A, Arg("B", "mat", batch=True)),
                   variant="[left=False]")
    out += _linalg("solve", lambda g: {"A": np.stack([_gen(g) for _ in range(3)]),
                                       "B": g.standard_normal((3, N)), "kw": {}},
                   solve, ref_solve, check_array, (), variant="[batch of vectors]",
                   names=("A", "B"))
    # A full: only its upper (lower) triangle is read.
    out += _linalg("solve_triangular",
                   lambda g: {"A": _gen(g), "B": _rows(g, N, N), "kw": {"upper": True}},
                   lambda d: L().solve_triangular(d["A"], d["B"], **d["kw"]),
                   ref_solve_triangular, check_array, (A, Arg("B", "mat", batch=True)),
                   _std(Opt("lower", {"upper": False}, expect="ref"),
                        Opt("left_false", {"left": False}, expect="ref"),
                        Opt("unitriangular", {"unitriangular": True}, expect="ref"),
                        _bool_opt("upper"), _bool_opt("left"), _bool_opt("unitriangular")))
    for name, check in (("inv", check_array), ("slogdet", check_slogdet)):
        out += _linalg(name, lambda g: {"A": _gen(g), "kw": {}},
                       lambda d, name=name: getattr(L(), name)(d["A"], **d["kw"]),
                       ref_numpy(name), check, (A,), _std())
    out += _linalg("logdet", lambda g: {"A": _gen(g), "kw": {}},
                   lambda d: L().logdet(d["A"], **d["kw"]), ref_logdet, check_array, (A,), _std())
    # A random: eigh reads one triangle (UPLO) as a symmetric matrix.
    eigh = lambda d: L().eigh(d["A"], **d["kw"])  # noqa: E731
    check_e = lambda r, ref, d, s: check_eigh(r, ref, _np_eigh(d), s)  # noqa: E731
    out += _linalg("eigh", lambda g: {"A": g.standard_normal((N, N)), "kw": {}}, eigh, ref_eigh,
                   check_e, (A,),
                   _std(Opt("UPLO_U", {"UPLO": "U"}, expect="ref"),
                        Opt("UPLO_bogus", {"UPLO": "X"}, mention="UPLO"),
                        Opt("which_bogus", {"k": 1, "which": "bogus"}, mention="which"),
                        *_k_opts()))
    out += _linalg("eigh", lambda g: {"A": g.standard_normal((N, N)), "kw": {"k": 1}}, eigh,
                   ref_eigh, check_e, (A,),
                   _std(Opt("smallest", {"which": "smallest"}, expect="ref")), variant="[k=1]")
    svd = lambda d: L().svd(d["A"], **d["kw"])  # noqa: E731
    check_s = lambda r, ref, d, s: check_svd(r, ref, _np_svd(d), s)  # noqa: E731
    out += _linalg("svd", lambda g: {"A": _gen(g), "kw": {}}, svd, ref_svd, check_s, (A,),
                   _std(Opt("full_matrices_false", {"full_matrices": False}, expect="ref"),
                        _bool_opt("full_matrices"), *_k_opts()))
    out += _linalg("svd", lambda g: {"A": g.standard_normal((5, 3)), "kw": {}}, svd, ref_svd,
                   check_s, (Arg("A", "mat", batch=True),),
                   _std(Opt("full_matrices_false", {"full_matrices": False}, expect="ref")),
                   variant="[5x3]")
    out += _linalg("svd", lambda g: {"A": _gen(g), "kw": {"k": 1}}, svd, ref_svd, check_s, (A,),
                   variant="[k=1]")
    lstsq = lambda d: L().lstsq(d["A"], d["B"], **d["kw"])  # noqa: E731
    lstsq_opts = _std(Opt("rcond_value", {"rcond": 1e-3}, expect="ref"),
                      Opt("rcond_bogus", {"rcond": "abc"}, mention="rcond"))
    out += _linalg("lstsq", lambda g: {"A": g.standard_normal((6, N)), "B": _rows(g, 6, None),
                                       "kw": {}},
                   lstsq, ref_lstsq, check_lstsq, (Arg("A", "mat", batch=True), Arg("B", "vec")),
                   lstsq_opts)
    out += _linalg("lstsq", lambda g: {"A": g.standard_normal((6, N)), "B": _rows(g, 6, 2),
                                       "kw": {}},
                   lstsq, ref_lstsq, check_lstsq,
                   (Arg("A", "mat", batch=True), Arg("B", "mat", batch=True)), lstsq_opts,
                   variant="[B 2-D]")
    out += _linalg("lstsq", lambda g: {"A": g.standard_normal((3, 6, N)),
                                       "B": g.standard_normal((3, 6)), "kw": {}},
                   lstsq, ref_lstsq, check_lstsq, (), variant="[batch of vectors]",
                   names=("A", "B"))
    out += _linalg("lstsq", lambda g: {"A": g.standard_normal((3, N)), "B": _rows(g, 3, None),
                                       "kw": {}},
                   lstsq, ref_lstsq, check_lstsq, (), variant="[wide]", names=("A", "B"))
    qr = lambda d: L().qr(d["A"], **d["kw"])  # noqa: E731
    qr_opts = _std(Opt("mode_complete", {"mode": "complete"}, expect="ref"),
                   Opt("mode_r", {"mode": "r"}, expect="ref"),
                   Opt("mode_bogus", {"mode": "full"}, mention="mode"))
    out += _linalg("qr", lambda g: {"A": g.standard_normal((5, 3)), "kw": {}}, qr, ref_qr,
                   check_torch_qr, (Arg("A", "mat", batch=True, huge=_huge_batch),), qr_opts)
    out += _linalg("qr", lambda g: {"A": g.standard_normal((3, 5)), "kw": {}}, qr, ref_qr,
                   check_torch_qr, (), qr_opts, variant="[wide]", names=("A",))
    return out


def _layer_opts() -> tuple[Opt, ...]:
    return _std(Opt("relu", {"activation": "relu"}, expect="ref"),
                Opt("activation_bogus", {"activation": "tanh"}, mention="activation"))


def layer_entries() -> list[Entry]:
    def GF() -> Any:
        return _gt().functional

    lin_names = ("input", "weight", "bias")
    linear = torch_call(lambda d: GF().linear(d["input"], d["weight"], d["bias"], **d["kw"]),
                        lin_names, LAYER_DTYPES, optional=("bias",))

    def lin_make(shape: tuple[int, ...]) -> Callable:
        return lambda g: {"input": g.standard_normal((*shape, 4)),
                          "weight": g.standard_normal((3, 4)), "bias": g.standard_normal(3),
                          "kw": {"activation": "gelu"}}

    lin = dict(op="torch.linear", call=linear, ref=ref_linear, check=check_layer, after=after,
               torch_results=True)
    out = [
        Entry("torch.functional.linear", make=lin_make((5,)),
              args=(Arg("input", "mat", batch=True), Arg("weight", "mat"), Arg("bias", "vec")),
              options=(*_layer_opts(), Opt("no_activation", {"activation": None}, expect="ref")),
              **lin),
        Entry("torch.functional.linear[input 1-D]", make=lin_make(()), **lin),
        Entry("torch.functional.linear[input 3-D]", make=lin_make((2, 5)), **lin),
        Entry("torch.functional.linear[float32]",
              make=_cast(lin_make((5,)), lin_names, np.float32), **lin),
        Entry("torch.functional.linear[float16]",  # the layers take half precision
              make=_cast(lin_make((5,)), lin_names, np.float16), **{**lin, "check": (
                  lambda r, ref, d, s: close(r, ref, tol=2e-2))}),
        Entry("torch.functional.linear[complex]", mention="input",
              make=_cast(lin_make((5,)), lin_names, np.complex128), **{**lin, "ref": None}),
    ]
    mlp_names = ("input", "w0", "w1", "b0", "b1")

    def mlp(d: dict) -> Any:
        return GF().mlp(d["input"], [d["w0"], d["w1"]], [d["b0"], d["b1"]], **d["kw"])

    def mlp_make(g: np.random.Generator) -> dict:
        return {"input": g.standard_normal((5, 4)), "w0": g.standard_normal((6, 4)),
                "w1": g.standard_normal((3, 6)), "b0": g.standard_normal(6),
                "b1": g.standard_normal(3), "kw": {}}

    mlp_kw = dict(op="torch.mlp", ref=ref_mlp, check=check_layer, after=after,
                  torch_results=True)
    w = ("weight", "weights")
    b = ("bias", "biases")
    out += [
        Entry("torch.functional.mlp", make=mlp_make,
              call=torch_call(mlp, mlp_names, LAYER_DTYPES),
              args=(Arg("input", "mat", batch=True), Arg("w0", "mat", aliases=w),
                    Arg("w1", "mat", aliases=w), Arg("b0", "vec", aliases=b),
                    Arg("b1", "vec", aliases=b)),
              options=(*_layer_opts(), Opt("no_activation", {"activation": None},
                                           mention="activation")), **mlp_kw),
        Entry("torch.functional.mlp[no biases]", make=mlp_make,
              call=torch_call(lambda d: GF().mlp(d["input"], [d["w0"], d["w1"]], **d["kw"]),
                              ("input", "w0", "w1"), LAYER_DTYPES),
              **{**mlp_kw, "ref": lambda d: ref_mlp({**d, "b0": np.zeros(6), "b1": np.zeros(3)})}),
        Entry("torch.functional.mlp[complex]", make=_cast(mlp_make, mlp_names, np.complex128),
              call=torch_call(mlp, mlp_names, LAYER_DTYPES), mention="input",
              **{**mlp_kw, "ref": None}),
    ]
    out += module_entries()
    return out


def module_entries() -> list[Entry]:
    """gpula.torch.nn's layers: float64 modules whose parameters are the drawn arrays; the
    input is the argument, the constructor's keywords the options."""

    def linear(d: dict) -> Any:
        torch = torch_module()
        kw = {"activation": "gelu", "bias": True, **d["kw"]}
        layer = _gt().nn.Linear(4, 3, dtype=torch.float64, **kw)
        with torch.no_grad():
            layer.weight.copy_(torch.from_numpy(d["weight"]))
            if layer.bias is not None:
                layer.bias.copy_(torch.from_numpy(d["bias"]))
        return layer(d["input"])

    def ref_module_linear(d: dict) -> Any:
        kw = {"activation": "gelu", "bias": True, **_kw(d)}
        return ref_linear({**d, "bias": d["bias"] if kw["bias"] else None,
                           "kw": {"activation": kw["activation"]}})

    def fused(d: dict) -> Any:
        torch = torch_module()
        kw = {"sizes": [4, 6, 3], "activation": "gelu", "bias": True, **d["kw"]}
        m = _gt().nn.FusedMLP(kw.pop("sizes"), dtype=torch.float64, **kw)
        with torch.no_grad():
            for i, layer in enumerate(m.layers):
                layer.weight.copy_(torch.from_numpy(d[f"w{i}"]))
                if layer.bias is not None:
                    layer.bias.copy_(torch.from_numpy(d[f"b{i}"]))
        return m(d["input"])

    def ref_fused(d: dict) -> Any:
        kw = {"activation": "gelu", "bias": True, **_kw(d)}
        zero = {} if kw["bias"] else {"b0": np.zeros(6), "b1": np.zeros(3)}
        return ref_mlp({**d, **zero, "kw": {"activation": kw["activation"]}})

    opts = (*_layer_opts(), Opt("no_bias", {"bias": False}, expect="ref"))
    return [
        Entry("torch.nn.Linear", ("torch.nn.Linear", "torch.linear"),
              lambda g: {"input": g.standard_normal((5, 4)), "weight": g.standard_normal((3, 4)),
                         "bias": g.standard_normal(3), "kw": {}},
              torch_call(linear, ("input",), LAYER_DTYPES), ref_module_linear, check_layer,
              (Arg("input", "mat", batch=True),), all_torch=False, after=after,
              torch_results=True,
              options=(*opts, Opt("no_activation", {"activation": None}, expect="ref"))),
        Entry("torch.nn.FusedMLP", ("torch.nn.FusedMLP", "torch.mlp"),
              lambda g: {"input": g.standard_normal((5, 4)), "w0": g.standard_normal((6, 4)),
                         "w1": g.standard_normal((3, 6)), "b0": g.standard_normal(6),
                         "b1": g.standard_normal(3), "kw": {}},
              torch_call(fused, ("input",), LAYER_DTYPES), ref_fused, check_layer,
              (Arg("input", "mat", batch=True),), all_torch=False, after=after,
              torch_results=True,
              options=(*opts, Opt("sizes_short", {"sizes": [4]}, mention="sizes"))),
    ]


def entries() -> list[Entry]:
    if not HAS_TORCH:  # gpula.torch needs torch: no entries, and coverage.py asks for none
        return []
    return [*linalg_entries(), *layer_entries()]
