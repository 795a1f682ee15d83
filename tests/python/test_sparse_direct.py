"""gl.sparse.DirectSolver / spsolve on the CPU (SuiteSparse: UMFPACK for general matrices, CHOLMOD
for assume_a='pos') against scipy.sparse.linalg and dense float64/complex128 NumPy references."""

import logging

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

import gpula as gl


def _random(n, dtype, seed, density=0.02):
    rng = np.random.default_rng(seed)
    a = sp.random(n, n, density=density, random_state=rng, format="csr")
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * sp.random(n, n, density=density, random_state=rng, format="csr")
    a = a + sp.diags(np.asarray(abs(a).sum(axis=1)).ravel() + 1.0)
    return sp.csr_matrix(a, dtype=dtype)


TOL = {np.float32: 1e-4, np.float64: 1e-10, np.complex64: 1e-4, np.complex128: 1e-10}


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("k", [None, 3])
def test_direct_solver_matches_scipy(dtype, k):
    a = _random(200, dtype, 1)
    rng = np.random.default_rng(2)
    b = rng.standard_normal((200,) if k is None else (200, k)).astype(dtype)
    b_before = b.copy()
    with gl.sparse.DirectSolver(a, b) as s:
        s.plan()
        s.factorize()
        x = s.solve()
    ref = spla.spsolve(a.astype(np.complex128 if np.iscomplexobj(b) else np.float64), b)
    np.testing.assert_allclose(x, np.asarray(ref).reshape(x.shape), rtol=TOL[dtype], atol=TOL[dtype])
    assert x.dtype == dtype
    np.testing.assert_array_equal(b, b_before)


def test_refactorize_same_pattern():
    a = _random(150, np.float64, 3)
    b = np.ones(150)
    s = gl.sparse.DirectSolver(a, b)
    s.plan()
    s.factorize()
    a2 = a.copy()
    a2.data = a2.data * np.linspace(1.0, 2.0, a2.nnz)
    a2 = a2 + sp.diags(np.full(150, 5.0))  # same pattern: diagonal already stored
    assert a2.nnz == a.nnz
    s.reset_operands(a=a2, b=2 * b)
    s.factorize()
    np.testing.assert_allclose(s.solve(), spla.spsolve(a2, 2 * b), rtol=1e-10)


def test_pattern_change_is_value_error():
    a = _random(50, np.float64, 4)
    s = gl.sparse.DirectSolver(a, np.ones(50))
    s.plan()
    with pytest.raises(ValueError, match="pattern"):
        s.reset_operands(a=_random(50, np.float64, 5, density=0.1))


def test_dtype_change_is_type_error():
    a = _random(20, np.float32, 4, density=0.2)
    s = gl.sparse.DirectSolver(a, np.ones(20, np.float32))
    s.plan()
    with pytest.raises(gl.DTypeError, match="a must keep the solver's dtype float32, got float64"):
        s.reset_operands(a=sp.csr_matrix(a, dtype=np.float64))


def test_state_order_errors():
    a = _random(20, np.float64, 6)
    s = gl.sparse.DirectSolver(a, np.ones(20))
    with pytest.raises(gl.InvalidArgument, match=r"solve\(\) called before plan\(\) and factorize"):
        s.solve()
    with pytest.raises(gl.InvalidArgument, match="before plan"):
        s.factorize()
    s.plan()
    with pytest.raises(gl.InvalidArgument, match="before factorize"):
        s.solve()
    s.free()
    for call in (s.plan, s.factorize, s.solve, lambda: s.reset_operands(a=a)):
        with pytest.raises(gl.InvalidArgument, match=r"^\[sparse\.DirectSolver\] the solver was freed \(free\(\)"):
            call()


@pytest.mark.parametrize("b_dtype", [np.float32, np.float16, np.int32, np.int64, np.bool_, ">f8"])
def test_b_promoted_as_spsolve(b_dtype):
    """b of another dtype: A and b are promoted as scipy's spsolve does (x in the result type)."""
    a = _random(20, np.float64, 7)
    b = np.arange(1, 21).astype(b_dtype)
    with gl.sparse.DirectSolver(a, b) as s:
        s.plan()
        s.factorize()
        x = s.solve()
    assert x.dtype == np.float64
    np.testing.assert_allclose(x, spla.spsolve(a, b.astype(np.float64)), rtol=1e-10)


def test_float32_a_with_float64_b_solves_in_float64():
    a = _random(20, np.float32, 7)
    b = np.ones(20)
    with gl.sparse.DirectSolver(a, b) as s:
        s.plan()
        s.factorize()
        x = s.solve()
    assert x.dtype == np.float64
    np.testing.assert_allclose(x, spla.spsolve(a.astype(np.float64), b), rtol=1e-10)


def test_wrong_dtype_shape_and_options():
    a = _random(20, np.float64, 7)
    for bad in (None, "abc", {}, np.ones(20, object)):
        with pytest.raises(gl.DTypeError, match=r"^\[sparse\.DirectSolver\] b has dtype"):
            gl.sparse.DirectSolver(a, bad)
    for bad in (np.ones(21), np.ones(0), np.float64(1.0)):
        with pytest.raises(gl.InvalidArgument, match=r"^\[sparse\.DirectSolver\] b must have shape \(20,\)"):
            gl.sparse.DirectSolver(a, bad)
    s = gl.sparse.DirectSolver(a, np.ones(20))
    s.plan()
    with pytest.raises(gl.DTypeError, match=r"b must have the solver's dtype float64 .* got complex128"):
        s.reset_operands(b=np.ones(20, np.complex128))  # the plan is real: no silent promotion
    with pytest.raises(gl.InvalidArgument, match=r"b must have shape \(20,\)"):
        s.reset_operands(b=np.ones(21))
    s.reset_operands(b=np.ones(20, np.int32))  # a safe cast
    with pytest.raises(gl.DTypeError, match=r"options must be a dict or None, got int"):
        gl.sparse.DirectSolver(a, np.ones(20), 5)
    with pytest.raises(gl.InvalidArgument, match=r"options: unknown keys \['foo'\]"):
        gl.sparse.DirectSolver(a, np.ones(20), {"foo": 1})
    for key in ("assume_a", "ordering", "triangle"):
        with pytest.raises(gl.InvalidArgument, match=rf"options: {key} must be one of .* got 'x'"):
            gl.sparse.DirectSolver(a, np.ones(20), {key: "x"})


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_nan_inf_in_a_is_invalid_argument(bad):
    a = _random(80, np.float64, 8)
    a.data[3] = bad
    with pytest.raises(gl.InvalidArgument, match=r"^\[sparse\.DirectSolver\] A must not contain infs or NaNs"):
        gl.sparse.DirectSolver(a, np.ones(80))
    with pytest.raises(gl.InvalidArgument, match=r"^\[sparse\.spsolve\] A must not contain infs or NaNs"):
        gl.sparse.spsolve(a, np.ones(80))
    s = gl.sparse.DirectSolver(_random(80, np.float64, 8), np.ones(80))
    s.plan()
    with pytest.raises(gl.InvalidArgument, match=r"a must not contain infs or NaNs"):
        s.reset_operands(a=a)


def test_zero_nnz_is_singular():
    z = sp.csr_matrix((80, 80))
    with pytest.raises(gl.SingularMatrix, match=r"^\[sparse\.spsolve\] A is singular: it has no stored entries"):
        gl.sparse.spsolve(z, np.ones(80))
    for assume in ("gen", "pos"):
        s = gl.sparse.DirectSolver(z, np.ones(80), {"assume_a": assume})
        with pytest.raises(gl.SingularMatrix, match=r"^\[sparse\.DirectSolver\] A is singular"):
            s.plan()


def test_duck_typed_csr_is_validated():
    class Duck:
        def __init__(self, d, i, p, shape):
            self.data, self.indices, self.indptr, self.shape = d, i, p, shape

    a = _random(20, np.float64, 9)
    x = gl.sparse.spsolve(Duck(a.data, a.indices, a.indptr, a.shape), np.ones(20))
    np.testing.assert_allclose(x, spla.spsolve(a, np.ones(20)), rtol=1e-10)
    bad = a.indices.copy()
    bad[0] = 10**8
    with pytest.raises(gl.InvalidArgument, match=r"^\[sparse\.spsolve\] indices\[0\] = 100000000 is out of range"):
        gl.sparse.spsolve(Duck(a.data, bad, a.indptr, a.shape), np.ones(20))


def test_singular_is_linalg_error():
    a = sp.csr_matrix(np.array([[1.0, 2.0], [2.0, 4.0]]))
    s = gl.sparse.DirectSolver(a, np.ones(2))
    s.plan()
    with pytest.raises(gl.errors.LinAlgError, match="UMFPACK"):
        s.factorize()


def test_spsolve_sparse_and_dense_paths():
    a = _random(300, np.float64, 8, density=0.005)
    b = np.arange(300.0)
    np.testing.assert_allclose(gl.sparse.spsolve(a, b), spla.spsolve(a, b), rtol=1e-10)
    d = _random(30, np.float64, 9, density=0.3)  # above the 5% threshold: dense path
    np.testing.assert_allclose(gl.sparse.spsolve(d, b[:30]), spla.spsolve(d, b[:30]), rtol=1e-10)


def test_spsolve_logs_the_dense_path(caplog):
    """Above 5% density spsolve solves densely and says so at INFO (issue 17); below it is
    silent about it."""
    d = _random(30, np.float64, 9, density=0.3)
    with caplog.at_level(logging.INFO, logger="gpula"):
        gl.sparse.spsolve(d, np.ones(30))
    dense = [r.getMessage() for r in caplog.records if "dense path" in r.getMessage()]
    assert len(dense) == 1 and dense[0].startswith("[sparse.spsolve] density 0.")
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="gpula"):
        gl.sparse.spsolve(_random(300, np.float64, 8, density=0.005), np.ones(300))
    assert not any("dense path" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("density", [0.005, 0.3])  # the sparse and the dense path
@pytest.mark.parametrize(
    "a_dtype, b_dtype",
    [
        (np.float64, np.float32),
        (np.float32, np.float64),
        (np.float32, np.float32),
        (np.float64, np.int64),
        (np.int64, np.float64),
        (np.float32, np.complex64),
        (np.float64, np.complex64),
    ],
)
def test_spsolve_promotes_as_scipy(a_dtype, b_dtype, density):
    """Mixed dtypes are promoted as scipy.sparse.linalg.spsolve does (issue 17: a float32 b with a
    float64 A was refused); the inputs are not changed."""
    n = 300 if density < 0.05 else 40
    a = _random(n, np.float64, 12, density=density)
    if np.issubdtype(a_dtype, np.integer):
        a = sp.csr_matrix(a.toarray().round() * 3 + 50 * np.eye(n)).astype(a_dtype)
    else:
        a = a.astype(a_dtype)
    b = (np.arange(n) % 7 - 3).astype(b_dtype) + (1j if np.iscomplexobj(np.zeros(0, b_dtype)) else 0)
    b = b.astype(b_dtype)
    a0, b0 = a.copy(), b.copy()
    x = gl.sparse.spsolve(a, b)
    ref = spla.spsolve(a, b)
    assert x.dtype == ref.dtype and x.shape == ref.shape == (n,)
    tol = 1e-4 if ref.dtype in (np.float32, np.complex64) else 1e-10
    exact = np.linalg.solve(a.toarray().astype(np.complex128), b.astype(np.complex128))
    np.testing.assert_allclose(x, exact if np.iscomplexobj(x) else exact.real, rtol=tol, atol=tol)
    assert a.dtype == a0.dtype and (a != a0).nnz == 0
    assert b.dtype == b0.dtype and np.array_equal(b, b0)


@pytest.mark.parametrize("fmt", ["csc", "csr", "coo"])
def test_spsolve_sparse_b_as_scipy(fmt):
    """A sparse b (issue 17): a vector ((n, 1)) gives an (n,) x, k > 1 columns a sparse x of A's
    class, as scipy.sparse.linalg.spsolve."""
    rng = np.random.default_rng(13)
    a = _random(120, np.float64, 14, density=0.03)
    for k in (1, 4):
        b = sp.random(120, k, density=0.4, random_state=rng, format=fmt)
        x = gl.sparse.spsolve(a, b)
        ref = spla.spsolve(a.tocsc(), b.tocsc())
        if k == 1:
            assert isinstance(x, np.ndarray) and x.shape == ref.shape == (120,)
            np.testing.assert_allclose(x, ref, rtol=1e-10, atol=1e-12)
        else:
            assert sp.issparse(x) and x.shape == ref.shape == (120, k)
            assert type(x) is type(a)
            np.testing.assert_allclose(x.toarray(), ref.toarray(), rtol=1e-10, atol=1e-12)
    b = sp.random(120, 3, density=0.4, random_state=rng, format="csc", dtype=np.float32)
    x = gl.sparse.spsolve(a, b)  # float32 sparse b, float64 A: float64
    assert x.dtype == np.float64
    np.testing.assert_allclose(x.toarray(), np.linalg.solve(a.toarray(), b.toarray()), rtol=1e-10, atol=1e-12)


def test_spsolve_names_itself_in_errors():
    a = _random(20, np.float64, 15, density=0.02)
    with pytest.raises(gl.InvalidArgument, match=r"^\[sparse\.spsolve\] A must be square"):
        gl.sparse.spsolve(sp.random(3, 4, density=0.5, format="csr"), np.ones(3))
    with pytest.raises(gl.InvalidArgument, match=r"^\[sparse\.spsolve\] b must have shape \(20,\) or \(20, k\), got \(21,\)"):
        gl.sparse.spsolve(a, np.ones(21))
    with pytest.raises(gl.InvalidArgument, match=r"^\[sparse\.spsolve\] assume_a must be one of"):
        gl.sparse.spsolve(a, np.ones(20), assume_a="spd")
    with pytest.raises(gl.DTypeError, match=r"^\[sparse\.spsolve\] b has dtype <U1; values must be float32"):
        gl.sparse.spsolve(a, np.array(["x"] * 20))
    # Errors of the solver it runs (sparse path: below 5% density) name spsolve too.
    def padded(block):  # block plus an identity: 62 x 62, sparse enough for the sparse path
        return sp.block_diag([sp.csr_matrix(np.array(block))] + [sp.identity(1)] * 60, format="csr")

    with pytest.raises(gl.errors.LinAlgError, match=r"^\[sparse\.spsolve\]"):
        gl.sparse.spsolve(padded([[1.0, 2.0], [2.0, 4.0]]), np.ones(62))
    with pytest.raises(gl.errors.NotPositiveDefinite, match=r"^\[sparse\.spsolve\]"):
        gl.sparse.spsolve(padded([[1.0, 2.0], [2.0, 1.0]]), np.ones(62), assume_a="pos")


def _planned_gpu_solver(a, b, options=None):
    """A planned GPU DirectSolver; skips where gpula was built without cuDSS (optional,
    CMakeLists.txt), which the constructor or plan() reports as NotCompiled."""
    try:
        s = gl.sparse.DirectSolver(a, b, options)
        s.plan()
    except gl.NotCompiled as e:
        pytest.skip(str(e))
    return s


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_cupy_matches_scipy(dtype):
    cupy = pytest.importorskip("cupy")
    import cupyx.scipy.sparse as csp

    a = _random(300, dtype, 10)
    b = np.random.default_rng(11).standard_normal((300, 2)).astype(dtype)
    with _planned_gpu_solver(csp.csr_matrix(a), cupy.asarray(b)) as s:
        s.factorize()
        x = s.solve()
        assert isinstance(x, cupy.ndarray)
        ref = spla.spsolve(a.astype(np.complex128 if np.iscomplexobj(b) else np.float64), b)
        np.testing.assert_allclose(cupy.asnumpy(x), ref, rtol=TOL[dtype], atol=TOL[dtype])
        a2 = a.copy()
        a2.data = a2.data * 1.5
        a2 = sp.csr_matrix(a2 + sp.diags(np.full(300, 3.0)), dtype=dtype)  # keep the dtype
        s.reset_operands(a=csp.csr_matrix(a2))
        s.factorize()
        ref2 = spla.spsolve(a2.astype(np.complex128 if np.iscomplexobj(b) else np.float64), b)
        np.testing.assert_allclose(cupy.asnumpy(s.solve()), ref2, rtol=TOL[dtype], atol=TOL[dtype])


# ---- assume_a="pos": CHOLMOD --------------------------------------------------------------------


def _random_hpd(n, dtype, seed, density=0.03):
    """Random sparse Hermitian (symmetric when real) positive definite matrix, fully stored."""
    rng = np.random.default_rng(seed)
    a = sp.random(n, n, density=density, random_state=rng, format="csr")
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * sp.random(n, n, density=density, random_state=rng, format="csr")
    a = sp.triu(a, k=1)
    a = a + a.conj().T
    a = a + sp.diags(np.asarray(abs(a).sum(axis=1)).ravel() + 1.0)
    a = sp.csr_matrix(a, dtype=dtype)
    a.sort_indices()
    return a


def _dense_ref(a, b):
    wide = np.complex128 if np.iscomplexobj(a.data) else np.float64
    return np.linalg.solve(a.toarray().astype(wide), b.astype(wide))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
@pytest.mark.parametrize("index", [np.int32, np.int64])
@pytest.mark.parametrize("k", [None, 1, 4])
def test_pos_matches_dense_reference(dtype, index, k):
    a = _random_hpd(150, dtype, 20)
    rng = np.random.default_rng(21)
    shape = (150,) if k is None else (150, k)
    b = rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        b = b + 1j * rng.standard_normal(shape)
    b = b.astype(dtype)
    b_before = b.copy()
    m = gl.sparse.csr_matrix((a.data, a.indices.astype(index), a.indptr.astype(index)), shape=a.shape)
    assert m.indices.dtype == index
    with gl.sparse.DirectSolver(m, b, {"assume_a": "pos"}) as s:
        s.plan()
        s.factorize()
        x = s.solve()
    assert x.dtype == dtype and x.shape == b.shape
    np.testing.assert_allclose(x, _dense_ref(a, b), rtol=TOL[dtype], atol=TOL[dtype])
    np.testing.assert_array_equal(b, b_before)


@pytest.mark.parametrize("dtype", [np.float64, np.complex128, np.float32])
def test_pos_refactorize_new_values(dtype):
    a = _random_hpd(200, dtype, 22)
    b = np.ones((200, 2), dtype)
    s = gl.sparse.DirectSolver(a, b, {"assume_a": "pos"})
    s.plan()
    s.factorize()
    np.testing.assert_allclose(s.solve(), _dense_ref(a, b), rtol=TOL[dtype], atol=TOL[dtype])
    a2 = a.copy()
    off = a2.indices != np.repeat(np.arange(200), np.diff(a2.indptr))
    a2.data = np.where(off, -0.5 * a2.data, 2.0 * a2.data).astype(dtype)  # still HPD
    s.reset_operands(a=a2, b=3 * b)
    s.factorize()
    np.testing.assert_allclose(s.solve(), _dense_ref(a2, 3 * b), rtol=TOL[dtype], atol=TOL[dtype])
    s.free()


def test_pos_poisson_matches_scipy():
    m = 40
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    e = sp.identity(m)
    a = (sp.kron(t, e) + sp.kron(e, t)).tocsr()
    b = np.arange(m * m, dtype=np.float64)
    x = gl.sparse.spsolve(a, b, assume_a="pos")
    np.testing.assert_allclose(x, spla.spsolve(a, b), rtol=1e-9, atol=1e-9)


def test_pos_one_by_one():
    a = sp.csr_matrix(np.array([[4.0]]))
    with gl.sparse.DirectSolver(a, np.array([2.0]), {"assume_a": "pos"}) as s:
        s.plan()
        s.factorize()
        np.testing.assert_allclose(s.solve(), [0.5])


def test_pos_empty_is_not_supported():
    a = sp.csr_matrix((0, 0))
    with pytest.raises(gl.errors.Error, match="empty"):
        gl.sparse.DirectSolver(a, np.ones(0), {"assume_a": "pos"})


@pytest.mark.parametrize("dtype", [np.float64, np.complex128])
def test_pos_not_positive_definite(dtype):
    a = _random_hpd(60, dtype, 23).tolil()
    a[10, 10] = -1.0
    a = sp.csr_matrix(a, dtype=dtype)
    s = gl.sparse.DirectSolver(a, np.ones(60, dtype), {"assume_a": "pos"})
    s.plan()
    with pytest.raises(gl.errors.NotPositiveDefinite, match="not positive definite: leading minor") as e:
        s.factorize()
    assert 1 <= e.value.order <= 60
    assert isinstance(e.value, gl.errors.LinAlgError)
    with pytest.raises(ValueError, match="before factorize"):
        s.solve()
    good = _random_hpd(60, dtype, 23)
    assert good.nnz == a.nnz
    s.reset_operands(a=good)
    s.factorize()
    np.testing.assert_allclose(s.solve(), _dense_ref(good, np.ones(60, dtype)), rtol=1e-10, atol=1e-10)


def test_pos_indefinite_2x2():
    a = sp.csr_matrix(np.array([[1.0, 2.0], [2.0, 1.0]]))  # eigenvalues -1 and 3
    s = gl.sparse.DirectSolver(a, np.ones(2), {"assume_a": "pos"})
    s.plan()
    with pytest.raises(gl.errors.NotPositiveDefinite, match="order 2"):
        s.factorize()


def _poisson(m):
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    e = sp.identity(m)
    return sp.csr_matrix(sp.kron(t, e) + sp.kron(e, t))


@pytest.mark.parametrize(
    "assume, expected",
    [
        ("pos", "CHOLMOD analysis: ordering AMD, supernodal"),
        ("gen", "UMFPACK analysis: symmetric strategy, ordering AMD"),
        ("sym", "UMFPACK analysis: symmetric strategy, ordering AMD"),
    ],
)
def test_plan_logs_the_ordering(caplog, assume, expected):
    a = _poisson(80)
    b = np.ones(a.shape[0])
    with caplog.at_level(logging.INFO, logger="gpula"), gl.sparse.DirectSolver(
        a, b, {"assume_a": assume}
    ) as s:
        s.plan()
        s.factorize()
        x = s.solve()
    messages = [r.getMessage() for r in caplog.records if r.name == "gpula"]
    assert any(expected in m for m in messages), messages
    assert np.linalg.norm(a @ x - b) < 1e-10 * np.linalg.norm(b)


# ---- the ordering option ------------------------------------------------------------------------


@pytest.mark.parametrize("assume, library", [("pos", "cholmod"), ("gen", "umfpack")])
@pytest.mark.parametrize("ordering", ["auto", "library"])
def test_cpu_ordering_is_the_librarys(assume, library, ordering):
    a = _poisson(30)
    b = np.ones(a.shape[0])
    with gl.sparse.DirectSolver(a, b, {"assume_a": assume, "ordering": ordering}) as s:
        assert s.ordering == ""
        s.plan()
        assert s.ordering == library
        s.factorize()
        assert np.linalg.norm(a @ s.solve() - b) < 1e-10 * np.linalg.norm(b)


def test_cpu_level_set_ordering_is_not_supported():
    with pytest.raises(gl.NotSupported, match="ordering 'level_set' is only supported on the GPU"):
        gl.sparse.DirectSolver(_poisson(10), np.ones(100), {"ordering": "level_set"})


def test_unknown_ordering_is_value_error():
    with pytest.raises(ValueError, match="ordering must be one of .* got 'metis'"):
        gl.sparse.DirectSolver(_poisson(10), np.ones(100), {"ordering": "metis"})


def _arrow(n):
    """A hub joined to every other vertex (a star graph), diagonally dominant: level sets make
    no usable separators of it."""
    a = sp.lil_matrix((n, n))
    a[0, 1:] = 1.0
    a[1:, 0] = 1.0
    a.setdiag(np.full(n, float(n)))
    return sp.csr_matrix(a)


def _gpu_solve(a, b, options):
    cupy = pytest.importorskip("cupy")
    import cupyx.scipy.sparse as csp

    with _planned_gpu_solver(csp.csr_matrix(a), cupy.asarray(b), options) as s:
        s.factorize()
        x = cupy.asnumpy(s.solve())
        used = s.ordering
        # refactorization with new values keeps the plan (and the ordering)
        a2 = sp.csr_matrix(a * 1.5 + sp.identity(a.shape[0]))
        a2.sort_indices()
        a2.indptr = a2.indptr.astype(a.indptr.dtype)  # the planned index dtype
        a2.indices = a2.indices.astype(a.indices.dtype)
        s.reset_operands(a=csp.csr_matrix(a2))
        s.factorize()
        x2 = cupy.asnumpy(s.solve())
        assert s.ordering == used
    return x, x2, a2, used


@pytest.mark.gpu
@pytest.mark.parametrize("assume", ["pos", "gen"])
@pytest.mark.parametrize("index", [np.int32, np.int64])
def test_gpu_level_set_ordering_matches_scipy(assume, index):
    a = _poisson(150)  # n = 22500: below the automatic threshold, so forced
    a.indptr = a.indptr.astype(index)
    a.indices = a.indices.astype(index)
    b = np.random.default_rng(3).standard_normal(a.shape[0])
    x, x2, a2, used = _gpu_solve(a, b, {"assume_a": assume, "ordering": "level_set"})
    assert used == "level_set"
    np.testing.assert_allclose(x, spla.spsolve(a.tocsc(), b), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(x2, spla.spsolve(a2.tocsc(), b), rtol=1e-8, atol=1e-10)


@pytest.mark.gpu
def test_gpu_automatic_ordering_by_size_and_shape(caplog):
    b = np.random.default_rng(4).standard_normal(400 * 400)
    a = _poisson(400)  # n = 160000 >= 131072: gpula's nested dissection
    with caplog.at_level(logging.INFO, logger="gpula"):
        x, _, _, used = _gpu_solve(a, b, {"assume_a": "pos"})
    assert used == "level_set"
    assert np.linalg.norm(a @ x - b) < 1e-10 * np.linalg.norm(b)
    assert any("ordering: level-set nested dissection" in r.getMessage() for r in caplog.records)
    small = _poisson(100)  # below the threshold: cuDSS's own
    _, _, _, used = _gpu_solve(small, b[:10000], {"assume_a": "pos"})
    assert used == "cudss"
    star = _arrow(140000)  # large, but level sets make poor separators: cuDSS's own
    x, _, _, used = _gpu_solve(star, b[:140000], {"assume_a": "pos"})
    assert used == "cudss"
    assert np.linalg.norm(star @ x - b[:140000]) < 1e-10 * np.linalg.norm(b[:140000])
    _, _, _, used = _gpu_solve(a, b, {"assume_a": "pos", "ordering": "library"})
    assert used == "cudss"
