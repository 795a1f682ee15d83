"""gpula.linalg's NumPy/SciPy conventions on every dense function: check_finite, array-likes,
type promotion, named-tuple results, SciPy's cho_solve pair, and errors that name the
operation and the argument. References are NumPy/SciPy float64 on random inputs."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import scipy.linalg
from conftest import rel_err, to_np64

import gpula as gl


def _spd(rng, n, dtype="float64", batch=()):
    x = rng.standard_normal((*batch, n, n))
    if dtype.startswith("complex"):
        x = x + 1j * rng.standard_normal((*batch, n, n))
    return (x @ np.swapaxes(x, -1, -2).conj() + n * np.eye(n)).astype(dtype)


def _identity_piv_like(a):
    """Pivots 0..n-1 in a's package and on its device (lu_solve takes lu and piv on one device)."""
    piv = np.arange(a.shape[-1], dtype=np.int32)
    package = type(a).__module__.split(".")[0]
    if package == "cupy":
        import cupy

        return cupy.asarray(piv)
    if package == "torch":
        import torch

        return torch.as_tensor(piv, device=a.device)
    return piv


# Every dense function, called on a square a (and a 1-D b where it takes one).
CALLS = {
    "cholesky": lambda a, b, **kw: gl.linalg.cholesky(a, **kw),
    "cho_solve": lambda a, b, **kw: gl.linalg.cho_solve((a, True), b, **kw),
    "lu_factor": lambda a, b, **kw: gl.linalg.lu_factor(a, **kw),
    "lu_solve": lambda a, b, **kw: gl.linalg.lu_solve((a, _identity_piv_like(a)), b, **kw),
    "solve": lambda a, b, **kw: gl.linalg.solve(a, b, **kw),
    "inv": lambda a, b, **kw: gl.linalg.inv(a, **kw),
    "det": lambda a, b, **kw: gl.linalg.det(a, **kw),
    "slogdet": lambda a, b, **kw: gl.linalg.slogdet(a, **kw),
    "qr": lambda a, b, **kw: gl.linalg.qr(a, **kw),
    "lstsq": lambda a, b, **kw: gl.linalg.lstsq(a, b, **kw),
    "svd": lambda a, b, **kw: gl.linalg.svd(a, **kw),
    "svdvals": lambda a, b, **kw: gl.linalg.svdvals(a, **kw),
    "eigh": lambda a, b, **kw: gl.linalg.eigh(a, **kw),
    "eigvalsh": lambda a, b, **kw: gl.linalg.eigvalsh(a, **kw),
    "eig": lambda a, b, **kw: gl.linalg.eig(a, **kw),
    "eigvals": lambda a, b, **kw: gl.linalg.eigvals(a, **kw),
}
# The name of the matrix operand in each function's messages.
A_NAME = {"cho_solve": "c", "lu_solve": "lu"}
TAKES_B = ("cho_solve", "lu_solve", "solve", "lstsq")


# ---- check_finite (SciPy's rule) ---------------------------------------------------------------


@pytest.mark.parametrize("op", list(CALLS))
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_check_finite_refuses_nan_and_inf_in_a(xp, rng, op, bad):
    a = xp.asarray(_spd(rng, 4), "float64")
    b = xp.asarray(rng.standard_normal(4), "float64")
    a_bad = xp.asarray(np.where(np.eye(4, k=-1) == 1, bad, to_np64(a)), "float64")
    before = to_np64(a_bad).copy()
    with pytest.raises(gl.InvalidArgument, match=rf"^\[linalg\.{op}\] {A_NAME.get(op, 'a')} "
                       r"must not contain infs or NaNs$") as e:
        CALLS[op](a_bad, b)
    assert isinstance(e.value, ValueError)  # as SciPy's ValueError
    np.testing.assert_array_equal(to_np64(a_bad), before)  # input untouched
    CALLS[op](a, b)  # finite input passes


@pytest.mark.parametrize("op", TAKES_B)
def test_check_finite_refuses_nan_in_b(xp, rng, op):
    a = xp.asarray(_spd(rng, 3), "float64")
    b = xp.asarray(np.array([1.0, np.nan, 2.0]), "float64")
    with pytest.raises(gl.InvalidArgument, match=rf"^\[linalg\.{op}\] b must not contain"):
        CALLS[op](a, b)


@pytest.mark.parametrize("op", ["svd", "svdvals", "eigh", "eigvalsh", "eig", "eigvals", "det",
                                "inv", "qr", "slogdet"])
def test_check_finite_false_skips_the_scan(numpy_xp, op):
    # Unchecked NaN never crashes: NaN results (or a typed LinAlgError), as before the scan.
    a = np.eye(3)
    a[1, 0] = a[0, 1] = np.nan
    try:
        out = CALLS[op](a, None, check_finite=False)
    except gl.LinAlgError:
        return
    flat = [to_np64(o) for o in (out if isinstance(out, tuple) else (out,))]
    assert any(np.isnan(f).any() for f in flat)


def test_check_finite_is_checked_and_broadcast_views_are_scanned(rng):
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.svd\] check_finite must be True"):
        gl.linalg.svd(np.eye(2), check_finite="yes")
    row = np.array([[1.0, np.inf]])
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.eigvals\] a must not contain"):
        gl.linalg.eigvals(np.broadcast_to(row, (5, 2, 2)))


# ---- lstsq: LAPACK's gelsd never sees Inf or NaN -------------------------------------------------


@pytest.mark.parametrize("bad", [np.inf, np.nan])
def test_lstsq_unchecked_nonfinite_raises_linalgerror_without_lapack_text(capfd, rng, bad):
    a = rng.standard_normal((3, 6, 4))
    a[2, 1, 3] = bad
    b = rng.standard_normal((6, 2))
    before = a.copy()
    with pytest.raises(gl.LinAlgError, match=r"\[linalg.lstsq\] a contains infs or NaNs "
                       r"\(batch index 2\)") as e:
        gl.linalg.lstsq(a, b, check_finite=False)
    assert isinstance(e.value, np.linalg.LinAlgError)
    np.testing.assert_array_equal(a, before)
    out, err = capfd.readouterr()
    assert "gelsd" not in out + err and "parameter" not in out + err  # no xerbla text
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.lstsq\] a must not contain"):
        gl.linalg.lstsq(a, b)  # checked: SciPy's ValueError


def test_lstsq_with_inf_returns_in_a_fresh_process():
    # It used to hang for ever inside gelsd: run it where a hang cannot stop the suite.
    code = (
        "import numpy as np, gpula as gl\n"
        "a = np.ones((4, 3)); a[0, 0] = np.inf\n"
        "try:\n    gl.linalg.lstsq(a, np.ones(4), check_finite=False)\n"
        "except gl.LinAlgError as e:\n    print('LinAlgError', e)\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("LinAlgError [linalg.lstsq] a contains infs or NaNs"), r.stdout


def test_lstsq_nonfinite_b_unchecked_gives_nan_not_a_hang():
    a = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    x, _, rank, _ = gl.linalg.lstsq(a, np.array([1.0, np.inf, 2.0]), check_finite=False)
    assert not np.isfinite(x).all() and int(rank) == 2


# ---- cho_solve: SciPy's (c, lower) pair --------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_cho_solve_takes_scipys_pairs(rng, dtype):
    a = _spd(rng, 5, dtype)
    b = rng.standard_normal((5, 2))
    ref = scipy.linalg.cho_solve(scipy.linalg.cho_factor(a), b)
    assert rel_err(ref, np.linalg.solve(a, b)) < 1e-12
    for lower in (False, True):
        pair = scipy.linalg.cho_factor(a, lower=lower)  # the other triangle holds leftovers
        assert rel_err(gl.linalg.cho_solve(pair, b), ref) < 1e-12
        c = scipy.linalg.cholesky(a, lower=lower)
        assert rel_err(gl.linalg.cho_solve((c, lower), b), ref) < 1e-12
        assert rel_err(gl.linalg.cho_solve(c, b, lower=lower), ref) < 1e-12
    # A bare factor is lower, as gpula's cholesky returns it.
    assert rel_err(gl.linalg.cho_solve(gl.linalg.cholesky(a), b), ref) < 1e-12


def test_cho_solve_refuses_a_factor_on_the_other_side(rng):
    a = _spd(rng, 4)
    b = rng.standard_normal(4)
    upper = scipy.linalg.cholesky(a)  # SciPy's default: upper
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.cho_solve\] c is upper triangular "
                       r"but was given as the lower factor .*pass \(c, False\)"):
        gl.linalg.cho_solve(upper, b)
    with pytest.raises(gl.InvalidArgument, match=r"c is lower triangular .* pass \(c, True\)"):
        gl.linalg.cho_solve((upper.T.copy(), False), b)
    with pytest.raises(gl.InvalidArgument, match="contradicts the pair"):
        gl.linalg.cho_solve((upper, False), b, lower=True)
    # check_finite=False skips the side check too (SciPy reads one triangle, unchecked).
    x = gl.linalg.cho_solve(upper, b, check_finite=False)
    assert x.shape == (4,)
    # Diagonal factors are triangular on both sides.
    d = np.diag([2.0, 3.0])
    np.testing.assert_allclose(gl.linalg.cho_solve(d, np.array([4.0, 9.0])), [1.0, 1.0])


def test_cho_solve_batched_pair(rng):
    a = _spd(rng, 4, "float64", (3,))
    b = rng.standard_normal((3, 4, 2))
    c = np.linalg.cholesky(a)  # lower
    upper = np.swapaxes(c, -1, -2).copy()
    x = gl.linalg.cho_solve((upper, False), b)
    assert rel_err(x, np.linalg.solve(a, b)) < 1e-12
    with pytest.raises(gl.InvalidArgument, match="c is upper triangular"):
        gl.linalg.cho_solve(upper, b)


# ---- array-likes: lists, tuples and scalars -----------------------------------------------------


def test_lists_are_accepted_everywhere():
    a = [[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]]
    b = [1.0, 2.0, 3.0]
    a64 = np.array(a)
    u, s, vh = gl.linalg.svd(a)
    u_ref, s_ref, vh_ref = np.linalg.svd(a64)
    assert isinstance(s, np.ndarray) and u.shape == u_ref.shape
    np.testing.assert_allclose(s, s_ref, rtol=1e-13)
    np.testing.assert_allclose((u * s) @ vh, a64, atol=1e-13)
    np.testing.assert_allclose(gl.linalg.svdvals(a), s_ref, rtol=1e-13)
    u1, s1, vh1 = gl.linalg.svd(a, k=1)
    np.testing.assert_allclose(s1, s_ref[:1], rtol=1e-12)
    assert u1.shape == (3, 1) and vh1.shape == (1, 3)
    w1, v1 = gl.linalg.eigh(a, k=1)
    np.testing.assert_allclose(w1, np.linalg.eigvalsh(a64)[-1:], rtol=1e-12)
    np.testing.assert_allclose(a64 @ v1, v1 * w1, atol=1e-12)
    np.testing.assert_allclose(gl.linalg.eigvalsh(a), np.linalg.eigvalsh(a64), rtol=1e-13)
    np.testing.assert_allclose(gl.linalg.eigvalsh(a, k=2, which="smallest"),
                               np.linalg.eigvalsh(a64)[:2], rtol=1e-12)
    np.testing.assert_allclose(np.sort_complex(gl.linalg.eigvals(a)),
                               np.sort_complex(np.linalg.eigvals(a64).astype(complex)), rtol=1e-12)
    np.testing.assert_allclose(gl.linalg.solve(a, b), np.linalg.solve(a64, b), rtol=1e-13)
    np.testing.assert_allclose(gl.linalg.inv(a), np.linalg.inv(a64), rtol=1e-13)
    np.testing.assert_allclose(gl.linalg.det(a), np.linalg.det(a64), rtol=1e-13)
    np.testing.assert_allclose(gl.linalg.cholesky(a), np.linalg.cholesky(a64), rtol=1e-13)
    np.testing.assert_allclose(gl.linalg.lstsq(a, b)[0], np.linalg.lstsq(a64, b)[0], rtol=1e-12)
    q, r = gl.linalg.qr(tuple(map(tuple, a)))
    np.testing.assert_allclose(q @ r, a64, atol=1e-13)
    lu, piv = gl.linalg.lu_factor(a)
    np.testing.assert_allclose(gl.linalg.lu_solve((lu, piv.tolist()), b),
                               np.linalg.solve(a64, b), rtol=1e-13)


def test_scalars_and_bad_array_likes():
    # A scalar is a 0-d array: a typed error about its shape, not an AttributeError.
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.svd\]"):
        gl.linalg.svd(3.0)
    np.testing.assert_allclose(gl.linalg.svdvals([[np.float32(-2.0)]]), [2.0])
    with pytest.raises(gl.InvalidArgument, match=r"\[linalg.svd\] a is not a regular array"):
        gl.linalg.svd([[1.0, 2.0], [3.0]])
    with pytest.raises(gl.DTypeError, match=r"\[linalg.eigh\] a must hold numbers"):
        gl.linalg.eigh([["a", "b"], ["c", "d"]])
    with pytest.raises(gl.DTypeError, match=r"\[linalg.qr\] a must be an array"):
        gl.linalg.qr(object())
    with pytest.raises(gl.DTypeError, match=r"\[linalg.solve\] b must be an array"):
        gl.linalg.solve(np.eye(2), {1, 2})


# ---- type promotion, as numpy.linalg -------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "bool"])
def test_integers_compute_in_float64(rng, dtype):
    # Unit upper triangular (invertible also as bool), random above the diagonal.
    a = (np.triu(rng.integers(0, 2, (4, 4)), 1) + np.eye(4, dtype=np.int64)).astype(dtype)
    a64 = a.astype(np.float64)
    assert gl.linalg.det(a).dtype == np.float64
    np.testing.assert_allclose(gl.linalg.det(a), np.linalg.det(a), rtol=1e-13)
    np.testing.assert_allclose(gl.linalg.inv(a), np.linalg.inv(a), rtol=1e-13)
    s = gl.linalg.svdvals(a)
    assert s.dtype == np.float64
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=1e-13)
    sym = a64 + a64.T
    w = gl.linalg.eigvalsh(sym.astype(dtype) if dtype != "bool" else sym)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(sym), rtol=1e-13, atol=1e-13)
    x = gl.linalg.solve(a, np.arange(4))
    assert x.dtype == np.float64
    np.testing.assert_allclose(x, np.linalg.solve(a, np.arange(4)), rtol=1e-12)


@pytest.mark.parametrize(
    "da, db, want",
    [
        ("float32", "float64", "float64"),
        ("float64", "float32", "float64"),
        ("float32", "complex64", "complex64"),
        ("float32", "complex128", "complex128"),
        ("complex64", "float64", "complex128"),
        ("float16", "float32", "float32"),
        ("int32", "float32", "float64"),
    ],
)
def test_mixed_operands_are_promoted_as_numpy(rng, da, db, want):
    a = (_spd(rng, 4) / 4).astype(da) if da != "int32" else (4 * np.eye(4)).astype(da)
    b = rng.standard_normal((4, 2)).astype(db)
    a64, b64 = to_np64(a), to_np64(b)
    tol = 1e-4 if want in ("float32", "complex64") else 1e-12
    x = gl.linalg.solve(a, b)
    assert x.dtype == np.dtype(want)
    assert rel_err(x, np.linalg.solve(a64, b64)) < tol
    x = gl.linalg.lstsq(a, b).solution
    assert x.dtype == np.dtype(want)
    assert rel_err(x, np.linalg.lstsq(a64, b64)[0]) < tol
    # Factors keep a's precision; the solve is in the common type.
    tol_a = 1e-4 if da in ("float16", "float32", "complex64") else tol
    lu_piv = gl.linalg.lu_factor(a)
    x = gl.linalg.lu_solve(lu_piv, b)
    assert x.dtype == np.dtype(want)
    assert rel_err(x, np.linalg.solve(a64, b64)) < tol_a
    if da != "int32":
        x = gl.linalg.cho_solve((gl.linalg.cholesky(a), True), b)
        assert x.dtype == np.dtype(want)
        assert rel_err(x, np.linalg.solve(a64, b64)) < tol_a


def test_long_double_is_refused_as_numpy_refuses_it():
    with pytest.raises(gl.DTypeError, match=r"\[linalg.svd\] unsupported dtype float128 for a"):
        gl.linalg.svd(np.eye(2, dtype=np.longdouble))
    with pytest.raises(gl.DTypeError, match=r"\[linalg.solve\] unsupported dtype float128 for b"):
        gl.linalg.solve(np.eye(2), np.ones(2, np.longdouble))


def test_big_endian_input_is_read_in_native_order(rng):
    a = _spd(rng, 3)
    s = gl.linalg.svdvals(a.astype(">f8"))
    np.testing.assert_allclose(s, np.linalg.svd(a, compute_uv=False), rtol=1e-13)


# ---- results: NumPy 2's named tuples, NumPy's defaults -------------------------------------------


def test_named_tuples_and_numpy_defaults(rng):
    a = rng.standard_normal((5, 3))
    r = gl.linalg.svd(a)
    assert isinstance(r, gl.linalg.SVDResult) and r._fields == ("U", "S", "Vh")
    ref = np.linalg.svd(a)  # full_matrices=True by default
    assert r.U.shape == ref.U.shape == (5, 5) and r.Vh.shape == ref.Vh.shape == (3, 3)
    np.testing.assert_allclose(r.S, ref.S, rtol=1e-13)
    np.testing.assert_allclose(r.U.T @ r.U, np.eye(5), atol=1e-13)
    np.testing.assert_allclose((r.U[:, :3] * r.S) @ r.Vh, a, atol=1e-13)
    thin = gl.linalg.svd(a, full_matrices=False)
    assert thin.U.shape == (5, 3)

    sym = a.T @ a
    e = gl.linalg.eigh(sym)
    assert isinstance(e, gl.linalg.EighResult) and e._fields == ("eigenvalues", "eigenvectors")
    np.testing.assert_allclose(e.eigenvalues, np.linalg.eigh(sym).eigenvalues, rtol=1e-12)
    g = gl.linalg.eig(sym)
    assert isinstance(g, gl.linalg.EigResult) and g._fields == ("eigenvalues", "eigenvectors")
    np.testing.assert_allclose(np.sort(g.eigenvalues.real), np.linalg.eigvalsh(sym), rtol=1e-12)
    sd = gl.linalg.slogdet(sym)
    assert isinstance(sd, gl.linalg.SlogdetResult) and sd._fields == ("sign", "logabsdet")
    ref_sd = np.linalg.slogdet(sym)
    assert sd.sign == ref_sd.sign
    np.testing.assert_allclose(sd.logabsdet, ref_sd.logabsdet, rtol=1e-13)
    q = gl.linalg.qr(a)
    assert isinstance(q, gl.linalg.QRResult) and q._fields == ("Q", "R")
    assert q.Q.shape == np.linalg.qr(a).Q.shape
    lf = gl.linalg.lu_factor(sym)
    assert isinstance(lf, gl.linalg.LUFactorResult) and lf._fields == ("lu", "piv")
    lu_ref, piv_ref = scipy.linalg.lu_factor(sym)
    np.testing.assert_allclose(lf.lu, lu_ref, rtol=1e-12, atol=1e-13)
    np.testing.assert_array_equal(lf.piv, piv_ref)
    b = rng.standard_normal(5)
    ls = gl.linalg.lstsq(a, b)
    assert isinstance(ls, gl.linalg.LstsqResult)
    assert ls._fields == ("solution", "residuals", "rank", "singular_values")
    ref_ls = np.linalg.lstsq(a, b)  # rcond=None: NumPy 2's default
    np.testing.assert_allclose(ls.solution, ref_ls[0], rtol=1e-12)
    np.testing.assert_allclose(ls.residuals, ref_ls[1], rtol=1e-10)
    assert ls.rank == ref_ls[2] and ls.singular_values.shape == ref_ls[3].shape


@pytest.mark.parametrize("mode, numpy_mode", [("economic", "reduced"), ("full", "complete"),
                                              ("reduced", "reduced"), ("complete", "complete")])
def test_qr_modes_as_scipy_and_numpy_spell_them(rng, mode, numpy_mode):
    a = rng.standard_normal((6, 4))
    q, r = gl.linalg.qr(a, mode=mode)
    q_ref, r_ref = scipy.linalg.qr(a, mode="economic" if numpy_mode == "reduced" else "full")
    assert q.shape == q_ref.shape and r.shape == r_ref.shape
    np.testing.assert_allclose(q @ r, a, atol=1e-13)
    np.testing.assert_allclose(np.abs(r), np.abs(r_ref), atol=1e-12)
    np.testing.assert_allclose(np.abs(gl.linalg.qr(a, mode="r")), np.abs(r_ref[:4]), atol=1e-12)


# ---- messages name the linalg operation ------------------------------------------------------------


def test_messages_name_the_linalg_operation_not_matmul():
    with pytest.raises(TypeError, match=r"^\[linalg.svd\] stream must be") as e:
        gl.linalg.svd(np.eye(2), stream="default")
    assert "matmul" not in str(e.value)
    with pytest.raises(gl.DTypeError) as e:
        gl.linalg.lstsq(np.eye(2), object())
    assert str(e.value).startswith("[linalg.lstsq] b must be an array")
    with pytest.raises(gl.InvalidArgument, match=r"^\[linalg.svd\] k must be <= min\(m, n\) = 3"):
        gl.linalg.svd(np.eye(3), k=5)
    with pytest.raises(gl.InvalidArgument, match=r"^\[linalg.eigvalsh\] k must be a positive"):
        gl.linalg.eigvalsh(np.eye(3), k=0)
