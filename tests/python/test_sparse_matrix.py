"""gl.sparse.csr_matrix / as_csr / from_dense: construction, validation, canonicalization and
round-trips, against scipy.sparse."""

import numpy as np
import pytest
import scipy.sparse as sp

import gpula as gl

from conftest import to_np64


def _random(rng, m, n, density=0.3, dtype="float64"):
    A = sp.random(m, n, density=density, format="csr", random_state=rng, dtype=np.float64)
    if dtype.startswith("complex"):
        A = A + 1j * A
    return A.astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("index", ["int32", "int64"])
def test_from_scipy_shares_and_round_trips(dtype, index):
    rng = np.random.default_rng(1)
    S = _random(rng, 13, 7, dtype=dtype)
    S.indices = S.indices.astype(index)
    S.indptr = S.indptr.astype(index)
    A = gl.sparse.as_csr(S, "test")
    assert A.shape == (13, 7) and A.dtype == dtype and A.nnz == S.nnz
    assert A.package == "numpy" and A.device == "cpu" and A.index_dtype == index
    assert np.shares_memory(A.data, S.data)
    np.testing.assert_array_equal(A.to_dense(), S.toarray())
    np.testing.assert_array_equal(A.to_scipy().toarray(), S.toarray())
    np.testing.assert_array_equal(A.to_native().toarray(), S.toarray())


@pytest.mark.parametrize("fmt", ["coo", "csc", "lil", "dok", "bsr"])
def test_other_scipy_formats(fmt):
    rng = np.random.default_rng(2)
    S = _random(rng, 9, 11)
    A = gl.sparse.as_csr(S.asformat(fmt), "test")
    np.testing.assert_array_equal(A.to_dense(), S.toarray())


def test_empty_shapes():
    for m, n in [(0, 5), (5, 0), (0, 0), (4, 3)]:
        A = gl.sparse.as_csr(sp.csr_matrix((m, n)), "test")
        assert A.shape == (m, n) and A.nnz == 0
        assert A.to_dense().shape == (m, n)


def test_canonicalizes_unsorted_and_duplicates():
    data = np.array([1.0, 2.0, 3.0, 4.0])
    indices = np.array([2, 0, 2, 1], dtype=np.int32)
    indptr = np.array([0, 3, 3, 4], dtype=np.int32)
    A = gl.sparse.csr_matrix((data, indices, indptr), shape=(3, 3))
    assert A.canonicalized
    np.testing.assert_array_equal(A.indices, [0, 2, 1])
    np.testing.assert_array_equal(A.data, [2.0, 4.0, 4.0])
    np.testing.assert_array_equal(A.indptr, [0, 2, 2, 3])
    np.testing.assert_array_equal(data, [1.0, 2.0, 3.0, 4.0])  # input untouched
    B = gl.sparse.csr_matrix((A.data, A.indices, A.indptr), shape=(3, 3))
    assert not B.canonicalized and B.data is A.data


@pytest.mark.parametrize(
    "indptr, indices, message",
    [
        ([1, 1, 2], [0, 1], r"\[t\] indptr\[0\] must be 0, got 1"),
        ([0, 2, 1], [0, 1], r"\[t\] indptr must be non-decreasing: indptr\[2\] = 1 < indptr\[1\] = 2"),
        ([0, 1, 1], [0, 1], r"\[t\] indptr\[2\] must equal nnz = 2, got 1"),
        ([0, 1, 2], [0, 5], r"\[t\] indices\[1\] = 5 is out of range \[0, 3\)"),
        ([0, 1, 2], [-1, 0], r"\[t\] indices\[0\] = -1 is out of range \[0, 3\)"),
        ([0, 2], [0, 1], r"\[t\] indptr must have length 3, got 2"),
        ([0, 1, 2], [0], r"\[t\] indices must have length nnz = 2, got 1"),
    ],
)
def test_validation_messages(indptr, indices, message):
    data = np.ones(2)
    with pytest.raises(ValueError, match=message):
        gl.sparse.csr_matrix((data, np.array(indices, np.int32), np.array(indptr, np.int32)), shape=(2, 3), op="t")


def test_type_errors():
    with pytest.raises(TypeError, match=r"\[myop\] expected a sparse matrix"):
        gl.sparse.as_csr(np.eye(3), "myop")
    with pytest.raises(TypeError, match=r"\[myop\] a \(data, indices, indptr\) tuple needs a shape"):
        gl.sparse.as_csr((np.ones(1), np.zeros(1, np.int32), np.array([0, 1], np.int32)), "myop")
    ip = np.array([0, 1], np.int32)
    with pytest.raises(TypeError, match=r"values must be float32, float64, complex64 or complex128 \(integers"):
        gl.sparse.csr_matrix((np.array(["x"]), np.zeros(1, np.int32), ip), shape=(1, 1))
    with pytest.raises(TypeError, match=r"indices must be int32 or int64, got float64"):
        gl.sparse.csr_matrix((np.ones(1), np.zeros(1), ip), shape=(1, 1))
    with pytest.raises(ValueError, match=r"shape= is required"):
        gl.sparse.csr_matrix((np.ones(1), np.zeros(1, np.int32), ip))


def test_mixed_index_dtypes_promote_to_int64():
    A = gl.sparse.csr_matrix((np.ones(1), np.zeros(1, np.int32), np.array([0, 1], np.int64)), shape=(1, 1))
    assert A.index_dtype == "int64" and A.indices.dtype == np.int64


def test_from_dense_matches_scipy():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 6)) * (rng.random((8, 6)) < 0.4)
    A = gl.sparse.from_dense(x)
    S = sp.csr_matrix(x)
    np.testing.assert_array_equal(A.indptr, S.indptr)
    np.testing.assert_array_equal(A.indices, S.indices)
    np.testing.assert_array_equal(A.data, S.data)


def test_torch_csr_and_coo(xp):
    if not xp.name.startswith("torch"):
        pytest.skip("torch only")
    import torch

    rng = np.random.default_rng(4)
    S = _random(rng, 10, 12)
    dense = torch.from_numpy(S.toarray())
    if xp.gpu:
        dense = dense.cuda()
    for T in (dense.to_sparse_csr(), dense.to_sparse()):
        A = gl.sparse.as_csr(T, "test")
        assert A.package == "torch" and A.device == ("cuda:0" if xp.gpu else "cpu")
        np.testing.assert_array_equal(to_np64(A.to_dense()), S.toarray())
        np.testing.assert_array_equal(to_np64(A.to_torch().to_dense()), S.toarray())
    # An uncoalesced COO tensor: duplicates are summed.
    idx = torch.tensor([[0, 0, 1], [1, 1, 0]])
    C = torch.sparse_coo_tensor(idx, torch.tensor([1.0, 2.0, 5.0], dtype=torch.float64), (2, 2))
    A = gl.sparse.as_csr(C.to(dense.device), "test")
    np.testing.assert_array_equal(to_np64(A.to_dense()), [[0, 3], [5, 0]])


def test_cupyx_round_trip(xp):
    if xp.name != "cupy":
        pytest.skip("cupy only")
    import cupyx.scipy.sparse as csp

    rng = np.random.default_rng(5)
    S = _random(rng, 10, 12)
    C = csp.csr_matrix(S)
    A = gl.sparse.as_csr(C, "test")
    assert A.package == "cupy" and A.device.startswith("cuda")
    assert A.data.data.ptr == C.data.data.ptr
    np.testing.assert_array_equal(A.to_cupy().get().toarray(), S.toarray())
    np.testing.assert_array_equal(gl.sparse.as_csr(csp.csc_matrix(S), "t").to_dense().get(), S.toarray())


def test_csr_matrix_of_torch_sparse_layouts(xp):
    """gl.sparse.csr_matrix(torch sparse) for every torch sparse layout, on the tensor's device
    (issue 17: the README's example); integer values promote to float64 as scipy."""
    if not xp.name.startswith("torch"):
        pytest.skip("torch only")
    import torch

    rng = np.random.default_rng(6)
    S = _random(rng, 9, 7)
    device = "cuda" if xp.gpu else "cpu"
    dense = torch.from_numpy(S.toarray()).to(device)
    layouts = {
        "csr": dense.to_sparse_csr(),
        "coo": dense.to_sparse(),
        "csc": dense.to_sparse_csc(),
        "bsr": dense.to_sparse_bsr((1, 1)),
    }
    x = rng.standard_normal(7)
    for name, T in layouts.items():
        A = gl.sparse.csr_matrix(T)
        assert A.package == "torch" and A.device.startswith(device), name
        assert A.shape == (9, 7) and A.nnz == S.nnz and A.dtype == "float64", name
        np.testing.assert_array_equal(to_np64(A.indptr), S.indptr, err_msg=name)
        np.testing.assert_array_equal(to_np64(A.indices), S.indices, err_msg=name)
        np.testing.assert_array_equal(to_np64(A.data), S.data, err_msg=name)
        y = A @ torch.from_numpy(x).to(device)
        assert isinstance(y, torch.Tensor) and y.device.type == device
        np.testing.assert_allclose(to_np64(y), S @ x, rtol=1e-12)
    Ti = torch.from_numpy(np.array([[1, 0, 2], [0, 3, 0]])).to(device).to_sparse_csr()
    Ai = gl.sparse.csr_matrix(Ti)
    assert Ai.dtype == "float64" and Ti.dtype == torch.int64
    np.testing.assert_array_equal(to_np64(Ai.to_dense()), [[1, 0, 2], [0, 3, 0]])


def test_csr_matrix_refuses_torch_sparse_with_invalid_pattern():
    """torch builds sparse tensors without checking them (check_invariants=False): gpula checks."""
    torch = pytest.importorskip("torch")
    vals = torch.tensor([4.0, 1, 4, 4], dtype=torch.float64)
    bad = {
        "indices\\[1\\] = 100000000 is out of range \\[0, 3\\)": ([0, 2, 3, 4], [0, 10**8, 1, 2]),
        "indices\\[0\\] = -1 is out of range": ([0, 2, 3, 4], [-1, 1, 1, 2]),
        "indptr must be non-decreasing": ([0, 3, 1, 4], [0, 1, 1, 2]),
        "indptr\\[3\\] must equal nnz = 4, got 9": ([0, 2, 3, 9], [0, 1, 1, 2]),
    }
    for message, (crow, col) in bad.items():
        T = torch.sparse_csr_tensor(
            torch.tensor(crow), torch.tensor(col), vals, size=(3, 3), check_invariants=False
        )
        with pytest.raises(gl.InvalidArgument, match=r"^\[sparse\.csr_matrix\] " + message):
            gl.sparse.csr_matrix(T)
