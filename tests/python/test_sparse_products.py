"""gl.sparse products against scipy.sparse (float64 reference): A @ x and matvec."""

import numpy as np
import pytest
import scipy.sparse as sp

import gpula as gl

from conftest import to_np64


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
    x64 = rng.standard_normal(n) + (1j * rng.standard_normal(n) if dtype.startswith("complex") else 0)
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
    with pytest.raises(TypeError, match=r"\[sparse.matmul\] x must have A's dtype float64, got float32"):
        A @ np.ones(3, np.float32)
    with pytest.raises(ValueError, match=r"\[sparse.matmul\] x must be 1-D"):
        A @ np.ones((3, 2))
    with pytest.raises(ValueError, match=r"\[sparse.matvec\] op must be"):
        A.matvec(np.ones(3), "X")
    with pytest.raises(gl.InvalidArgument, match=r"\[sparse.SpMV\] x must have shape \(3,\), got \(2,\)"):
        A @ np.ones(2)
