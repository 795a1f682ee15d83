"""gpula.linalg.solve_triangular: ``op(a) x = b`` for triangular ``a`` (BLAS trsm on the CPU,
cuBLAS trsm / trsmBatched on a GPU; see gpula.linalg for the common conventions and keyword
arguments).

Example:
    >>> import numpy as np, gpula as gl
    >>> a = np.array([[2.0, 0.0], [1.0, 4.0]])
    >>> gl.linalg.solve_triangular(a, np.array([2.0, 9.0]), lower=True)
    array([1., 2.])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _gpula, _interop
from .._gpula import InvalidArgument
from ._operands import Call, flag, operands_of, with_info

_TRANS = {0: 0, 1: 1, 2: 2, "N": 0, "T": 1, "C": 2}


def trans_code(op: str, trans: Any) -> int:
    """SciPy's trans (0, 1, 2 or 'N', 'T', 'C') as 0, 1 or 2."""
    if isinstance(trans, (bool, np.bool_)) or not isinstance(trans, (int, str, np.integer)):
        raise InvalidArgument(f"[linalg.{op}] trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    code = _TRANS.get(trans if isinstance(trans, str) else int(trans))
    if code is None:
        raise InvalidArgument(f"[linalg.{op}] trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    return code


def solve_triangular(
    a: Any,
    b: Any,
    trans: int | str = 0,
    lower: bool = False,
    unit_diagonal: bool = False,
    overwrite_b: bool = False,
    check_finite: bool = True,
    *,
    check_info: bool = True,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
) -> Any:
    """x with ``op(a) x = b`` for triangular ``a``, as scipy.linalg.solve_triangular (batched).

    Args:
        trans: 0 or 'N' (``a x = b``), 1 or 'T' (``a^T x = b``), 2 or 'C' (``a^H x = b``).
        lower: read ``a``'s lower triangle (else the upper, SciPy's default); the other triangle
            is never read.
        unit_diagonal: take ``a``'s diagonal as ones (never read).
        overwrite_b: accepted for SciPy's signature; inputs are never written.

    ``b`` is ``(n,)`` or ``(..., n, k)`` (batch dimensions broadcast against ``a``'s); ``a`` and
    ``b`` are promoted to their common type. A zero on ``a``'s diagonal raises gl.SingularMatrix
    (a numpy.linalg.LinAlgError, as SciPy raises) unless ``check_info=False``, which returns
    ``(x, info)`` (info k > 0: ``a[k-1, k-1]`` is zero).

    Example:
        >>> import numpy as np, gpula as gl
        >>> u = np.array([[1.0, 2.0], [0.0, 4.0]])
        >>> gl.linalg.solve_triangular(u, np.array([[5.0], [8.0]]))
        array([[1.],
               [2.]])
        >>> gl.linalg.solve_triangular(u, np.array([1.0, 10.0]), trans="T")
        array([1., 2.])
    """
    code = trans_code("solve_triangular", trans)
    lower = flag("solve_triangular", "lower", lower)
    unit = flag("solve_triangular", "unit_diagonal", unit_diagonal)
    flag("solve_triangular", "overwrite_b", overwrite_b)
    a, b = operands_of("solve_triangular", check_finite, a=a, b=b)
    call = Call("solve_triangular", a, check_info, device, fallback, stream)
    x, info = _gpula.linalg_solve_triangular(
        call.pkg.export(a),
        _interop.export(b, "linalg.solve_triangular", "b"),
        code,
        lower,
        unit,
        **call.kwargs,
    )
    return with_info(call, x, info)


__all__ = ["solve_triangular"]
