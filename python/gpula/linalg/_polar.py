"""gpula.linalg.orthogonalize (Muon's Newton-Schulz iteration) and polar (the exact polar
decomposition), batched, and grouped over a list of matrices of different sizes."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _gpula, _interop
from ..errors import DTypeError, InvalidArgument
from ._grouped import grouped, is_group
from ._operands import (
    INTEGER,
    Call,
    as_array,
    astype,
    check_finite_flag,
    dtype_of,
    operands_of,
)

MUON_COEFFICIENTS = (3.4445, -4.7750, 2.0315)
_NS_DTYPES = ("bfloat16", "float16", "float32", "float64")


def orthogonalize(
    g: Any,
    steps: int = 5,
    coefficients: tuple[float, float, float] = MUON_COEFFICIENTS,
    dtype: str | None = "bfloat16",
    *,
    eps: float = 1e-7,
    symmetric_products: bool | None = None,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
) -> Any:
    """The Newton-Schulz approximation of the orthogonal polar factor of each ``(..., m, n)``
    matrix that Muon applies to its updates (Jordan et al.'s quintic iteration): ``X = G /
    (||G||_F + eps)``, transposed when m > n, then ``steps`` times ``A = X X^T``, ``B = b A + c
    A A``, ``X = a X + B X`` with ``(a, b, c) = coefficients``. The iteration runs in ``dtype``
    (bfloat16 by default, as Muon; None: g's own dtype; on the CPU bfloat16 and float16 iterate
    in float32), each product one gpula matmul with the sums folded into its alpha and beta
    (C++ ``gpula::linalg::orthogonalize``); the result comes back in g's dtype (float16,
    bfloat16, float32 or float64; bool and integer input gives float64, complex raises
    gl.DTypeError) and package. ``symmetric_products``: X X^T and A A computed as the blocks of
    their lower triangle only (62.5% of their FLOPs) and mirrored; None takes it on a GPU for
    iterates (min(m, n) rows) of at least 2048 rows, True always (rows a multiple of 4), False
    never. The singular values of the result lie near 1 (about 0.7 to 1.2 with Muon's
    coefficients), not exactly: for the exact factor use :func:`polar`. ``g`` may be a list of
    matrices of different shapes: a list comes back, each shape computed in one batched call.

    Example:
        >>> import numpy as np, gpula as gl
        >>> q = gl.linalg.orthogonalize(np.diag([3.0, 0.5]), steps=10, dtype="float64")
        >>> bool(np.abs(np.linalg.svd(q, compute_uv=False) - 1).max() < 0.35)
        True
    """
    op = "linalg.orthogonalize"
    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 0:
        raise InvalidArgument(f"[{op}] steps must be an int >= 0, got {steps!r}")
    steps = int(steps)
    if not (isinstance(coefficients, (tuple, list)) and len(coefficients) == 3
            and all(_real(c) for c in coefficients)):
        raise InvalidArgument(f"[{op}] coefficients must be three numbers (a, b, c), got "
                              f"{coefficients!r}")
    coefficients = tuple(float(c) for c in coefficients)
    if dtype is not None and dtype not in _NS_DTYPES:
        raise InvalidArgument(f"[{op}] dtype must be one of {_NS_DTYPES} or None, got {dtype!r}")
    if not nonnegative(eps):
        raise InvalidArgument(f"[{op}] eps must be a finite number >= 0, got {eps!r}")
    if is_group(g):
        return grouped(op, g, lambda x: orthogonalize(
            x, steps, coefficients, dtype, eps=eps, symmetric_products=symmetric_products,
            device=device, fallback=fallback, stream=stream), arg="g")
    g = as_array(g, op, "g")
    name = dtype_of(g, op, "g")
    if name in INTEGER:  # bool and integers: float64, as the rest of gl.linalg
        g, name = astype(g, "float64"), "float64"
    if name not in _NS_DTYPES:
        raise DTypeError(f"[{op}] g has dtype {name}; it takes real floating input "
                         f"({', '.join(_NS_DTYPES)}; bool and integers as float64)")
    if len(g.shape) < 2:
        raise InvalidArgument(f"[{op}] g must be a matrix (..., m, n), got shape "
                              f"{tuple(g.shape)}")
    if dtype in ("bfloat16",) and _interop.package_of(g).name == "cupy":
        raise DTypeError(f"[{op}] CuPy has no bfloat16 arrays: pass dtype="
                         "'float16' or 'float32' (or None: g's dtype)")
    if symmetric_products is not None and not isinstance(symmetric_products, (bool, np.bool_)):
        raise InvalidArgument(f"[{op}] symmetric_products must be None, True or False, got "
                              f"{symmetric_products!r}")
    sym = None if symmetric_products is None else bool(symmetric_products)
    if 0 in tuple(g.shape):
        return astype(g, name)
    call = Call("orthogonalize", g, True, device, fallback, stream)
    kw = dict(call.kwargs)
    del kw["check_info"]
    return _gpula.linalg_orthogonalize(call.pkg.export(g), steps, *coefficients, dtype,
                                       float(eps), sym, **kw)


def _real(x: Any) -> bool:
    """A real number (Python's or NumPy's), not a bool."""
    return isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(
        x, (bool, np.bool_))


def nonnegative(x: Any) -> bool:
    """A finite real number >= 0 (an eps), not a bool."""
    try:
        return _real(x) and math.isfinite(float(x)) and float(x) >= 0
    except OverflowError:  # an int past float's range
        return False


def polar(a: Any, side: str = "right", *, check_finite: bool = True) -> tuple[Any, Any]:
    """The polar decomposition of each ``(..., m, n)`` matrix, as scipy.linalg.polar: ``(u,
    p)`` with ``a = u p`` (``side="right"``, p (n, n) Hermitian positive semidefinite) or ``a =
    p u`` (``side="left"``, p (m, m)); u has orthonormal columns (m >= n) or rows (m < n).
    Computed from the thin SVD ``a = W S V^H``: ``u = W V^H``, ``p = V S V^H`` (right) or ``W S
    W^H`` (left), each product one gpula matmul, p then made exactly Hermitian, ``(p + p^H) /
    2`` (C++ ``gpula::linalg::polar``). ``a`` may be a list of matrices: a list of pairs comes
    back.

    Example:
        >>> import numpy as np, gpula as gl
        >>> u, p = gl.linalg.polar(np.array([[0.0, 2.0], [1.0, 0.0]]))
        >>> u
        array([[0., 1.],
               [1., 0.]])
        >>> p
        array([[1., 0.],
               [0., 2.]])
    """
    if side not in ("right", "left"):
        raise InvalidArgument(f"[linalg.polar] side must be 'right' or 'left', got {side!r}")
    check_finite_flag("linalg.polar", check_finite)
    if is_group(a):
        return grouped("linalg.polar", a, lambda x: polar(x, side, check_finite=check_finite))
    (a,) = operands_of("polar", check_finite, a=a)
    if len(a.shape) < 2:
        raise InvalidArgument(f"[linalg.polar] a must be a matrix (..., m, n), got shape "
                              f"{tuple(a.shape)}")
    call = Call("polar", a, True, None, None, None)
    kw = dict(call.kwargs)
    del kw["check_info"]
    u, p = _gpula.linalg_polar(call.pkg.export(a), side, **kw)
    return u, p


__all__ = ["orthogonalize", "polar"]
