"""gpula.linalg.qr and gpula.linalg.lstsq (see gpula.linalg for the common conventions)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _gpula, _interop
from .._gpula import InvalidArgument
from . import _operands as _ops
from ._operands import Call, operands_of
from ._results import LstsqResult, QRResult

# NumPy's modes, and SciPy's names for the first two.
_MODES = {"reduced": "reduced", "complete": "complete", "r": "r", "economic": "reduced",
          "full": "complete"}


def _kwargs(call: Call) -> dict[str, Any]:
    kw = dict(call.kwargs)
    del kw["check_info"]  # QR and least squares have no info to check
    return kw


def qr(
    a: Any,
    mode: str = "reduced",
    *,
    check_finite: bool = True,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
) -> Any:
    """QR decomposition of each ``(..., m, n)`` matrix, as numpy.linalg.qr (k = min(m, n)):
    ``QRResult(Q, R)``, ``(q, r)`` below.

    ``mode="reduced"`` (SciPy's "economic") returns q ``(..., m, k)`` and r ``(..., k, n)``;
    ``"complete"`` (SciPy's "full") returns q ``(..., m, m)`` and r ``(..., m, n)``; ``"r"``
    returns r ``(..., k, n)`` only. q has orthonormal columns, r is upper triangular. Signs
    follow LAPACK's Householder QR and may differ from NumPy's on a GPU (compare ``q @ r``, not
    q and r).

    Example:
        >>> import numpy as np, gpula as gl
        >>> a = np.array([[3.0, 1.0], [4.0, 2.0]])
        >>> q, r = gl.linalg.qr(a)
        >>> bool(np.allclose(q @ r, a)), bool(np.allclose(q.T @ q, np.eye(2)))
        (True, True)
    """
    if not isinstance(mode, str) or mode not in _MODES:
        raise InvalidArgument(
            "[linalg.qr] mode must be 'reduced', 'complete', 'r', 'economic' or 'full', got "
            f"{mode!r}"
        )
    (a,) = operands_of("qr", check_finite, a=a)
    call = Call("qr", a, True, device, fallback, stream)
    q, r = _gpula.linalg_qr(call.pkg.export(a), _MODES[mode], **_kwargs(call))
    return r if mode == "r" else QRResult(q, r)


def _rcond(v: Any) -> float | None:
    if v is None:
        return None
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise InvalidArgument(f"[linalg.lstsq] rcond must be a real number or None, got {v!r}")
    if np.isnan(v):
        raise InvalidArgument("[linalg.lstsq] rcond must be a real number or None, got nan")
    return float(v)


def lstsq(
    a: Any,
    b: Any,
    rcond: float | None = None,
    *,
    check_finite: bool = True,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
) -> LstsqResult:
    """Least squares, as numpy.linalg.lstsq: ``LstsqResult(solution, residuals, rank,
    singular_values)`` (NumPy's four results, named as torch.linalg.lstsq names them).

    ``solution`` x minimizes ``||a x - b||`` (the minimum-norm one when a is rank-deficient or
    m < n). ``a`` is ``(..., m, n)``; ``b`` is ``(m,)`` (x: ``(..., n)``) or ``(..., m, k)``
    whose batch dimensions broadcast against ``a``'s (x: ``(..., n, k)``); ``a`` and ``b`` are
    promoted to their common type. ``residuals``: the squared 2-norm of each column of
    ``b - a x``, shape ``(..., k)`` (``(..., 1)`` for a 1-D b), where m > n and every matrix has
    full rank, else an empty array, as NumPy. ``rank``: int32 of the batch shape (a NumPy
    int32 scalar for one NumPy matrix, as NumPy). ``singular_values``: ``(..., min(m, n))``,
    descending. Batches follow torch.linalg.lstsq (numpy.linalg.lstsq takes one matrix).

    ``rcond``: singular values ``<= rcond * s[0]`` count as zero; None (default) is
    ``eps * max(m, n)``, NumPy's default; a negative value means eps.

    CPU: LAPACK ?gelsd (any rank). GPU: Householder QR, which assumes full rank (rank-deficient
    input gives Inf/NaN or meaningless values), takes no rcond, and returns empty ``rank`` and
    ``singular_values`` (as torch's "gels" driver), with residuals for m > n.
    NaN or Inf raises gl.InvalidArgument (a ValueError, SciPy's check_finite); with
    ``check_finite=False``, NaN or Inf in ``a`` still raises on the CPU, gl.LinAlgError (the
    CPU always scans ``a``: LAPACK's gelsd would not return), and NaN/Inf in ``b`` gives NaN.

    Example:
        >>> import numpy as np, gpula as gl
        >>> a = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        >>> x, residuals, rank, s = gl.linalg.lstsq(a, np.array([1.0, 1.0, 3.0]))
        >>> x.round(6), residuals.round(6), int(rank)
        (array([1.333333, 1.333333]), array([0.333333]), 2)
    """
    rc = _rcond(rcond)
    a, b = operands_of("lstsq", check_finite, a=a, b=b)
    call = Call("lstsq", a, True, device, fallback, stream)
    x, rank, s = _gpula.linalg_lstsq(
        call.pkg.export(a), _interop.export(b, "linalg.lstsq", "b"), rc, **_kwargs(call)
    )
    m, n = int(a.shape[-2]), int(a.shape[-1])
    real = _ops.real_dtype(_ops.dtype_of(x, "linalg.lstsq", "x"))
    if rank is None:  # a GPU's QR: full rank assumed, neither rank nor singular values
        rank = _ops.empty_1d(x, "int32")
        s = _ops.empty_1d(x, real)
        full_rank = True
    else:
        full_rank = bool((rank == n).all())
    if m > n and full_rank:  # NumPy's condition; ||b - a x||^2 per column
        vector = len(b.shape) == 1
        b = _ops.in_package_of(b, x)  # x is in a's package; b may be another's (NumPy)
        r = (b[:, None] if vector else b) - a @ (x[..., None] if vector else x)
        residuals = (abs(r) ** 2).sum(-2)
    else:
        residuals = _ops.empty_1d(x, real)
    if isinstance(rank, np.ndarray) and rank.ndim == 0:
        rank = rank[()]  # NumPy's np.int32
    return LstsqResult(x, residuals, rank, s)


__all__ = ["qr", "lstsq"]
