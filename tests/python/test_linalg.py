"""gpula.linalg against NumPy/SciPy float64 on fresh random inputs."""

from __future__ import annotations

import doctest
import logging
import warnings

import numpy as np
import pytest
import scipy.linalg as sl
from conftest import rel_err, to_np64

import gpula as gl

LINALG_DTYPES = ("float32", "float64", "complex64", "complex128")
# Solves lose about cond(a) ~ 10-100 times the element accuracy on these inputs.
TOL = {"float32": 2e-4, "complex64": 2e-4, "float64": 1e-11, "complex128": 1e-11}


def well_conditioned(xp, rng, batch, n, dtype):
    """A general matrix far from singular: random plus n on the diagonal."""
    _a, a64 = xp.random(rng, (*batch, n, n), dtype)
    shift = n * np.eye(n)
    return xp.asarray(a64 + shift, dtype), to_np64(xp.asarray(a64 + shift, dtype))


def hpd(xp, rng, batch, n, dtype):
    """A Hermitian positive definite matrix: m m^H + n I."""
    m = rng.standard_normal((*batch, n, n))
    if dtype.startswith("complex"):
        m = m + 1j * rng.standard_normal((*batch, n, n))
    a = m @ np.swapaxes(m, -1, -2).conj() + n * np.eye(n)
    arr = xp.asarray(a, dtype)
    return arr, to_np64(arr)


def copy_of(x):
    return to_np64(x).copy()


# --------------------------------------------------------------------------------------------
# Numerics


@pytest.mark.parametrize("dtype", LINALG_DTYPES)
@pytest.mark.parametrize("batch", [(), (3,), (2, 2)])
@pytest.mark.parametrize("lower", [True, False])
def test_cholesky_and_cho_solve(xp, rng, dtype, batch, lower):
    n = 7
    a, a64 = hpd(xp, rng, batch, n, dtype)
    before = copy_of(a)
    c = gl.linalg.cholesky(a, lower=lower)
    xp.empty_like_check(c, dtype, (*batch, n, n))
    ref = np.linalg.cholesky(a64)
    if not lower:
        ref = np.swapaxes(ref, -1, -2).conj()
    assert rel_err(c, ref) < TOL[dtype]
    b, b64 = xp.random(rng, (*batch, n, 3), dtype)
    x = gl.linalg.cho_solve(c, b, lower=lower)
    xp.empty_like_check(x, dtype, (*batch, n, 3))
    assert rel_err(x, np.linalg.solve(a64, b64)) < TOL[dtype]
    np.testing.assert_array_equal(to_np64(a), before)


@pytest.mark.parametrize("dtype", LINALG_DTYPES)
@pytest.mark.parametrize("batch", [(), (4,)])
def test_lu_factor_matches_scipy(xp, rng, dtype, batch):
    n = 9
    a, a64 = well_conditioned(xp, rng, batch, n, dtype)
    lu, piv = gl.linalg.lu_factor(a)
    xp.empty_like_check(lu, dtype, (*batch, n, n))
    xp.empty_like_check(piv, "int32", (*batch, n))
    # Column-major per matrix, as SciPy returns it: element strides (..., 1, n).
    strides = lu.stride() if callable(getattr(lu, "stride", None)) else tuple(
        s // lu.itemsize for s in lu.strides)
    assert tuple(strides[-2:]) == (1, n)
    for i in np.ndindex(*batch):
        ref_lu, ref_piv = sl.lu_factor(a64[i])
        np.testing.assert_array_equal(to_np64(piv)[i], ref_piv)
        assert rel_err(to_np64(lu)[i], ref_lu) < TOL[dtype]
    b, b64 = xp.random(rng, (*batch, n, 2), dtype)
    x = gl.linalg.lu_solve((lu, piv), b)
    xp.empty_like_check(x, dtype, (*batch, n, 2))
    assert rel_err(x, np.linalg.solve(a64, b64)) < TOL[dtype]


def test_lu_solve_takes_scipy_factors(rng):
    a = rng.standard_normal((6, 6)) + 6 * np.eye(6)
    b = rng.standard_normal(6)
    x = gl.linalg.lu_solve(sl.lu_factor(a), b)
    assert rel_err(x, np.linalg.solve(a, b)) < 1e-12


@pytest.mark.parametrize("dtype", LINALG_DTYPES)
@pytest.mark.parametrize("assume_a", ["gen", "pos", "sym"])
@pytest.mark.parametrize("bshape", ["vector", "matrix", "broadcast"])
def test_solve(xp, rng, dtype, assume_a, bshape):
    n, batch = 8, (3,)
    if assume_a == "pos":
        a, a64 = hpd(xp, rng, batch, n, dtype)
    else:
        a, a64 = well_conditioned(xp, rng, batch, n, dtype)
        if assume_a == "sym":  # symmetric (complex symmetric for complex types)
            s = a64 + np.swapaxes(a64, -1, -2)
            a, a64 = xp.asarray(s, dtype), to_np64(xp.asarray(s, dtype))
    before = copy_of(a)
    if bshape == "vector":
        b, b64 = xp.random(rng, (n,), dtype)
        ref = np.linalg.solve(a64, b64[None, :, None])[..., 0]
        shape = (*batch, n)
    elif bshape == "matrix":
        b, b64 = xp.random(rng, (*batch, n, 4), dtype)
        ref = np.linalg.solve(a64, b64)
        shape = (*batch, n, 4)
    else:  # b without the batch dimension broadcasts
        b, b64 = xp.random(rng, (n, 2), dtype)
        ref = np.linalg.solve(a64, b64)
        shape = (*batch, n, 2)
    x = gl.linalg.solve(a, b, assume_a=assume_a)
    xp.empty_like_check(x, dtype, shape)
    assert rel_err(x, ref) < TOL[dtype]
    np.testing.assert_array_equal(to_np64(a), before)


@pytest.mark.parametrize("lower", [True, False])
def test_solve_reads_one_triangle(rng, lower):
    n = 6
    a = rng.standard_normal((n, n))
    a = a @ a.T + n * np.eye(n)
    garbage = a.copy()
    if lower:
        garbage[np.triu_indices(n, 1)] = 1e6
    else:
        garbage[np.tril_indices(n, -1)] = 1e6
    b = rng.standard_normal(n)
    for assume_a in ("pos", "sym"):
        x = gl.linalg.solve(garbage, b, assume_a=assume_a, lower=lower)
        assert rel_err(x, np.linalg.solve(a, b)) < 1e-11


@pytest.mark.parametrize("refine", [None, "auto", "rbt", "f32", "tf32", "f16", "bf16"])
def test_solve_refine_values(rng, refine):
    a = rng.standard_normal((5, 5)) + 5 * np.eye(5)
    b = rng.standard_normal((5, 2))
    x = gl.linalg.solve(a, b, refine=refine)
    assert rel_err(x, np.linalg.solve(a, b)) < 1e-11


@pytest.mark.parametrize("dtype", LINALG_DTYPES)
def test_inv_det_slogdet(xp, rng, dtype):
    n, batch = 6, (2, 3)
    a, a64 = well_conditioned(xp, rng, batch, n, dtype)
    before = copy_of(a)
    ai = gl.linalg.inv(a)
    xp.empty_like_check(ai, dtype, (*batch, n, n))
    assert rel_err(ai, np.linalg.inv(a64)) < TOL[dtype]
    d = gl.linalg.det(a)
    xp.empty_like_check(d, dtype, batch)
    assert rel_err(d, np.linalg.det(a64)) < TOL[dtype]
    sign, logabsdet = gl.linalg.slogdet(a)
    ref_sign, ref_log = np.linalg.slogdet(a64)
    xp.empty_like_check(sign, dtype, batch)
    real = "float32" if dtype in ("float32", "complex64") else "float64"
    xp.empty_like_check(logabsdet, real, batch)
    assert rel_err(sign, ref_sign) < TOL[dtype]
    assert rel_err(logabsdet, ref_log) < TOL[dtype]
    np.testing.assert_array_equal(to_np64(a), before)


@pytest.mark.parametrize("dtype", LINALG_DTYPES)
def test_transposed_inputs(xp, rng, dtype):
    """Non-contiguous (transposed) operands are read in place, as their values say."""
    n = 10
    a, a64 = well_conditioned(xp, rng, (2,), n, dtype)
    at, at64 = xp.transpose(a), np.swapaxes(a64, -1, -2)
    b, b64 = xp.random(rng, (2, 3, n), dtype)
    bt, bt64 = xp.transpose(b), np.swapaxes(b64, -1, -2)
    assert rel_err(gl.linalg.solve(at, bt), np.linalg.solve(at64, bt64)) < TOL[dtype]
    assert rel_err(gl.linalg.inv(at), np.linalg.inv(at64)) < TOL[dtype]
    assert rel_err(gl.linalg.det(at), np.linalg.det(at64)) < TOL[dtype]
    lu, piv = gl.linalg.lu_factor(at)
    assert rel_err(gl.linalg.lu_solve((lu, piv), bt), np.linalg.solve(at64, bt64)) < TOL[dtype]
    s, s64 = hpd(xp, rng, (2,), n, dtype)
    st, st64 = xp.transpose(s), np.swapaxes(s64, -1, -2)
    c = gl.linalg.cholesky(st)
    assert rel_err(c, np.linalg.cholesky(st64)) < TOL[dtype]
    assert rel_err(gl.linalg.cho_solve(c, bt), np.linalg.solve(st64, bt64)) < TOL[dtype]


@pytest.mark.parametrize("dtype", LINALG_DTYPES)
def test_one_by_one(xp, dtype):
    a = xp.asarray(np.array([[4.0]]), dtype)
    b = xp.asarray(np.array([2.0]), dtype)
    assert to_np64(gl.linalg.cholesky(a))[0, 0] == pytest.approx(2.0)
    assert to_np64(gl.linalg.solve(a, b)) == pytest.approx([0.5])
    assert to_np64(gl.linalg.inv(a))[0, 0] == pytest.approx(0.25)
    assert complex(to_np64(gl.linalg.det(a))) == pytest.approx(4.0)
    sign, logabsdet = gl.linalg.slogdet(a)
    assert complex(to_np64(sign)) == pytest.approx(1.0)
    assert float(to_np64(logabsdet)) == pytest.approx(np.log(4.0), rel=1e-6)


def test_empty_matrices(xp):
    a = xp.asarray(np.zeros((0, 0)), "float64")
    b = xp.asarray(np.zeros((0,)), "float64")
    xp.empty_like_check(gl.linalg.solve(a, b), "float64", (0,))
    xp.empty_like_check(gl.linalg.cholesky(a), "float64", (0, 0))
    xp.empty_like_check(gl.linalg.inv(a), "float64", (0, 0))
    _lu, piv = gl.linalg.lu_factor(a)
    xp.empty_like_check(piv, "int32", (0,))
    assert float(to_np64(gl.linalg.det(a))) == 1.0
    sign, logabsdet = gl.linalg.slogdet(a)
    assert float(to_np64(sign)) == 1.0 and float(to_np64(logabsdet)) == 0.0
    # an empty batch
    a3 = xp.asarray(np.zeros((0, 3, 3)), "float64")
    xp.empty_like_check(gl.linalg.inv(a3), "float64", (0, 3, 3))


def test_results_are_fresh_writable_arrays(rng):
    a = rng.standard_normal((4, 4)) + 4 * np.eye(4)
    x = gl.linalg.inv(a)
    assert isinstance(x, np.ndarray) and x.flags.writeable and x.flags.c_contiguous
    x[:] = 0  # does not touch a
    assert np.abs(a).sum() > 0
    y = gl.linalg.inv(a)
    assert not np.shares_memory(x, y)


# --------------------------------------------------------------------------------------------
# Errors


@pytest.mark.parametrize(
    "call",
    [
        lambda a: gl.linalg.cholesky(a),
        lambda a: gl.linalg.lu_factor(a),
        lambda a: gl.linalg.solve(a, np.ones(3)),
        lambda a: gl.linalg.inv(a),
        lambda a: gl.linalg.det(a),
        lambda a: gl.linalg.slogdet(a),
    ],
)
def test_non_square_is_value_error(call):
    with pytest.raises(ValueError, match=r"\(3, 4\)"):
        call(np.ones((3, 4)))


@pytest.mark.parametrize(
    "call",
    [
        lambda a: gl.linalg.cholesky(a),
        lambda a: gl.linalg.lu_factor(a),
        lambda a: gl.linalg.solve(a, np.ones(3)),
        lambda a: gl.linalg.inv(a),
        lambda a: gl.linalg.det(a),
        lambda a: gl.linalg.slogdet(a),
    ],
)
def test_dtype_numpy_linalg_refuses_is_type_error(call):
    # Integers are promoted to float64 (test_linalg_conventions.py); long double is refused,
    # as numpy.linalg refuses it.
    with pytest.raises(gl.DTypeError, match="unsupported dtype float128 for a"):
        call(np.eye(3, dtype=np.longdouble))


def test_singular_matrix():
    a = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 2.0]])
    before = a.copy()
    with pytest.raises(gl.SingularMatrix) as e:
        gl.linalg.solve(a, np.ones(3))
    assert isinstance(e.value, np.linalg.LinAlgError)
    assert isinstance(e.value, gl.LinAlgError)
    assert e.value.index == 1 and e.value.batch_index == -1
    # As scipy.linalg.lu_factor: the factors, with a warning naming the zero pivot.
    with pytest.warns(RuntimeWarning, match=r"\[linalg.lu_factor\] a is singular: U\[1,1\]"):
        lu, piv = gl.linalg.lu_factor(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref_lu, ref_piv = sl.lu_factor(a)
    np.testing.assert_allclose(lu, ref_lu)
    np.testing.assert_array_equal(piv, ref_piv)
    with pytest.raises(gl.SingularMatrix, match=r"^\[linalg.inv\] a is singular: U\[1,1\]"):
        gl.linalg.inv(a)
    with pytest.raises(np.linalg.LinAlgError):  # what NumPy users already catch
        gl.linalg.inv(a)
    assert float(gl.linalg.det(a)) == 0.0  # never an error
    sign, logabsdet = gl.linalg.slogdet(a)
    assert float(sign) == 0.0 and float(logabsdet) == -np.inf
    np.testing.assert_array_equal(a, before)


def test_singular_in_a_batch():
    a = np.stack([np.eye(3), np.eye(3), np.diag([1.0, 1.0, 0.0])])
    with pytest.raises(gl.SingularMatrix) as e:
        gl.linalg.inv(a)
    assert e.value.batch_index == 2 and e.value.index == 2


def test_not_positive_definite():
    a = np.diag([1.0, 2.0, -1.0, 4.0])
    before = a.copy()
    with pytest.raises(gl.NotPositiveDefinite) as e:
        gl.linalg.cholesky(a)
    assert isinstance(e.value, np.linalg.LinAlgError)
    assert e.value.order == 3 and e.value.batch_index == -1
    with pytest.raises(gl.NotPositiveDefinite) as e:
        gl.linalg.solve(np.stack([np.eye(4), a]), np.ones(4), assume_a="pos")
    assert e.value.order == 3 and e.value.batch_index == 1
    np.testing.assert_array_equal(a, before)


def test_check_info_false_returns_info():
    spd = np.diag([1.0, 2.0, 3.0])
    bad = np.diag([1.0, -2.0, 3.0])
    c, info = gl.linalg.cholesky(np.stack([spd, bad]), check_info=False)
    assert c.shape == (2, 3, 3)
    np.testing.assert_array_equal(info, [0, 2])
    assert info.dtype == np.int32

    sing = np.diag([1.0, 0.0, 3.0])
    (lu, piv), info = gl.linalg.lu_factor(sing, check_info=False)
    assert lu.shape == (3, 3) and piv.shape == (3,) and int(info) == 2
    x, info = gl.linalg.solve(np.stack([spd, sing]), np.ones(3), check_info=False)
    assert x.shape == (2, 3)
    np.testing.assert_array_equal(info, [0, 2])
    np.testing.assert_allclose(x[0], [1.0, 0.5, 1 / 3])
    x, info = gl.linalg.solve(bad, np.ones(3), assume_a="pos", check_info=False)
    assert int(info) == 2
    ai, info = gl.linalg.inv(spd, check_info=False)
    assert int(info) == 0
    np.testing.assert_allclose(ai, np.linalg.inv(spd))


@pytest.mark.parametrize(
    "kwargs, word",
    [
        ({"assume_a": "her"}, "assume_a"),
        ({"assume_a": None}, "assume_a"),
        ({"refine": "f8"}, "refine"),
        ({"refine": "none"}, "refine"),
        ({"device": "gpu"}, "device"),
        ({"fallback": "cuda"}, "fallback"),
        ({"lower": "yes"}, "lower"),
    ],
)
def test_bad_options_are_value_errors(kwargs, word):
    with pytest.raises(ValueError, match=word) as e:
        gl.linalg.solve(np.eye(2), np.ones(2), **kwargs)
    assert repr(next(iter(kwargs.values()))) in str(e.value)


def test_bad_lu_piv():
    with pytest.raises(ValueError, match="lu_and_piv"):
        gl.linalg.lu_solve(np.eye(2), np.ones(2))
    lu, piv = gl.linalg.lu_factor(np.eye(2))
    with pytest.raises(TypeError, match="piv must hold integers, got dtype float64"):
        gl.linalg.lu_solve((lu, piv.astype(np.float64)), np.ones(2))
    with pytest.raises(ValueError, match="outside the int32 range"):
        gl.linalg.lu_solve((lu, piv.astype(np.int64) + 2**40), np.ones(2))
    # Other integer types are converted, as SciPy takes them.
    np.testing.assert_array_equal(gl.linalg.lu_solve((lu, piv.astype(np.int64)), [1.0, 2.0]),
                                  [1.0, 2.0])


def test_shape_mismatch_of_b():
    with pytest.raises(ValueError):
        gl.linalg.solve(np.eye(3), np.ones(4))
    with pytest.raises(ValueError):
        gl.linalg.cho_solve(np.eye(3), np.ones((4, 2)))


def test_device_cpu_option(rng):
    a = rng.standard_normal((4, 4)) + 4 * np.eye(4)
    b = rng.standard_normal(4)
    x = gl.linalg.solve(a, b, device="cpu", fallback="cpu")
    assert rel_err(x, np.linalg.solve(a, b)) < 1e-12


def test_public_names():
    for name in (
        "cholesky",
        "cho_solve",
        "lu_factor",
        "lu_solve",
        "solve",
        "inv",
        "det",
        "slogdet",
    ):
        assert callable(getattr(gl.linalg, name))
        assert name in gl.linalg.__all__
    assert issubclass(gl.NotPositiveDefinite, gl.LinAlgError)
    assert issubclass(gl.SingularMatrix, gl.LinAlgError)
    assert "linalg" in gl.__all__


@pytest.mark.parametrize("name", ["gpula.linalg._solve", "gpula.linalg"])
def test_docstring_examples(name):
    import importlib

    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0
    assert result.attempted > 0


# --------------------------------------------------------------------------------------------
# GPU (results in the caller's package, on the caller's stream)


@pytest.mark.gpu
def test_numpy_on_the_gpu(rng):
    a = rng.standard_normal((2, 16, 16)) + 16 * np.eye(16)
    b = rng.standard_normal((2, 16, 3))
    x = gl.linalg.solve(a, b, device="cuda")
    assert isinstance(x, np.ndarray)
    assert rel_err(x, np.linalg.solve(a, b)) < 1e-11


@pytest.mark.gpu
@pytest.mark.parametrize("refine", [None, "auto", "rbt", "f32"])
def test_gpu_refine(xp, rng, refine):
    if not xp.gpu:
        pytest.skip("GPU packages only")
    a, a64 = well_conditioned(xp, rng, (), 64, "float64")
    b, b64 = xp.random(rng, (64, 2), "float64")
    x = gl.linalg.solve(a, b, refine=refine)
    xp.empty_like_check(x, "float64", (64, 2))
    xp.synchronize()
    assert rel_err(x, np.linalg.solve(a64, b64)) < 1e-10


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", LINALG_DTYPES)
def test_gpu_rbt_solve(xp, rng, dtype):
    """The RBT solve (random butterflies, unpivoted LU, refinement): odd order (padding), a
    batch, 1-D b; as accurate as NumPy's solve, inputs untouched."""
    if not xp.gpu:
        pytest.skip("GPU packages only")
    for n, batch in ((7, ()), (301, (2,))):
        a, a64 = xp.random(rng, batch + (n, n), dtype)
        b, b64 = xp.random(rng, (n,), dtype)
        a_before = to_np64(a).copy()
        x = gl.linalg.solve(a, b, refine="rbt")
        xp.empty_like_check(x, dtype, batch + (n,))
        ref = np.linalg.solve(a64, b64[..., None])[..., 0] if batch else np.linalg.solve(a64, b64)
        # As accurate as the plain (pivoted LU) solve of the same data; Gaussian matrices of
        # order 301 can have cond ~1e5, so the absolute bound follows the plain solve's error.
        plain = rel_err(gl.linalg.solve(a, b), ref)
        floor = 1e-5 if dtype in ("float32", "complex64") else 1e-12
        assert rel_err(x, ref) <= 10 * plain + floor
        assert np.array_equal(to_np64(a), a_before)


@pytest.mark.gpu
def test_gpu_rbt_singular_falls_back_and_raises(xp, caplog):
    if not xp.gpu:
        pytest.skip("GPU packages only")
    a = np.eye(40) * 2.0
    a[5, 5] = 0.0
    b = np.ones(40)
    with caplog.at_level(logging.INFO, logger="gpula"):
        with pytest.raises(gl.SingularMatrix, match=r"U\[5,5\] is exactly zero"):
            gl.linalg.solve(xp.asarray(a), xp.asarray(b), refine="rbt")
    assert any("falling back to LU with partial pivoting" in r.getMessage() for r in caplog.records)


@pytest.mark.gpu
def test_gpu_auto_refine_takes_rbt_for_large_orders(xp, rng, caplog):
    if not xp.gpu:
        pytest.skip("GPU packages only")
    a, a64 = xp.random(rng, (1100, 1100), "float64")
    b, b64 = xp.random(rng, (1100, 2), "float64")
    with caplog.at_level(logging.DEBUG, logger="gpula"):
        x = gl.linalg.solve(a, b, refine="auto")
    xp.synchronize()
    assert rel_err(x, np.linalg.solve(a64, b64)) < 1e-9
    assert any("RBT solve" in r.getMessage() for r in caplog.records)
