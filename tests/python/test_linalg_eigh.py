"""gpula.linalg.eigh / eigvalsh against numpy.linalg.eigh on fresh random inputs."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest
from conftest import to_np64

import gpula as gl

LINALG_DTYPES = ("float32", "float64", "complex64", "complex128")
TOL = {"float32": 2e-4, "complex64": 2e-4, "float64": 1e-11, "complex128": 1e-11}
REAL = {"float32": "float32", "float64": "float64", "complex64": "float32", "complex128": "float64"}


def hermitian(xp, rng, batch, n, dtype):
    m = rng.standard_normal((*batch, n, n))
    if dtype.startswith("complex"):
        m = m + 1j * rng.standard_normal((*batch, n, n))
    a = 0.5 * (m + np.swapaxes(m, -1, -2).conj())
    arr = xp.asarray(a, dtype)
    return arr, to_np64(arr)


def check_pairs(a64, w, v, tol):
    """w ascending, a v = v diag(w), v^H v = I (a64: the matrix as read)."""
    w, v = to_np64(w), to_np64(v)
    n = a64.shape[-1]
    scale = max(np.abs(a64).max(initial=0.0), 1.0)
    assert np.all(np.diff(w, axis=-1) >= -tol * scale)
    assert np.abs(a64 @ v - v * w[..., None, :]).max(initial=0.0) <= tol * scale * max(n, 1)
    eye = np.eye(n)
    assert np.abs(np.swapaxes(v, -1, -2).conj() @ v - eye).max(initial=0.0) <= tol * max(n, 1)


@pytest.mark.parametrize("dtype", LINALG_DTYPES)
@pytest.mark.parametrize("batch", [(), (3,), (2, 2)])
@pytest.mark.parametrize("lower", [True, False])
def test_eigh_matches_numpy(xp, rng, dtype, batch, lower):
    n = 9
    a, a64 = hermitian(xp, rng, batch, n, dtype)
    before = to_np64(a).copy()
    w, v = gl.linalg.eigh(a, lower=lower)
    xp.empty_like_check(w, REAL[dtype], (*batch, n))
    xp.empty_like_check(v, dtype, (*batch, n, n))
    w_ref = np.linalg.eigvalsh(a64, UPLO="L" if lower else "U")
    assert np.abs(to_np64(w) - w_ref).max() <= TOL[dtype] * np.abs(w_ref).max()
    check_pairs(a64, w, v, TOL[dtype])
    w2 = gl.linalg.eigvalsh(a, lower=lower)
    xp.empty_like_check(w2, REAL[dtype], (*batch, n))
    assert np.abs(to_np64(w2) - w_ref).max() <= TOL[dtype] * np.abs(w_ref).max()
    w3 = gl.linalg.eigh(a, lower, eigvals_only=True)
    assert np.abs(to_np64(w3) - w_ref).max() <= TOL[dtype] * np.abs(w_ref).max()
    np.testing.assert_array_equal(to_np64(a), before)


@pytest.mark.parametrize("lower", [True, False])
def test_only_one_triangle_is_read(numpy_xp, rng, lower):
    a, a64 = hermitian(numpy_xp, rng, (2,), 6, "complex128")
    poisoned = a.copy()
    rows, cols = np.triu_indices(6, 1) if lower else np.tril_indices(6, -1)
    poisoned[..., rows, cols] = np.nan  # SciPy's check_finite would refuse it: skip the scan
    w, v = gl.linalg.eigh(poisoned, lower=lower, check_finite=False)
    w_ref, _ = np.linalg.eigh(a64)
    np.testing.assert_allclose(w, w_ref, atol=1e-12)
    check_pairs(a64, w, v, 1e-11)


def test_transposed_and_strided_input(numpy_xp, rng):
    a, _ = hermitian(numpy_xp, rng, (3,), 8, "complex128")
    t = np.swapaxes(a, -1, -2)  # a strided view: conj(a) for Hermitian a
    w, v = gl.linalg.eigh(t)
    check_pairs(np.asarray(t), w, v, 1e-11)
    big = np.zeros((3, 16, 16), complex)
    big[:, ::2, ::2] = a
    w2, v2 = gl.linalg.eigh(big[:, ::2, ::2])
    np.testing.assert_allclose(w2, np.linalg.eigvalsh(a), atol=1e-12)
    check_pairs(a, w2, v2, 1e-11)


def test_edge_cases():
    w, v = gl.linalg.eigh(np.zeros((2, 0, 0)))
    assert w.shape == (2, 0) and v.shape == (2, 0, 0)
    assert gl.linalg.eigvalsh(np.zeros((0, 3, 3), np.complex64)).shape == (0, 3)
    assert gl.linalg.eigvalsh(np.zeros((0, 3, 3), np.complex64)).dtype == np.float32
    w, v = gl.linalg.eigh(np.array([[-3.0]]))
    assert w.tolist() == [-3.0] and abs(v[0, 0]) == 1.0
    a = np.eye(4)
    a[2, 1] = np.nan
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.eigvalsh\] a must not contain inf"):
        gl.linalg.eigvalsh(a)
    w, v = gl.linalg.eigh(a, check_finite=False)  # unchecked: NaN results, never a crash
    assert np.isnan(w).all()
    assert not np.isnan(gl.linalg.eigvalsh(a, lower=False, check_finite=False)).any()
    (w, v), info = gl.linalg.eigh(np.eye(3), check_info=False)
    assert info.shape == () and int(info) == 0
    w, info = gl.linalg.eigvalsh(np.eye(3)[None], check_info=False)
    assert info.shape == (1,)


def test_errors():
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.eigh\] expected a square matrix"):
        gl.linalg.eigh(np.zeros((3, 4)))
    with pytest.raises(gl.DTypeError, match=r"\[linalg.eigvalsh\] unsupported dtype float128"):
        gl.linalg.eigvalsh(np.zeros((3, 3), np.longdouble))
    with pytest.raises(gl.InvalidArgument, match="lower must be True or False"):
        gl.linalg.eigh(np.eye(2), lower="L")
    with pytest.raises(gl.InvalidArgument, match="eigvals_only must be True or False"):
        gl.linalg.eigh(np.eye(2), eigvals_only=1)


def test_docstring_examples():
    module = importlib.import_module("gpula.linalg._eigh")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0
    assert result.attempted > 0
