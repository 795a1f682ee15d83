"""gl.sparse.linalg: cg, gmres, bicgstab, minres (sparse A, LinearOperator A, preconditioners,
x0, callbacks). The reference is the dense solution; a result is judged by its residual: info 0
must mean ``||b - A x|| <= max(rtol ||b||, atol)``, and a well-conditioned system solved with the
default maxiter must converge."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse.linalg as ssla

import gpula as gl

from .catalog_sparse import N, _finite, _vec, dense_of, nonsym_csr, spd_csr
from .core import Arg, Entry, NonFinite, Opt, as_np, is_torch

SLA = gl.sparse.linalg
_M_NAMES = {"cg": ("jacobi", "ic0", "ilu0"), "gmres": ("jacobi", "ilu0"),
            "bicgstab": ("jacobi", "ilu0"), "minres": ("jacobi", "ic0")}


def _int_or_none(v: Any, name: str, low: int) -> None:
    if v is None:
        return
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(name)
    if v < low:
        raise ValueError(name)


def _ref(d: dict) -> dict:
    """The system's dense matrix, right-hand side and solution (None when singular); raises
    where the arguments are bad."""
    a = d["dense"] if "dense" in d else dense_of(d["A"])
    b = _vec(d)
    if a.ndim != 2 or a.shape[0] != a.shape[1] or b.shape != (a.shape[0],):
        raise ValueError("shapes")
    kw = d["kw"]
    _int_or_none(kw.get("maxiter"), "maxiter", 0)
    _int_or_none(kw.get("restart"), "restart", 1)
    for k in ("rtol", "atol"):
        if k in kw and (isinstance(kw[k], (bool, str)) or not isinstance(kw[k], (int, float))):
            raise TypeError(k)
    M = kw.get("M")
    if isinstance(M, str) and M not in ("jacobi", "ic0", "ilu0"):
        raise ValueError("M")
    if M is not None and not isinstance(M, str) and getattr(M, "shape", None) != a.shape:
        raise ValueError("M")
    if "callback" in kw and not callable(kw["callback"]):
        raise TypeError("callback")
    x0 = kw.get("x0")
    if x0 is not None and np.asarray(as_np(x0)).shape != b.shape:
        raise ValueError("x0")
    _finite(a, b)
    if a.dtype.kind in "biu":
        a = a.astype(np.float64)
    try:
        x = np.linalg.solve(a, b) if np.linalg.cond(a) < 1e8 else None
    except np.linalg.LinAlgError:
        x = None
    return {"a": a, "b": b, "x": x, "rtol": kw.get("rtol", 1e-5), "atol": kw.get("atol", 0.0),
            "default_maxiter": kw.get("maxiter") is None}


def check_krylov(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    if not (isinstance(r, tuple) and len(r) == 2):
        return f"returns {type(r).__name__}, not (x, info)"
    x, info = r
    if not isinstance(info, int):
        return f"info is {type(info).__name__}, not int"
    if is_torch(x) != is_torch(d["b"]):
        return f"x is {type(x).__name__} for b of {type(d['b']).__name__}"
    xn = np.asarray(as_np(x))
    if isinstance(ref, NonFinite):
        if info == 0 and np.isfinite(xn).all():
            return "info 0 and a finite x for a system with NaN/Inf"
        return None
    if xn.shape != ref["b"].shape:
        return f"x shape {xn.shape}, expected {ref['b'].shape}"
    res = float(np.linalg.norm(ref["b"] - ref["a"] @ xn))
    tol = max(ref["rtol"] * float(np.linalg.norm(ref["b"])), ref["atol"])
    # Single precision (bfloat16/float16/float32 operands): scipy too stops on its recurrence's
    # residual, which falls below a float64 tolerance the true residual cannot reach.
    single = xn.dtype in (np.float32, np.complex64)
    if single:
        tol = max(tol, 1e-4 * float(np.linalg.norm(ref["b"])))
    if info == 0:
        if not res <= 1.01 * tol + 1e-300:
            return f"info 0 (converged) at residual {res:.1e} > tolerance {tol:.1e}"
        if ref["x"] is not None and ref["rtol"] <= 1e-8:
            err = np.linalg.norm(xn - ref["x"]) / max(np.linalg.norm(ref["x"]), 1e-300)
            if not err <= 1e-6:
                return f"x differs from the solution: relative error {err:.1e}"
        return None
    if ref["x"] is not None and ref["default_maxiter"] and info > 0 and not (single and res <= tol):
        return f"did not converge (info {info}, residual {res:.1e}) on a well-conditioned system"
    return None


def _user_raise(*_: Any) -> Any:
    raise ValueError("user-raised error")


def _opts(method: str) -> tuple[Opt, ...]:
    opts = [
        Opt("maxiter_zero", {"maxiter": 0}, expect="ref"),
        Opt("maxiter_neg", {"maxiter": -1}, mention="maxiter"),
        Opt("maxiter_str", {"maxiter": "10"}, mention="maxiter"),
        Opt("maxiter_float", {"maxiter": 2.5}, mention="maxiter"),
        Opt("rtol_str", {"rtol": "x"}, mention="rtol"),
        Opt("M_bogus", {"M": "bogus"}, mention="M"),
        Opt("M_int", {"M": 5}, mention="M"),
        Opt("M_wrong_shape", {"M": np.eye(N + 1)}, mention="M"),
        Opt("M_dense_identity", {"M": np.eye(N)}, expect="ref"),
        Opt("callback_not_callable", {"callback": 5}, mention="callback"),
        Opt("callback_raises", {"callback": _user_raise}, expect="user"),
        Opt("x0_wrong_length", {"x0": np.ones(N + 1)}, mention="x0"),
        Opt("x0_ones", {"x0": np.ones(N)}, expect="ref"),
        Opt("x0_list", {"x0": [0.0] * N}, expect="ref"),
        Opt("unknown_kw", {"foo": 1}, expect="signature", mention="foo"),
    ]
    opts += [Opt(f"M_{m}", {"M": m}, expect="ref") for m in _M_NAMES[method]]
    if method == "gmres":
        opts += [Opt("restart_zero", {"restart": 0}, mention="restart"),
                 Opt("restart_neg", {"restart": -3}, mention="restart")]
    return tuple(opts)


def _make(method: str) -> Any:
    mk = spd_csr if method in ("cg", "minres") else nonsym_csr
    return lambda g: {"A": mk(g), "b": g.standard_normal(N), "kw": {"rtol": 1e-10}}


def _call(method: str) -> Any:
    return lambda d: getattr(SLA, method)(d["A"], d["b"], **d["kw"])


def _linop(matvec: Any) -> Any:
    def make(g: np.random.Generator) -> dict:
        S = spd_csr(g)
        return {"A": SLA.LinearOperator((N, N), matvec=matvec(S), dtype=np.float64),
                "dense": S.toarray(), "b": g.standard_normal(N), "kw": {"rtol": 1e-10}}

    return make


def entries() -> list[Entry]:
    A = Arg("A", "sparse", aliases=("a", "indices", "indptr", "data", "matrix"))
    out = []
    for method in ("cg", "gmres", "bicgstab", "minres"):
        out.append(Entry(f"sparse.linalg.{method}", f"sparse.linalg.{method}", _make(method),
                         _call(method), _ref, check_krylov,
                         (A, Arg("b", "vec"), ), numpy_inputs=True, options=_opts(method)))
    # A dense A (a LinearOperator of it inside): the CPU loop's NumPy vectors meet a torch A,
    # read through its adapter (lazy views and autograd tensors too).
    views = ("torch", "torch_neg", "torch_t", "torch_strided", "torch_param", "torch_grad",
             "negstride", "fortran", "readonly")
    for method in ("cg", "gmres"):
        make = _make(method)
        out.append(Entry(f"sparse.linalg.{method}[dense A]", f"sparse.linalg.{method}",
                         lambda g, make=make: {**make(g), "A": make(g)["A"].toarray()},
                         _call(method), lambda d: _ref({**d, "dense": np.asarray(as_np(d["A"]))}),
                         check_krylov, (Arg("A", "mat", only=views), Arg("b", "vec", only=views))))
    cg = _call("cg")
    out += [
        Entry("sparse.linalg.cg[LinearOperator]", "sparse.linalg.cg",
              _linop(lambda S: (lambda x: S @ x)), cg, _ref, check_krylov, (Arg("b", "vec"),),
              numpy_inputs=True, all_torch=False),  # the user's matvec is NumPy's
        Entry("sparse.linalg.cg[scipy LinearOperator]", "sparse.linalg.cg",
              lambda g: {**_make("cg")(g), "A": ssla.aslinearoperator(spd_csr(g))},
              cg, lambda d: _ref({**d, "dense": d["A"].A.toarray()}), check_krylov),
        Entry("sparse.linalg.cg[matvec wrong length]", "sparse.linalg.cg",
              _linop(lambda S: (lambda x: np.ones(N + 1))), cg, None, check_krylov,
              mention=("matvec", "A")),
        Entry("sparse.linalg.cg[matvec returns None]", "sparse.linalg.cg",
              _linop(lambda S: (lambda x: None)), cg, None, check_krylov,
              mention=("matvec", "A")),
        Entry("sparse.linalg.cg[matvec raises]", "sparse.linalg.cg",
              _linop(lambda S: _user_raise), cg, None, check_krylov, user_error=True),
        Entry("sparse.linalg.LinearOperator[bad shape]", "sparse.linalg.LinearOperator",
              lambda g: {}, lambda d: SLA.LinearOperator((3,), matvec=abs), None,
              check_krylov, mention="shape"),
    ]
    return out + lsq_entries()


# ---- lsqr, lsmr, eigsh, svds (issue 22) ----

_LSQ_OPS = ("sparse.linalg.lsqr", "sparse.linalg.lsmr", "sparse.linalg.aslinearoperator",
            "sparse.from_dense", "sparse.csr_matrix")


def _ref_lsq(d: dict) -> Any:
    a, b = dense_of(d["A"]), _vec(d)
    if a.ndim != 2 or b.shape != (a.shape[0],):
        raise ValueError("shapes")
    _finite(a, b)
    return np.linalg.lstsq(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64), b, rcond=None)[0]


def check_lsq(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    if not isinstance(r, tuple) or len(r) not in (8, 10):
        return f"returns {type(r).__name__}, not scipy's tuple"
    if is_torch(r[0]) != is_torch(d["b"]):
        return f"x is {type(r[0]).__name__} for b of {type(d['b']).__name__}"
    if isinstance(ref, NonFinite):
        return None
    xn = np.asarray(as_np(r[0]))
    err = np.linalg.norm(xn - ref) / max(np.linalg.norm(ref), 1e-300)
    return None if err <= 1e-6 else f"x differs from lstsq's: relative error {err:.1e}"


def _ref_eig(d: dict) -> Any:
    a = dense_of(d["A"])
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise ValueError("shapes")
    _finite(a)
    return np.linalg.eigvalsh(a)[-d["k"]:]


def _ref_svd(d: dict) -> Any:
    a = dense_of(d["A"])
    _finite(a)
    return np.sort(np.linalg.svd(a, compute_uv=False)[: d["k"]])


def check_spectrum(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    if isinstance(ref, NonFinite):
        return None
    w = np.asarray(as_np(r if not isinstance(r, tuple) else r[0] if len(r) == 2 else r[1]))
    if w.shape != ref.shape:
        return f"{w.shape} values, expected {ref.shape}"
    dt = str(getattr(d["A"], "dtype", ""))
    single = any(t in dt for t in ("float16", "float32", "complex64"))
    err = np.abs(w - ref).max() / max(np.abs(ref).max(), 1e-300)
    return None if err <= (1e-5 if single else 1e-8) else f"values differ from numpy's: relative error {err:.1e}"


def check_solve_info(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    bad = check_krylov(r, ref, d, strict)
    if bad or isinstance(ref, NonFinite):
        return bad
    info = r[1]
    if not isinstance(info, SLA.SolveInfo) or info.iterations < 0 or not info.residual_norm >= 0:
        return f"info {info!r} carries no iteration count / residual norm"
    return None


def check_operator(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    if isinstance(ref, NonFinite):  # an operator of a NaN/Inf matrix: its products show them
        return None if isinstance(r, SLA.LinearOperator) else f"returns {type(r).__name__}"
    if not isinstance(r, SLA.LinearOperator) or r.shape != ref.shape:
        return f"returns {type(r).__name__}, not a LinearOperator of shape {ref.shape}"
    x = np.random.default_rng(0).standard_normal(ref.shape[1])
    y = np.asarray(as_np(r @ x))
    err = np.linalg.norm(y - ref @ x) / max(np.linalg.norm(ref @ x), 1e-300)
    return None if err <= 1e-5 else f"A @ x differs: relative error {err:.1e}"


def _ref_operator(d: dict) -> Any:
    a = dense_of(d["A"])
    if a.ndim != 2:
        raise ValueError("A")
    _finite(a)
    return a


def lsq_entries() -> list[Entry]:
    A = Arg("A", "sparse", aliases=("a", "indices", "indptr", "data", "matrix"))
    kw = {"atol": 1e-12, "btol": 1e-12, "conlim": 1e12}
    out = []
    for name in ("lsqr", "lsmr"):
        extra = {"iter_lim": 500} if name == "lsqr" else {"maxiter": 500}
        out.append(Entry(
            f"sparse.linalg.{name}", _LSQ_OPS,
            lambda g: {"A": nonsym_csr(g), "b": g.standard_normal(N)},
            (lambda nm, x: lambda d: getattr(SLA, nm)(d["A"], d["b"], **x))(name, {**kw, **extra}),
            _ref_lsq, check_lsq, (A, Arg("b", "vec")), numpy_inputs=True))
    out.append(Entry(
        "sparse.linalg.SolveInfo[from cg]", "sparse.linalg.cg", _make("cg"), _call("cg"), _ref,
        check_solve_info, (A, Arg("b", "vec")), numpy_inputs=True))
    out.append(Entry(
        "sparse.linalg.aslinearoperator", ("sparse.linalg.aslinearoperator", "sparse.csr_matrix",
                                           "sparse.from_dense"),
        lambda g: {"A": nonsym_csr(g)}, lambda d: SLA.aslinearoperator(d["A"]), _ref_operator,
        check_operator, (A,)))
    eig_ops = ("sparse.linalg.eigsh", "sparse.linalg.aslinearoperator", "sparse.csr_matrix")
    out.append(Entry(
        "sparse.linalg.eigsh", eig_ops, lambda g: {"A": spd_csr(g), "k": 3},
        lambda d: SLA.eigsh(d["A"], k=d["k"], **{"which": "LA", "rng": 0, **d.get("kw", {})}), _ref_eig, check_spectrum,
        (A,), options=(Opt("which_bad", {"which": "XX"}, mention="which"),)))
    out.append(Entry(
        "sparse.linalg.svds", ("sparse.linalg.svds", *eig_ops),
        lambda g: {"A": nonsym_csr(g), "k": 3}, lambda d: SLA.svds(d["A"], k=d["k"], rng=0),
        _ref_svd, check_spectrum, (A,)))
    return out
