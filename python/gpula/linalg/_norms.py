"""gpula.linalg.norm, cond, pinv, matrix_rank: numpy.linalg's functions, computed in the
caller's package and on its device (element-wise reductions there; 2, -2, 'nuc', pinv and
matrix_rank through gpula's svd / eigh). See gpula.linalg for the common keyword arguments.

Example:
    >>> import numpy as np, gpula as gl
    >>> float(gl.linalg.norm(np.array([[3.0, 0.0], [0.0, 4.0]]), 2))
    4.0
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .._gpula import InvalidArgument, LinAlgError
from . import _operands as _ops
from ._eigh import eigh, eigvalsh
from ._solve import inv
from ._svd import svd, svdvals

_NO_VALUE: Any = object()  # numpy's _NoValue: pinv's rtol not given


# ---- reductions that numpy, CuPy and torch spell differently --------------------------------


def _torch(x: Any) -> bool:
    return _ops.array_module(x).__name__ == "torch"


def _reduce(name: str, x: Any, axis: Any, keepdims: bool = False) -> Any:
    """x.sum / amax / amin over axis (an int or a tuple) in x's package."""
    if _torch(x):
        fn = {"sum": "sum", "max": "amax", "min": "amin"}[name]
        return getattr(x, fn)(dim=axis, keepdim=keepdims)
    return getattr(x, name)(axis=axis, keepdims=keepdims)


def _square_abs(x: Any) -> Any:
    return x.real**2 + x.imag**2 if _ops.is_complex(x) else x * x


def _real_float(x: Any) -> Any:
    """x as numpy.linalg.norm computes on it: integers and bools as float64."""
    x = _ops.as_array(x, "linalg.norm", "x")
    name = _ops.dtype_of(x, "linalg.norm", "x")
    return _ops.astype(x, "float64") if name in _ops.INTEGER else x


# ---- norm ------------------------------------------------------------------------------------


def _vector_norm(x: Any, ord: Any, axis: int, keepdims: bool) -> Any:
    if isinstance(ord, str):
        raise InvalidArgument(f"[linalg.norm] invalid norm order {ord!r} for vectors")
    ax = _ops.array_module(x)
    a = ax.abs(x)
    if ord is None or ord == 2:
        return ax.sqrt(_reduce("sum", _square_abs(x), axis, keepdims))
    if ord == np.inf:
        return _reduce("max", a, axis, keepdims)
    if ord == -np.inf:
        return _reduce("min", a, axis, keepdims)
    if ord == 0:
        nz = a != 0
        return _reduce("sum", _ops.astype(nz, _ops.real_np_dtype(a).name), axis, keepdims)
    if ord == 1:
        return _reduce("sum", a, axis, keepdims)
    p = float(ord)
    return _reduce("sum", a**p, axis, keepdims) ** (1.0 / p)


def _singular_values(x: Any, row: int, col: int) -> Any:
    """The singular values of the matrices of x spanned by axes (row, col), last axis."""
    xp = _ops.array_module(x)
    m = xp.moveaxis(x, (row, col), (-2, -1))
    return svdvals(m, check_finite=False)


def _matrix_norm(x: Any, ord: Any, row: int, col: int, keepdims: bool) -> Any:
    xp = _ops.array_module(x)
    a = xp.abs(x)
    if ord in (2, -2, "nuc"):
        s = _singular_values(x, row, col)
        r = _reduce("sum", s, -1) if ord == "nuc" else _reduce("max" if ord == 2 else "min", s, -1)
    elif ord in (1, -1):
        r = _reduce("max" if ord == 1 else "min", _reduce("sum", a, row), col - (col > row))
    elif ord in (np.inf, -np.inf):
        r = _reduce("max" if ord > 0 else "min", _reduce("sum", a, col), row - (row > col))
    elif ord in (None, "fro", "f"):
        r = xp.sqrt(_reduce("sum", _square_abs(x), (row, col)))
    else:
        raise InvalidArgument(f"[linalg.norm] invalid norm order {ord!r} for matrices")
    if keepdims:
        for ax_ in sorted((row, col)):
            r = r.unsqueeze(ax_) if _torch(r) else xp.expand_dims(r, ax_)
    return r


def norm(x: Any, ord: Any = None, axis: Any = None, keepdims: bool = False) -> Any:
    """Matrix or vector norm, as numpy.linalg.norm (same ``ord``, ``axis`` and ``keepdims``
    rules and real result dtype), in x's package and on its device.

    ``ord`` for vectors: None or 2, inf, -inf, 0 (nonzero count), 1, any other p (sum of
    ``|x|^p`` to the 1/p); for matrices (``axis`` a pair, or a 2-D ``x`` with ``axis=None``):
    None or 'fro', 'nuc', inf, -inf, 1, -1, 2, -2 (2, -2 and 'nuc' from gpula's svd).

    Example:
        >>> import numpy as np, gpula as gl
        >>> float(gl.linalg.norm(np.array([3.0, 4.0])))
        5.0
        >>> float(gl.linalg.norm(np.array([[1.0, -2.0], [3.0, 4.0]]), np.inf))
        7.0
    """
    x = _real_float(x)
    nd = len(x.shape)
    if not isinstance(keepdims, (bool, np.bool_)):
        raise InvalidArgument(f"[linalg.norm] keepdims must be True or False, got {keepdims!r}")
    if axis is None:
        if ord is None or (ord in ("f", "fro") and nd == 2) or (ord == 2 and nd == 1):
            xp = _ops.array_module(x)
            r = xp.sqrt(_reduce("sum", _square_abs(x), tuple(range(nd)), bool(keepdims)))
            return r
        if nd not in (1, 2):
            raise InvalidArgument("[linalg.norm] improper number of dimensions to norm")
        axis = tuple(range(nd))
    elif not isinstance(axis, tuple):
        try:
            axis = (operator.index(axis),)
        except TypeError:
            raise InvalidArgument(
                f"[linalg.norm] axis must be None, an integer or a tuple of integers, got {axis!r}"
            ) from None
    try:
        axes = tuple(operator.index(a) for a in axis)
    except TypeError:
        raise InvalidArgument(f"[linalg.norm] axis must hold integers, got {axis!r}") from None
    for a in axes:
        if not -nd <= a < nd:
            raise InvalidArgument(f"[linalg.norm] axis {a} is out of bounds for {nd} dimensions")
    axes = tuple(a % nd for a in axes)
    if len(axes) == 1:
        return _vector_norm(x, ord, axes[0], bool(keepdims))
    if len(axes) == 2:
        if axes[0] == axes[1]:
            raise InvalidArgument("[linalg.norm] duplicate axes given")
        return _matrix_norm(x, ord, axes[0], axes[1], bool(keepdims))
    raise InvalidArgument("[linalg.norm] improper number of dimensions to norm")


# ---- cond ------------------------------------------------------------------------------------


def cond(x: Any, p: Any = None) -> Any:
    """Condition number of each matrix, as numpy.linalg.cond: p None, 2 or -2 from the singular
    values (any (..., M, N)); 'fro', 'nuc', inf, -inf, 1, -1 as ``norm(x, p) * norm(inv(x), p)``
    (square matrices; a singular one gives inf). Real dtype of x, in x's package.

    Example:
        >>> import numpy as np, gpula as gl
        >>> float(gl.linalg.cond(np.array([[2.0, 0.0], [0.0, 0.5]])))
        4.0
    """
    (x,) = _ops.operands_of("cond", False, x=x)
    if len(x.shape) < 2:
        raise LinAlgError(f"[linalg.cond] {len(x.shape)}-dimensional array given; at least 2 needed")
    if 0 in tuple(x.shape[-2:]):
        raise LinAlgError("[linalg.cond] cond is not defined on empty arrays")
    xp = _ops.array_module(x)
    if p is None or p in (2, -2):
        s = svdvals(x, check_finite=False)
        big, small = s[..., 0], s[..., -1]
        with np.errstate(all="ignore"):
            r = small / big if p == -2 else big / small
    else:
        if x.shape[-1] != x.shape[-2]:
            raise LinAlgError("[linalg.cond] last 2 dimensions of the array must be square")
        xi, info = inv(x, check_finite=False, check_info=False)
        singular = info != 0
        # A singular matrix's inverse is undefined (its svd for 'nuc' could fail): zeros, inf.
        xi = xp.where(singular[..., None, None], 0 * xi, xi)
        r = norm(x, p, axis=(-2, -1)) * norm(xi, p, axis=(-2, -1))
        r = xp.where(singular, float("inf"), r)
    # numpy: NaN becomes inf unless x itself holds a NaN
    nan_x = _reduce("max", _ops.astype(xp.isnan(x), _ops.real_np_dtype(x).name), (-2, -1)) > 0
    r = xp.where(xp.isnan(r) & ~nan_x, float("inf"), r)
    return r[()] if isinstance(r, np.ndarray) and r.ndim == 0 else r


# ---- pinv, matrix_rank -----------------------------------------------------------------------


def _spectrum(a: Any, hermitian: bool, vectors: bool) -> Any:
    """(u, s, vh) with a = u diag(s) vh, s descending (economy svd, or eigh where hermitian);
    s alone when not vectors."""
    xp = _ops.array_module(a)
    if not hermitian:
        return svd(a, full_matrices=False, check_finite=False) if vectors else svdvals(a, check_finite=False)
    if not vectors:
        s = xp.abs(eigvalsh(a, check_finite=False))
        return -xp.sort(-s, axis=-1) if not _torch(s) else s.sort(dim=-1, descending=True).values
    w, v = eigh(a, check_finite=False)
    s = xp.abs(w)
    sign = xp.sign(w)
    vh = _ops.adj(v * (sign[..., None, :] if not _torch(w) else sign.unsqueeze(-2).to(v.dtype)))
    return v, s, vh


def _tolerance(s: Any, value: Any) -> Any:
    """value (a number or an array of the batch shape) as a column broadcastable against s."""
    v = np.asarray(value, dtype=_ops.real_np_dtype(s))
    if v.ndim == 0:
        return float(v)
    return _ops.like(s, v[..., None])


def pinv(
    a: Any,
    rcond: Any = None,
    hermitian: bool = False,
    *,
    rtol: Any = _NO_VALUE,
    check_finite: bool = True,
) -> Any:
    """Moore-Penrose pseudo-inverse of each (..., M, N) matrix, as numpy.linalg.pinv (from
    gpula's svd, or eigh with ``hermitian``): singular values at or below ``rcond * s_max``
    are dropped. rcond's default is 1e-15 unless ``rtol`` is given (None: ``max(M, N) * eps``);
    giving both raises. Result (..., N, M) in a's computed dtype and package.

    Example:
        >>> import numpy as np, gpula as gl
        >>> gl.linalg.pinv(np.array([[1.0, 0.0], [0.0, 0.0]]))
        array([[1., 0.],
               [0., 0.]])
    """
    hermitian = _ops.flag("pinv", "hermitian", hermitian)
    (a,) = _ops.operands_of("pinv", check_finite, a=a)
    if len(a.shape) < 2:
        raise InvalidArgument(f"[linalg.pinv] expected a matrix (..., M, N), got shape {tuple(a.shape)}")
    m, n = int(a.shape[-2]), int(a.shape[-1])
    if rcond is None:
        if rtol is _NO_VALUE:
            rcond = 1e-15
        elif rtol is None:
            rcond = max(m, n) * float(np.finfo(_ops.real_np_dtype(a)).eps)
        else:
            rcond = rtol
    elif rtol is not _NO_VALUE:
        raise InvalidArgument("[linalg.pinv] rtol and rcond can't be both set")
    if m == 0 or n == 0:
        pkg = _ops._interop.package_of(a)
        return pkg.empty(tuple(a.shape[:-2]) + (n, m), _ops.np_dtype(a).name, pkg.device_of(a))
    u, s, vh = _spectrum(a, hermitian, True)
    cutoff = _tolerance(s, rcond) * _reduce("max", s, -1, True)
    xp = _ops.array_module(s)
    large = s > cutoff
    s_inv = xp.where(large, 1 / xp.where(large, s, 1), 0 * s)
    scaled = _ops.adj(u) * _ops.astype(s_inv, _ops.np_dtype(u).name)[..., None]
    v = _ops.adj(vh)
    return _ops.mm(v.resolve_conj() if _torch(v) else v, scaled)  # torch's conj is a lazy view


def matrix_rank(A: Any, tol: Any = None, hermitian: bool = False, *, rtol: Any = None) -> Any:  # noqa: N803
    """Rank of each matrix from its singular values (or |eigenvalues| with ``hermitian``), as
    numpy.linalg.matrix_rank: those above ``tol``, default ``s_max * rtol`` with rtol's
    default ``max(M, N) * eps``; giving both raises. A 0-d or 1-D A has rank 1 unless all zero.
    int64 in A's package (a NumPy integer for one matrix).

    Example:
        >>> import numpy as np, gpula as gl
        >>> int(gl.linalg.matrix_rank(np.array([[1.0, 2.0], [2.0, 4.0]])))
        1
    """
    if rtol is not None and tol is not None:
        raise InvalidArgument("[linalg.matrix_rank] tol and rtol can't be both set")
    hermitian = _ops.flag("matrix_rank", "hermitian", hermitian)
    (a,) = _ops.operands_of("matrix_rank", False, A=A)
    xp = _ops.array_module(a)
    if len(a.shape) < 2:
        return int(bool((a != 0).any()))
    s = _spectrum(a, hermitian, False)
    if s.shape[-1] == 0:
        count = xp.zeros(tuple(s.shape[:-1]), dtype=xp.int64)
        return count[()] if xp is np else count
    if tol is None:
        if rtol is None:
            rtol = max(a.shape[-2:]) * float(np.finfo(_ops.real_np_dtype(s)).eps)
        limit = _reduce("max", s, -1, True) * _tolerance(s, rtol)
    else:
        limit = _tolerance(s, tol)
    big = s > limit
    count = big.sum(dim=-1) if _torch(big) else xp.count_nonzero(big, axis=-1)
    return count.astype(np.int64) if xp is not np and not _torch(big) else count


__all__ = ["norm", "cond", "pinv", "matrix_rank"]
