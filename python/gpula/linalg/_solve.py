"""gpula.linalg.cholesky, cho_solve, lu_factor, lu_solve, solve, inv, det, slogdet: the
factorizations and solvers of square matrices (see gpula.linalg for the common conventions
and keyword arguments).

Example:
    >>> import numpy as np, gpula as gl
    >>> a = np.array([[4.0, 2.0], [2.0, 3.0]])
    >>> c = gl.linalg.cholesky(a)
    >>> c
    array([[2.        , 0.        ],
           [1.        , 1.41421356]])
    >>> gl.linalg.cho_solve((c, True), np.array([2.0, 1.0]))
    array([0.5, 0. ])
"""

from __future__ import annotations

import logging
import warnings
from typing import Any

import numpy as np

from .. import _gpula, _interop
from .._gpula import DTypeError, InvalidArgument, NotPositiveDefinite
from . import _operands as _ops
from ._grouped import grouped, is_group
from ._operands import Call, flag, operands_of, with_info
from ._results import LUFactorResult, SlogdetResult

_LOG = logging.getLogger("gpula")

_ASSUME = ("gen", "pos", "sym")
_REFINE = {
    None: "none",
    "auto": "auto",
    "rbt": "rbt",
    "f32": "f32",
    "tf32": "tf32",
    "f16": "f16",
    "bf16": "bf16",
}


def cholesky(
    a: Any,
    lower: bool = True,
    *,
    check_finite: bool = True,
    check_info: bool = True,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
    jitter: str | None = None,
) -> Any:
    """Cholesky factor of Hermitian positive definite ``a`` (batched), as scipy.linalg.cholesky.

    ``lower=True`` (unlike SciPy's default): L with ``a = L L^H``; else U with ``a = U^H U``.
    Only that triangle of ``a`` is read; the other triangle of the result is zero. Raises
    gl.NotPositiveDefinite (``.order``: the failing leading minor, 1-based; ``.batch_index``)
    unless ``check_info=False``, which returns ``(factor, info)``.

    ``jitter="auto"`` (GPyTorch's practice for kernel matrices): an item that is not positive
    definite is factored again with 1e-8, 1e-7, ..., 1e-4 times its own mean diagonal added to
    its diagonal (the items that failed together, one batched call per jitter), the first that
    succeeds kept and logged (WARNING, logger "gpula"); NotPositiveDefinite names the item if
    all fail.

    ``gl.linalg.group(matrices)`` (of different sizes) is a grouped call: a list of factors (of
    ``(factor, info)`` pairs with ``check_info=False``), one batched call per distinct shape,
    dtype and device; an error names the list item. A plain list of arrays is one stacked batch.

    Example:
        >>> import numpy as np, gpula as gl
        >>> gl.linalg.cholesky(np.array([[4.0, 2.0], [2.0, 3.0]]), lower=False)
        array([[2.        , 1.        ],
               [0.        , 1.41421356]])
    """
    if jitter not in (None, "auto"):
        raise InvalidArgument(f"[linalg.cholesky] jitter must be None or 'auto', got {jitter!r}")
    if is_group(a, marked_only=True):
        return grouped("linalg.cholesky", a, lambda x: cholesky(
            x, lower, check_finite=check_finite, check_info=check_info, device=device,
            fallback=fallback, stream=stream, jitter=jitter))
    if jitter:
        check_info = flag("cholesky", "check_info", check_info)  # the native call gets False
    (a,) = operands_of("cholesky", check_finite, a=a)
    call = Call("cholesky", a, False if jitter else check_info, device, fallback, stream)
    c, info = _gpula.linalg_cholesky(
        call.pkg.export(a), flag("cholesky", "lower", lower), **call.kwargs
    )
    if jitter is None:
        return with_info(call, c, info)
    return _with_jitter(a, c, info, flag("cholesky", "lower", lower), check_info,
                        dict(device=device, fallback=fallback, stream=stream))


JITTERS = (1e-8, 1e-7, 1e-6, 1e-5, 1e-4)


def _items_text(items: np.ndarray) -> str:
    shown = ", ".join(str(int(i)) for i in items[:10])
    if len(items) == 1:
        return f"item {shown} is"
    return f"items {shown}{', ...' if len(items) > 10 else ''} ({len(items)}) are"


def _with_jitter(a: Any, c: Any, info: Any, lower: bool, check_info: bool, kw: dict) -> Any:
    """cholesky(jitter="auto") after the first try: the failed items again, together (one
    batched call per jitter), each with JITTERS times its own mean diagonal added, until each
    succeeds or the largest failed too."""
    n = a.shape[-1]
    info_h = np.array(_ops.to_host(info)).reshape(-1)
    failing = np.flatnonzero(info_h)
    if failing.size:
        flat_a, flat_c = a.reshape(-1, n, n), c.reshape(-1, n, n)  # c is gpula's: contiguous
        diag = np.diagonal(_ops.to_host(flat_a[failing.tolist()]), axis1=-2, axis2=-1)
        scales = np.abs(np.real(diag)).mean(axis=-1)
        eye = _ops.like(flat_a, np.eye(n, dtype=_ops.np_dtype(flat_a)))
        rdt = _ops.real_np_dtype(flat_a)
        for j in JITTERS:
            items = flat_a[failing.tolist()]
            shift = _ops.like(items, (j * scales)[:, None, None].astype(rdt))
            ci, inf = cholesky(items + shift * eye, lower, check_finite=False, check_info=False,
                               **kw)
            ok = np.array(_ops.to_host(inf)).reshape(-1) == 0
            if ok.any():
                pos = np.flatnonzero(ok).tolist()
                flat_c[failing[ok].tolist()] = ci[pos]
                info_h[failing[ok]] = 0
                _LOG.warning("[linalg.cholesky] %s not positive definite: factored with jitter "
                             "%.1e x its mean diagonal (%s) added", _items_text(failing[ok]), j,
                             ", ".join(f"{v:.3g}" for v in j * scales[ok][:10]))
            failing, scales = failing[~ok], scales[~ok]
            if not failing.size:
                break
    if check_info and failing.size:
        i = int(failing[0])
        e = NotPositiveDefinite(
            f"[linalg.cholesky] a is not positive definite (batch index {i}), also "
            f"with jitter up to {JITTERS[-1]:.0e} x its mean diagonal added")
        e.batch_index, e.order = i, int(info_h[i])
        raise e
    if check_info:
        return c
    return c, _ops.like(info, info_h.reshape(tuple(info.shape)).astype(np.int32))


def _factor_pair(c_and_lower: Any, lower: Any) -> tuple[Any, bool]:
    """cho_solve's (c, lower): SciPy's pair, or a bare factor (lower=True unless given)."""
    pair = isinstance(c_and_lower, (tuple, list)) and len(c_and_lower) == 2
    if pair:  # a pair, not a 2-row matrix written as nested sequences
        first, second = c_and_lower
        pair = isinstance(second, (bool, np.bool_)) or len(getattr(first, "shape", ())) >= 2
    if not pair:
        return c_and_lower, True if lower is None else flag("cho_solve", "lower", lower)
    c, claimed = c_and_lower
    claimed = flag("cho_solve", "lower (the second item of (c, lower))", claimed)
    if lower is not None and flag("cho_solve", "lower", lower) != claimed:
        raise InvalidArgument(
            f"[linalg.cho_solve] lower={lower!r} contradicts the pair (c, {claimed}); give one"
        )
    return c, claimed


def _check_factor_side(c: Any, lower: bool) -> None:
    """Raises when c is triangular on the other side than the one claimed (as
    scipy.linalg.cholesky's upper factor passed without (c, False)); the claimed side's
    opposite triangle may hold anything, as scipy.linalg.cho_factor leaves it."""
    c = _ops.unbroadcast(c)
    if len(c.shape) < 2 or c.shape[-1] < 2 or 0 in tuple(c.shape):
        return  # not a matrix: the native call's shape check names c
    xp = _ops.array_module(c)

    def nonzero(t: Any) -> Any:  # per matrix: any nonzero entry
        return (t != 0).reshape(tuple(t.shape[:-2]) + (-1,)).any(-1)

    claimed = nonzero(xp.tril(c, -1) if lower else xp.triu(c, 1))
    other = nonzero(xp.triu(c, 1) if lower else xp.tril(c, -1))
    if bool((other & ~claimed).any()):
        side, claimed_side = ("upper", "lower") if lower else ("lower", "upper")
        raise InvalidArgument(
            f"[linalg.cho_solve] c is {side} triangular but was given as the {claimed_side} "
            f"factor (lower={lower}); pass (c, {not lower}) (scipy.linalg.cholesky returns the "
            "upper factor by default)"
        )


def cho_solve(
    c_and_lower: Any,
    b: Any,
    *,
    lower: bool | None = None,
    check_finite: bool = True,
    check_info: bool = True,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
) -> Any:
    """x with ``a x = b`` from the Cholesky factor of ``a``, as scipy.linalg.cho_solve.

    ``c_and_lower`` is SciPy's pair ``(c, lower)`` (scipy.linalg.cho_factor's result, whose
    other triangle is not read), or the factor ``c`` alone, which is read as lower (gpula's
    :func:`cholesky` default) unless ``lower=False``. With ``check_finite`` (default), a ``c``
    that is triangular on the side not claimed (e.g. scipy.linalg.cholesky's upper factor
    passed alone) raises gl.InvalidArgument. ``b`` is ``(n,)`` or ``(..., n, k)``; ``c`` and
    ``b`` are promoted to their common type.

    Example:
        >>> import numpy as np, gpula as gl
        >>> a = np.array([[4.0, 2.0], [2.0, 3.0]])
        >>> gl.linalg.cho_solve((gl.linalg.cholesky(a), True), np.array([[2.0], [1.0]]))
        array([[0.5],
               [0. ]])
    """
    c, lower = _factor_pair(c_and_lower, lower)
    c, b = operands_of("cho_solve", check_finite, c=c, b=b)
    if check_finite:
        _check_factor_side(c, lower)
    call = Call("cho_solve", c, check_info, device, fallback, stream)
    return _gpula.linalg_cho_solve(
        call.pkg.export(c), _interop.export(b, "linalg.cho_solve", "b"), lower, **call.kwargs
    )


def lu_factor(
    a: Any,
    *,
    check_finite: bool = True,
    check_info: bool = True,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
) -> Any:
    """LU with partial pivoting, as scipy.linalg.lu_factor: ``LUFactorResult(lu, piv)``.

    ``lu`` packs unit-lower L below the diagonal and U on and above it, column-major per
    matrix as SciPy returns it (Fortran order for one matrix; no copy back from LAPACK's or
    cuSOLVER's layout; C order where it is copied from another device: ``device=``,
    ``fallback=``); ``piv`` holds 0-based int32 pivots (row i was interchanged with row
    piv[i]), shape ``(..., n)``. An exactly singular matrix is factored too, as SciPy does:
    the factors are returned with a RuntimeWarning (SciPy's LinAlgWarning is one) naming the
    zero pivot U[i, i]; ``check_info=False`` returns ``((lu, piv), info)`` without warning.

    Example:
        >>> import numpy as np, gpula as gl
        >>> lu, piv = gl.linalg.lu_factor(np.array([[1.0, 2.0], [3.0, 4.0]]))
        >>> piv
        array([1, 1], dtype=int32)
    """
    (a,) = operands_of("lu_factor", check_finite, a=a)
    call = Call("lu_factor", a, check_info, device, fallback, stream)
    lu, piv, info = _gpula.linalg_lu_factor(
        call.pkg.export(a), **{**call.kwargs, "check_info": False}
    )
    if call.kwargs["check_info"]:
        _warn_singular("linalg.lu_factor", info)
    return with_info(call, LUFactorResult(lu, piv), info)


def _warn_singular(op: str, info: Any) -> None:
    """SciPy's warning (not an error) for an exactly singular factor: the first nonzero info."""
    host = _ops.to_host(info)
    bad = np.flatnonzero(host)
    if bad.size == 0:
        return
    k = int(host.flat[bad[0]])
    where = f" (batch index {int(bad[0])})" if np.ndim(host) else ""
    warnings.warn(
        f"[{op}] a is singular: U[{k - 1},{k - 1}] is exactly zero{where}; the factors are "
        "returned, as scipy.linalg.lu_factor does",
        RuntimeWarning,
        stacklevel=3,
    )


def _pivots(piv: Any) -> Any:
    """lu_solve's pivots as int32 (what lu_factor returns); other integer types are converted."""
    piv = _ops.as_array(piv, "linalg.lu_solve", "piv")
    name = _ops.dtype_of(piv, "linalg.lu_solve", "piv")
    if name == "int32":
        return piv
    if name not in _ops.INTEGER or name == "bool":
        raise DTypeError(f"[linalg.lu_solve] piv must hold integers, got dtype {name}")
    p32 = _ops.astype(piv, "int32")
    if not bool((_ops.astype(p32, name) == piv).all()):
        raise InvalidArgument("[linalg.lu_solve] piv holds values outside the int32 range")
    return p32


def lu_solve(
    lu_and_piv: Any,
    b: Any,
    *,
    check_finite: bool = True,
    check_info: bool = True,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
) -> Any:
    """x with ``a x = b`` from :func:`lu_factor`'s ``(lu, piv)`` (scipy's too), as
    scipy.linalg.lu_solve; ``lu`` and ``b`` are promoted to their common type.

    Example:
        >>> import numpy as np, gpula as gl
        >>> a = np.array([[1.0, 2.0], [3.0, 4.0]])
        >>> gl.linalg.lu_solve(gl.linalg.lu_factor(a), np.array([5.0, 11.0]))
        array([1., 2.])
    """
    if not isinstance(lu_and_piv, (tuple, list)) or len(lu_and_piv) != 2:
        raise InvalidArgument(
            "[linalg.lu_solve] lu_and_piv must be the (lu, piv) pair lu_factor returns, got "
            f"{type(lu_and_piv).__name__}"
        )
    lu, b = operands_of("lu_solve", check_finite, lu=lu_and_piv[0], b=b)
    piv = _pivots(lu_and_piv[1])
    call = Call("lu_solve", lu, check_info, device, fallback, stream)
    return _gpula.linalg_lu_solve(
        call.pkg.export(lu),
        _interop.export(piv, "linalg.lu_solve", "piv"),
        _interop.export(b, "linalg.lu_solve", "b"),
        **call.kwargs,
    )


def solve(
    a: Any,
    b: Any,
    *,
    assume_a: str = "gen",
    lower: bool = False,
    refine: str | None = None,
    check_finite: bool = True,
    check_info: bool = True,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
) -> Any:
    """x with ``a x = b``, batched, with numpy.linalg.solve's shape rules; ``a`` and ``b`` are
    promoted to their common type.

    Args:
        assume_a: "gen" (LU with partial pivoting), "pos" (Cholesky; ``a`` Hermitian positive
            definite) or "sym" (symmetric indefinite; complex symmetric for complex types).
        lower: for "pos" and "sym", read ``a``'s lower triangle (else the upper), as scipy.
        refine: iterative refinement on a GPU for assume_a="gen": None (off); "rbt" (random
            butterfly transformation, LU without pivoting, refinement in working precision
            until ``||b - a x||_1 <= sqrt(n) eps ||a||_1 ||x||_1``; falls back to pivoted LU
            where that fails, e.g. for singular ``a``; synchronizes once per refinement step,
            also with ``check_info=False``); "auto" (the fastest that reaches
            working precision: "rbt" for n >= 512 on a GPU, else the plain solve); or a lower
            inner precision through cuSOLVER IRS: "f32", "tf32", "f16", "bf16". The CPU
            accepts every value and solves in working precision.

    Raises gl.SingularMatrix (gen, sym) or gl.NotPositiveDefinite (pos) unless
    ``check_info=False``, which returns ``(x, info)``.

    Example:
        >>> import numpy as np, gpula as gl
        >>> a = np.array([[3.0, 1.0], [1.0, 2.0]])
        >>> gl.linalg.solve(a, np.array([9.0, 8.0]))
        array([2., 3.])
        >>> gl.linalg.solve(a, np.array([9.0, 8.0]), assume_a="pos")
        array([2., 3.])
    """
    if not isinstance(assume_a, str) or assume_a not in _ASSUME:
        raise InvalidArgument(
            f"[linalg.solve] assume_a must be 'gen', 'pos' or 'sym', got {assume_a!r}"
        )
    if not (refine is None or isinstance(refine, str)) or refine not in _REFINE:
        raise InvalidArgument(
            "[linalg.solve] refine must be None, 'auto', 'rbt', 'f32', 'tf32', 'f16' or 'bf16', "
            "got "
            f"{refine!r}"
        )
    a, b = operands_of("solve", check_finite, a=a, b=b)
    call = Call("solve", a, check_info, device, fallback, stream)
    x, info = _gpula.linalg_solve(
        call.pkg.export(a),
        _interop.export(b, "linalg.solve", "b"),
        assume_a,
        _REFINE[refine],
        flag("solve", "lower", lower),
        **call.kwargs,
    )
    return with_info(call, x, info)


def inv(
    a: Any,
    *,
    check_finite: bool = True,
    check_info: bool = True,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
) -> Any:
    """Inverse of each matrix. Raises gl.SingularMatrix unless ``check_info=False``, which
    returns ``(inverse, info)``.

    Example:
        >>> import numpy as np, gpula as gl
        >>> gl.linalg.inv(np.array([[2.0, 1.0], [1.0, 1.0]]))
        array([[ 1., -1.],
               [-1.,  2.]])
    """
    (a,) = operands_of("inv", check_finite, a=a)
    call = Call("inv", a, check_info, device, fallback, stream)
    x, info = _gpula.linalg_inv(call.pkg.export(a), **call.kwargs)
    return with_info(call, x, info)


def det(
    a: Any,
    *,
    check_finite: bool = True,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
) -> Any:
    """Determinant of each matrix (``a``'s computed dtype; shape ``a.shape[:-2]``; 1 for n = 0).

    Singular matrices give 0, never an error.

    Example:
        >>> import numpy as np, gpula as gl
        >>> float(gl.linalg.det(np.array([[1.0, 2.0], [3.0, 4.0]])))
        -2.0
    """
    (a,) = operands_of("det", check_finite, a=a)
    call = Call("det", a, True, device, fallback, stream)
    return _gpula.linalg_det(call.pkg.export(a), **call.kwargs)


def slogdet(
    a: Any,
    *,
    check_finite: bool = True,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
) -> SlogdetResult:
    """``SlogdetResult(sign, logabsdet)`` of each matrix, as numpy.linalg.slogdet.

    ``sign`` has ``a``'s computed dtype (+-1, a unit complex number for complex ``a``, 0 when
    singular); ``logabsdet`` the real dtype (-inf when singular).

    Example:
        >>> import numpy as np, gpula as gl
        >>> sign, logabsdet = gl.linalg.slogdet(np.array([[1.0, 2.0], [3.0, 4.0]]))
        >>> float(sign), round(float(logabsdet), 6)
        (-1.0, 0.693147)
    """
    (a,) = operands_of("slogdet", check_finite, a=a)
    call = Call("slogdet", a, True, device, fallback, stream)
    sign, logabsdet = _gpula.linalg_slogdet(call.pkg.export(a), **call.kwargs)
    return SlogdetResult(sign, logabsdet)


__all__ = ["cholesky", "cho_solve", "lu_factor", "lu_solve", "solve", "inv", "det", "slogdet"]
