"""gpula.linalg.qr and gpula.linalg.lstsq (see gpula._linalg for the common conventions)."""

from __future__ import annotations

from typing import Any

from . import _gpula, _interop
from ._gpula import InvalidArgument
from ._linalg import _Call

_MODES = ("reduced", "complete", "r")


def _kwargs(call: _Call) -> dict[str, Any]:
    kw = dict(call.kwargs)
    del kw["check_info"]  # QR and least squares have no info to check
    return kw


def qr(
    a: Any,
    mode: str = "reduced",
    *,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
) -> Any:
    """QR decomposition of each ``(..., m, n)`` matrix, as numpy.linalg.qr (k = min(m, n)).

    ``mode="reduced"`` returns ``(q, r)`` with q ``(..., m, k)`` and r ``(..., k, n)``;
    ``"complete"`` returns q ``(..., m, m)`` and r ``(..., m, n)``; ``"r"`` returns r
    ``(..., k, n)`` only. q has orthonormal columns, r is upper triangular. Signs follow LAPACK's
    Householder QR and may differ from NumPy's on a GPU (compare ``q @ r``, not q and r).

    Example:
        >>> import numpy as np, gpula as gl
        >>> a = np.array([[3.0, 1.0], [4.0, 2.0]])
        >>> q, r = gl.linalg.qr(a)
        >>> bool(np.allclose(q @ r, a)), bool(np.allclose(q.T @ q, np.eye(2)))
        (True, True)
    """
    if mode not in _MODES:
        raise InvalidArgument(
            f"[linalg.qr] mode must be 'reduced', 'complete' or 'r', got {mode!r}"
        )
    call = _Call("qr", a, True, device, fallback, stream)
    q, r = _gpula.linalg_qr(call.pkg.export(a), mode, **_kwargs(call))
    if mode == "r":
        return call.out(r)
    return call.out(q), call.out(r)


def lstsq(
    a: Any,
    b: Any,
    *,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
) -> Any:
    """Least-squares solution x minimizing ``||a x - b||`` (minimum-norm when m < n).

    Returns only numpy.linalg.lstsq's ``x`` (not its residuals, rank or singular values).
    ``a`` is ``(..., m, n)``; ``b`` is ``(m,)`` (x: ``(..., n)``) or ``(..., m, k)`` with batch
    dimensions broadcasting against ``a``'s (x: ``(..., n, k)``). On the CPU this is LAPACK
    ``?gelsd`` (any rank, rcond = eps * max(m, n) as NumPy); on a GPU it is Householder QR,
    which assumes full rank (rank-deficient input gives Inf/NaN or meaningless values).

    Example:
        >>> import numpy as np, gpula as gl
        >>> a = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        >>> gl.linalg.lstsq(a, np.array([1.0, 1.0, 2.0]))
        array([1., 1.])
    """
    call = _Call("lstsq", a, True, device, fallback, stream)
    x = _gpula.linalg_lstsq(call.pkg.export(a), _interop.export(b), **_kwargs(call))
    return call.out(x)


__all__ = ["qr", "lstsq"]
