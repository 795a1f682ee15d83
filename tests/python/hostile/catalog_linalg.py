"""gl.linalg: every function with valid arguments and its NumPy/SciPy reference.

References follow the contract (docs: ARCHITECTURE.md "Python API"): NumPy's names, defaults,
shapes and named tuples; SciPy's ``check_finite=True`` (NaN/Inf raise) on every dense function;
integer inputs promoted to float64 as NumPy does.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla

import gpula as gl

from .core import (WITH_GPU, Arg, Entry, Opt, as_np, close, dtype_check, finite_check,
                   first, tol_of)

N = 4


# The signs of _gen's and _spd's entries are fixed so that the bool mutation (a > 0) gives a
# nonsingular matrix (all-ones upper triangular; the identity): of random signs it gives a random
# 0/1 matrix, singular for some seeds, where NumPy raises too and the singular-matrix error was
# judged by the bool dtype's value words.
def _gen(rng: np.random.Generator, *shape: int) -> np.ndarray:
    """Well-conditioned general square matrices: positive above the diagonal, negative below."""
    g = rng.standard_normal((*shape, N, N)) + N * np.eye(N)
    return np.where(np.tri(N, k=-1, dtype=bool), -abs(g), abs(g))


def _spd(rng: np.random.Generator) -> np.ndarray:
    """Symmetric positive definite (diagonally dominant) matrices."""
    g = rng.standard_normal((N, N))
    return np.where(np.eye(N, dtype=bool), N + abs(g), -abs(g + g.T) / 4)


def _sym(rng: np.random.Generator) -> np.ndarray:
    g = rng.standard_normal((N, N))
    return g + g.T


def _huge_batch(v: np.ndarray) -> np.ndarray:
    return np.broadcast_to(v, (10**5, *v.shape))


def _h(x: np.ndarray) -> np.ndarray:
    return np.swapaxes(x, -1, -2).conj()


def _f(x: Any) -> np.ndarray:
    """The reference's view of an input: NumPy, float64 for integers and bools, as NumPy does;
    float32 for float16, as SciPy does."""
    a = np.asarray(as_np(x))
    if a.dtype.kind in "biu":
        a = a.astype(np.float64)
    elif a.dtype == np.float16:  # SciPy's linalg promotes it (NumPy's refuses): either is fine
        a = a.astype(np.float32)
    return a


def _loop(f: Any, a: np.ndarray, *rest: np.ndarray) -> Any:
    """f over the leading batch dimensions of a (rest broadcast along)."""
    if a.ndim == 2:
        return f(a, *rest)
    if a.shape[0] == 0:  # an empty batch: empty results shaped as one instance's
        one = f(np.zeros(a.shape[1:], a.dtype), *rest)
        if isinstance(one, tuple):
            return tuple(np.zeros((0, *np.shape(o)), np.asarray(o).dtype) for o in one)
        return np.zeros((0, *one.shape), one.dtype)
    outs = [_loop(f, a[i], *rest) for i in range(a.shape[0])]
    if isinstance(outs[0], tuple):
        return tuple(np.stack(o) for o in zip(*outs))
    return np.stack(outs)


def check_array(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    return first(close(r, ref), dtype_check(r, ref) if strict else None)


def _kw(d: dict) -> dict:
    return d.get("kw", {})


def _std_opts(*, info: bool = True) -> tuple[Opt, ...]:
    """The keyword arguments every linalg function takes, given bad values."""
    opts = [
        Opt("device_bogus", {"device": "tpu"}, mention="device"),
        Opt("fallback_bogus", {"fallback": "gpu"}, mention="fallback"),
        Opt("stream_bogus", {"stream": "abc"}, mention="stream"),
        Opt("device_cuda", {"device": "cuda"}, expect=WITH_GPU, mention=("cuda", "device")),
        Opt("unknown_kw", {"foo": 1}, expect="signature", mention="foo"),
        Opt("check_finite_false", {"check_finite": False}, expect="ref"),
        Opt("check_finite_bogus", {"check_finite": "yes"}, mention="check_finite"),
    ]
    if info:
        opts.append(Opt("check_info_bogus", {"check_info": "yes"}, mention="check_info"))
    return tuple(opts)


def _finite_unless(d: dict, *arrays: Any) -> None:
    if _kw(d).get("check_finite", True) is not False:
        finite_check(*arrays)


# ---------------------------------------------------------------------------------------------
# cholesky, cho_solve, lu_factor, lu_solve, solve, inv, det, slogdet


def _ref_cholesky(d: dict) -> Any:
    a = _f(d["a"])
    _finite_unless(d, a)
    lower = _kw(d).get("lower", True)
    c = np.linalg.cholesky(a)
    return c if lower else _h(c)


def _lower_only(c: np.ndarray, lower: bool) -> None:
    """The contract: cho_solve raises when c is not triangular on the side claimed."""
    bad = np.triu(c, 1) if lower else np.tril(c, -1)
    if c.size and np.any(bad != 0):
        raise ValueError("c is not triangular on the side claimed")


def _ref_cho_solve(d: dict) -> Any:
    c, lower = d["c"], d.get("lower", True)
    c, b = _f(c), _f(d["b"])
    _finite_unless(d, c, b)
    _lower_only(c, lower)
    if c.ndim == 2 and b.ndim <= 2:
        return sla.cho_solve((c, lower), b, check_finite=False)  # a zero on c's diagonal: Inf/NaN
    a = c @ _h(c) if lower else _h(c) @ c
    return np.linalg.solve(a, b)


def _call_cho_solve(d: dict) -> Any:
    c = (d["c"], d["lower"]) if "lower" in d else d["c"]
    return gl.linalg.cho_solve(c, d["b"], **_kw(d))


def _ref_lu_factor(d: dict) -> Any:
    a = _f(d["a"])
    _finite_unless(d, a)
    if a.ndim > 2 and a.shape[0] == 0:  # SciPy refuses empty batches; NumPy's rule: empty results
        return np.zeros(a.shape, a.dtype), np.zeros(a.shape[:-1], np.int32)
    return sla.lu_factor(a, check_finite=False)


def check_lu_factor(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    if not (isinstance(r, tuple) and len(r) == 2):
        return f"returns {type(r).__name__}, not (lu, piv)"
    return first(close(r[0], ref[0], "lu"), close(r[1], ref[1], "piv", tol=0.0),
                 dtype_check(r[0], ref[0], "lu") if strict else None)


def _piv_ok(piv: Any, n: int) -> np.ndarray:
    p = np.asarray(as_np(piv))
    if p.dtype.kind not in "iu" or p.shape[-1:] != (n,) or np.any(p < 0) or np.any(p >= n):
        raise ValueError("piv must hold n integers in [0, n)")
    return p


def _ref_lu_solve(d: dict) -> Any:
    lu, b = _f(d["lu"]), _f(d["b"])
    _finite_unless(d, lu, b)
    piv = _piv_ok(d["piv"], lu.shape[-1])
    if lu.ndim != 2 or b.ndim > 2:
        raise NotImplementedError("the reference takes one matrix")
    return sla.lu_solve((lu, piv), b, trans=d.get("trans", 0), check_finite=False)


def _ref_solve(d: dict) -> Any:
    a, b = _f(d["a"]), _f(d["b"])
    _finite_unless(d, a, b)
    kw = _kw(d)
    if kw.get("assume_a", "gen") not in ("gen", "pos", "sym"):
        raise ValueError("assume_a")
    if kw.get("assume_a") == "pos":
        np.linalg.cholesky(a)  # raises for a not positive definite
    return np.linalg.solve(a, b)


def _ref_numpy(name: str) -> Any:
    f = getattr(np.linalg, name)

    def ref(d: dict) -> Any:
        a = _f(d["a"])
        _finite_unless(d, a)
        return f(a)

    return ref


def check_slogdet(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    if not (isinstance(r, tuple) and len(r) == 2):
        return f"returns {type(r).__name__}, not (sign, logabsdet)"
    if strict and not hasattr(r, "logabsdet"):
        return "returns a plain tuple, not NumPy 2's SlogdetResult (sign, logabsdet)"
    return first(close(r[0], ref[0], "sign"), close(r[1], ref[1], "logabsdet"))


# ---------------------------------------------------------------------------------------------
# qr, lstsq


_QR_MODES = {"economic": "reduced", "full": "complete"}


def _ref_qr(d: dict) -> Any:
    a = _f(d["a"])
    _finite_unless(d, a)
    mode = _kw(d).get("mode", "reduced")
    return np.linalg.qr(a, mode=_QR_MODES.get(mode, mode))


def check_qr(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    a = _f(d["a"])
    if not isinstance(ref, tuple):  # mode "r": R up to the signs of its rows
        return close(np.abs(as_np(r)), np.abs(ref), "|r|")
    if not (isinstance(r, tuple) and len(r) == 2):
        return f"returns {type(r).__name__}, not (q, r)"
    q, rr = (np.asarray(as_np(x)) for x in r)
    if strict and not hasattr(r, "Q"):
        return "returns a plain tuple, not NumPy 2's QRResult (Q, R)"
    k = min(q.shape[-1], rr.shape[-2]) if q.ndim >= 2 else 0
    eye = np.eye(q.shape[-1]) if q.ndim >= 2 else 0
    return first(
        close(q, ref[0], "q shape") if q.shape != ref[0].shape else None,
        close(rr, ref[1], "r shape") if rr.shape != ref[1].shape else None,
        close(q @ rr, a, "q @ r"),
        close(np.tril(rr, -1), 0 * rr, "r below the diagonal"),
        close(_h(q) @ q, np.broadcast_to(eye, q.shape[:-2] + (k, k)) if k else _h(q) @ q, "q^H q"),
    )


def _ref_lstsq(d: dict) -> Any:
    a, b = _f(d["a"]), _f(d["b"])
    _finite_unless(d, a, b)
    rcond = _kw(d).get("rcond", None)
    if a.ndim == 2:
        return np.linalg.lstsq(a, b, rcond=rcond)
    x = _loop(lambda m, v: np.linalg.lstsq(m, v, rcond=rcond)[0], a, b)
    return (x,)


def check_lstsq(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    if strict:
        if not (isinstance(r, tuple) and len(r) == 4):
            return "returns x only, not NumPy's (solution, residuals, rank, singular_values)"
        return first(close(r[0], ref[0], "solution"), close(r[1], ref[1], "residuals"),
                     close(np.asarray(r[2]), np.asarray(ref[2]), "rank", tol=0.0),
                     close(r[3], ref[3], "singular_values"))
    x = r[0] if isinstance(r, tuple) else r
    return close(x, ref[0], "solution")


# ---------------------------------------------------------------------------------------------
# svd, svdvals, eigh, eigvalsh, eig, eigvals


def _ref_svd(d: dict) -> Any:
    a = _f(d["a"])
    _finite_unless(d, a)
    kw = _kw(d)
    full = kw.get("full_matrices", True)
    if not kw.get("compute_uv", True):
        return np.linalg.svd(a, compute_uv=False)
    k = kw.get("k")
    if k is not None:
        u, s, vh = np.linalg.svd(a, full_matrices=False)
        return u[..., :, :k], s[..., :k], vh[..., :k, :]
    return np.linalg.svd(a, full_matrices=full)


def check_svd(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    if not isinstance(ref, tuple):
        return close(r, ref, "s")
    if not (isinstance(r, tuple) and len(r) == 3):
        return f"returns {type(r).__name__}, not (u, s, vh)"
    if strict and not hasattr(r, "Vh"):
        return "returns a plain tuple, not NumPy 2's SVDResult (U, S, Vh)"
    u, s, vh = (np.asarray(as_np(x)) for x in r)
    if u.shape != ref[0].shape or vh.shape != ref[2].shape:
        return f"u, vh shapes {u.shape}, {vh.shape}; NumPy's {ref[0].shape}, {ref[2].shape}"
    k = s.shape[-1]
    # The top-k path is accurate to 1e-6 in float64, to its working precision below that.
    tol = max(1e-6, tol_of(s.dtype)) if "k" in _kw(d) else None
    return first(close(s, ref[1], "s", tol),
                 close((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :],
                       (ref[0][..., :, :k] * ref[1][..., None, :]) @ ref[2][..., :k, :],
                       "u s vh", tol))


def _lower_sym(a: np.ndarray, lower: bool = True) -> np.ndarray:
    t = np.tril(a) if lower else np.triu(a)
    return t + _h(np.tril(a, -1) if lower else np.triu(a, 1))


def _ref_eigh(d: dict) -> Any:
    a = _f(d["a"])
    _finite_unless(d, a)
    kw = _kw(d)
    w, v = np.linalg.eigh(_lower_sym(a, kw.get("lower", True)))
    k = kw.get("k")
    if k is not None:
        sl = slice(-k, None) if kw.get("which", "largest") == "largest" else slice(0, k)
        w, v = w[..., sl], v[..., :, sl]
    if kw.get("eigvals_only"):
        return w
    return w, v


def check_eigh(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    w_dtype = np.asarray(as_np(r[0] if isinstance(r, tuple) else r)).dtype
    tol = max(1e-6, tol_of(w_dtype)) if "k" in _kw(d) else None
    if not isinstance(ref, tuple):
        return close(r, ref, "w", tol)
    if not (isinstance(r, tuple) and len(r) == 2):
        return f"returns {type(r).__name__}, not (w, v)"
    if strict and not hasattr(r, "eigenvectors"):
        return "returns a plain tuple, not NumPy 2's EighResult (eigenvalues, eigenvectors)"
    w, v = (np.asarray(as_np(x)) for x in r)
    a = _lower_sym(_f(d["a"]), _kw(d).get("lower", True))
    return first(close(w, ref[0], "w", tol),
                 close(v, ref[1], "v shape") if v.shape != ref[1].shape else None,
                 close(a @ v, v * w[..., None, :], "a v - v w", tol or max(1e-7, tol_of(w.dtype))))


def _ref_eig(d: dict) -> Any:
    a = _f(d["a"])
    _finite_unless(d, a)
    return np.linalg.eig(a)


def _sorted(w: np.ndarray) -> np.ndarray:
    w = np.asarray(w, np.complex128)
    key = np.round(w.real, 6) * 1e3 + np.round(w.imag, 6)
    return np.take_along_axis(w, np.argsort(key, axis=-1), axis=-1)


def check_eig(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    w0 = np.asarray(as_np(r[0] if isinstance(r, tuple) else r))
    tol = max(tol_of(w0.dtype), tol_of(_f(d["a"]).dtype))  # _sorted makes both complex128
    if not isinstance(r, tuple):  # eigvals
        return close(_sorted(w0), _sorted(ref), "sorted w", tol)
    w, v = (np.asarray(as_np(x)) for x in r)
    a = _f(d["a"])
    return first(close(_sorted(w), _sorted(ref[0]), "sorted w", tol),
                 close(a @ v, v * w[..., None, :], "a v - v w", max(1e-7, tol_of(v.dtype))))


def _eigvals_ref(d: dict) -> Any:
    a = _f(d["a"])
    _finite_unless(d, a)
    return np.linalg.eigvals(a)


# ---------------------------------------------------------------------------------------------
# solve_triangular, lu, lu_solve(trans=), pinv, matrix_rank, norm, cond


def _ref_solve_triangular(d: dict) -> Any:
    a, b = _f(d["a"]), _f(d["b"])
    _finite_unless(d, a, b)
    kw = {k: v for k, v in _kw(d).items() if k in ("trans", "lower", "unit_diagonal")}
    if a.ndim > 2 and a.shape[0] == 0:  # an empty batch: no matrix to be singular
        return np.zeros((0, *b.shape), np.result_type(a, b))
    return _loop(lambda m, r: sla.solve_triangular(m, r, check_finite=False, **kw), a, b)


def _ref_lu(d: dict) -> Any:
    a = _f(d["a"])
    _finite_unless(d, a)
    kw = {k: v for k, v in _kw(d).items() if k in ("permute_l", "p_indices")}
    a = a.astype(a.dtype.newbyteorder("="))  # SciPy's lu misreads big-endian input
    if a.ndim > 2 and a.shape[0] == 0:  # SciPy refuses empty batches; NumPy's rule: empty results
        one = sla.lu(np.eye(a.shape[-1], dtype=a.dtype), **kw)
        return tuple(np.zeros((0, *o.shape), o.dtype) for o in one)
    return sla.lu(a, check_finite=False, **kw)


def check_tuple(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    if not (isinstance(r, tuple) and len(r) == len(ref)):
        return f"returns {type(r).__name__}, not a tuple of {len(ref)}"
    return first(*(close(x, y, str(i)) for i, (x, y) in enumerate(zip(r, ref))))


def _ref_np(name: str, finite: bool) -> Any:
    def ref(d: dict) -> Any:
        a = _f(d["a"])
        if finite:
            _finite_unless(d, a)
        return getattr(np.linalg, name)(a, **_kw(d))

    return ref


def _dense1_entries(L: Any, std: tuple[Opt, ...]) -> list[Entry]:
    tri_opts = (*std, Opt("trans_T", {"trans": "T"}, expect="ref"),
                Opt("trans_bogus", {"trans": 7}, mention="trans"),
                Opt("lower_bogus", {"lower": "x"}, mention="lower"),
                Opt("unit_diagonal", {"unit_diagonal": True}, expect="ref"))
    lu_opts = (*_std_opts(info=False), Opt("permute_l", {"permute_l": True}, expect="ref"),
               Opt("p_indices", {"p_indices": True}, expect="ref"),
               Opt("permute_l_bogus", {"permute_l": "x"}, mention="permute_l"))
    return [
        Entry("linalg.solve_triangular", "linalg.solve_triangular",
              lambda g: {"a": np.triu(_gen(g)), "b": _rhs(g, None), "kw": {}},
              lambda d: L.solve_triangular(d["a"], d["b"], **_kw(d)), _ref_solve_triangular,
              check_array, (_sq("a"), Arg("b", "vec")), numpy_inputs=True, options=tri_opts),
        Entry("linalg.lu", ("linalg.lu", "linalg.lu_factor"), lambda g: {"a": _gen(g), "kw": {}},
              lambda d: L.lu(d["a"], **_kw(d)), _ref_lu, check_tuple, (_sq("a"),),
              numpy_inputs=True, options=lu_opts),
        Entry("linalg.lu_solve[trans=1]", ("linalg.lu_solve", "linalg.solve_triangular"),
              lambda g: dict(zip(("lu", "piv"), sla.lu_factor(_gen(g))), b=_rhs(g, None), kw={},
                             trans=1),
              lambda d: L.lu_solve((d["lu"], d["piv"]), d["b"], trans=d["trans"], **_kw(d)),
              _ref_lu_solve, check_array,
              (Arg("lu", "mat", aliases=("lu_piv",)), Arg("piv", "piv", aliases=("lu_piv",)),
               Arg("b", "vec")), numpy_inputs=True),
        Entry("linalg.pinv", "linalg.pinv", lambda g: {"a": g.standard_normal((5, 3)), "kw": {}},
              lambda d: L.pinv(d["a"], **_kw(d)), _ref_np("pinv", True), check_array,
              (Arg("a", "mat", batch=True),), numpy_inputs=True,
              options=(Opt("hermitian_bogus", {"hermitian": "x"}, mention="hermitian"),)),
        Entry("linalg.matrix_rank", "linalg.matrix_rank",
              lambda g: {"a": _gen(g), "kw": {}}, lambda d: L.matrix_rank(d["a"], **_kw(d)),
              _ref_np("matrix_rank", False), check_array, numpy_inputs=True),
        Entry("linalg.norm", "linalg.norm", lambda g: {"a": _gen(g), "kw": {"ord": "nuc"}},
              lambda d: L.norm(d["a"], **_kw(d)), _ref_np("norm", False), check_array,
              numpy_inputs=True,
              options=(Opt("ord_bogus", {"ord": "bogus"}, mention="norm order"),
                       Opt("ord_inf", {"ord": np.inf}, expect="ref"))),
        Entry("linalg.cond", "linalg.cond", lambda g: {"a": _gen(g), "kw": {}},
              lambda d: L.cond(d["a"], **_kw(d)), _ref_np("cond", False), check_array,
              numpy_inputs=True, options=(Opt("p_1", {"p": 1}, expect="ref"),)),
    ]


# ---------------------------------------------------------------------------------------------
# issue 22 (d2): expm, matrix_power, multi_dot, ldl, eigh(a, b)


def _ref_expm(d: dict) -> Any:
    a = _f(d["a"])
    if not a.dtype.isnative:  # scipy's expm takes no big-endian arrays; NumPy does
        a = a.astype(a.dtype.newbyteorder("="))
    _finite_unless(d, a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError("not square")
    if a.ndim > 2 and a.size and not any(a.strides[:-2]):  # one matrix broadcast: scipy loops
        return np.broadcast_to(sla.expm(a[(0,) * (a.ndim - 2)]), a.shape)
    return sla.expm(a) if a.size else a.copy()


def _ref_ldl(d: dict) -> Any:
    a = _f(d["a"])
    _finite_unless(d, a)
    kw = _kw(d)
    return sla.ldl(a, lower=kw.get("lower", True), hermitian=kw.get("hermitian", True))


def check_ldl(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    if not (isinstance(r, tuple) and len(r) == 3):
        return f"returns {type(r).__name__}, not (lu, d, perm)"
    lu, dd, perm = (np.asarray(as_np(x)) for x in r)
    return first(close(lu, ref[0], "lu"), close(dd, ref[1], "d"),
                 close(perm.astype(np.float64), ref[2].astype(np.float64), "perm"))


def _ref_eigh_b(d: dict) -> Any:
    if d["b"] is None:  # eigh(a, None): the standard problem, as scipy's
        return _ref_eigh({**d, "kw": {**_kw(d), "eigvals_only": True}})
    a, b = _f(d["a"]), _f(d["b"])
    _finite_unless(d, a, b)
    return sla.eigh(a, b, lower=_kw(d).get("lower", True), eigvals_only=True)


def check_eigh_b(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    if not (isinstance(r, tuple) and len(r) == 2):
        return f"returns {type(r).__name__}, not (w, v)"
    w, v = (np.asarray(as_np(x)) for x in r)
    lower = _kw(d).get("lower", True)
    a = _lower_sym(_f(d["a"]), lower)
    b = np.eye(a.shape[-1]) if d["b"] is None else _lower_sym(_f(d["b"]), lower)
    tol = max(1e-7, tol_of(w.dtype))
    return first(close(w, ref, "w"), close(a @ v, b @ v * w[..., None, :], "a v - b v w", tol))


def _d2_entries(std: tuple[Opt, ...]) -> list[Entry]:
    L = gl.linalg
    fin = (Opt("check_finite_false", {"check_finite": False}, expect="ref"),
           Opt("check_finite_bogus", {"check_finite": "yes"}, mention="check_finite"),
           Opt("unknown_kw", {"foo": 1}, expect="signature", mention="foo"))
    return [
        Entry("linalg.expm", "linalg.expm", lambda g: {"a": _gen(g) / 4, "kw": {}},
              lambda d: L.expm(d["a"], **_kw(d)), _ref_expm, check_array, (_sq("a"),),
              numpy_inputs=True, options=fin),
        Entry("linalg.matrix_power", ("linalg.matrix_power", "linalg.inv"),
              lambda g: {"a": _gen(g), "kw": {}},
              lambda d: L.matrix_power(d["a"], -3),
              lambda d: np.linalg.matrix_power(_f(d["a"]), -3), check_array, (_sq("a"),),
              numpy_inputs=True),
        Entry("linalg.multi_dot", "linalg.multi_dot",
              lambda g: {"a": g.standard_normal((3, N)), "b": g.standard_normal((N, 2)),
                         "c": g.standard_normal(2), "kw": {}},
              lambda d: L.multi_dot([d["a"], d["b"], d["c"]]),
              lambda d: np.linalg.multi_dot([_f(d["a"]), _f(d["b"]), _f(d["c"])]),
              check_array, tuple(Arg(n, k, aliases=(f"arrays[{i}]",))
                                 for i, (n, k) in enumerate((("a", "mat"), ("b", "mat"),
                                                             ("c", "vec")))),
              numpy_inputs=True),
        Entry("linalg.ldl", "linalg.ldl", lambda g: {"a": _sym(g), "kw": {}},
              lambda d: L.ldl(d["a"], **_kw(d)), _ref_ldl, check_ldl, (Arg("a", "mat"),),
              numpy_inputs=True,
              options=(*_std_opts(info=False), Opt("upper", {"lower": False}, expect="ref"),
                       Opt("hermitian_bogus", {"hermitian": "x"}, mention="hermitian"))),
        Entry("linalg.eigh[b]", "linalg.eigh",
              lambda g: {"a": _sym(g), "b": _spd(g), "kw": {}},
              lambda d: L.eigh(d["a"], d["b"], **_kw(d)), _ref_eigh_b, check_eigh_b,
              (Arg("a", "mat"), Arg("b", "mat")), numpy_inputs=True,
              options=(*std, Opt("upper", {"lower": False}, expect="ref"),
                       Opt("type_bogus", {"type": 7}, mention="type"))),
    ]


def _sq(name: str) -> Arg:
    return Arg(name, "mat", batch=True, huge=_huge_batch)


def _rhs(rng: np.random.Generator, k: int | None) -> np.ndarray:
    return rng.standard_normal(N) if k is None else rng.standard_normal((N, k))


def entries() -> list[Entry]:
    L = gl.linalg
    std = _std_opts()
    out = [
        Entry("linalg.cholesky", "linalg.cholesky", lambda g: {"a": _spd(g), "kw": {}},
              lambda d: L.cholesky(d["a"], **_kw(d)), _ref_cholesky, check_array, (_sq("a"),),
              numpy_inputs=True,
              options=(*std, Opt("upper", {"lower": False}, expect="ref"),
                       Opt("lower_bogus", {"lower": "yes"}, mention="lower"))),
    ]
    for k in (None, 2):
        tag = "" if k is None else "[b 2-D]"
        out.append(Entry(
            f"linalg.cho_solve{tag}", "linalg.cho_solve",
            lambda g, k=k: {"c": np.linalg.cholesky(_spd(g)), "b": _rhs(g, k), "kw": {}},
            _call_cho_solve, _ref_cho_solve, check_array,
            (Arg("c", "mat", batch=True), Arg("b", "mat" if k else "vec")), numpy_inputs=True,
            options=std))
    out += [
        Entry("linalg.cho_solve[scipy (c, False)]", "linalg.cho_solve",
              lambda g: {"c": sla.cholesky(_spd(g)), "lower": False, "b": _rhs(g, None)},
              _call_cho_solve, _ref_cho_solve, check_array),
        Entry("linalg.cho_solve[upper c as lower]", "linalg.cho_solve",
              lambda g: {"c": sla.cholesky(_spd(g)), "b": _rhs(g, None)},
              _call_cho_solve, _ref_cho_solve, check_array, mention="c"),
        Entry("linalg.lu_factor", "linalg.lu_factor", lambda g: {"a": _gen(g), "kw": {}},
              lambda d: L.lu_factor(d["a"], **_kw(d)), _ref_lu_factor, check_lu_factor,
              (_sq("a"),), numpy_inputs=True, options=std),
        Entry("linalg.lu_solve", "linalg.lu_solve",
              lambda g: dict(zip(("lu", "piv"), sla.lu_factor(_gen(g))), b=_rhs(g, None), kw={}),
              lambda d: L.lu_solve((d["lu"], d["piv"]), d["b"], **_kw(d)), _ref_lu_solve,
              check_array, (Arg("lu", "mat", aliases=("lu_piv",)),
                            Arg("piv", "piv", aliases=("lu_piv",)), Arg("b", "vec")),
              numpy_inputs=True, options=std),
    ]
    for k in (None, 2):
        tag = "" if k is None else "[b 2-D]"
        out.append(Entry(
            f"linalg.solve{tag}", "linalg.solve",
            lambda g, k=k: {"a": _gen(g), "b": _rhs(g, k), "kw": {}},
            lambda d: L.solve(d["a"], d["b"], **_kw(d)), _ref_solve, check_array,
            (_sq("a"), Arg("b", "mat" if k else "vec", batch=bool(k))), numpy_inputs=True,
            options=(*std, Opt("assume_a_bogus", {"assume_a": "bogus"}, mention="assume_a"),
                     Opt("refine_bogus", {"refine": "bogus"}, mention="refine"),
                     Opt("lower_bogus", {"lower": "x"}, mention="lower"))))
    out.append(Entry("linalg.solve[pos]", "linalg.solve",
                     lambda g: {"a": _spd(g), "b": _rhs(g, None), "kw": {"assume_a": "pos"}},
                     lambda d: L.solve(d["a"], d["b"], **_kw(d)), _ref_solve, check_array,
                     (_sq("a"), Arg("b", "vec")), numpy_inputs=True))
    for name, info, check in (("inv", True, check_array), ("det", False, check_array),
                              ("slogdet", False, check_slogdet)):
        out.append(Entry(
            f"linalg.{name}", f"linalg.{name}", lambda g: {"a": _gen(g), "kw": {}},
            lambda d, name=name: getattr(L, name)(d["a"], **_kw(d)), _ref_numpy(name), check,
            (_sq("a"),), numpy_inputs=True, options=_std_opts(info=info)))
    qr_opts = tuple(Opt(f"mode_{m}", {"mode": m}, expect="ref")
                    for m in ("complete", "r", "economic", "full"))
    out += [
        Entry("linalg.qr", "linalg.qr", lambda g: {"a": g.standard_normal((5, 3)), "kw": {}},
              lambda d: L.qr(d["a"], **_kw(d)), _ref_qr, check_qr,
              (Arg("a", "mat", batch=True, huge=_huge_batch),), numpy_inputs=True,
              options=(*_std_opts(info=False), *qr_opts,
                       Opt("mode_bogus", {"mode": "bogus"}, mention="mode"))),
    ]
    for k in (None, 2):
        tag = "" if k is None else "[b 2-D]"
        out.append(Entry(
            f"linalg.lstsq{tag}", "linalg.lstsq",
            lambda g, k=k: {"a": g.standard_normal((6, N)),
                            "b": g.standard_normal(6 if k is None else (6, k)), "kw": {}},
            lambda d: L.lstsq(d["a"], d["b"], **_kw(d)), _ref_lstsq, check_lstsq,
            (Arg("a", "mat", batch=True), Arg("b", "mat" if k else "vec")), numpy_inputs=True,
            options=(*_std_opts(info=False), Opt("rcond_none", {"rcond": None}, expect="ref"),
                     Opt("rcond_value", {"rcond": 1e-3}, expect="ref"))))
    svd_opts = (*std, Opt("method_bogus", {"method": "bogus"}, mention="method"),
                Opt("k_zero", {"k": 0}, mention="k"), Opt("k_neg", {"k": -1}, mention="k"),
                Opt("k_str", {"k": "1"}, mention="k"), Opt("k_big", {"k": 99}, mention="k"),
                Opt("full_matrices_bogus", {"full_matrices": "x"}, mention="full_matrices"),
                Opt("compute_uv_false", {"compute_uv": False}, expect="ref"),
                Opt("full_matrices_false", {"full_matrices": False}, expect="ref"))
    out += [
        Entry("linalg.svd", "linalg.svd", lambda g: {"a": _gen(g), "kw": {}},
              lambda d: L.svd(d["a"], **_kw(d)), _ref_svd, check_svd, (_sq("a"),),
              numpy_inputs=True, options=svd_opts),
        Entry("linalg.svd[5x3 defaults]", "linalg.svd",
              lambda g: {"a": g.standard_normal((5, 3)), "kw": {}},
              lambda d: L.svd(d["a"], **_kw(d)), _ref_svd, check_svd),
        Entry("linalg.svd[k=1]", "linalg.svd", lambda g: {"a": _gen(g), "kw": {"k": 1}},
              lambda d: L.svd(d["a"], **_kw(d)), _ref_svd, check_svd, (_sq("a"),),
              numpy_inputs=True),
        Entry("linalg.svdvals", "linalg.svdvals", lambda g: {"a": _gen(g), "kw": {}},
              lambda d: L.svdvals(d["a"], **_kw(d)), _ref_numpy("svdvals"), check_array,
              (_sq("a"),), numpy_inputs=True,
              options=(*std, Opt("method_bogus", {"method": "bogus"}, mention="method"))),
    ]
    eigh_opts = (*std, Opt("which_bogus", {"which": "bogus"}, mention="which"),
                 Opt("k_zero", {"k": 0}, mention="k"), Opt("lower_false", {"lower": False},
                                                           expect="ref"),
                 Opt("eigvals_only", {"eigvals_only": True}, expect="ref"),
                 Opt("UPLO_U", {"UPLO": "U"}, expect="signature", mention="UPLO"))
    out += [
        Entry("linalg.eigh", "linalg.eigh", lambda g: {"a": _sym(g), "kw": {}},
              lambda d: L.eigh(d["a"], **_kw(d)), _ref_eigh, check_eigh, (_sq("a"),),
              numpy_inputs=True, options=eigh_opts),
        Entry("linalg.eigh[k=1]", "linalg.eigh", lambda g: {"a": _sym(g), "kw": {"k": 1}},
              lambda d: L.eigh(d["a"], **_kw(d)), _ref_eigh, check_eigh, (_sq("a"),),
              numpy_inputs=True,
              options=(Opt("smallest", {"which": "smallest"}, expect="ref"),)),
        Entry("linalg.eigvalsh", "linalg.eigvalsh", lambda g: {"a": _sym(g), "kw": {}},
              lambda d: L.eigvalsh(d["a"], **_kw(d)),
              lambda d: _ref_eigh({**d, "kw": {**_kw(d), "eigvals_only": True}}), check_eigh,
              (_sq("a"),), numpy_inputs=True, options=std),
        Entry("linalg.eig", "linalg.eig", lambda g: {"a": g.standard_normal((N, N)), "kw": {}},
              lambda d: L.eig(d["a"], **_kw(d)), _ref_eig, check_eig, (_sq("a"),),
              numpy_inputs=True, options=std),
        Entry("linalg.eigvals", "linalg.eigvals",
              lambda g: {"a": g.standard_normal((N, N)), "kw": {}},
              lambda d: L.eigvals(d["a"], **_kw(d)), _eigvals_ref, check_eig, (_sq("a"),),
              numpy_inputs=True, options=std),
    ]
    out += _dense1_entries(L, std)
    out += _d2_entries(std)
    return out

