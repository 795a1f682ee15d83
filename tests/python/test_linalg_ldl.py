"""gpula.linalg.ldl against scipy.linalg.ldl and gpula.linalg.eigh(a, b) against
scipy.linalg.eigh(a, b) (float64/complex128 references) on fresh random inputs: dtypes, both
triangles, Hermitian and complex symmetric, batches, empty and singular input, packages, errors."""

from __future__ import annotations

import doctest
import importlib
import warnings

import numpy as np
import pytest
import scipy.linalg as sl
from conftest import to_np64

import gpula as gl

DTYPES = ("float32", "float64", "complex64", "complex128")
TOL = {"float32": 2e-4, "complex64": 2e-4, "float64": 1e-11, "complex128": 1e-11}


def sym(rng, shape, dtype, herm=True):
    x = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        x = x + 1j * rng.standard_normal(shape)
    xt = np.swapaxes(x, -1, -2)
    return (x + (np.conj(xt) if herm else xt)) / 2


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("hermitian", [True, False])
@pytest.mark.parametrize("batch", [(), (3,)])
def test_ldl_matches_scipy(xp, rng, dtype, lower, hermitian, batch):
    n = 9
    a64 = sym(rng, (*batch, n, n), dtype, hermitian)
    a = xp.asarray(a64, dtype)
    a64 = to_np64(a)
    lu, d, perm = gl.linalg.ldl(a, lower=lower, hermitian=hermitian)
    xp.empty_like_check(lu, dtype, (*batch, n, n))
    xp.empty_like_check(d, dtype, (*batch, n, n))
    xp.empty_like_check(perm, "int64", (*batch, n))
    lu, d, perm = to_np64(lu), to_np64(d), to_np64(perm).astype(np.int64)
    for idx in np.ndindex(*batch):
        rl, rd, rp = sl.ldl(a64[idx], lower=lower, hermitian=hermitian)
        np.testing.assert_array_equal(perm[idx], rp)
        scale = np.abs(a64[idx]).max()
        assert np.abs(lu[idx] - rl).max() <= TOL[dtype] * 100 * max(np.abs(rl).max(), 1)
        assert np.abs(d[idx] - rd).max() <= TOL[dtype] * 100 * scale
        t = np.conj(lu[idx]).T if hermitian else lu[idx].T
        assert np.abs(lu[idx] @ d[idx] @ t - a64[idx]).max() <= TOL[dtype] * 10 * n * scale
        tri = lu[idx][perm[idx]]
        assert np.allclose(tri, np.tril(tri) if lower else np.triu(tri))


def test_ldl_scipy_example_singular_empty_and_triangle():
    a = np.array([[2, -1, 3], [0, 2, 0], [0, 0, 1]])
    lu, d, perm = gl.linalg.ldl(a, lower=0 == 1)
    rl, rd, rp = sl.ldl(a, lower=False)
    np.testing.assert_allclose(lu, rl)
    np.testing.assert_allclose(d, rd)
    np.testing.assert_array_equal(perm, rp)
    lu, d, perm = gl.linalg.ldl(np.zeros((3, 3)))  # singular: factored, no error (scipy's rule)
    np.testing.assert_array_equal(d, np.zeros((3, 3)))
    lu, d, perm = gl.linalg.ldl(np.zeros((0, 0)))
    assert lu.shape == d.shape == (0, 0) and perm.shape == (0,)
    ill = np.diag([1.0, 1e-14, -1e14])
    lu, d, _ = gl.linalg.ldl(ill)
    np.testing.assert_allclose(lu @ d @ lu.T, ill, atol=1e-30)


def test_ldl_warnings_and_errors():
    c = np.array([[1.0 + 1j, 2.0], [2.0, 3.0]])
    with pytest.warns(np.exceptions.ComplexWarning, match="imaginary parts of the diagonal"):
        gl.linalg.ldl(c)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gl.linalg.ldl(c, hermitian=False)
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.ldl\] A: expected a square"):
        gl.linalg.ldl(np.zeros((2, 3)))
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.ldl\] A must not contain infs"):
        gl.linalg.ldl(np.array([[np.inf, 0.0], [0.0, 1.0]]))
    with pytest.raises(gl.InvalidArgument, match="lower must be True or False"):
        gl.linalg.ldl(np.eye(2), lower="yes")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("type_", [1, 2, 3])
@pytest.mark.parametrize("lower", [True, False])
def test_eigh_generalized_matches_scipy(xp, rng, dtype, type_, lower):
    n = 8
    a64 = sym(rng, (3, n, n), dtype)
    m = sym(rng, (3, n, n), dtype)
    b64 = m @ np.conj(np.swapaxes(m, -1, -2)) + n * np.eye(n)
    a, b = xp.asarray(a64, dtype), xp.asarray(b64, dtype)
    a64, b64 = to_np64(a), to_np64(b)
    w, v = gl.linalg.eigh(a, b, type=type_, lower=lower)
    real = "float32" if dtype in ("float32", "complex64") else "float64"
    xp.empty_like_check(w, real, (3, n))
    xp.empty_like_check(v, dtype, (3, n, n))
    w, v = to_np64(w), to_np64(v)
    for k in range(3):
        rw = sl.eigh(a64[k], b64[k], type=type_, lower=lower, eigvals_only=True)
        assert np.abs(w[k] - rw).max() <= TOL[dtype] * 10 * max(np.abs(rw).max(), 1)
        lhs = {1: a64[k] @ v[k], 2: a64[k] @ b64[k] @ v[k], 3: b64[k] @ a64[k] @ v[k]}[type_]
        rhs = b64[k] @ v[k] if type_ == 1 else v[k]
        assert np.abs(lhs - rhs * w[k]).max() <= TOL[dtype] * 10 * n * np.abs(lhs).max()
        if type_ != 3:
            g = np.conj(v[k]).T @ b64[k] @ v[k]
            assert np.abs(g - np.eye(n)).max() <= TOL[dtype] * 10 * n
    wo = gl.linalg.eigh(a, b=b, type=type_, lower=lower, eigvals_only=True)
    assert np.abs(to_np64(wo) - w).max() <= TOL[dtype] * 10 * max(np.abs(w).max(), 1)


def test_eigh_generalized_broadcast_empty_and_errors(rng):
    a = sym(rng, (2, 3, 5, 5), "float64")
    b = np.eye(5) * 2.0
    w = gl.linalg.eigh(a, b, eigvals_only=True)  # b broadcasts
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a) / 2, atol=1e-13)
    w, v = gl.linalg.eigh(np.zeros((0, 3, 3)), np.eye(3))
    assert w.shape == (0, 3) and v.shape == (0, 3, 3)
    a32 = a[0, 0].astype(np.float32)
    assert gl.linalg.eigh(a32, b, eigvals_only=True).dtype == np.float64  # promoted
    bad = np.eye(5)
    bad[2, 2] = -1.0
    with pytest.raises(gl.NotPositiveDefinite, match="b is not positive definite: leading minor "
                                                     "of order 3"):
        gl.linalg.eigh(a[0, 0], bad)
    (w, v), info = gl.linalg.eigh(a[0, 0], bad, check_info=False)
    assert int(info) == 5 + 3
    with pytest.raises(gl.InvalidArgument, match="type must be 1, 2 or 3"):
        gl.linalg.eigh(a[0, 0], b, type=4)
    with pytest.raises(gl.InvalidArgument, match="k does not combine with b"):
        gl.linalg.eigh(a[0, 0], b, k=2)
    with pytest.raises(gl.InvalidArgument, match="expected matrices of one order"):
        gl.linalg.eigh(a[0, 0], np.eye(4))
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.eigh\] b must not contain infs"):
        gl.linalg.eigh(a[0, 0], np.where(b > 0, np.inf, 0.0))
    with pytest.raises(gl.DTypeError, match=r"\[linalg.eigh\] b must be an array"):
        gl.linalg.eigh(a[0, 0], "L")  # numpy's UPLO is not a matrix
    # gpula's positional form before b: eigh(a, lower, eigvals_only).
    np.testing.assert_allclose(gl.linalg.eigh(a[0, 0], False, True),
                               np.linalg.eigvalsh(a[0, 0], UPLO="U"), atol=1e-13)
    np.testing.assert_allclose(gl.linalg.eigh(a[0, 0], np.bool_(True), eigvals_only=True),
                               np.linalg.eigvalsh(a[0, 0]), atol=1e-13)


@pytest.mark.parametrize("module", ["gpula.linalg._ldl"])
def test_docstring_examples(module):
    result = doctest.testmod(importlib.import_module(module),
                             optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0 and result.attempted > 0
