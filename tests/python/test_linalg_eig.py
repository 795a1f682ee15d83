"""gpula.linalg.eig / eigvals against numpy.linalg.eig (float64/complex128 reference) on fresh
random inputs: residuals, unit columns and eigenvalues matched order-free."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest
from conftest import to_np64

import gpula as gl

LINALG_DTYPES = ("float32", "float64", "complex64", "complex128")
TOL = {"float32": 2e-4, "complex64": 2e-4, "float64": 1e-11, "complex128": 1e-11}
COMPLEX = {
    "float32": "complex64",
    "float64": "complex128",
    "complex64": "complex64",
    "complex128": "complex128",
}


def general(xp, rng, batch, n, dtype):
    return xp.random(rng, (*batch, n, n), dtype)


def match(w, ref):
    """Largest distance after greedily matching each reference eigenvalue to a computed one."""
    w, ref = to_np64(w).reshape(-1, w.shape[-1]), to_np64(ref).reshape(-1, ref.shape[-1])
    worst = 0.0
    for wi, ri in zip(w, ref):
        left = list(wi)
        for r in ri:
            k = int(np.argmin(np.abs(np.array(left) - r)))
            worst = max(worst, abs(left.pop(k) - r))
    return worst


def check_pairs(a64, w, v, tol):
    """a v = v diag(w) and unit columns (a64: the matrix as read)."""
    w, v = to_np64(w), to_np64(v)
    n = a64.shape[-1]
    scale = max(np.abs(a64).sum(axis=-1).max(initial=0.0), 1.0)
    assert np.abs(a64 @ v - v * w[..., None, :]).max(initial=0.0) <= tol * scale * max(n, 1)
    assert np.abs(np.linalg.norm(v, axis=-2) - 1.0).max(initial=0.0) <= tol * max(n, 1)


def check_conjugate_pairs(w, v=None):
    """Real input: each non-real w[j] (positive imaginary part) is followed by its conjugate,
    exactly, and so is its eigenvector."""
    w = to_np64(w).reshape(-1, w.shape[-1])
    vv = None if v is None else to_np64(v).reshape(-1, *v.shape[-2:])
    for b, wb in enumerate(w):
        j = 0
        while j < len(wb):
            if wb[j].imag != 0:
                assert wb[j].imag > 0 and j + 1 < len(wb) and wb[j + 1] == np.conj(wb[j])
                if vv is not None:
                    np.testing.assert_array_equal(vv[b][:, j + 1], np.conj(vv[b][:, j]))
                j += 1
            j += 1


@pytest.mark.parametrize("dtype", LINALG_DTYPES)
@pytest.mark.parametrize("batch", [(), (3,), (2, 2)])
@pytest.mark.parametrize("n", [1, 6, 40])
def test_eig_matches_numpy(xp, rng, dtype, batch, n):
    a, a64 = general(xp, rng, batch, n, dtype)
    before = to_np64(a).copy()
    w, v = gl.linalg.eig(a)
    w_ref = np.linalg.eigvals(a64)
    xp.empty_like_check(w, COMPLEX[dtype], (*batch, n))
    xp.empty_like_check(v, COMPLEX[dtype], (*batch, n, n))
    scale = max(np.abs(a64).sum(axis=-1).max(), 1.0)
    assert match(to_np64(w), w_ref) <= 10 * TOL[dtype] * scale
    check_pairs(a64, w, v, TOL[dtype])
    if not dtype.startswith("complex"):
        check_conjugate_pairs(w, v)
    w2 = gl.linalg.eigvals(a)
    xp.empty_like_check(w2, COMPLEX[dtype], (*batch, n))
    assert match(to_np64(w2), w_ref) <= 10 * TOL[dtype] * scale
    np.testing.assert_array_equal(to_np64(a), before)


def test_real_input_gives_conjugate_pairs(numpy_xp, rng):
    a, a64 = general(numpy_xp, rng, (5,), 10, "float64")
    w, v = gl.linalg.eig(a)
    assert (np.abs(w.imag) > 0).any()
    check_conjugate_pairs(w, v)
    check_pairs(a64, w, v, 1e-11)


def test_known_spectra():
    w, v = gl.linalg.eig(np.array([[0.0, -1.0], [1.0, 0.0]]))
    np.testing.assert_allclose(w, [1j, -1j], atol=1e-15)
    np.testing.assert_allclose(np.abs(v), np.full((2, 2), 2**-0.5), atol=1e-15)
    t = np.triu(np.arange(1.0, 17.0).reshape(4, 4))
    np.testing.assert_allclose(np.sort(gl.linalg.eigvals(t).real), [1.0, 6.0, 11.0, 16.0])
    assert gl.linalg.eigvals(np.diag([3.0, -1.0])).tolist() == [3.0, -1.0]
    jordan = 2.0 * np.eye(4) + np.eye(4, k=1)  # defective: finite results only
    w, v = gl.linalg.eig(jordan)
    assert np.isfinite(w).all() and np.isfinite(v).all()
    assert np.abs(w - 2.0).max() < 1e-2


def test_transposed_and_strided_input(numpy_xp, rng):
    a, _ = general(numpy_xp, rng, (3,), 8, "complex128")
    t = np.swapaxes(a, -1, -2)
    w, v = gl.linalg.eig(t)
    check_pairs(np.asarray(t), w, v, 1e-11)
    assert match(w, np.linalg.eigvals(t)) <= 1e-10
    big = np.zeros((3, 16, 16))
    big[:, ::2, ::2] = a.real
    w2, v2 = gl.linalg.eig(big[:, ::2, ::2])
    check_pairs(a.real, w2, v2, 1e-11)
    check_conjugate_pairs(w2, v2)


def test_edge_cases():
    w, v = gl.linalg.eig(np.zeros((2, 0, 0)))
    assert w.shape == (2, 0) and v.shape == (2, 0, 0) and w.dtype == np.complex128
    e = gl.linalg.eigvals(np.zeros((0, 3, 3), np.float32))
    assert e.shape == (0, 3) and e.dtype == np.complex64
    w, v = gl.linalg.eig(np.array([[-3.0]]))
    assert w.tolist() == [-3.0] and abs(v[0, 0]) == 1.0
    a = np.stack([np.eye(4), np.eye(4)])
    a[1, 2, 1] = np.nan
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.eig\] a must not contain infs"):
        gl.linalg.eig(a)
    w, v = gl.linalg.eig(a, check_finite=False)  # unchecked: NaN results, never a crash
    assert np.isnan(w[1]).all() and np.isnan(v[1]).all()
    np.testing.assert_array_equal(w[0], np.ones(4))
    a[1, 2, 1] = np.inf
    assert np.isnan(gl.linalg.eigvals(a, check_finite=False)[1]).all()
    (w, v), info = gl.linalg.eig(np.eye(3), check_info=False)
    assert info.shape == () and int(info) == 0
    w, info = gl.linalg.eigvals(np.eye(3)[None], check_info=False)
    assert info.shape == (1,) and info.dtype == np.int32


@pytest.mark.parametrize("dtype", LINALG_DTYPES)
def test_results_are_always_complex(xp, rng, dtype):
    """numpy.linalg.eig from NumPy 2.5 on, torch.linalg.eig and the array API: complex w and v
    whatever the values, also for a real input whose spectrum is all real."""
    sym = rng.standard_normal((3, 7, 7))
    sym = sym + np.swapaxes(sym, -1, -2)
    a = xp.asarray(sym.astype(dtype))
    w, v = gl.linalg.eig(a)
    xp.empty_like_check(w, COMPLEX[dtype], (3, 7))
    xp.empty_like_check(v, COMPLEX[dtype], (3, 7, 7))
    check_pairs(sym.astype(np.complex128), w, v, TOL[dtype])
    assert np.abs(to_np64(w).imag).max() == 0.0  # LAPACK's real eigenvalues stay exactly real
    xp.empty_like_check(gl.linalg.eigvals(a), COMPLEX[dtype], (3, 7))
    rot = sym.copy()
    rot[2, :2, :2] = [[0.0, -1.0], [1.0, 0.0]]  # not symmetric: a complex pair in item 2
    rot[2, :2, 2:] = rot[2, 2:, :2] = 0.0
    w2 = gl.linalg.eigvals(xp.asarray(rot.astype(dtype)))
    xp.empty_like_check(w2, COMPLEX[dtype], (3, 7))
    assert match(w2, np.linalg.eigvals(rot)) <= TOL[dtype] * 70


def test_errors():
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.eig\] expected a square matrix"):
        gl.linalg.eig(np.zeros((3, 4)))
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.eigvals\] expected a square matrix"):
        gl.linalg.eigvals(np.zeros((2, 3, 4)))
    with pytest.raises(gl.DTypeError, match=r"\[linalg.eigvals\] unsupported dtype float128"):
        gl.linalg.eigvals(np.zeros((3, 3), np.longdouble))
    with pytest.raises(gl.InvalidArgument, match="check_info must be True or False"):
        gl.linalg.eig(np.eye(2), check_info=1)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", LINALG_DTYPES)
def test_host_data_on_the_gpu(rng, dtype):
    a = rng.standard_normal((5, 40, 40)).astype(dtype)
    w, v = gl.linalg.eig(a, device="cuda")
    a64 = a.astype(np.complex128)
    assert isinstance(w, np.ndarray) and w.dtype == COMPLEX[dtype]
    check_pairs(a64, w, v, TOL[dtype])
    scale = np.abs(a64).sum(axis=-1).max()
    assert match(to_np64(w), np.linalg.eigvals(a64)) <= 10 * TOL[dtype] * scale


def test_docstring_examples():
    module = importlib.import_module("gpula.linalg._eig")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0
    assert result.attempted > 0
