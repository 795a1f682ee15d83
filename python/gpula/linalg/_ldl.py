"""gpula.linalg.ldl: the LDL^T / LDL^H (Bunch-Kaufman) factorization of symmetric or Hermitian
matrices, as scipy.linalg.ldl (see gpula.linalg for the common conventions).

The factorization runs natively (LAPACK ?sytrf/?hetrf on the CPU, cusolverDn<t>sytrf on a GPU);
unpacking LAPACK's compact form into scipy's (lu, d, perm) is sequential bookkeeping over the
pivots (O(n^2) per matrix) and runs on the host, as scipy's own post-processing does; the
results then go back to the caller's package and device.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import _gpula
from .._gpula import InvalidArgument
from ._operands import Call, array_module, flag, like, operands_of, to_host


def ldl(
    A: Any,  # noqa: N803  (scipy's name)
    lower: bool = True,
    hermitian: bool = True,
    overwrite_a: bool = False,
    check_finite: bool = True,
    *,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
) -> tuple[Any, Any, Any]:
    """LDL^T (or LDL^H with ``hermitian`` for complex input) factorization of each symmetric
    matrix of ``A`` (batched), as scipy.linalg.ldl: ``(lu, d, perm)`` with ``lu @ d @ lu^H ==
    A`` (``lu^T`` when not Hermitian), ``d`` block diagonal (blocks of order 1 and 2) and
    ``lu[perm, :]`` unit lower (``lower=False``: upper) triangular. Only the lower (upper)
    triangle of ``A`` is read. ``lu`` and ``d`` have ``A``'s (promoted) dtype, ``perm`` is int64.
    A singular ``A`` is factored all the same (``d`` then has a zero block), as scipy does.
    Complex Hermitian input with a non-real diagonal warns (ComplexWarning): those imaginary
    parts are ignored. ``overwrite_a`` is accepted for scipy's signature; ``A`` is never written.

    Example:
        >>> import numpy as np, gpula as gl
        >>> a = np.array([[2.0, -1.0, 3.0], [-1.0, 2.0, 0.0], [3.0, 0.0, 1.0]])
        >>> lu, d, perm = gl.linalg.ldl(a)
        >>> bool(np.allclose(lu @ d @ lu.T, a))
        True
    """
    lower = flag("ldl", "lower", lower)
    hermitian = flag("ldl", "hermitian", hermitian)
    flag("ldl", "overwrite_a", overwrite_a)
    (a,) = operands_of("ldl", check_finite, A=A)
    shape = tuple(a.shape)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise InvalidArgument(f"[linalg.ldl] A: expected a square matrix (..., n, n), got shape "
                              f"{shape}")
    cplx = "complex" in str(a.dtype)
    if cplx and hermitian and shape[-1] > 0:
        diag = array_module(a).diagonal(a, 0, -2, -1)
        if np.any(to_host(diag.imag)):
            warnings.warn(
                "gpula.linalg.ldl: the imaginary parts of the diagonal are ignored; use "
                "hermitian=False for complex symmetric arrays",
                np.exceptions.ComplexWarning,
                stacklevel=2,
            )
    call = Call("ldl", a, False, device, fallback, stream)
    kwargs = {k: v for k, v in call.kwargs.items() if k != "check_info"}  # nothing to check
    ldu, piv, _ = _gpula.linalg_ldl(call.pkg.export(a), lower, hermitian, **kwargs)
    ldu_h = to_host(ldu)
    piv_h = to_host(piv)
    lu_h = np.empty_like(ldu_h)
    d_h = np.zeros_like(ldu_h)
    perm_h = np.empty(shape[:-1], dtype=np.int64)
    for idx in np.ndindex(*shape[:-2]):
        swap, pivots = _sanitize_ipiv(piv_h[idx], lower)
        d, lu = _d_and_l(ldu_h[idx], pivots, lower, cplx and hermitian)
        lu_h[idx], perm_h[idx] = _tri_factor(lu, swap, pivots, lower)
        d_h[idx] = d
    return like(a, lu_h), like(a, d_h), like(a, perm_h)


def _sanitize_ipiv(ipiv: np.ndarray, lower: bool) -> tuple[np.ndarray, np.ndarray]:
    """LAPACK's ipiv as (swaps, block sizes): swap[k] is the row interchanged with row k, and
    pivots[k] is 1 or 2 where a block starts (first row for lower, last for upper), 0 inside
    a 2 x 2 block (scipy's _ldl_sanitize_ipiv)."""
    n = ipiv.size
    swap = np.arange(n)
    pivots = np.zeros(n, dtype=np.int64)
    skip = False
    x, y, rs, re, ri = (1, 0, 0, n, 1) if lower else (-1, -1, n - 1, -1, -1)
    for ind in range(rs, re, ri):
        if skip:
            skip = False
            continue
        cur = int(ipiv[ind])
        if cur > 0:
            if cur != ind + 1:
                swap[ind] = swap[cur - 1]
            pivots[ind] = 1
        elif cur < 0 and cur == ipiv[ind + x]:
            if -cur != ind + 2:
                swap[ind + x] = swap[-cur - 1]
            pivots[ind + y] = 2
            skip = True
        else:  # never from LAPACK; a NaN matrix may leave any pattern
            raise InvalidArgument("[linalg.ldl] invalid pivots from the factorization "
                                  "(non-finite input?)")
    return swap, pivots


def _d_and_l(ldu: np.ndarray, pivots: np.ndarray, lower: bool,
             conj: bool) -> tuple[np.ndarray, np.ndarray]:
    """D (block diagonal) and the unit triangular factor from LAPACK's compact form (scipy's
    _ldl_get_d_and_l); `conj`: the 2 x 2 blocks are Hermitian."""
    n = ldu.shape[0]
    d = np.diag(np.diag(ldu))
    x, y = (1, 0) if lower else (0, 1)
    lu = np.tril(ldu, -1) if lower else np.triu(ldu, 1)
    lu[np.arange(n), np.arange(n)] = 1
    blk = 0
    for size in pivots[pivots != 0]:
        if size == 2:
            off = ldu[blk + x, blk + y]
            d[blk + x, blk + y] = off
            d[blk + y, blk + x] = np.conj(off) if conj else off
            lu[blk + x, blk + y] = 0
        blk += int(size)
    return d, lu


def _tri_factor(lu: np.ndarray, swap: np.ndarray, pivots: np.ndarray,
                lower: bool) -> tuple[np.ndarray, np.ndarray]:
    """The permuted outer factor L(1) L(2) ... (upper: ... U(2) U(1)) and the permutation that
    makes it triangular (scipy's _ldl_construct_tri_factor)."""
    n = lu.shape[0]
    perm = np.arange(n)
    rs, re, ri = (n - 1, -1, -1) if lower else (0, n, 1)
    for ind in range(rs, re, ri):
        s = int(swap[ind])
        if s != ind:
            col_s = ind if lower else 0
            col_e = n if lower else ind + 1
            if pivots[ind] == (0 if lower else 2):
                col_s += -1 if lower else 0
                col_e += 0 if lower else 1
            lu[[s, ind], col_s:col_e] = lu[[ind, s], col_s:col_e]
            perm[[s, ind]] = perm[[ind, s]]
    return lu, np.argsort(perm)


__all__ = ["ldl"]
