"""gpula.linalg.orthogonalize (Muon's Newton-Schulz iteration) and polar (the exact polar
decomposition), batched, and grouped over a list of matrices of different sizes."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import _interop
from .._matmul import matmul
from ..errors import DTypeError, InvalidArgument
from ._grouped import grouped, is_group, named_errors
from ._operands import (
    INTEGER,
    adj,
    array_module,
    as_array,
    astype,
    check_finite_flag,
    contig,
    dtype_of,
    mT,
    operands_of,
)
from ._svd import svd

MUON_COEFFICIENTS = (3.4445, -4.7750, 2.0315)
_NS_DTYPES = ("bfloat16", "float16", "float32", "float64")


def _frobenius(x: Any) -> Any:
    """Each matrix's Frobenius norm, in float32 or wider, with its two matrix axes kept (size 1)."""
    xf = x if dtype_of(x, "linalg.orthogonalize", "g") in ("float32", "float64") \
        else astype(x, "float32")
    if array_module(xf).__name__ == "torch":
        return xf.square().sum(dim=(-2, -1), keepdim=True).sqrt()
    xp = array_module(xf)
    return xp.sqrt((xf * xf).sum(axis=(-2, -1), keepdims=True))


# The symmetric products of the iteration on a GPU: X X^T and A A computed as the blocks of their
# lower triangle only (row blocks of SYM_BLOCKS: 10 of 16 blocks, 62.5% of the FLOPs), one
# strided batch of GEMMs per block diagonal, then mirrored. Used from SYM_MIN_ROWS rows of the
# iterate (the smaller side of g) up, where the blocks stay large GEMMs.
SYM_BLOCKS = 4
SYM_MIN_ROWS = 2048


def _symmetric_route(x: Any) -> bool:
    n = x.shape[-2]
    return _interop.is_gpu_array(x) and n >= SYM_MIN_ROWS and n % (16 * SYM_BLOCKS) == 0


def _lower_blocks(p: Any, q: Any, alpha: float = 1.0, c: Any = None, beta: Any = None) -> list:
    """For contiguous p and q (..., n, k): the blocks (i + d, i) of alpha p q^T (+ beta c), as a
    list over the block diagonals d of arrays (..., SYM_BLOCKS - d, h, h), h = n / SYM_BLOCKS;
    c: such a list. Each diagonal is one strided-batched gpula matmul on row-block views."""
    *batch, n, k = p.shape
    h = n // SYM_BLOCKS
    out = []
    for d in range(SYM_BLOCKS):
        cnt = SYM_BLOCKS - d
        ps = p[..., d * h:, :].reshape(*batch, cnt, h, k)
        qs = q[..., : cnt * h, :].reshape(*batch, cnt, h, k)
        out.append(matmul(ps, mT(qs), None if c is None else c[d], alpha=alpha, beta=beta))
    return out


def _strided(x: Any, shape: tuple, strides: tuple, offset: int) -> Any:
    """A view of contiguous x's memory with element strides and an element offset."""
    xp = array_module(x)
    if xp.__name__ == "torch":
        return x.as_strided(shape, strides, x.storage_offset() + offset)
    item = x.dtype.itemsize
    return xp.lib.stride_tricks.as_strided(x.reshape(-1)[offset:], shape=shape,
                                           strides=tuple(st * item for st in strides))


def _mirrored(blocks: list) -> Any:
    """The symmetric (..., n, n) matrix whose lower-triangle blocks are ``blocks``
    (:func:`_lower_blocks`): each block diagonal written once, and once transposed."""
    *batch, _, h, _ = blocks[0].shape
    n = h * len(blocks)
    pkg = _interop.package_of(blocks[0])
    out = pkg.empty((*batch, n, n), dtype_of(blocks[0], "linalg.orthogonalize", "g"),
                    pkg.device_of(blocks[0]))
    outer = tuple(int(np.prod(batch[i + 1:], dtype=np.int64)) * n * n for i in range(len(batch)))
    for d, blk in enumerate(blocks):
        shape = (*batch, len(blocks) - d, h, h)
        _strided(out, shape, (*outer, h * n + h, n, 1), d * h * n)[...] = blk
        if d:
            _strided(out, shape, (*outer, h * n + h, 1, n), d * h)[...] = blk
    return out


def _newton_schulz(g: Any, steps: int, coefficients: tuple, dtype: str, eps: float) -> Any:
    a_, b_, c_ = coefficients
    given = dtype_of(g, "linalg.orthogonalize", "g")
    tall = g.shape[-2] > g.shape[-1]
    x = mT(g) if tall else g  # iterate on the wide side: X X^T is the smaller square
    x = x / (_frobenius(x) + eps)
    if dtype_of(x, "linalg.orthogonalize", "g") != dtype:
        x = astype(x, dtype)
    symmetric = _symmetric_route(x)
    if symmetric:
        x = contig(x)
    for _ in range(steps):
        if symmetric:
            a_blocks = _lower_blocks(x, x)                            # A = X X^T
            a = _mirrored(a_blocks)
            s = _mirrored(_lower_blocks(a, a, c_, a_blocks, b_))      # B = c A A + b A
        else:
            s = matmul(x, mT(x))                      # A = X X^T
            s = matmul(s, s, s, alpha=c_, beta=b_)    # B = c A A + b A
        x = matmul(s, x, x, alpha=1.0, beta=a_)       # X = B X + a X
    x = mT(x) if tall else x
    return astype(x, given) if dtype != given else x


def orthogonalize(
    g: Any,
    steps: int = 5,
    coefficients: tuple[float, float, float] = MUON_COEFFICIENTS,
    dtype: str | None = "bfloat16",
    *,
    eps: float = 1e-7,
) -> Any:
    """The Newton-Schulz approximation of the orthogonal polar factor of each ``(..., m, n)``
    matrix that Muon applies to its updates (Jordan et al.'s quintic iteration): ``X = G /
    (||G||_F + eps)``, transposed when m > n, then ``steps`` times ``A = X X^T``, ``B = b A + c
    A A``, ``X = a X + B X`` with ``(a, b, c) = coefficients``. The iteration runs in ``dtype``
    (bfloat16 by default, as Muon; None: g's own dtype), each product one gpula matmul with the
    sums folded into its alpha and beta; the result comes back in g's dtype (float16, bfloat16,
    float32 or float64; bool and integer input gives float64, complex raises gl.DTypeError) and
    package. The singular values of the result lie near 1 (about 0.7 to 1.2 with Muon's
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
        return grouped(op, g, lambda x: orthogonalize(x, steps, coefficients, dtype, eps=eps),
                       arg="g")
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
    if 0 in tuple(g.shape):
        return astype(g, name)
    with named_errors(op, "g"):
        return _newton_schulz(g, steps, coefficients, dtype or name, float(eps))


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
    W^H`` (left). ``a`` may be a list of matrices: a list of pairs comes back.

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
    with named_errors("linalg.polar", "a"):
        w, s, vh = svd(a, full_matrices=False, check_finite=False)
        u = matmul(w, vh)
        if side == "right":
            p = matmul(adj(vh) * s[..., None, :], vh)
        else:
            p = matmul(w * s[..., None, :], adj(w))
        p = (p + adj(p)) * 0.5  # exactly Hermitian
    return u, p


__all__ = ["orthogonalize", "polar"]
