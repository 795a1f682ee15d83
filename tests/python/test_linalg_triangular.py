"""gpula.linalg.solve_triangular, lu and lu_solve(trans=) against SciPy float64 on fresh random
inputs: dtypes, batches, layouts, empty and ill-conditioned matrices, and the documented errors."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sl
from conftest import rel_err, to_np64

import gpula as gl

DTYPES = ("float32", "float64", "complex64", "complex128")
TOL = {"float32": 1e-4, "complex64": 1e-4, "float64": 1e-11, "complex128": 1e-11}


def _triangular(xp, rng, shape, dtype, lower):
    """A random well-conditioned triangular batch; the unread triangle holds noise."""
    a, a64 = xp.random(rng, shape, dtype)
    n = shape[-1]
    boost = 4 * np.eye(n)
    host = a64 + boost
    return xp.asarray(host, dtype), host


def _reference(a64, b64, trans, lower, unit):
    """scipy.linalg.solve_triangular over broadcast batches (b (n,) or (..., n, k))."""
    if b64.ndim == 1:
        batch = a64.shape[:-2]
        out = [sl.solve_triangular(a64[i], b64, trans, lower, unit) for i in np.ndindex(batch)]
        return np.reshape(out, (*batch, b64.shape[0])) if batch else out[0]
    batch = np.broadcast_shapes(a64.shape[:-2], b64.shape[:-2])
    a = np.broadcast_to(a64, (*batch, *a64.shape[-2:]))
    b = np.broadcast_to(b64, (*batch, *b64.shape[-2:]))
    out = [sl.solve_triangular(a[i], b[i], trans, lower, unit) for i in np.ndindex(batch)]
    return np.reshape(out, (*batch, *b64.shape[-2:]))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("trans", [0, 1, 2, "N", "T", "C"])
@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("unit", [False, True])
def test_solve_triangular_matches_scipy(xp, rng, dtype, trans, lower, unit):
    for a_shape, b_shape in [((5, 5), (5,)), ((5, 5), (5, 3)), ((2, 3, 6, 6), (2, 3, 6, 2)),
                             ((6, 6), (4, 6, 2)), ((3, 1, 4, 4), (2, 4, 1)), ((2, 4, 4), (4,))]:
        a, a64 = _triangular(xp, rng, a_shape, dtype, lower)
        b, b64 = xp.random(rng, b_shape, dtype)
        before = to_np64(a).copy()
        x = gl.linalg.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit)
        ref = _reference(a64, b64, trans, lower, unit)
        xp.empty_like_check(x, dtype, ref.shape)
        assert rel_err(x, ref) < TOL[dtype]
        assert np.array_equal(to_np64(a), before)
        # Transposed (column-major) operands are read in place: the same answer.
        at = xp.transpose(xp.asarray(np.swapaxes(a64, -1, -2).copy(), dtype))
        assert rel_err(gl.linalg.solve_triangular(at, b, trans, lower, unit), ref) < TOL[dtype]


def test_solve_triangular_positional_order_is_scipys(rng):
    a = np.triu(rng.standard_normal((4, 4))) + 4 * np.eye(4)
    b = rng.standard_normal(4)
    ref = sl.solve_triangular(a.T, b, 1, True)  # trans, lower: scipy's order
    assert np.allclose(gl.linalg.solve_triangular(a.T, b, 1, True), ref)


def test_solve_triangular_promotes_and_handles_empty(rng):
    a = np.triu(np.arange(1, 10).reshape(3, 3))
    x = gl.linalg.solve_triangular(a, np.ones(3, np.float32))
    assert x.dtype == np.float64
    assert np.allclose(x, sl.solve_triangular(a, np.ones(3)))
    assert gl.linalg.solve_triangular(np.eye(3, dtype=np.float32), np.ones((3, 0), np.float32)).shape == (3, 0)
    assert gl.linalg.solve_triangular(np.zeros((0, 0)), np.zeros(0)).shape == (0,)
    assert gl.linalg.solve_triangular(np.zeros((0, 2, 2)), np.zeros((2, 1))).shape == (0, 2, 1)


def test_solve_triangular_ill_conditioned(rng):
    n = 30
    a = np.triu(rng.standard_normal((n, n))) + np.diag(np.logspace(0, -8, n))
    b = rng.standard_normal((n, 2))
    x = gl.linalg.solve_triangular(a, b)
    # Backward error stays at rounding level whatever the conditioning.
    assert np.linalg.norm(a @ x - b) / (np.linalg.norm(a) * np.linalg.norm(x)) < 1e-14


def test_solve_triangular_singular_and_errors(rng):
    a = np.triu(rng.standard_normal((3, 4, 4))) + 4 * np.eye(4)
    a[1, 2, 2] = 0
    b = rng.standard_normal(4)
    with pytest.raises(gl.SingularMatrix, match=r"a\[2,2\] is exactly zero") as e:
        gl.linalg.solve_triangular(a, b)
    assert isinstance(e.value, np.linalg.LinAlgError)
    with pytest.raises(np.linalg.LinAlgError):
        sl.solve_triangular(a[1], b)  # SciPy raises too
    x, info = gl.linalg.solve_triangular(a, b, check_info=False)
    assert info.tolist() == [0, 3, 0]
    gl.linalg.solve_triangular(a, b, unit_diagonal=True)  # the diagonal is not read
    with pytest.raises(gl.InvalidArgument, match="trans"):
        gl.linalg.solve_triangular(a, b, trans=3)
    with pytest.raises(gl.InvalidArgument, match="trans"):
        gl.linalg.solve_triangular(a, b, trans="X")
    with pytest.raises(gl.InvalidArgument, match="lower"):
        gl.linalg.solve_triangular(a, b, lower="yes")
    with pytest.raises(gl.InvalidArgument, match="b has shape"):
        gl.linalg.solve_triangular(a, np.ones(3))
    with pytest.raises(gl.InvalidArgument, match="expected a square"):
        gl.linalg.solve_triangular(np.ones((3, 4)), np.ones(3))
    with pytest.raises(gl.InvalidArgument, match="infs or NaNs"):
        gl.linalg.solve_triangular(np.full((2, 2), np.nan), np.ones(2))


# ---- lu ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(5, 5), (3, 4, 4), (7, 3), (3, 7), (2, 6, 2), (2, 2, 6), (1, 1)])
def test_lu_matches_scipy(xp, rng, dtype, shape):
    a, a64 = xp.random(rng, shape, dtype)
    p, l, u = gl.linalg.lu(a)
    rp, rl, ru = sl.lu(a64)
    xp.empty_like_check(l, dtype, rl.shape)
    xp.empty_like_check(u, dtype, ru.shape)
    real = "float32" if dtype in ("float32", "complex64") else "float64"
    xp.empty_like_check(p, real, rp.shape)
    assert rel_err(to_np64(p) @ to_np64(l) @ to_np64(u), a64) < TOL[dtype]
    # Partial pivoting picks the same rows as SciPy's on random data.
    assert np.array_equal(to_np64(p), rp)
    assert rel_err(l, rl) < 1e3 * TOL[dtype] and rel_err(u, ru) < 1e3 * TOL[dtype]
    pl, u2 = gl.linalg.lu(a, permute_l=True)
    assert rel_err(to_np64(pl) @ to_np64(u2), a64) < TOL[dtype]
    pi, l3, u3 = gl.linalg.lu(a, p_indices=True)
    assert np.array_equal(to_np64(pi), sl.lu(a64, p_indices=True)[0])
    l3_64 = to_np64(l3)
    assert rel_err(np.take_along_axis(l3_64, to_np64(pi).astype(int)[..., None], -2) @ to_np64(u3), a64) < TOL[dtype]


def test_lu_empty_and_singular_match_scipy():
    for shape in [(0, 0), (3, 0), (0, 4), (2, 0, 3)]:
        for kw in ({}, {"permute_l": True}, {"p_indices": True}):
            got, ref = gl.linalg.lu(np.zeros(shape), **kw), sl.lu(np.zeros(shape), **kw)
            assert [g.shape for g in got] == [r.shape for r in ref]
    a = np.array([[1.0, 2.0], [2.0, 4.0]])  # singular: factored without a warning, as SciPy
    p, l, u = gl.linalg.lu(a)
    assert np.allclose(p @ l @ u, a) and u[1, 1] == 0
    with pytest.raises(gl.InvalidArgument, match="matrix"):
        gl.linalg.lu(np.ones(3))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("trans", [0, 1, 2, "T", "C"])
def test_lu_solve_trans_matches_scipy(xp, rng, dtype, trans):
    a, a64 = xp.random(rng, (3, 6, 6), dtype)
    code = {"T": 1, "C": 2}.get(trans, trans)
    factors = gl.linalg.lu_factor(a)
    for b_shape in [(6,), (3, 6, 2), (2, 3, 6, 1)]:
        b, b64 = xp.random(rng, b_shape, dtype)
        x = gl.linalg.lu_solve(factors, b, trans=trans)
        bb = np.broadcast_to(b64, (*np.broadcast_shapes((3,), b64.shape[:-2]), 6, b64.shape[-1])) if b64.ndim > 1 else None
        if bb is None:
            ref = np.stack([sl.lu_solve(sl.lu_factor(a64[i]), b64, trans=code) for i in range(3)])
        else:
            ref = np.stack([sl.lu_solve(sl.lu_factor(a64[i[-1]]), bb[i], trans=code)
                            for i in np.ndindex(bb.shape[:-2])]).reshape(bb.shape)
        xp.empty_like_check(x, dtype, ref.shape)
        assert rel_err(x, ref) < 1e2 * TOL[dtype]


def test_lu_solve_trans_errors(rng):
    a = rng.standard_normal((4, 4))
    lu, piv = gl.linalg.lu_factor(a)
    with pytest.raises(gl.InvalidArgument, match="trans"):
        gl.linalg.lu_solve((lu, piv), np.ones(4), trans=5)
    with pytest.raises(gl.InvalidArgument, match="outside"):
        gl.linalg.lu_solve((lu, np.array([0, 1, 9, 3], np.int32)), np.ones(4), trans=1)
    with pytest.raises(gl.InvalidArgument, match="piv has shape"):
        gl.linalg.lu_solve((lu, piv[:3]), np.ones(4), trans=1)
    with pytest.raises(gl.InvalidArgument, match="lu_and_piv"):
        gl.linalg.lu_solve(lu, np.ones(4), trans=1)
