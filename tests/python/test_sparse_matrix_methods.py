"""gl.sparse.csr_matrix's scipy methods (.T, .transpose, .conj, .H, .toarray, .astype, .dot,
scalar * and /, + and - of one or of different patterns, .diagonal) against scipy.sparse, and
np.asarray(A) refused with a TypeError."""

import numpy as np
import pytest
import scipy.sparse as sp

import gpula as gl
from gpula.errors import InvalidArgument

DTYPES = (np.float32, np.float64, np.complex64, np.complex128)


def _rand(rng, m, n, dtype, density=0.3):
    S = sp.random(m, n, density=density, format="csr", random_state=rng, dtype=np.float64)
    if np.dtype(dtype).kind == "c":
        S = S + 1j * sp.random(m, n, density=density, format="csr", random_state=rng)
    return S.astype(dtype).tocsr()


def _tol(dtype):
    return 1e-5 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-12


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(7, 5), (5, 7), (0, 3), (4, 0), (1, 1)])
def test_transpose_conj_dot(dtype, shape):
    rng = np.random.default_rng(0)
    S = _rand(rng, *shape, dtype)
    A = gl.sparse.csr_matrix(S)
    for got, want in (
        (A.T, S.T),
        (A.transpose(), S.transpose()),
        (A.conj(), S.conj()),
        (A.H, S.conj().T),
    ):
        assert isinstance(got, gl.sparse.csr_matrix)
        assert got.shape == want.shape and got.dtype == np.dtype(dtype).name
        np.testing.assert_array_equal(got.toarray(), want.toarray())
    x = rng.standard_normal(shape[1]).astype(dtype)
    np.testing.assert_allclose(A.dot(x), S @ x, rtol=_tol(dtype), atol=_tol(dtype))
    X = rng.standard_normal((shape[1], 3)).astype(dtype)
    np.testing.assert_allclose(A.dot(X), S @ X, rtol=_tol(dtype), atol=_tol(dtype))


def test_transpose_axes_refused():
    A = gl.sparse.csr_matrix(sp.eye(3, format="csr"))
    with pytest.raises(InvalidArgument, match="axes"):
        A.transpose(axes=(1, 0))


@pytest.mark.parametrize("dtype", DTYPES)
def test_scalar_products_follow_numpy_promotion(dtype):
    S = _rand(np.random.default_rng(1), 6, 4, dtype)
    A = gl.sparse.csr_matrix(S)
    for got, want in ((2 * A, 2 * S), (A * 2.5, S * 2.5), (A / 4, S / 4), (-A, -S),
                      (A * 1j, S * 1j), (np.float64(3) * A, S * np.float64(3))):
        assert got.dtype == want.dtype.name, (got.dtype, want.dtype)
        np.testing.assert_allclose(got.toarray(), want.toarray(), rtol=_tol(dtype))
    assert A.astype(np.complex128).dtype == "complex128"
    np.testing.assert_array_equal(A.astype(np.complex128).toarray(), S.astype(np.complex128).toarray())


@pytest.mark.parametrize("dtype", DTYPES)
def test_sum_same_pattern_keeps_pattern(dtype):
    S = _rand(np.random.default_rng(2), 8, 8, dtype)
    A = gl.sparse.csr_matrix(S)
    B = gl.sparse.csr_matrix(S * 3)
    C = A + B
    assert C.nnz == A.nnz  # the one pattern
    np.testing.assert_allclose(C.toarray(), (S * 4).toarray(), rtol=_tol(dtype))
    D = A - A
    assert D.nnz == A.nnz and not np.any(D.toarray())  # explicit zeros kept


@pytest.mark.parametrize("dtype", DTYPES)
def test_sum_any_pattern(dtype):
    rng = np.random.default_rng(3)
    S, T = _rand(rng, 9, 6, dtype), _rand(rng, 9, 6, np.float64, density=0.5)
    A, B = gl.sparse.csr_matrix(S), gl.sparse.csr_matrix(T)
    for got, want in ((A + B, S + T), (A - B, S - T), (B - A, T - S), (A + T, S + T)):
        assert isinstance(got, gl.sparse.csr_matrix)
        assert got.dtype == want.dtype.name
        np.testing.assert_allclose(got.toarray(), want.toarray(), rtol=_tol(dtype), atol=_tol(dtype))
    dense = rng.standard_normal((9, 6))
    np.testing.assert_allclose(A + dense, S.toarray() + dense, rtol=_tol(dtype))
    np.testing.assert_allclose(dense - A, dense - S.toarray(), rtol=_tol(dtype))
    np.testing.assert_array_equal((A + 0).toarray(), S.toarray())


def test_sum_errors():
    A = gl.sparse.csr_matrix(sp.eye(3, format="csr"))
    with pytest.raises(InvalidArgument, match="shapes"):
        A + gl.sparse.csr_matrix(sp.eye(4, format="csr"))
    with pytest.raises(NotImplementedError, match="scalar"):
        A + 1.0


@pytest.mark.parametrize("shape", [(6, 6), (4, 7), (7, 4), (0, 0)])
def test_diagonal(shape):
    S = _rand(np.random.default_rng(4), *shape, np.complex128, density=0.6)
    A = gl.sparse.csr_matrix(S)
    for k in (0, 1, -1, 3, -3, 8, -8):
        np.testing.assert_array_equal(A.diagonal(k), S.diagonal(k))


def test_asarray_raises_clear_type_error():
    A = gl.sparse.csr_matrix(sp.eye(3, format="csr"))
    with pytest.raises(TypeError, match="toarray"):
        np.asarray(A)
    with pytest.raises(TypeError, match="toarray"):
        np.array(A)
    with pytest.raises(TypeError):
        np.sin(A)


def test_torch_matrix_methods_stay_in_torch():
    torch = pytest.importorskip("torch")
    S = _rand(np.random.default_rng(5), 5, 4, np.float64)
    A = gl.sparse.csr_matrix(torch.tensor(S.toarray()).to_sparse_csr())
    assert A.T.package == "torch" and isinstance(A.T.data, torch.Tensor)
    np.testing.assert_array_equal(A.T.toarray().numpy(), S.T.toarray())
    assert isinstance(A.diagonal(), torch.Tensor)
    np.testing.assert_allclose((A * 2 - A).toarray().numpy(), S.toarray())
    C = gl.sparse.csr_matrix(torch.tensor((S * 1j).toarray()).to_sparse_csr())
    np.testing.assert_array_equal(C.conj().toarray().numpy(), (S * -1j).toarray())
