"""gl.sparse.linalg.eigsh and svds at scipy's edges (issue 22): every ``which`` with and
without the vectors, sigma and its modes, k >= n (the dense fallback, or a TypeError for a
sparse or operator A), the Minv / OPinv / ncv / maxiter / tol / v0 rules, no convergence, and
svds' argument checks. The reference is numpy.linalg.eigvalsh / svd, selecting as ARPACK does;
values are compared as sets (each entry's order is tested in tests/python/test_sparse_eigsh.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.linalg as sla_dense
import scipy.sparse as sp
import scipy.sparse.linalg as ssla

import gpula as gl

from .catalog_sparse import N, _finite, dense_of
from .core import Arg, Entry, NonFinite, Opt, as_np

SLA = gl.sparse.linalg
_OPS = ("sparse.linalg.eigsh", "sparse.linalg.aslinearoperator", "sparse.csr_matrix",
        "sparse.from_dense", "sparse.DirectSolver", "linalg.eigh")
_K = 4
_SIGMA = 0.3


def indefinite_csr(g: np.random.Generator, n: int = N) -> sp.csr_matrix:
    """A sparse symmetric indefinite matrix (a shifted 1-D Laplacian plus a random diagonal)."""
    off = -g.uniform(0.5, 1.0, n - 1)
    return sp.diags([off, g.uniform(-2.0, 2.0, n), off], [-1, 0, 1], format="csr")


def _select(t: np.ndarray, which: str, k: int) -> np.ndarray:
    """Indices of the k values of t that ARPACK's `which` selects."""
    if which == "BE":
        up = np.argsort(t, kind="stable")
        return np.r_[up[: k // 2], up[len(t) - (k - k // 2):]]
    key = {"LM": -np.abs(t), "SM": np.abs(t), "LA": -t, "SA": t}[which]
    return np.argsort(key, kind="stable")[:k]


def _pick(e: np.ndarray, which: str, k: int) -> np.ndarray:
    """The k eigenvalues of e that `which` selects, sorted."""
    return np.sort(e[_select(e, which, k)])


def _ref_eigsh(d: dict) -> Any:
    a = dense_of(d["A"])
    kw = d["kw"]
    if a.ndim != 2 or a.shape[0] != a.shape[1] or a.shape[0] == 0:
        raise ValueError("A")
    _finite(a)
    a = a.astype(np.complex128 if a.dtype.kind == "c" else np.float64)
    k, which, sigma = kw.get("k", 6), kw.get("which", "LM"), kw.get("sigma")
    if k >= a.shape[0]:
        if sp.issparse(d["A"]):
            raise TypeError("sparse A with k >= N")
        return np.linalg.eigvalsh(a)
    e = np.linalg.eigvalsh(a)
    if sigma is None:
        return _pick(e, which, k)
    return np.sort(e[_select(1.0 / (e - sigma), which, k)])  # mode 'normal': of 1 / (e - sigma)


def check_values(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    """The values (as a set) match the reference; vectors, where returned, are eigenvectors."""
    if isinstance(ref, NonFinite):
        return None
    w = np.asarray(as_np(r[0] if isinstance(r, tuple) else r))
    if w.shape != ref.shape:
        return f"{w.shape} values, expected {ref.shape}"
    scale = max(np.abs(ref).max(), 1e-300)
    err = np.abs(np.sort(w) - ref).max() / scale
    if err > 1e-8:
        return f"values differ from numpy's: relative error {err:.1e}"
    if isinstance(r, tuple):
        a = dense_of(d["A"])
        v = np.asarray(as_np(r[1]))
        res = np.linalg.norm(a @ v - v * w) / (scale * np.sqrt(len(w)))
        if v.shape != (a.shape[0], len(w)) or res > 1e-8:
            return f"vectors of shape {v.shape} with residual {res:.1e}"
    return None


def _ref_dense_all(d: dict) -> Any:
    a = d["A"]
    m = d["kw"].get("M")
    return sla_dense.eigh(a, m, eigvals_only=True)


def _ref_svds(d: dict) -> Any:
    a = d["A"]
    kw = dict(d["kw"])
    rsv = kw.pop("return_singular_vectors", True)
    r = ssla.svds(a, return_singular_vectors=False, **kw)  # raises where scipy refuses
    if rsv not in (True, False, "u", "vh"):
        raise ValueError("return_singular_vectors")
    return np.sort(r)


def check_svds(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    s = np.asarray(as_np(r[1] if isinstance(r, tuple) else r))
    if s.shape != ref.shape:
        return f"{s.shape} singular values, expected {ref.shape}"
    err = np.abs(np.sort(s) - ref).max() / max(ref.max(), 1e-300)
    if err > 1e-8:
        return f"singular values differ from scipy's: relative error {err:.1e}"
    return None


def _eigsh(d: dict) -> Any:
    return SLA.eigsh(d["A"], **{"rng": 0, **d["kw"]})


def _eigsh_raises(label: str, kw: dict, mention: Any) -> Opt:
    return Opt(label, kw, "raise", mention)


def entries() -> list[Entry]:
    A = Arg("A", "sparse", aliases=("a", "indices", "indptr", "data", "matrix"),
            only=("nan", "empty"))
    ref_opts = tuple(Opt(f"which_{w}", {"which": w}, "ref")
                     for w in ("LM", "SM", "LA", "SA", "BE"))
    ref_opts += tuple(Opt(f"values_{w}", {"which": w, "return_eigenvectors": False}, "ref")
                      for w in ("LM", "SM", "SA"))
    ref_opts += (Opt("sigma", {"sigma": _SIGMA}, "ref"),
                 Opt("sigma_LA", {"sigma": _SIGMA, "which": "LA"}, "ref"),
                 Opt("ncv_past_n", {"ncv": 10 * N}, "ref"),
                 Opt("tol_negative", {"tol": -1.0}, "ref"),
                 Opt("mode_without_sigma", {"mode": "buckling"}, "ref"),
                 Opt("k_n", {"k": N}, "ref"))  # a sparse A: scipy's TypeError
    raise_opts = (
        _eigsh_raises("which_bad", {"which": "XX"}, "which"),
        _eigsh_raises("k_zero", {"k": 0}, "k"),
        _eigsh_raises("k_float", {"k": 2.5}, "k"),
        _eigsh_raises("ncv_k", {"ncv": _K}, "ncv"),
        _eigsh_raises("maxiter_zero", {"maxiter": 0}, "maxiter"),
        _eigsh_raises("tol_nan", {"tol": float("nan")}, "tol"),
        _eigsh_raises("mode_bad", {"sigma": _SIGMA, "mode": "foo"}, "mode"),
        _eigsh_raises("opinv_without_sigma", {"OPinv": np.eye(N)}, "OPinv"),
        _eigsh_raises("minv_without_m", {"Minv": np.eye(N)}, "Minv"),
        _eigsh_raises("minv_with_sigma", {"sigma": _SIGMA, "Minv": np.eye(N)}, "Minv"),
        _eigsh_raises("v0_shape", {"v0": np.ones(N + 1)}, "v0"),
        _eigsh_raises("v0_zero", {"v0": np.zeros(N)}, "v0"),
        _eigsh_raises("M_shape", {"M": np.eye(N + 1)}, "M"),
        _eigsh_raises("no_convergence", {"which": "LA", "ncv": _K + 2, "maxiter": 1}, "maxiter"),
    )
    out = [Entry(
        "sparse.linalg.eigsh[edges]", _OPS,
        lambda g: {"A": indefinite_csr(g), "kw": {"k": _K}}, _eigsh, _ref_eigsh, check_values,
        (A,), options=ref_opts + raise_opts, timeout=30.0)]

    def dense_sym(g: np.random.Generator) -> dict:
        a = g.standard_normal((12, 12))
        return {"A": a + a.T, "kw": {"k": 12}}

    spd = np.diag(np.linspace(1.0, 2.0, 12))
    op12 = ssla.aslinearoperator(np.eye(12))
    out.append(Entry(
        "sparse.linalg.eigsh[k>=n dense]", _OPS, dense_sym, _eigsh, _ref_dense_all, check_values,
        options=(Opt("values_only", {"return_eigenvectors": False}, "ref"),
                 Opt("k_past_n", {"k": 20}, "ref"),
                 Opt("M_dense", {"M": spd, "return_eigenvectors": False}, "ref"),
                 _eigsh_raises("M_operator", {"M": op12}, ("M", "LinearOperator")))))

    def operator(g: np.random.Generator) -> dict:
        a = dense_of(indefinite_csr(g))
        return {"A": ssla.aslinearoperator(a), "dense": a, "kw": {"k": _K, "which": "SM"}}

    out.append(Entry(
        "sparse.linalg.eigsh[operator]", _OPS, operator, _eigsh,
        lambda d: _pick(np.linalg.eigvalsh(d["dense"]), d["kw"].get("which", "LM"), _K),
        lambda r, ref, d, s: check_values(r, ref, {**d, "A": d["dense"]}, s),
        options=(_eigsh_raises("sigma_needs_opinv", {"sigma": _SIGMA, "which": "LM"}, "OPinv"),
                 _eigsh_raises("k_n", {"k": N}, ("A", "LinearOperator")),
                 Opt("LA", {"which": "LA"}, "ref")), timeout=30.0))

    def tall(g: np.random.Generator) -> dict:
        return {"A": g.standard_normal((30, 12)), "kw": {"k": 3}}

    svds_ref = tuple(Opt(lbl, kw, "ref") for lbl, kw in (
        ("k_float", {"k": 3.0}), ("which_lower", {"which": "lm"}),
        ("solver_upper", {"solver": "ARPACK"}), ("ncv_max", {"ncv": 11}),
        ("values_only", {"return_singular_vectors": False}),
        ("u_only", {"return_singular_vectors": "u"}),
        ("vh_only", {"return_singular_vectors": "vh"}),
        ("SM", {"which": "SM"})))
    svds_raise = tuple(Opt(lbl, kw, "raise", m) for lbl, kw, m in (
        ("k_min", {"k": 12}, "k"), ("k_zero", {"k": 0}, "k"), ("k_frac", {"k": 3.5}, "k"),
        ("ncv_min", {"ncv": 12}, "ncv"), ("ncv_k", {"ncv": 3}, "ncv"),
        ("tol_neg", {"tol": -1.0}, "tol"),
        ("tol_inf", {"tol": float("inf")}, "tol"), ("which_LA", {"which": "LA"}, "which"),
        ("v0_shape", {"v0": np.ones(30)}, "v0"), ("v0_int", {"v0": np.ones(12, int)}, "v0"),
        ("maxiter_zero", {"maxiter": 0}, "maxiter"),
        ("rsv_bad", {"return_singular_vectors": "x"}, "return_singular_vectors"),
        ("solver_bad", {"solver": "foo"}, "solver"),
        ("solver_lobpcg", {"solver": "lobpcg"}, "solver"),
        ("rng_bad", {"rng": "x"}, "rng")))
    out.append(Entry(
        "sparse.linalg.svds[edges]", ("sparse.linalg.svds", *_OPS), tall,
        lambda d: SLA.svds(d["A"], **{"rng": 0, **d["kw"]}), _ref_svds, check_svds,
        options=svds_ref + svds_raise))
    return out
