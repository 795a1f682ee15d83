"""Hostile inputs to gl.sparse (issue 17): malformed CSR arrays at every entry point, matrices
mutated after construction, NaN/Inf, empty matrices, wrong dtypes and packages, read-only and
non-contiguous arrays, maxiter edge cases, and 8 threads on one matrix object.

Cases that crashed (segfault) on the old code run in a subprocess, so that a crash is a failed
test and not the end of the run. Every failing call is checked to leave its inputs unchanged."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest
import scipy.sparse as sp

import gpula as gl
import gpula.sparse.linalg as sla

# Each corruption of the SPD matrix [[4, 1, 0], [1, 4, 0], [0, 0, 4]] (scipy CSR, int32), and the
# message the validator gives after "[op] ".
CORRUPTIONS = {
    "out_of_range": ("S.indices[1] = 10**8", r"indices\[1\] = 100000000 is out of range \[0, 3\)"),
    "negative": ("S.indices[3] = -1", r"indices\[3\] = -1 is out of range \[0, 3\)"),
    "indptr_past_nnz": ("S.indptr[3] = 10**6", r"indptr\[3\] must equal nnz = 5, got 1000000"),
    "non_monotone": (
        "S.indptr[1] = 4; S.indptr[2] = 2",
        r"indptr must be non-decreasing: indptr\[2\] = 2 < indptr\[1\] = 4",
    ),
}

# Entry points: (op name in the message, the call on a corrupted scipy matrix S).
ENTRY_POINTS = {
    **{
        f"{m}_{M}": (f"sparse.linalg.{m}", f"sla.{m}(S, np.ones(3), M={M!r})")
        for m in ("cg", "gmres", "bicgstab", "minres")
        for M in (None, "jacobi", "ic0", "ilu0")
    },
    "bicgstab_duck_typed": ("sparse.linalg.bicgstab", "sla.bicgstab(Duck(S), np.ones(3))"),
    "cg_gl_tuple": (
        "sparse.csr_matrix",
        "sla.cg(gl.sparse.csr_matrix((S.data, S.indices, S.indptr), shape=(3, 3)), np.ones(3))",
    ),
    "csr_matrix": ("sparse.csr_matrix", "gl.sparse.csr_matrix(S)"),
    "as_csr_matmul": ("sparse.matmul", "gl.sparse.as_csr(S, 'sparse.matmul') @ np.ones(3)"),
    "spmm": ("sparse.spmm", "gl.sparse.spmm(S, np.ones((3, 2)))"),
    "sddmm": ("sparse.sddmm", "gl.sparse.sddmm(S, np.ones((3, 2)), np.ones((2, 3)))"),
    "spgemm": ("sparse.spgemm", "gl.sparse.spgemm(S, sp.eye(3, format='csr'))"),
    "spsolve": ("sparse.spsolve", "gl.sparse.spsolve(S, np.ones(3))"),
    "DirectSolver": ("sparse.DirectSolver", "gl.sparse.DirectSolver(S, np.ones(3))"),
}

_PRELUDE = """
import re, numpy as np, scipy.sparse as sp, gpula as gl, gpula.sparse.linalg as sla

class Duck:  # a duck-typed CSR matrix
    def __init__(self, S):
        self.data, self.indices, self.indptr, self.shape = S.data, S.indices, S.indptr, S.shape
"""


def run_isolated(code: str) -> subprocess.CompletedProcess:
    """Runs code in a fresh interpreter (a crash there fails the test, not the run)."""
    return subprocess.run(
        [sys.executable, "-c", _PRELUDE + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_malformed_csr_raises_at_every_entry_point(entry):
    op, call = ENTRY_POINTS[entry]
    cases = "\n".join(
        f"""
S = sp.csr_matrix(np.array([[4.0, 1, 0], [1, 4, 0], [0, 0, 4]]))
{corrupt}
before = (S.data.copy(), S.indices.copy(), S.indptr.copy())
try:
    {call}
    print("{kind}: no error")
except gl.InvalidArgument as e:
    ok = re.fullmatch(r"\\[{re_op}\\] {message}", str(e)) is not None
    print("{kind}:", "ok" if ok else "wrong message: " + str(e))
assert all(np.array_equal(a, b) for a, b in zip(before, (S.data, S.indices, S.indptr)))
"""
        for kind, (corrupt, message) in CORRUPTIONS.items()
        for re_op in [op.replace(".", "\\.")]
    )
    r = run_isolated(cases)
    assert r.returncode == 0, f"crashed ({r.returncode}): {r.stderr[-2000:]}"
    lines = r.stdout.split("\n")
    for kind in CORRUPTIONS:
        assert f"{kind}: ok" in lines, r.stdout + r.stderr


def test_matrix_mutated_after_construction_is_not_seen():
    """The pattern is snapshotted at construction, the values shared (issue 17): in-place index
    writes and scipy reallocating its arrays never crash a later product."""
    r = run_isolated(
        """
        rng = np.random.default_rng(0)
        S = (sp.random(40, 40, density=0.1, format="csr", random_state=rng) + 5 * sp.eye(40)).tocsr()
        ref = S.copy()
        x = rng.standard_normal(40)
        for make in (gl.sparse.csr_matrix, lambda S: gl.sparse.as_csr(S, "t")):
            T = S.copy()
            A = make(T)
            T.indices[:] = 10**8  # in place: garbage in the source's pattern
            T.indptr[1:] = -7
            assert np.allclose(A @ x, ref @ x)
            assert np.allclose(gl.sparse.spmm(A, np.ones((40, 2))), ref @ np.ones((40, 2)))
            T = S.copy()
            A = make(T)
            T.data *= 2.0  # values are shared: an in-place update is seen
            assert np.allclose(A @ x, 2 * (ref @ x))
            zeros = np.argwhere(ref.toarray() == 0)[:3]
            old = T.indices
            for i, j in zeros:  # new entries: scipy reallocates its arrays, A keeps what it had
                T[i, j] = 1.0
            assert T.indices is not old and T.nnz == ref.nnz + 3
            assert np.allclose(A @ x, 2 * (ref @ x))
            del T
            assert np.allclose(A @ x, 2 * (ref @ x))
        print("done")
        """
    )
    assert r.returncode == 0 and "done" in r.stdout, r.stderr[-2000:]


def test_pattern_arrays_are_read_only():
    A = gl.sparse.csr_matrix(sp.eye(3, format="csr"))
    with pytest.raises(ValueError, match="read-only"):
        A.indices[0] = 7
    with pytest.raises(ValueError, match="read-only"):
        A.indptr[1] = 9


def _spd(n=30, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    R = sp.random(n, n, density=0.1, random_state=rng)
    return (R + R.T + n * sp.eye(n)).tocsr().astype(dtype)


@pytest.mark.parametrize("method", ["cg", "gmres", "bicgstab", "minres"])
def test_maxiter_zero_reports_no_false_convergence(method):
    A = _spd()
    b = np.ones(30)
    x, info = getattr(sla, method)(A, b, maxiter=0)
    assert info > 0 and np.array_equal(x, np.zeros(30))
    exact = np.linalg.solve(A.toarray(), b)
    x, info = getattr(sla, method)(A, b, x0=exact, maxiter=0, rtol=1e-8)
    assert info == 0 and np.array_equal(x, exact)
    with pytest.raises(gl.InvalidArgument, match=rf"\[sparse.linalg.{method}\] maxiter must be >= 0, got -3"):
        getattr(sla, method)(A, b, maxiter=-3)
    with pytest.raises(gl.InvalidArgument, match=r"maxiter must be None or an int"):
        getattr(sla, method)(A, b, maxiter=2.5)


@pytest.mark.parametrize("method", ["cg", "gmres", "bicgstab", "minres"])
def test_nan_inf_never_report_convergence(method):
    A = _spd()
    for bad in (np.nan, np.inf):
        An = A.copy()
        An.data[3] = bad
        b = np.ones(30)
        _, info = getattr(sla, method)(An, b)
        assert info != 0
        bn = b.copy()
        bn[2] = bad
        x, info = getattr(sla, method)(A, bn)
        assert info == -1 and np.array_equal(x, np.zeros(30))  # a breakdown before iterating
        assert np.isnan(bn[2]) or np.isinf(bn[2])  # inputs unchanged


def test_nan_in_products_propagates_as_scipy():
    S = _spd()
    S.data[0] = np.nan
    A = gl.sparse.csr_matrix(S)
    x = np.ones(30)
    np.testing.assert_array_equal(np.isnan(A @ x), np.isnan(S @ x))
    B = np.ones((30, 3))
    np.testing.assert_array_equal(np.isnan(gl.sparse.spmm(A, B)), np.isnan(S @ B))


def test_empty_matrices():
    for m, n in [(0, 0), (0, 4), (4, 0), (4, 4)]:
        S = sp.csr_matrix((m, n))
        A = gl.sparse.csr_matrix(S)
        assert A.nnz == 0 and A.shape == (m, n)
        np.testing.assert_array_equal(A @ np.ones(n), np.zeros(m))
        np.testing.assert_array_equal(gl.sparse.spmm(A, np.ones((n, 2))), np.zeros((m, 2)))
        assert (A @ sp.csr_matrix((n, 3))).shape == (m, 3)
        assert gl.sparse.sddmm(A, np.ones((m, 2)), np.ones((2, n))).nnz == 0
    x, info = sla.cg(sp.csr_matrix((0, 0)), np.zeros(0))
    assert x.shape == (0,) and info == 0
    x, info = sla.cg(sp.csr_matrix((4, 4)), np.ones(4))  # A = 0: no solution, no convergence
    assert info != 0
    x, info = sla.cg(sp.csr_matrix((4, 4)), np.zeros(4))  # b = 0: x = 0
    assert info == 0 and np.array_equal(x, np.zeros(4))
    assert gl.sparse.spsolve(sp.csr_matrix((0, 0)), np.zeros(0)).shape == (0,)


def test_wrong_dtypes_and_packages():
    ip = np.array([0, 1], np.int32)
    with pytest.raises(gl.DTypeError, match=r"\[sparse.csr_matrix\] indices must be int32 or int64, got float64"):
        gl.sparse.csr_matrix((np.ones(1), np.zeros(1), ip), shape=(1, 1))
    with pytest.raises(gl.DTypeError, match=r"values must be float32, float64, complex64 or complex128"):
        gl.sparse.csr_matrix((np.array(["a"]), np.zeros(1, np.int32), ip), shape=(1, 1))
    with pytest.raises(gl.DTypeError, match=r"expected a sparse matrix"):
        gl.sparse.csr_matrix("not a matrix")
    with pytest.raises(gl.DTypeError, match=r"\[sparse.linalg.cg\] indices must be int32 or int64, got float64"):
        sla.cg(_Duck(np.ones(1), np.zeros(1), ip, (1, 1)), np.ones(1))
    with pytest.raises(gl.DTypeError, match=r"\[sparse.matmul\] the right operand .* must be a numpy, cupy or torch array"):
        gl.sparse.csr_matrix(sp.eye(2, format="csr")) @ "xx"
    with pytest.raises(gl.InvalidArgument, match=r"\[sparse.linalg.cg\] b must have shape \(3,\), got \(4,\)"):
        sla.cg(_spd(3), np.ones(4))
    with pytest.raises(gl.InvalidArgument, match=r"shape \(2, 2\) differs from the input's \(3, 3\)"):
        gl.sparse.csr_matrix(sp.eye(3, format="csr"), shape=(2, 2))


def test_wrong_package_mix():
    torch = pytest.importorskip("torch")
    ip = np.array([0, 1], np.int32)
    with pytest.raises(gl.DTypeError, match=r"\[sparse.csr_matrix\] indices must be a numpy array like data"):
        gl.sparse.csr_matrix((np.ones(1), torch.zeros(1, dtype=torch.int32), ip), shape=(1, 1))
    A = gl.sparse.csr_matrix(sp.eye(2, format="csr"))
    with pytest.raises(gl.InvalidArgument, match=r"\[sparse.matmul\] x must be a numpy array on cpu like A, got torch"):
        A @ torch.ones(2, dtype=torch.float64)


class _Duck:
    def __init__(self, data, indices, indptr, shape):
        self.data, self.indices, self.indptr, self.shape = data, indices, indptr, shape


def test_read_only_and_non_contiguous_arrays():
    S = _spd(20)
    d, i, p = S.data.copy(), S.indices.copy(), S.indptr.copy()
    for a in (d, i, p):
        a.flags.writeable = False
    A = gl.sparse.csr_matrix((d, i, p), shape=S.shape)
    x = np.arange(20.0)
    x.flags.writeable = False
    np.testing.assert_allclose(A @ x, S @ x, rtol=1e-12)
    xs, info = sla.cg(_Duck(d, i, p, S.shape), x, rtol=1e-10)
    assert info == 0
    np.testing.assert_allclose(S @ xs, x, rtol=1e-8, atol=1e-8)
    # Strided views of the arrays (every other element of a doubled array).
    i2, p2, d2 = (np.repeat(a, 2)[::2] for a in (S.indices, S.indptr, S.data))
    assert not i2.flags.c_contiguous or i2.strides[0] != i2.itemsize
    B = gl.sparse.csr_matrix((d2, i2, p2), shape=S.shape)
    np.testing.assert_allclose(B @ x, S @ x, rtol=1e-12)
    xs, info = sla.cg(_Duck(d2, i2, p2, S.shape), x, rtol=1e-10)
    assert info == 0
    x2 = np.repeat(x, 2)[::2]  # a strided right-hand side
    np.testing.assert_allclose(A @ x2, S @ x, rtol=1e-12)


def test_eight_threads_on_one_matrix():
    S = _spd(200, seed=3)
    A = gl.sparse.csr_matrix(S)
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal(200) for _ in range(8)]
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for _ in range(10):
                np.testing.assert_allclose(A @ xs[k], S @ xs[k], rtol=1e-12)
                for M in (None, "ic0"):
                    x, info = sla.cg(A, xs[k], rtol=1e-10, M=M)
                    assert info == 0
                    np.testing.assert_allclose(S @ x, xs[k], rtol=1e-7, atol=1e-7)
                x, info = sla.gmres(S, xs[k], rtol=1e-10)
                assert info == 0
        except BaseException as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors


def test_failing_calls_leave_inputs_unchanged():
    S = _spd(10)
    ref = S.copy()
    b = np.ones(10)
    for call in (
        lambda: sla.cg(S, b, maxiter=-1),
        lambda: sla.gmres(S, np.ones(11)),
        lambda: gl.sparse.spsolve(S, np.ones(11)),
        lambda: gl.sparse.spmm(S, np.ones((11, 2))),
        lambda: gl.sparse.sddmm(S, np.ones((10, 2)), np.ones((3, 10))),
    ):
        with pytest.raises(gl.InvalidArgument):
            call()
        assert (S != ref).nnz == 0 and np.array_equal(S.indptr, ref.indptr)
        assert np.array_equal(b, np.ones(10))


def test_issue_examples_raise():
    """The issue's own reproducers: each raises InvalidArgument naming the call, no crash."""
    r = run_isolated(
        """
        bad = sp.csr_matrix(([4.0, 1, 4, 4], [0, 10**8, 1, 2], [0, 2, 3, 4]), shape=(3, 3))
        neg = sp.csr_matrix(([4.0, 1, 4, 4], [0, -1, 1, 2], [0, 2, 3, 4]), shape=(3, 3))
        calls = {
            "cg": lambda: sla.cg(bad, np.ones(3)),
            "cg_ic0": lambda: sla.cg(bad, np.ones(3), M="ic0"),
            "bicgstab_duck": lambda: sla.bicgstab(Duck(bad), np.ones(3)),
            "gmres_negative": lambda: sla.gmres(neg, np.ones(3)),
        }
        for name, call in calls.items():
            try:
                call()
                print(name, "no error")
            except gl.InvalidArgument as e:
                print(name, "ok" if re.match(r"\\[sparse\\.linalg\\.\\w+\\] indices\\[1\\] = ", str(e)) else e)
        """
    )
    assert r.returncode == 0, r.stderr[-2000:]
    for name in ("cg", "cg_ic0", "bicgstab_duck", "gmres_negative"):
        assert f"{name} ok" in r.stdout.split("\n"), r.stdout
