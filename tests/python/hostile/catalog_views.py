"""What a torch user sends, where gpula keeps state: planned objects, cached plans and kept
executors (issue 17: ``gl.matmul(t.conj(), d)`` planned on the materialized copy of a lazy
conjugate view and freed it before the plan ran).

Two kinds of entries:

- complex variants of the dense functions (and of ``A @ x``), so that the lazy conjugate views of
  hostile.mutations (all:torch_conj, all:torch_conj_neg) reach them;
- scenarios that hand lazy negative / conjugate views, transposed and strided tensors and
  Parameters to an object that keeps them (gl.Matmul, gl.GroupedMatmul, gl.sparse.csr_matrix and
  its kept SpMV executor, DirectSolver), then churn the allocator (collect, allocate and fill
  tensors of the same size: freed memory holds other values) before executing. Every result is
  compared with NumPy's float64 answer on the materialized values.
"""

from __future__ import annotations

import gc
from typing import Any

import numpy as np
import scipy.sparse as sp

from . import catalog_linalg as CL
from . import mutations
from .core import HAS_TORCH, Arg, Entry, close, first, torch_module

import gpula as gl

N = 6
# The layouts the complex variants take (the lazy views, the plain tensor, NumPy's odd strides).
VIEWS = ("torch", "torch_conj", "torch_conj_neg", "torch_neg", "torch_t", "torch_strided",
         "negstride")


def _c(g: np.random.Generator, *shape: int) -> np.ndarray:
    return g.standard_normal(shape) + 1j * g.standard_normal(shape)


def _hpd(g: np.random.Generator) -> np.ndarray:
    m = _c(g, N, N)
    return m @ m.conj().T + N * np.eye(N)


def _herm(g: np.random.Generator) -> np.ndarray:
    m = _c(g, N, N)
    return m + m.conj().T


def _arg(name: str) -> Arg:
    return Arg(name, "mat", only=VIEWS)


def complex_entries() -> list[Entry]:
    L = gl.linalg
    kw = CL._kw
    return [
        Entry("matmul[complex]", "matmul", lambda g: {"a": _c(g, 4, N), "b": _c(g, N, 5)},
              lambda d: gl.matmul(d["a"], d["b"]), lambda d: np.asarray(d["a"]) @ d["b"],
              lambda r, ref, d, s: close(r, ref), (_arg("a"), _arg("b"))),
        Entry("linalg.solve[complex]", "linalg.solve",
              lambda g: {"a": _hpd(g), "b": _c(g, N, 2), "kw": {}},
              lambda d: L.solve(d["a"], d["b"]), CL._ref_solve, CL.check_array,
              (_arg("a"), _arg("b"))),
        Entry("linalg.inv[complex]", "linalg.inv", lambda g: {"a": _hpd(g), "kw": {}},
              lambda d: L.inv(d["a"]), lambda d: np.linalg.inv(d["a"]), CL.check_array,
              (_arg("a"),)),
        Entry("linalg.cholesky[complex]", "linalg.cholesky", lambda g: {"a": _hpd(g), "kw": {}},
              lambda d: L.cholesky(d["a"], **kw(d)), CL._ref_cholesky, CL.check_array,
              (_arg("a"),)),
        Entry("linalg.eigh[complex]", "linalg.eigh", lambda g: {"a": _herm(g), "kw": {}},
              lambda d: L.eigh(d["a"], **kw(d)), CL._ref_eigh, CL.check_eigh, (_arg("a"),)),
        Entry("linalg.svd[complex]", "linalg.svd", lambda g: {"a": _c(g, N, N), "kw": {}},
              lambda d: L.svd(d["a"], **kw(d)), CL._ref_svd, CL.check_svd, (_arg("a"),)),
        Entry("linalg.qr[complex]", "linalg.qr", lambda g: {"a": _c(g, N, 4), "kw": {}},
              lambda d: L.qr(d["a"], **kw(d)), CL._ref_qr, CL.check_qr, (_arg("a"),)),
    ]


# ---------------------------------------------------------------------------------------------
# Scenarios on objects that keep what they were given


def _view(name: str, v: np.ndarray) -> Any:
    """v's values through mutation `name` (a torch tensor)."""
    if name == "torch":
        return torch_module().from_numpy(v.copy())
    return mutations.TORCH_VIEWS[name](v, Arg("v", "mat" if v.ndim == 2 else "vec"))[0]


def _churn(like: Any) -> None:
    """Frees what nothing references, then allocates and fills tensors of like's size, so that
    memory freed too early holds other values when a plan reads it."""
    gc.collect()
    torch = torch_module()
    junk = [torch.full(tuple(like.shape), 1e300, dtype=like.dtype) for _ in range(8)]
    del junk


def _np(x: Any) -> np.ndarray:
    return x.detach().resolve_conj().resolve_neg().numpy() if hasattr(x, "detach") else x


def _all_close(results: tuple, refs: tuple) -> str | None:
    return first(*(close(_np(r), ref, f"result {i}") for i, (r, ref) in
                   enumerate(zip(results, refs))))


def _views_for(a: np.ndarray) -> tuple[str, ...]:
    lazy = ("torch_conj", "torch_conj_neg", "torch_neg") if a.dtype.kind == "c" else ("torch_neg",)
    return (*lazy, "torch_t", "torch_strided", "torch_param")


def _matmul_object(d: dict) -> tuple:
    a, b = d["a"], d["b"]
    out = []
    for va in _views_for(a):
        ta, tb = _view(va, a), _view("torch_neg", b)
        with gl.Matmul(ta, tb) as mm:
            mm.plan()
            del ta, tb
            _churn(_view("torch", a))
            out.append(mm.execute())
            mm.reset_operands(a=_view(va, 2 * a), b=_view("torch_neg", b))
            _churn(_view("torch", a))
            out.append(mm.execute())
    return tuple(out)


def _ref_matmul_object(d: dict) -> tuple:
    a, b = d["a"], d["b"]
    return tuple(r for _ in _views_for(a) for r in (a @ b, 2 * a @ b))


def _matmul_fast(d: dict) -> tuple:
    """gl.matmul's per-thread fast path: a plain call of a layout caches an executor; the same
    layout as a lazy view (no fast key) and as a Parameter must still give the right values."""
    a, b = d["a"], d["b"]
    gl.matmul_cache_clear()
    out = [gl.matmul(_view("torch", a), _view("torch", b))]
    for va in _views_for(a):
        ta = _view(va, a)
        out.append(gl.matmul(ta, _view("torch", b)))
        del ta
        _churn(_view("torch", a))
        out.append(gl.matmul(_view("torch", 3 * a), _view("torch", b)))
    return tuple(out)


def _ref_matmul_fast(d: dict) -> tuple:
    a, b = d["a"], d["b"]
    return (a @ b, *(r for _ in _views_for(a) for r in (a @ b, 3 * a @ b)))


def _ab(dtype: Any) -> Any:
    def make(g: np.random.Generator) -> dict:
        if np.dtype(dtype).kind == "c":
            return {"a": _c(g, 4, N), "b": _c(g, N, 5)}
        return {"a": g.standard_normal((4, N)), "b": g.standard_normal((N, 5))}

    return make


def _moe(g: np.random.Generator) -> dict:
    return {"x": g.standard_normal((10, 4)), "w": g.standard_normal((3, 4, 5)),
            "bias": g.standard_normal((3, 5))}


_OFFSETS = ([3, 3, 10], [5, 9, 10])


def _grouped_ref(x: np.ndarray, w: np.ndarray, bias: np.ndarray, ends: list[int]) -> np.ndarray:
    y = np.zeros((x.shape[0], w.shape[2]))
    lo = 0
    for g, hi in enumerate(ends):
        y[lo:hi] = x[lo:hi] @ w[g] + bias[g]
        lo = hi
    return y


def _grouped_object(d: dict) -> tuple:
    x, w, bias = d["x"], d["w"], d["bias"]
    neg = "torch_neg"
    g = gl.GroupedMatmul(_view(neg, x), _view(neg, w))
    with g:
        g.plan(epilog="BIAS", epilog_inputs={"bias": _view(neg, bias)})
        _churn(_view("torch", x))
        y1 = g.execute(offsets=_OFFSETS[0])
        g.reset_operands(a=_view("torch", 2 * x), b=_view(neg, w))
        _churn(_view("torch", x))
        y2 = g.execute(offsets=_OFFSETS[1])
    return y1, y2


def _ref_grouped_object(d: dict) -> tuple:
    x, w, bias = d["x"], d["w"], d["bias"]
    return _grouped_ref(x, w, bias, _OFFSETS[0]), _grouped_ref(2 * x, w, bias, _OFFSETS[1])


def _spd_csr(g: np.random.Generator, dtype: Any) -> Any:
    m = sp.random(N, N, density=0.4, random_state=np.random.RandomState(g.integers(2**31)))
    m = (m + m.T).tocsr()
    if np.dtype(dtype).kind == "c":
        m = m + 1j * sp.triu(m, 1).tocsr() - 1j * sp.tril(m, -1).tocsr()
    m = (m + sp.eye(N) * (abs(m).sum(axis=1).max() + 1)).tocsr()
    m.sort_indices()
    return m.astype(dtype)


def _sparse(dtype: Any) -> Any:
    def make(g: np.random.Generator) -> dict:
        x = g.standard_normal(N)
        if np.dtype(dtype).kind == "c":
            x = x + 1j * g.standard_normal(N)
        return {"S": _spd_csr(g, dtype), "x": x}

    return make


def _gl_csr(S: Any, view: str, scale: float = 1.0) -> Any:
    torch = torch_module()
    return gl.sparse.csr_matrix(
        (_view(view, scale * S.data), torch.from_numpy(S.indices.astype(np.int64)),
         torch.from_numpy(S.indptr.astype(np.int64))), shape=S.shape)


def _csr_products(d: dict) -> tuple:
    """A csr_matrix over a lazy view's values, its products with lazy / plain / Parameter x (the
    plain one installs the kept SpMV executor, which the later calls go through or around)."""
    S, x = d["S"], d["x"]
    out = []
    for view in _views_for(S.data)[:-3]:  # the lazy views of the values
        A = _gl_csr(S, view)
        _churn(_view("torch", S.data))
        for vx in (*_views_for(x), "torch", "torch"):
            tx = _view(vx, x)
            out.append(A @ tx)
            out.append(A.matvec(tx, "T"))
            del tx
            _churn(_view("torch", x))
    return tuple(out)


def _ref_csr_products(d: dict) -> tuple:
    S, x = d["S"], d["x"]
    n = len(_views_for(S.data)[:-3]) * (len(_views_for(x)) + 2)
    return (S @ x, S.T @ x) * n


def _direct(d: dict) -> tuple:
    S, x = d["S"], d["x"]
    b = S @ x
    lazy = _views_for(S.data)[0]
    with gl.sparse.DirectSolver(_gl_csr(S, lazy), _view("torch", b)) as s:  # a sign lost shows
        _churn(_view("torch", b))
        s.plan()
        s.factorize()
        x1 = s.solve()
        s.reset_operands(b=_view("torch_neg", 2 * b))
        x2 = s.solve()
        s.reset_operands(a=_gl_csr(S, "torch_neg", 2.0))
        _churn(_view("torch", S.data))
        s.factorize()
        x3 = s.solve()
    return x1, x2, x3, gl.sparse.spsolve(_gl_csr(S, "torch"), _view(lazy, b))


def _ref_direct(d: dict) -> tuple:
    x = d["x"]
    return x, 2 * x, x, x


def _check(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    if not isinstance(r, tuple) or len(r) != len(ref):
        return f"returns {type(r).__name__}, expected {len(ref)} results"
    return _all_close(r, ref)


def scenario_entries() -> list[Entry]:
    out = []
    for dt, label in ((np.float64, "float64"), (np.complex128, "complex")):
        out += [
            Entry(f"Matmul.lazy_views[{label}]", "matmul", _ab(dt), _matmul_object,
                  _ref_matmul_object, _check, torch_results=True),
            Entry(f"matmul[fast path, lazy views, {label}]", "matmul", _ab(dt), _matmul_fast,
                  _ref_matmul_fast, _check, torch_results=True),
            Entry(f"sparse.csr_matrix.lazy_views[{label}]", "sparse.matmul", _sparse(dt),
                  _csr_products, _ref_csr_products, _check, torch_results=True),
            Entry(f"sparse.DirectSolver.lazy_views[{label}]", "sparse.DirectSolver",
                  _sparse(dt), _direct, _ref_direct, _check, torch_results=True),
        ]
    out.append(Entry("GroupedMatmul.lazy_views", "grouped_matmul", _moe, _grouped_object,
                     _ref_grouped_object, _check, torch_results=True))
    return out


def entries() -> list[Entry]:
    return [*complex_entries(), *(scenario_entries() if HAS_TORCH else [])]
