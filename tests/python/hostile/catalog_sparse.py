"""gl.sparse: csr_matrix, as_csr, from_dense, A @ x, A @ B, A @ sparse, matvec, spmm, sddmm, spgemm,
spsolve, DirectSolver; reference SciPy on a checked copy of the matrix (``check_format(
full_check=True)``, so a malformed matrix makes the reference raise)."""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

import gpula as gl

from .core import WITH_GPU, Arg, Entry, NonFinite, Opt, as_np, close, first, is_torch
from .mutations import Duck, raw_csr

N = 64
# Mutations that keep a (data, indices, indptr) triple, for the tuple form of csr_matrix.
TUPLE_MUTATIONS = ("idx_oob", "idx_huge", "idx_neg", "indptr_past", "indptr_last",
                   "indptr_nonmono", "indptr_first", "nan", "inf", "unsorted", "duplicates",
                   "empty", "zero_nnz", "int_data", "f16_data", "bigendian", "int64_index",
                   "readonly")


def spd_csr(g: np.random.Generator, n: int = N) -> sp.csr_matrix:
    """A sparse SPD matrix (tridiagonal plus a few symmetric pairs), density under 5%."""
    off = -g.uniform(0.5, 1.0, n - 1)
    a = sp.diags([off, 4.0 + g.uniform(0, 1, n), off], [-1, 0, 1], format="lil")
    for _ in range(3):
        i, j = sorted(g.choice(n, 2, replace=False))
        if j > i + 1:
            v = g.uniform(0.1, 0.5)
            a[i, j] = a[j, i] = -v
    c = a.tocsr()
    c.sort_indices()
    return c


def nonsym_csr(g: np.random.Generator, n: int = N) -> sp.csr_matrix:
    a = sp.diags([-g.uniform(0.5, 1.2, n - 1), 4.0 + g.uniform(0, 1, n),
                  -g.uniform(0.2, 0.8, n - 1)], [-1, 0, 1], format="csr")
    a.sort_indices()
    return a


def checked(A: Any) -> Any:
    """The reference's view of a sparse argument: a validated scipy CSR copy (raises for a
    malformed one); dense arrays stay dense; torch tensors become NumPy."""
    if isinstance(A, Duck):
        A = sp.csr_matrix((A.data, A.indices, A.indptr), shape=A.shape)
    if is_torch(A) or isinstance(A, gl.sparse.csr_matrix):
        return sp.csr_matrix(as_np(A))
    if not sp.issparse(A):
        a = np.asarray(A)
        if a.ndim != 2 or a.dtype.kind not in "biufc":
            raise TypeError("not a matrix")
        return a
    if A.format == "csr" and (A.data.dtype == np.float16 or not A.data.dtype.isnative):
        # SciPy refuses these value dtypes; gpula may convert them (or raise a typed error)
        A = raw_csr(A.data.astype(np.float64), A.indices, A.indptr, A.shape)
    c = A.tocsr(copy=True)
    c.check_format(full_check=True)
    return c


def dense_of(A: Any) -> np.ndarray:
    c = checked(A)
    return c.toarray() if sp.issparse(c) else c


def _finite(*xs: Any) -> None:
    for x in xs:
        x = np.asarray(as_np(x))
        if x.dtype.kind in "fc" and not np.isfinite(x).all():
            raise NonFinite("non-finite input")


def _vec(d: dict, name: str = "b") -> np.ndarray:
    v = np.asarray(as_np(d[name]))
    if v.dtype.kind not in "biufc" or v.ndim != 1:
        raise TypeError(f"{name} must be a numeric vector")
    return v.astype(np.float32) if v.dtype == np.float16 else v  # NumPy's solvers refuse float16


def _ref_as_csr(d: dict) -> Any:
    """as_csr converts sparse matrices only (dense arrays, lists and tuples are errors)."""
    A = d["A"]
    if not (sp.issparse(A) or is_torch(A) or isinstance(A, (gl.sparse.csr_matrix, Duck))):
        raise TypeError("not a sparse matrix")
    return dense_of(A)


def check_matrix(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    if not isinstance(r, gl.sparse.csr_matrix):
        return f"returns {type(r).__name__}, not gl.sparse.csr_matrix"
    return close(r.to_dense(), ref)


def check_dense(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    if isinstance(ref, NonFinite):
        return None
    return close(r, ref)


# ---------------------------------------------------------------------------------------------
# Direct solvers


def _ref_solve(d: dict) -> Any:
    a = dense_of(d["A"])
    b = np.asarray(as_np(d["b"]))
    if sp.issparse(d["b"]):
        b = d["b"].toarray()
    if a.ndim != 2 or a.shape[0] != a.shape[1] or b.shape[:1] != a.shape[:1]:
        raise ValueError("shapes")
    _finite(a, b)
    if a.dtype.kind in "biu":
        a = a.astype(np.float64)
    if b.dtype == np.float16:  # NumPy's solve refuses it; SciPy's spsolve promotes it
        b = b.astype(np.float32)
    return np.linalg.solve(a, b)


def check_solve(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    if isinstance(ref, NonFinite):  # non-finite input: a typed error or a non-finite x
        x = np.asarray(as_np(r))
        return None if not np.isfinite(x).all() else "finite x for non-finite input"
    return close(r, ref, tol=1e-7)


def _direct(d: dict) -> Any:
    with gl.sparse.DirectSolver(d["A"], d["b"], **d["kw"]) as s:
        s.plan()
        s.factorize()
        return s.solve()


def _solver(d: dict) -> Any:
    return gl.sparse.DirectSolver(d["A"], d["b"])


def _planned(d: dict) -> Any:
    s = _solver(d)
    s.plan()
    return s


def _freed(d: dict) -> Any:
    s = _planned(d)
    s.factorize()
    s.free()
    return s


def _refactorize(d: dict) -> Any:
    s = _planned(d)
    s.factorize()
    s.solve()
    s.reset_operands(a=d["A2"])
    s.factorize()
    return s.solve()


def _shared_then_changed(d: dict) -> Any:
    s = gl.sparse.DirectSolver(d["A"], d["b"])
    d["A"].indices[0] = 10**8
    s.plan()
    s.factorize()
    return s.solve()


DIRECT_LIFECYCLE = (
    ("factorize_before_plan", lambda d: _solver(d).factorize(), None, "plan"),
    ("solve_before_factorize", lambda d: _planned(d).solve(), None, "factorize"),
    ("solve_before_plan", lambda d: _solver(d).solve(), None, "plan"),
    ("solve_after_free", lambda d: _freed(d).solve(), None, "free"),
    ("plan_after_free", lambda d: _freed(d).plan(), None, "free"),
    ("factorize_after_free", lambda d: _freed(d).factorize(), None, "free"),
    ("reset_after_free", lambda d: _freed(d).reset_operands(a=d["A2"]), None, "free"),
    ("reset_other_pattern",
     lambda d: _planned(d).reset_operands(a=d["A"] + sp.eye(N, k=5, format="csr")), None,
     "pattern"),
    ("reset_other_shape", lambda d: _planned(d).reset_operands(a=spd_csr(
        np.random.default_rng(1), N + 1)), None, ("shape", "pattern", "a")),
    ("reset_b_other_dtype",
     lambda d: _planned(d).reset_operands(b=d["b"].astype(np.complex128)), None, "b"),
    ("reset_b_wrong_length", lambda d: _planned(d).reset_operands(b=np.ones(N + 1)), None, "b"),
    ("refactorize_new_values", _refactorize, "A2", None),
    ("free_twice", lambda d: (_freed(d).free(), None)[1], "none", None),
    ("arrays_changed_after_construction", _shared_then_changed, "A", None),
)


def _lifecycle_ref(expect: Any) -> Any:
    if expect is None:
        return None
    if expect == "none":
        return lambda d: None
    return lambda d: np.linalg.solve(d[expect].toarray(), d["b"])


def _check_lifecycle(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    if ref is None:
        return None if r is None else f"returns {type(r).__name__}, expected None"
    return close(r, ref, tol=1e-7)


# ---------------------------------------------------------------------------------------------
# Products


def _gl(S: sp.csr_matrix) -> Any:
    return gl.sparse.csr_matrix((S.data, S.indices, S.indptr), shape=S.shape)


def _with_gl(g: np.random.Generator) -> dict:
    S = spd_csr(g)
    return {"S": S, "G": _gl(S), "x": g.standard_normal(N), "kw": {}}


def _ref_matvec(d: dict) -> Any:
    x = _vec(d, "x")
    op = d["kw"].get("op", "N")
    if op not in ("N", "T", "H"):
        raise ValueError("op")
    return (d["S"].T if op != "N" else d["S"]) @ x


def _ref_spmm(d: dict) -> Any:
    a = checked(d["A"])
    b = np.asarray(as_np(d["B"]))
    if b.ndim != 2 or b.dtype.kind not in "biufc":
        raise TypeError("B")
    op = d["kw"].get("op", "N")
    if op not in ("N", "T", "H"):
        raise ValueError("op")
    return np.asarray((a.T if op != "N" else a) @ b)


def _ref_sddmm(d: dict) -> Any:
    m = checked(d["mask"])
    if not sp.issparse(m):
        raise TypeError("mask")
    a, b = (np.asarray(as_np(d[k])) for k in ("a", "b"))
    full = a @ b
    m = m.copy()
    m.sum_duplicates()
    out = np.zeros(m.shape, dtype=full.dtype)
    rows = np.repeat(np.arange(m.shape[0]), np.diff(m.indptr))
    out[rows, m.indices] = full[rows, m.indices]
    return out


def _ref_spgemm(d: dict) -> Any:
    a, b = checked(d["A"]), checked(d["B"])
    if not (sp.issparse(a) and sp.issparse(b)):
        raise TypeError("sparse operands")
    return (a @ b).toarray()


def _ref_a_at(d: dict) -> Any:
    """G @ B: a sparse product for a sparse B, a dense one for a dense B."""
    b = checked(d["B"])
    return (d["S"] @ b).toarray() if sp.issparse(b) else np.asarray(d["S"] @ b)


def _check_a_at(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    if isinstance(d["B"], np.ndarray) or is_torch(d["B"]):
        return check_dense(r, ref, d, strict)
    return check_matrix(r, ref, d, strict)


def _changed_after(field: str, value: Any) -> Any:
    """A @ x after the scipy matrix's arrays were changed in place (they may be shared): the
    product of the old matrix, or the new values for a data change, or a typed error."""

    def call(d: dict) -> Any:
        getattr(d["S"], field)[0] = value
        return d["G"] @ d["x"]

    return call


def _check_changed(r: Any, ref: Any, d: dict, strict: bool) -> str | None:
    old = close(r, ref)
    if old is None:
        return None
    S = d["S"]
    if np.isfinite(S.indices).all() and S.indices.min() >= 0 and S.indices.max() < N:
        return close(r, S @ d["x"])
    return old


def entries() -> list[Entry]:
    Sp = gl.sparse
    A = Arg("A", "sparse", aliases=("a", "indices", "indptr", "data", "matrix"))
    out = [
        Entry("sparse.csr_matrix", "sparse.csr_matrix", lambda g: {"A": spd_csr(g)},
              lambda d: Sp.csr_matrix(d["A"]), lambda d: dense_of(d["A"]), check_matrix, (A,)),
        Entry("sparse.csr_matrix[tuple]", "sparse.csr_matrix", lambda g: {"A": spd_csr(g)},
              lambda d: Sp.csr_matrix((d["A"].data, d["A"].indices, d["A"].indptr),
                                      shape=d["A"].shape),
              lambda d: dense_of(d["A"]), check_matrix,
              (Arg("A", "sparse", aliases=A.aliases, only=TUPLE_MUTATIONS),)),
        Entry("sparse.as_csr", "sparse.as_csr", lambda g: {"A": spd_csr(g)},
              lambda d: Sp.as_csr(d["A"], "sparse.as_csr"), _ref_as_csr, check_matrix, (A,)),
        Entry("sparse.from_dense", "sparse.from_dense",
              lambda g: {"x": spd_csr(g, 8).toarray()}, lambda d: Sp.from_dense(d["x"]),
              lambda d: np.asarray(as_np(d["x"])) + 0.0, check_matrix, (Arg("x", "mat"),)),
        Entry("sparse.A@x", "sparse.matmul", _with_gl, lambda d: d["G"] @ d["x"],
              _ref_matvec, check_dense, (Arg("x", "vec"),), all_torch=False),
        Entry("sparse.matvec", "sparse.matvec", _with_gl,
              lambda d: d["G"].matvec(d["x"], **d["kw"]), _ref_matvec, check_dense,
              (Arg("x", "vec"),), all_torch=False,
              options=(Opt("op_T", {"op": "T"}, expect="ref"),
                       Opt("op_bogus", {"op": "X"}, mention="op"))),
        Entry("sparse.A@B", ("sparse.matmul", "sparse.spmm"),
              lambda g: {**_with_gl(g), "B": g.standard_normal((N, 3))},
              lambda d: d["G"] @ d["B"], lambda d: _ref_spmm({**d, "A": d["S"]}), check_dense,
              (Arg("B", "mat", huge=lambda v: np.broadcast_to(v[:, :1], (N, 10**5))),),
              all_torch=False),
        Entry("sparse.A@sparse", ("sparse.matmul", "sparse.spgemm"),
              lambda g: {**_with_gl(g), "B": nonsym_csr(g)},
              lambda d: d["G"] @ d["B"], _ref_a_at, _check_a_at,
              (Arg("B", "sparse", aliases=A.aliases),), all_torch=False),
        Entry("sparse.spmm", "sparse.spmm",
              lambda g: {"A": spd_csr(g), "B": g.standard_normal((N, 3)), "kw": {}},
              lambda d: Sp.spmm(d["A"], d["B"], **d["kw"]), _ref_spmm, check_dense,
              (A, Arg("B", "mat")),
              options=(Opt("op_T", {"op": "T"}, expect="ref"),
                       Opt("op_bogus", {"op": "X"}, mention="op"))),
        Entry("sparse.sddmm", "sparse.sddmm",
              lambda g: {"mask": spd_csr(g), "a": g.standard_normal((N, 3)),
                         "b": g.standard_normal((3, N))},
              lambda d: Sp.sddmm(d["mask"], d["a"], d["b"]), _ref_sddmm, check_matrix,
              (Arg("mask", "sparse", aliases=A.aliases), Arg("a", "mat"), Arg("b", "mat"))),
        Entry("sparse.spgemm", "sparse.spgemm",
              lambda g: {"A": spd_csr(g), "B": nonsym_csr(g)},
              lambda d: Sp.spgemm(d["A"], d["B"]), _ref_spgemm, check_matrix,
              (A, Arg("B", "sparse", aliases=A.aliases))),
        Entry("sparse.spsolve", "sparse.spsolve",
              lambda g: {"A": nonsym_csr(g), "b": g.standard_normal(N), "kw": {}},
              lambda d: Sp.spsolve(d["A"], d["b"], **d["kw"]), _ref_solve, check_solve,
              (A, Arg("b", "vec")), numpy_inputs=True,
              options=(Opt("assume_a_bogus", {"assume_a": "bogus"}, mention="assume_a"),)),
        Entry("sparse.spsolve[small, dense path]", "sparse.spsolve",
              lambda g: {"A": nonsym_csr(g, 6), "b": g.standard_normal(6), "kw": {}},
              lambda d: Sp.spsolve(d["A"], d["b"], **d["kw"]), _ref_solve, check_solve,
              (A, Arg("b", "vec")), numpy_inputs=True),
        Entry("sparse.spsolve[b sparse]", "sparse.spsolve",
              lambda g: {"A": nonsym_csr(g), "b": sp.csr_matrix(g.standard_normal((N, 1)))},
              lambda d: Sp.spsolve(d["A"], d["b"]),
              lambda d: _ref_solve(d)[:, 0], lambda r, ref, d, s: close(np.ravel(as_np(r)), ref)),
        Entry("sparse.spsolve[b float32]", "sparse.spsolve",
              lambda g: {"A": nonsym_csr(g), "b": g.standard_normal(N).astype(np.float32)},
              lambda d: Sp.spsolve(d["A"], d["b"]), _ref_solve,
              lambda r, ref, d, s: close(r, ref, tol=1e-6)),
        Entry("sparse.DirectSolver", "sparse.DirectSolver",
              lambda g: {"A": spd_csr(g), "b": g.standard_normal(N), "kw": {}}, _direct,
              _ref_solve, check_solve, (A, Arg("b", "vec")),
              options=(Opt("options_unknown", {"options": {"foo": 1}}, mention="foo"),
                       Opt("options_int", {"options": 5}, mention="options"),
                       Opt("assume_a_bogus", {"options": {"assume_a": "x"}}, mention="assume_a"),
                       Opt("ordering_bogus", {"options": {"ordering": "x"}}, mention="ordering"),
                       Opt("triangle_bogus", {"options": {"triangle": "x"}}, mention="triangle"),
                       Opt("assume_a_pos", {"options": {"assume_a": "pos"}}, expect="ref"),
                       Opt("ordering_level_set", {"options": {"ordering": "level_set"}},
                           expect=WITH_GPU, mention="ordering"))),  # cuDSS's only
    ]
    for name, steps, expect, mention in DIRECT_LIFECYCLE:
        out.append(Entry(
            f"sparse.DirectSolver.{name}", "sparse.DirectSolver",
            lambda g: (lambda S: {"A": S, "A2": S * 2.0, "b": g.standard_normal(N)})(spd_csr(g)),
            steps, _lifecycle_ref(expect), _check_lifecycle, mention=mention, outputs=("A",)))
    for field, value in (("indices", 10**8), ("indptr", 10**6), ("data", np.nan)):
        out.append(Entry(
            f"sparse.A@x[scipy {field} changed after construction]", "sparse.matmul",
            _with_gl, _changed_after(field, value), lambda d: d["S"] @ d["x"], _check_changed,
            mention=(field, "A"), outputs=("S", "G")))  # the call changes S (G shares its data)
    return out
