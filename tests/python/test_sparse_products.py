"""gl.sparse products against scipy.sparse / NumPy (float64 reference): A @ x and matvec (SpMV),
spmm and A @ B for dense 2-D B, sddmm, spgemm and A @ B for sparse B."""

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import to_np64

import gpula as gl


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("op", ["N", "T", "H"])
def test_spmv_matches_scipy(xp, dtype, op):
    xp.skip_unless(dtype)
    rng = np.random.default_rng(7)
    S = sp.random(50, 31, density=0.2, format="csr", random_state=rng)
    if dtype.startswith("complex"):
        S = S + 1j * sp.random(50, 31, density=0.2, format="csr", random_state=rng)
    S = S.tocsr()
    S.sum_duplicates()
    A = gl.sparse.csr_matrix(
        (xp.asarray(S.data, dtype), xp.asarray(S.indices, "int32"), xp.asarray(S.indptr, "int32")),
        shape=S.shape,
    )
    n = S.shape[0] if op != "N" else S.shape[1]
    x64 = rng.standard_normal(n) + (
        1j * rng.standard_normal(n) if dtype.startswith("complex") else 0
    )
    x = xp.asarray(x64, dtype)
    y = A @ x if op == "N" else A.matvec(x, op)
    ref = {"N": S, "T": S.T, "H": S.conj().T}[op] @ to_np64(x)
    tol = 1e-4 if dtype in ("float32", "complex64") else 1e-12
    np.testing.assert_allclose(to_np64(y), ref, rtol=tol, atol=tol)


def test_spmv_empty_rows_and_nnz0():
    A = gl.sparse.as_csr(sp.csr_matrix((4, 3)), "t")
    np.testing.assert_array_equal(A @ np.ones(3), np.zeros(4))
    B = gl.sparse.as_csr(sp.csr_matrix((0, 3)), "t")
    assert (B @ np.ones(3)).shape == (0,)


def test_spmv_errors():
    A = gl.sparse.as_csr(sp.eye(3, format="csr"), "t")
    with pytest.raises(gl.DTypeError, match=r"\[sparse.matmul\] x has dtype <U1; values must be float32"):
        A @ np.array(["a", "b", "c"])
    with pytest.raises(ValueError, match=r"\[sparse.matmul\] the right operand must be a 1-D x or a 2-D B"):
        A @ np.ones((3, 2, 2))  # 2-D operands go to spmm
    with pytest.raises(ValueError, match=r"\[sparse.matmul\] the right operand .* got shape \(\)"):
        A @ np.asarray(2.0)  # as numpy.matmul: no scalars
    with pytest.raises(ValueError, match=r"\[sparse.matvec\] x must be 1-D"):
        A.matvec(np.ones((3, 2)))
    with pytest.raises(ValueError, match=r"\[sparse.matvec\] op must be"):
        A.matvec(np.ones(3), "X")
    with pytest.raises(
        gl.InvalidArgument, match=r"^\[sparse.matmul\] x must have shape \(3,\), got \(2,\)"
    ):
        A @ np.ones(2)  # the C++ plan's check, naming the call (not the plan class sparse.SpMV)
    with pytest.raises(gl.InvalidArgument, match=r"^\[sparse.matvec\] x must have shape \(3,\)"):
        A.matvec(np.ones(2), "T")
    with pytest.raises(gl.DTypeError, match=r"^\[sparse.matmul\] the right operand .* got list"):
        A @ [1.0, 2.0, 3.0]


def test_spmm_result_too_large_is_out_of_memory():
    A = gl.sparse.as_csr(sp.eye(64, format="csr"), "t")
    B = np.broadcast_to(np.ones((64, 1)), (64, 2**40))  # the result would need 512 TiB
    with pytest.raises(gl.OutOfMemory, match=r"^\[sparse.spmm\] could not allocate the result op\(A\) @ B"):
        A @ B


# ---- SpMM, SDDMM, SpGEMM ---------------------------------------------------------------------


def _random_csr(rng, m, n, density, dtype, empty_row=True):
    S = sp.random(m, n, density=density, format="csr", random_state=rng)
    if dtype.startswith("complex"):
        S = S + 1j * sp.random(m, n, density=density, format="csr", random_state=rng)
    S = S.tolil()
    if empty_row and m > 3:
        S[3, :] = 0  # an empty row
    S = S.tocsr()
    S.eliminate_zeros()
    S.sum_duplicates()
    return S


def _gl_csr(xp, S, dtype, index_dtype="int32"):
    return gl.sparse.csr_matrix(
        (
            xp.asarray(S.data, dtype),
            xp.asarray(S.indices, index_dtype),
            xp.asarray(S.indptr, index_dtype),
        ),
        shape=S.shape,
    )


def _tol(dtype):
    return 2e-4 if dtype in ("float32", "complex64") else 1e-12


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("op", ["N", "T", "H"])
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_spmm_matches_scipy(xp, rng, dtype, op, index_dtype):
    S = _random_csr(rng, 40, 27, 0.2, dtype)
    A = _gl_csr(xp, S, dtype, index_dtype)
    k = S.shape[0] if op != "N" else S.shape[1]
    B, B64 = xp.random(rng, (k, 6), dtype)
    C = gl.sparse.spmm(A, B, op=op)
    ref = {"N": S, "T": S.T, "H": S.conj().T}[op] @ B64
    xp.empty_like_check(C, dtype, ref.shape)
    np.testing.assert_allclose(to_np64(C), ref, rtol=_tol(dtype), atol=_tol(dtype))


def test_spmm_matmul_operator_and_strided_b(xp, rng):
    S = _random_csr(rng, 30, 20, 0.3, "float64")
    A = _gl_csr(xp, S, "float64")
    Bt, Bt64 = xp.random(rng, (5, 20), "float64")
    B = xp.transpose(Bt)  # (20, 5), column-major strides
    C = A @ B
    xp.empty_like_check(C, "float64", (30, 5))
    np.testing.assert_allclose(to_np64(C), S @ Bt64.T, rtol=1e-12, atol=1e-12)
    Bw, Bw64 = xp.random(rng, (20, 9), "float64")
    C2 = A @ Bw[:, ::2]  # a column-strided slice
    np.testing.assert_allclose(to_np64(C2), S @ Bw64[:, ::2], rtol=1e-12, atol=1e-12)


def test_spmm_zero_sizes():
    A = gl.sparse.as_csr(sp.csr_matrix((4, 3)), "t")
    np.testing.assert_array_equal(A @ np.ones((3, 2)), np.zeros((4, 2)))
    assert (A @ np.ones((3, 0))).shape == (4, 0)
    E = gl.sparse.as_csr(sp.csr_matrix((0, 3)), "t")
    assert (E @ np.ones((3, 2))).shape == (0, 2)
    K = gl.sparse.as_csr(sp.csr_matrix((3, 0)), "t")
    np.testing.assert_array_equal(K @ np.ones((0, 2)), np.zeros((3, 2)))


def test_spmm_errors():
    A = gl.sparse.as_csr(sp.eye(3, format="csr"), "t")
    with pytest.raises(gl.DTypeError, match=r"\[sparse.spmm\] B has dtype object; values must be float32"):
        A @ np.ones((3, 2), object)
    with pytest.raises(gl.InvalidArgument, match=r"\[sparse.spmm\] b must have shape \(3, n\)"):
        A @ np.ones((4, 2))
    with pytest.raises(ValueError, match=r"\[sparse.spmm\] op must be"):
        gl.sparse.spmm(A, np.ones((3, 2)), op="X")
    with pytest.raises(
        TypeError, match=r"\[sparse.spmm\] B: expected a numpy, cupy or torch array"
    ):
        gl.sparse.spmm(A, [[1.0]])


def test_spmm_device_mismatch():
    torch = pytest.importorskip("torch")
    A = gl.sparse.as_csr(sp.eye(3, format="csr"), "t")
    with pytest.raises(
        ValueError, match=r"\[sparse.spmm\] B must be a numpy array on cpu like A, got torch on cpu"
    ):
        A @ torch.ones((3, 2), dtype=torch.float64)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_sddmm_matches_dense(xp, rng, dtype, index_dtype):
    S = _random_csr(rng, 25, 31, 0.15, dtype)
    M = _gl_csr(xp, S, dtype, index_dtype)
    a, a64 = xp.random(rng, (25, 7), dtype)
    b, b64 = xp.random(rng, (7, 31), dtype)
    R = gl.sparse.sddmm(M, a, b)
    assert isinstance(R, gl.sparse.csr_matrix) and R.shape == S.shape and R.package == M.package
    assert R.indices is M.indices and R.indptr is M.indptr  # the pattern is shared
    full = a64 @ b64
    rows = np.repeat(np.arange(S.shape[0]), np.diff(S.indptr))
    np.testing.assert_allclose(
        to_np64(R.data), full[rows, S.indices], rtol=_tol(dtype), atol=_tol(dtype)
    )
    np.testing.assert_allclose(to_np64(M.data), S.data, rtol=_tol(dtype))  # the mask is untouched


def test_sddmm_strided_and_scipy_mask(rng):
    S = _random_csr(rng, 12, 10, 0.3, "float64")
    a = rng.standard_normal((4, 12)).T  # column-major
    b = rng.standard_normal((10, 4)).T
    R = gl.sparse.sddmm(S, a, b)
    rows = np.repeat(np.arange(12), np.diff(S.indptr))
    np.testing.assert_allclose(R.data, (a @ b)[rows, S.indices], rtol=1e-12)


def test_sddmm_errors():
    M = gl.sparse.as_csr(sp.eye(3, format="csr"), "t")
    with pytest.raises(gl.InvalidArgument, match=r"\[sparse.sddmm\] a must have shape \(3, k\)"):
        gl.sparse.sddmm(M, np.ones((2, 2)), np.ones((2, 3)))
    with pytest.raises(gl.InvalidArgument, match=r"\[sparse.sddmm\] b must have shape \(2, 3\)"):
        gl.sparse.sddmm(M, np.ones((3, 2)), np.ones((3, 3)))
    with pytest.raises(gl.DTypeError, match=r"\[sparse.sddmm\] a has dtype object; values must be float32"):
        gl.sparse.sddmm(M, np.ones((3, 2), object), np.ones((2, 3)))
    with pytest.raises(ValueError, match=r"\[sparse.sddmm\] b must be 2-D"):
        gl.sparse.sddmm(M, np.ones((3, 2)), np.ones(2))


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_spgemm_matches_scipy(xp, rng, dtype, index_dtype):
    S = _random_csr(rng, 35, 22, 0.12, dtype)
    T = _random_csr(rng, 22, 28, 0.15, dtype)
    A, B = _gl_csr(xp, S, dtype, index_dtype), _gl_csr(xp, T, dtype, index_dtype)
    C = A @ B
    assert isinstance(C, gl.sparse.csr_matrix) and C.package == A.package and C.device == A.device
    assert C.index_dtype == index_dtype and C.shape == (35, 28)
    ref = (S @ T).tocsr()
    ref.sort_indices()
    np.testing.assert_allclose(
        to_np64(C.to_dense()), ref.toarray(), rtol=_tol(dtype), atol=_tol(dtype)
    )
    # Pattern: structural, sorted (canonical) within rows.
    p, i = to_np64(C.indptr).astype(np.int64), to_np64(C.indices).astype(np.int64)
    np.testing.assert_array_equal(p, ref.indptr)
    np.testing.assert_array_equal(i, ref.indices)


def test_spgemm_mixed_index_dtypes_and_scipy_operand(rng):
    S = _random_csr(rng, 10, 8, 0.3, "float64")
    T = _random_csr(rng, 8, 6, 0.3, "float64")
    A = gl.sparse.csr_matrix(
        (S.data, S.indices.astype(np.int32), S.indptr.astype(np.int32)), shape=S.shape
    )
    B = gl.sparse.csr_matrix(
        (T.data, T.indices.astype(np.int64), T.indptr.astype(np.int64)), shape=T.shape
    )
    C = gl.sparse.spgemm(A, B)
    assert C.index_dtype == "int64"
    np.testing.assert_allclose(C.to_dense(), (S @ T).toarray(), rtol=1e-12)
    C2 = A @ T  # a scipy.sparse right operand
    np.testing.assert_allclose(C2.to_dense(), (S @ T).toarray(), rtol=1e-12)


def test_spgemm_empty():
    A = gl.sparse.as_csr(sp.csr_matrix((4, 3)), "t")
    B = gl.sparse.as_csr(sp.eye(3, format="csr"), "t")
    C = A @ B
    assert C.shape == (4, 3) and C.nnz == 0
    E = gl.sparse.as_csr(sp.csr_matrix((0, 4)), "t")
    assert (E @ A).shape == (0, 3)


def test_spgemm_errors():
    A = gl.sparse.as_csr(sp.eye(3, format="csr"), "t")
    with pytest.raises(ValueError, match=r"\[sparse.spgemm\] B must have 3 rows"):
        A @ sp.eye(4, format="csr")


def test_mixed_dtypes_promote_as_scipy(rng):
    """int -> float64, float32 with float64 -> float64, real with complex -> complex; the
    operands are not changed (issue 17)."""
    S = _random_csr(rng, 9, 7, 0.4, "float64").astype(np.float32)
    A = gl.sparse.csr_matrix(S)
    x64, xi = rng.standard_normal(7), rng.integers(-3, 3, 7)
    B64, Bc = rng.standard_normal((7, 3)), rng.standard_normal((7, 3)) + 1j
    S64 = S.astype(np.float64)
    for x in (x64, xi):
        y = A @ x
        ref = S @ x
        assert y.dtype == ref.dtype == np.float64
        np.testing.assert_allclose(y, S64 @ x, rtol=1e-12)
    C = A @ Bc
    assert C.dtype == (S @ Bc).dtype == np.complex128
    np.testing.assert_allclose(C, S64 @ Bc, rtol=1e-12)
    np.testing.assert_allclose(gl.sparse.spmm(A, B64), S64 @ B64, rtol=1e-12)
    assert A.dtype == "float32" and S.dtype == np.float32  # operands unchanged
    # An integer matrix computes in float64.
    Si = sp.csr_matrix(np.array([[1, 0, 2], [0, 3, 0]], dtype=np.int64))
    Ai = gl.sparse.csr_matrix(Si)
    assert Ai.dtype == "float64"
    np.testing.assert_array_equal(Ai @ np.ones(3, np.float32), [3.0, 3.0])
    # spgemm and sddmm
    T = _random_csr(rng, 7, 5, 0.4, "float64")
    C = A @ T
    assert C.dtype == "float64"
    np.testing.assert_allclose(C.to_dense(), (S64 @ T).toarray(), rtol=1e-12)
    a, b = rng.standard_normal((9, 2)).astype(np.float32), rng.standard_normal((2, 7))
    R = gl.sparse.sddmm(A, a, b)
    assert R.dtype == "float64"
    rows = np.repeat(np.arange(9), np.diff(S.indptr))
    np.testing.assert_allclose(R.data, (a.astype(np.float64) @ b)[rows, S.indices], rtol=1e-12)


def test_plans_kept_on_the_matrix_and_see_value_changes(rng):
    S = _random_csr(rng, 20, 15, 0.3, "float64")
    A = gl.sparse.as_csr(S.copy(), "t")
    x, B = rng.standard_normal(15), rng.standard_normal((15, 4))
    y1, C1 = A @ x, A @ B
    plans = dict(A._plans)
    assert len(plans) == 2
    A.data *= 2.0  # in place: the kept plans read the new values
    np.testing.assert_allclose(A @ x, 2 * y1, rtol=1e-12)
    np.testing.assert_allclose(A @ B, 2 * C1, rtol=1e-12)
    assert all(A._plans[k] is v for k, v in plans.items())


@pytest.mark.gpu
def test_products_run_on_the_callers_current_stream():
    """A @ x, spmm and sddmm inside `with torch.cuda.stream(s)` run on s (a non-blocking
    stream, unordered with the legacy default stream): x is produced by slow work queued on s
    just before, so a product launched anywhere else would read it unfinished."""
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA torch")
    rng = np.random.default_rng(11)
    S = sp.random(2000, 2000, density=0.01, format="csr", random_state=rng)
    S.sum_duplicates()
    dev = torch.device("cuda")
    A = gl.sparse.csr_matrix(
        tuple(torch.from_numpy(v).to(dev) for v in (S.data, S.indices.astype(np.int32),
                                                    S.indptr.astype(np.int32))),
        shape=S.shape,
    )
    s = torch.cuda.Stream()
    for _ in range(3):
        with torch.cuda.stream(s):
            w = torch.randn(4096, 4096, device=dev, dtype=torch.float64)
            for _ in range(8):  # tens of milliseconds of work on s
                w = torch.tanh(w @ w / 64.0)
            x = w[0, :2000].contiguous()
            b = w[:2000, :3].contiguous()
            y = A @ x
            c = gl.sparse.spmm(A, b)
            v = gl.sparse.sddmm(A, b, b[:, :3].T.contiguous()).data
        s.synchronize()
        xh, bh = x.cpu().numpy(), b.cpu().numpy()
        np.testing.assert_allclose(y.cpu().numpy(), S @ xh, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(c.cpu().numpy(), S @ bh, rtol=1e-10, atol=1e-12)
        r, q = S.nonzero()
        np.testing.assert_allclose(v.cpu().numpy(), np.einsum("ij,ij->i", bh[r], bh[q]),
                                   rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_spmv_repeated_products_fast_path(device):
    """Repeated A @ x with torch vectors of one layout take the kept executor; a strided x, a
    float32 x (promoted), another thread, matvec("T") and a 2-D operand in between all still get
    the right products."""
    torch = pytest.importorskip("torch")
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("no CUDA")
    import threading

    import scipy.sparse as sps

    a = sps.random(40, 30, density=0.2, format="csr", random_state=1)
    at = torch.sparse_csr_tensor(torch.from_numpy(a.indptr), torch.from_numpy(a.indices),
                                 torch.from_numpy(a.data), size=a.shape).to(device)
    A = gl.sparse.as_csr(at, "test")
    g = torch.Generator().manual_seed(2)

    def vec(n, dtype=torch.float64):
        return torch.randn(n, dtype=dtype, generator=g).to(device)

    def ref(x, t=False):
        m = a.T if t else a
        return torch.from_numpy(m @ x.double().cpu().numpy())

    for _ in range(3):
        x = vec(30)
        torch.testing.assert_close((A @ x).cpu(), ref(x))
        xs = vec(60)[::2]  # strided: copied, not the kept layout
        torch.testing.assert_close((A @ xs).cpu(), ref(xs))
        x32 = vec(30, torch.float32)
        y32 = A @ x32
        assert y32.dtype == torch.float64
        torch.testing.assert_close(y32.cpu(), ref(x32))
        xt = vec(40)
        torch.testing.assert_close(A.matvec(xt, "T").cpu(), ref(xt, t=True))
        X = vec(30 * 2).reshape(30, 2)
        torch.testing.assert_close((A @ X).cpu(), torch.from_numpy(a @ X.cpu().numpy()))
    errors = []

    def work():
        try:
            for _ in range(50):
                x = vec(30)
                torch.testing.assert_close((A @ x).cpu(), ref(x))
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    with pytest.raises(gl.InvalidArgument, match=r"sparse.matmul"):
        A @ vec(31)
