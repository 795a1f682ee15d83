"""gpula.linalg.inv_root (A^(-1/p), Shampoo's preconditioner) and sqrtm_psd, for symmetric
(Hermitian) positive semidefinite matrices: by eigh (C++ gpula::linalg::inv_root, sqrtm_psd),
or inv_root by the coupled Newton iteration in matmuls only; batched, and grouped over a list
of matrices of different sizes."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _gpula
from .._matmul import matmul
from ..errors import InvalidArgument, NotPositiveDefinite
from ._grouped import grouped, is_group, named_errors
from ._matfuncs import matrix_power
from ._polar import nonnegative
from ._operands import (
    Call,
    array_module,
    check_finite_flag,
    eye_like,
    flag,
    like,
    operands_of,
    real_np_dtype,
    to_host,
)

_METHODS = ("eigh", "newton")


def _shifted(a: Any, eps: float) -> Any:
    if eps == 0.0:
        return a
    return a + eps * eye_like(a)


def _newton_inv_root(a: Any, p: int, op: str, max_iter: int = 100) -> Any:
    """The coupled Newton iteration for A^(-1/p) (Guo and Higham; Shampoo's): z = (1 + p) /
    (2 ||A||_F), M = z A, X = z^(1/p) I, then T = ((p + 1) I - M) / p, X = X T, M = T^p M until
    M is I to working precision. Matmuls only."""
    rdt = real_np_dtype(a)
    xp = array_module(a)  # norms where a lives; only they come to the host
    fro = np.sqrt(to_host((xp.abs(a) ** 2).sum(axis=(-2, -1))).astype(np.float64))
    if (fro == 0).any():
        raise NotPositiveDefinite(f"[linalg.{op}] a (+ eps I) is zero: not positive definite")
    z = ((1.0 + p) / (2.0 * fro)).astype(rdt)
    eye = eye_like(a)
    zz = like(a, z[..., None, None])
    m = a * zz
    x = eye * like(a, (z ** (1.0 / p))[..., None, None].astype(rdt))
    tol = 10 * a.shape[-1] * np.finfo(rdt).eps
    err_prev = np.inf
    for _ in range(max_iter):
        t = (eye * (p + 1.0) - m) * (1.0 / p)
        x = matmul(x, t)
        m = matmul(matrix_power(t, p), m)
        err = float(to_host(xp.abs(m - eye).max()))
        if err <= tol or err >= err_prev:  # converged, or stalled at rounding
            break
        err_prev = err
    if not np.isfinite(err) or err > 1e3 * tol:
        raise NotPositiveDefinite(
            f"[linalg.{op}] the Newton iteration did not converge (|M - I| = {err:.3g}): a (+ eps "
            "I) is not positive definite or too ill-conditioned for it; use method='eigh'")
    return x


def inv_root(a: Any, p: int, eps: float = 0.0, *, method: str = "eigh", clip: bool = False,
             check_finite: bool = True) -> Any:
    """``(A + eps I)^(-1/p)`` of each symmetric (Hermitian) positive definite ``(..., n, n)``
    matrix (only the lower triangle is read by ``method="eigh"``), as Shampoo preconditions
    with: the inverse ``p``-th root, ``p`` a positive int. ``method="eigh"``: ``V w^(-1/p)
    V^H`` from gpula's eigh; ``"newton"``: the coupled Newton iteration (matmuls only; for a
    well-conditioned ``A + eps I``). An item whose smallest eigenvalue is not above rounding
    (``n eps_dtype max|w|``) raises gl.NotPositiveDefinite naming it, unless ``clip=True``
    raises such eigenvalues to that floor (eigh only). ``a`` may be a list of matrices of
    different sizes: a list comes back, each size computed in one batched call.

    Example:
        >>> import numpy as np, gpula as gl
        >>> gl.linalg.inv_root(np.diag([16.0, 1.0]), 4)
        array([[0.5, 0. ],
               [0. , 1. ]])
    """
    if isinstance(p, (bool, np.bool_)) or not isinstance(p, (int, np.integer)) or not (
            1 <= p <= 2**31 - 1):
        raise InvalidArgument(f"[linalg.inv_root] p must be an int from 1 to 2**31 - 1, got "
                              f"{p!r} ({type(p).__name__})")
    if method not in _METHODS:
        raise InvalidArgument(f"[linalg.inv_root] method must be 'eigh' or 'newton', got "
                              f"{method!r}")
    if not nonnegative(eps):
        raise InvalidArgument(f"[linalg.inv_root] eps must be a finite float >= 0, got {eps!r}")
    clip = flag("inv_root", "clip", clip)
    if clip and method != "eigh":
        raise InvalidArgument("[linalg.inv_root] clip=True needs method='eigh'")
    check_finite_flag("linalg.inv_root", check_finite)
    if is_group(a):
        return grouped("linalg.inv_root", a, lambda x: inv_root(
            x, p, eps, method=method, clip=clip, check_finite=check_finite))
    (a,) = operands_of("inv_root", check_finite, a=a)
    _square("inv_root", a)
    if 0 in tuple(a.shape):
        return a.copy() if hasattr(a, "copy") else a.clone()
    if method == "newton":
        with named_errors("linalg.inv_root", "a"):
            return _newton_inv_root(_shifted(a, float(eps)), int(p), "inv_root")
    call = Call("inv_root", a, True, None, None, None)
    return _gpula.linalg_inv_root(call.pkg.export(a), int(p), float(eps), clip,
                                  **_native_kwargs(call))


def sqrtm_psd(a: Any, *, clip: bool = True, check_finite: bool = True) -> Any:
    """The positive semidefinite square root ``V sqrt(w) V^H`` of each symmetric (Hermitian)
    positive semidefinite ``(..., n, n)`` matrix, from gpula's eigh (only the lower triangle is
    read), as scipy.linalg.sqrtm on such input. Eigenvalues within rounding of zero (or below,
    with the default ``clip=True``) count as zero; with ``clip=False`` a clearly negative one
    raises gl.NotPositiveDefinite naming the item. ``a`` may be a list of matrices.

    Example:
        >>> import numpy as np, gpula as gl
        >>> gl.linalg.sqrtm_psd(np.array([[4.0, 0.0], [0.0, 9.0]]))
        array([[2., 0.],
               [0., 3.]])
    """
    clip = flag("sqrtm_psd", "clip", clip)
    check_finite_flag("linalg.sqrtm_psd", check_finite)
    if is_group(a):
        return grouped("linalg.sqrtm_psd", a,
                       lambda x: sqrtm_psd(x, clip=clip, check_finite=check_finite))
    (a,) = operands_of("sqrtm_psd", check_finite, a=a)
    _square("sqrtm_psd", a)
    if 0 in tuple(a.shape):
        return a.copy() if hasattr(a, "copy") else a.clone()
    call = Call("sqrtm_psd", a, True, None, None, None)
    return _gpula.linalg_sqrtm_psd(call.pkg.export(a), clip, **_native_kwargs(call))


def _native_kwargs(call: Call) -> dict[str, Any]:
    kw = dict(call.kwargs)
    del kw["check_info"]  # the roots raise on failure
    return kw


def _square(op: str, a: Any) -> None:
    if len(a.shape) < 2 or a.shape[-1] != a.shape[-2]:
        raise InvalidArgument(f"[linalg.{op}] a must be square (..., n, n), got shape "
                              f"{tuple(a.shape)}")


__all__ = ["inv_root", "sqrtm_psd"]
