"""gpula.linalg.lu (scipy.linalg.lu: ``a = p @ l @ u``, any (..., M, N)) and lu_solve with
SciPy's ``trans``, composed from lu_factor, the native LU solve and solve_triangular (see
gpula.linalg for the common conventions and keyword arguments).

Example:
    >>> import numpy as np, gpula as gl
    >>> p, l, u = gl.linalg.lu(np.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> p
    array([[0., 1.],
           [1., 0.]])
    >>> u
    array([[3.        , 4.        ],
           [0.        , 0.66666667]])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _interop
from .._gpula import InvalidArgument
from . import _operands as _ops
from . import _solve
from ._operands import Call, flag, operands_of
from ._triangular import solve_triangular, trans_code


def _permutation(piv: np.ndarray, m: int) -> np.ndarray:
    """perm ((..., m), int64) with ``a[perm] = l @ u``, from getrf's 0-based interchanges
    (..., k): row i was interchanged with row piv[i], in order."""
    p = piv.reshape(int(np.prod(piv.shape[:-1])), piv.shape[-1]).astype(np.int64)
    perm = np.tile(np.arange(m), (p.shape[0], 1))
    r = np.arange(p.shape[0])
    for i in range(p.shape[1]):
        j = p[:, i]
        row = perm[:, i].copy()
        perm[:, i] = perm[r, j]
        perm[r, j] = row
    return perm.reshape(piv.shape[:-1] + (m,))


def _inverse(perm: np.ndarray) -> np.ndarray:
    inv = np.empty_like(perm)
    np.put_along_axis(inv, perm, np.broadcast_to(np.arange(perm.shape[-1]), perm.shape), axis=-1)
    return inv


def _take(x: Any, idx: np.ndarray, axis: int) -> Any:
    """x reordered along `axis` (-1 or -2) by the host indices idx (..., n) (entry i of the
    result is entry idx[i]; batch dimensions broadcast), in x's package and on its device."""
    full = np.broadcast_to(idx[..., None] if axis == -2 else idx, tuple(x.shape))
    xp = _ops.array_module(x)
    if xp is np:
        return np.take_along_axis(x, full, axis=axis)
    if xp.__name__ == "torch":
        return xp.take_along_dim(x, xp.from_numpy(np.array(full)).to(x.device), axis)
    return xp.take_along_axis(x, _ops.like(x, np.ascontiguousarray(full)), axis=axis)


def _tri(x: Any, lower: bool) -> Any:
    """The strict lower triangle plus the unit diagonal (lower) or the upper triangle of each
    matrix of x, as a new contiguous array."""
    xp = _ops.array_module(x)
    if not lower:
        return _ops.contig(xp.triu(x))
    m, k = x.shape[-2], x.shape[-1]
    eye = _ops.like(x, np.eye(m, k, dtype=_ops.np_dtype(x)))
    return _ops.contig(xp.tril(x, -1) + eye)


def lu(
    a: Any,
    permute_l: bool = False,
    overwrite_a: bool = False,
    check_finite: bool = True,
    p_indices: bool = False,
    *,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
) -> Any:
    """LU with partial pivoting of each (..., M, N) matrix, as scipy.linalg.lu:
    ``(p, l, u)`` with ``a = p @ l @ u``, K = min(M, N): p (..., M, M) (a's real dtype; with
    ``p_indices`` the int64 row indices (..., M) with ``a = l[p] @ u``), l (..., M, K) unit
    lower trapezoidal, u (..., K, N) upper trapezoidal. ``permute_l=True`` gives ``(p @ l, u)``.

    Square matrices are one lu_factor; wide ones factor the leading M x M block and solve for
    the rest of u (unit-lower solve_triangular); tall ones factor a zero-padded M x M matrix
    (so they take M x M memory). An exactly singular matrix is factored without warning, as
    SciPy does. ``overwrite_a`` is accepted for SciPy's signature; inputs are never written.

    Example:
        >>> import numpy as np, gpula as gl
        >>> a = np.array([[1.0, 2.0], [3.0, 4.0]])
        >>> pl, u = gl.linalg.lu(a, permute_l=True)
        >>> bool(np.allclose(pl @ u, a))
        True
    """
    permute_l = flag("lu", "permute_l", permute_l)
    p_indices = flag("lu", "p_indices", p_indices)
    flag("lu", "overwrite_a", overwrite_a)
    (a,) = operands_of("lu", check_finite, a=a)
    Call("lu", a, True, device, fallback, stream)  # option errors in lu's name
    if len(a.shape) < 2:
        raise InvalidArgument(f"[linalg.lu] expected a matrix (..., M, N) for a, got shape {tuple(a.shape)}")
    m, n = int(a.shape[-2]), int(a.shape[-1])
    k = min(m, n)
    batch = tuple(a.shape[:-2])
    if m * n == 0:  # SciPy's shapes for empty input: p is (..., 0, 0), or (..., 0) indices
        pkg = _interop.package_of(a)
        dev, t = pkg.device_of(a), _ops.np_dtype(a).name
        l, u = pkg.empty(batch + (m, k), t, dev), pkg.empty(batch + (k, n), t, dev)
        if permute_l:
            return l, u
        if p_indices:
            return pkg.empty(batch + (0,), "int32", dev), l, u
        return pkg.empty(batch + (0, 0), _ops.real_np_dtype(a).name, dev), l, u
    kw = {"check_finite": False, "check_info": False, "device": device, "fallback": fallback}
    if m > n:  # [a | 0]: the zero columns change no pivot of the first n steps
        zeros = _ops.like(a, np.zeros(tuple(a.shape[:-1]) + (m - n,), _ops.np_dtype(a)))
        square = _ops.concat([a, zeros], -1)
    else:
        square = a[..., :m]
    (packed, piv), _ = _solve.lu_factor(square, stream=stream, **kw)
    perm = _permutation(_ops.to_host(piv), m)
    l = _tri(packed[..., :, :k], True)
    u = _tri(packed[..., :k, :k], False) if m >= n else None
    if m < n:  # u = [u1 | l^-1 (p^T a)[:, m:]]
        rest = _take(a[..., m:], perm, -2)
        u2, _ = solve_triangular(l, rest, 0, True, True, stream=stream, **kw)
        u1 = _tri(packed, False)
        u = _ops.concat([u1, u2], -1)
    inv = _inverse(perm)
    if permute_l:
        return _take(l, inv, -2), u
    if p_indices:
        return _ops.like(a, inv.astype(np.int32)), l, u
    real = _ops.real_np_dtype(a)
    eye = np.eye(m, dtype=real)
    p = np.ascontiguousarray(np.swapaxes(eye[perm], -1, -2))
    return _ops.like(a, p), l, u


def lu_solve(
    lu_and_piv: Any,
    b: Any,
    trans: int | str = 0,
    overwrite_b: bool = False,
    check_finite: bool = True,
    *,
    check_info: bool = True,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
) -> Any:
    """x with ``op(a) x = b`` from :func:`lu_factor`'s ``(lu, piv)`` (scipy's too), as
    scipy.linalg.lu_solve: trans 0 or 'N' (``a x = b``), 1 or 'T' (``a^T x = b``), 2 or 'C'
    (``a^H x = b``); ``lu`` and ``b`` are promoted to their common type. trans=0 is the native
    LU solve (getrs); the others are two solve_triangular calls and the pivots' permutation.
    ``overwrite_b`` is accepted for SciPy's signature; inputs are never written.

    Example:
        >>> import numpy as np, gpula as gl
        >>> a = np.array([[1.0, 2.0], [3.0, 4.0]])
        >>> gl.linalg.lu_solve(gl.linalg.lu_factor(a), np.array([10.0, 14.0]), trans=1)
        array([1., 3.])
    """
    code = trans_code("lu_solve", trans)
    flag("lu_solve", "overwrite_b", overwrite_b)
    kw = {"check_info": check_info, "device": device, "fallback": fallback, "stream": stream}
    if code == 0:
        return _solve.lu_solve(lu_and_piv, b, check_finite=check_finite, **kw)
    if not isinstance(lu_and_piv, (tuple, list)) or len(lu_and_piv) != 2:
        raise InvalidArgument(
            "[linalg.lu_solve] lu_and_piv must be the (lu, piv) pair lu_factor returns, got "
            f"{type(lu_and_piv).__name__}"
        )
    lu_, b = operands_of("lu_solve", check_finite, lu=lu_and_piv[0], b=b)
    piv = _ops.to_host(_solve._pivots(lu_and_piv[1]))
    n = int(lu_.shape[-1]) if len(lu_.shape) >= 2 else -1
    if piv.shape != tuple(lu_.shape[:-1]) or len(lu_.shape) < 2:
        raise InvalidArgument(
            f"[linalg.lu_solve] piv has shape {piv.shape}, expected {tuple(lu_.shape[:-1])} to "
            f"match lu of shape {tuple(lu_.shape)}"
        )
    if piv.size and (piv.min() < 0 or piv.max() >= n):
        raise InvalidArgument(f"[linalg.lu_solve] piv: pivots are outside [0, {n})")
    # a = P L U, so op(a) = op(U) op(L) P^T: solve with op(U), then op(L), then permute. A
    # zero on U's diagonal gives inf/NaN, as the native (trans=0) solve does: no info check.
    kw["check_info"] = False
    vec = len(b.shape) == 1  # one vector for the batch: a column, whose results differ
    y, _ = solve_triangular(lu_, b[:, None] if vec else b, code, check_finite=False, **kw)
    z, _ = solve_triangular(lu_, y, code, True, True, check_finite=False, **kw)
    x = _take(z, _inverse(_permutation(piv, n)), -2)
    return x[..., 0] if vec else x
