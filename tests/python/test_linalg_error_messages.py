"""gpula.linalg's errors on hostile input: typed, "[op]" first, naming the argument, and the edge
shapes NumPy/SciPy answer with results (issue 17; the hostile suite's linalg cases)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.linalg as sl

import gpula as gl

L = gl.linalg


def _giant(n: int = 4) -> np.ndarray:
    """A zero-stride batch 2**40 long: any result is terabytes."""
    return np.broadcast_to(np.eye(n), (2**40, n, n))


def test_singular_and_not_positive_definite_name_a():
    sing = np.diag([1.0, 2.0, 0.0, 4.0])
    with pytest.raises(gl.SingularMatrix, match=r"^\[linalg.solve\] a is singular: U\[2,2\]") as e:
        L.solve(sing, np.ones(4))
    assert e.value.index == 2
    with pytest.raises(gl.SingularMatrix, match=r"^\[linalg.inv\] a is singular"):
        L.inv(sing)
    with pytest.raises(gl.NotPositiveDefinite,
                       match=r"^\[linalg.cholesky\] a is not positive definite: leading minor "
                             r"of order 3"):
        L.cholesky(np.diag([1.0, 2.0, -1.0]))
    with pytest.raises(gl.NotPositiveDefinite, match=r"^\[linalg.solve\] a is not positive"):
        L.solve(np.diag([1.0, -2.0]), np.ones(2), assume_a="pos")


@pytest.mark.parametrize("call, op", [
    (lambda a: L.solve(a, np.ones(4)), "linalg.solve"),
    (L.cholesky, "linalg.cholesky"),
    (L.inv, "linalg.inv"),
    (L.det, "linalg.det"),
    (L.lu_factor, "linalg.lu_factor"),
    (L.qr, "linalg.qr"),
    (L.svdvals, "linalg.svdvals"),
    (L.eigvalsh, "linalg.eigvalsh"),
    (L.eig, "linalg.eig"),
    (lambda a: L.svd(a, k=1), "linalg.svd"),
    (lambda a: L.eigh(a, k=1), "linalg.eigh"),
])
def test_giant_batch_is_out_of_memory_naming_op_and_a(call, op):
    a = _giant()
    with pytest.raises(gl.OutOfMemory) as e:
        call(a)
    assert isinstance(e.value, MemoryError)
    msg = str(e.value)
    assert msg.startswith(f"[{op}] a: out of "), msg
    assert "[tensor.empty]" not in msg


def test_svdvals_and_eigvalsh_messages_name_their_own_op():
    with pytest.raises(gl.InvalidArgument, match=r"^\[linalg.svdvals\] .*for a, got shape \(\)"):
        L.svdvals(np.float64(1.0))
    with pytest.raises(gl.InvalidArgument, match=r"^\[linalg.eigvalsh\] .*square matrix for a"):
        L.eigvalsh(np.ones((0, 4)))
    # check_info=False still returns (values, info).
    s, info = L.svdvals(np.eye(3), check_info=False)
    np.testing.assert_allclose(s, np.ones(3))
    assert int(info) == 0
    w, info = L.eigvalsh(np.diag([2.0, 1.0]), check_info=False)
    np.testing.assert_allclose(w, [1.0, 2.0])
    assert int(info) == 0


@pytest.mark.skipif(gl.devices()["cuda_compiled"], reason="the CUDA backend is built in")
def test_not_compiled_device_names_op_and_device():
    for f, op in ((L.svdvals, "linalg.svdvals"), (L.eigvalsh, "linalg.eigvalsh"),
                  (L.inv, "linalg.inv")):
        with pytest.raises(gl.NotCompiled,
                           match=rf"^\[{op}\] device: gpula was built without its cuda backend"):
            f(np.eye(2), device="cuda")


def test_cho_solve_scalar_c_names_c():
    for b in (np.ones(4), np.ones((4, 2))):
        with pytest.raises(gl.InvalidArgument, match=r"^\[linalg.cho_solve\] .*for c"):
            L.cho_solve(np.float64(2.0), b)


def test_lu_solve_pivot_errors_name_piv():
    lu, piv = sl.lu_factor(np.eye(4) + np.ones((4, 4)))
    bad = piv.copy()
    bad[1] = 7
    with pytest.raises(gl.InvalidArgument, match=r"^\[linalg.lu_solve\] piv: 1 pivots are outside"):
        L.lu_solve((lu, bad), np.ones(4))
    with pytest.raises(gl.InvalidArgument, match=r"^\[linalg.lu_solve\] piv has shape \(3,\)"):
        L.lu_solve((lu, piv[:3]), np.ones(4))


def test_lu_factor_of_a_singular_matrix_warns_and_returns_scipys_factors():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((5, 5))
    a[:, 2] = 0.0  # a zero column: U[2,2] is exactly zero
    before = a.copy()
    with pytest.warns(RuntimeWarning, match=r"^\[linalg.lu_factor\] a is singular"):
        lu, piv = L.lu_factor(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref_lu, ref_piv = sl.lu_factor(a)
    np.testing.assert_allclose(lu, ref_lu, atol=1e-12)
    np.testing.assert_array_equal(piv, ref_piv)
    np.testing.assert_array_equal(a, before)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # check_info=False: info, no warning
        (lu2, _), info = L.lu_factor(a, check_info=False)
    assert int(info) == 3


def test_lstsq_empty_b_columns_is_numpys_result_without_lapack_text(capfd):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((6, 4))
    b = np.empty((6, 0))
    x, res, rank, s = L.lstsq(a, b)
    rx, rres, rrank, rs = np.linalg.lstsq(a, b)
    assert x.shape == rx.shape == (4, 0)
    assert res.shape == rres.shape
    assert int(rank) == int(rrank) == 4
    np.testing.assert_allclose(s, rs)
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_lstsq_torch_a_with_numpy_b():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    a = rng.standard_normal((6, 4))
    for b in (rng.standard_normal(6), rng.standard_normal((6, 2))):
        x, res, rank, s = L.lstsq(torch.from_numpy(a), b)
        rx, rres, rrank, rs = np.linalg.lstsq(a, b)
        assert isinstance(x, torch.Tensor) and isinstance(res, torch.Tensor)
        np.testing.assert_allclose(x.numpy(), rx, rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(res.numpy(), rres, rtol=1e-8)
        assert int(rank) == int(rrank)


def test_topk_on_an_empty_batch_is_empty_like_numpy():
    a = np.empty((0, 4, 4))
    u, s, vh = L.svd(a, k=1)
    assert (u.shape, s.shape, vh.shape) == ((0, 4, 1), (0, 1), (0, 1, 4))
    assert s.dtype == np.float64 and u.dtype == np.float64
    w, v = L.eigh(a, k=1)
    assert (w.shape, v.shape) == ((0, 1), (0, 4, 1))
    assert L.eigvalsh(a, k=1).shape == (0, 1)
    with pytest.raises(gl.InvalidArgument, match=r"^\[linalg.eigh\] k: .*a of shape \(0, 0\)"):
        L.eigh(np.empty((0, 0)), k=1)
