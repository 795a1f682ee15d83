"""gpula.linalg.eigh / eigvalsh: symmetric/Hermitian eigendecomposition (see gpula.linalg._solve for
the common conventions and keyword arguments)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _gpula
from .._gpula import InvalidArgument
from ._solve import EighResult, _bool, _Call, _operands, _with_info

_WHICH = ("largest", "smallest")


def eigh(
    a: Any,
    lower: bool = True,
    eigvals_only: bool = False,
    *,
    k: int | None = None,
    which: str = "largest",
    check_finite: bool = True,
    check_info: bool = True,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
) -> Any:
    """Eigenvalues and eigenvectors of Hermitian (real symmetric) ``a`` (batched), as
    numpy.linalg.eigh: ``EighResult(eigenvalues, eigenvectors)``, ``(w, v)`` below, or ``w``
    alone with ``eigvals_only=True``.

    ``w`` (real dtype, shape ``(..., n)``) is ascending; column ``v[..., :, j]`` (``a``'s dtype)
    is the unit eigenvector of ``w[..., j]``, so ``a @ v == v * w[..., None, :]``. Only the
    lower triangle of ``a`` is read (the upper with ``lower=False``, numpy's ``UPLO='U'``).
    Eigenvector signs/phases are the solver's (LAPACK ?syevd/?heevd on the CPU; cuSOLVER syevd,
    or syevjBatched for batches of order <= 32, on a GPU). A solver that does not converge
    raises gl.LinAlgError unless ``check_info=False``, which returns ``(result, info)``. With
    ``check_finite=False``, NaN or Inf input gives NaN results (or that LinAlgError), never a
    crash.

    With ``k`` (an int): only the k largest (``which="largest"``) or smallest eigenpairs,
    ascending, through gpula.linalg._topk.eigh_topk; ``k=None`` is the full spectrum.

    Example:
        >>> import numpy as np, gpula as gl
        >>> w, v = gl.linalg.eigh(np.array([[2.0, 1.0], [1.0, 2.0]]))
        >>> w
        array([1., 3.])
    """
    return _eigh("eigh", a, lower, eigvals_only, k, which, check_finite, check_info, device,
                 fallback, stream)


def _eigh(op: str, a: Any, lower: Any, eigvals_only: Any, k: Any, which: Any, check_finite: Any,
          check_info: Any, device: Any, fallback: Any, stream: Any) -> Any:
    """eigh and eigvalsh, whose messages name ``op``."""
    if not isinstance(which, str) or which not in _WHICH:
        raise InvalidArgument(
            f"[linalg.{op}] which must be 'largest' or 'smallest', got {which!r}"
        )
    lower = _bool(op, "lower", lower)
    only = _bool(op, "eigvals_only", eigvals_only)
    bad_k = isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 1
    if k is not None and bad_k:
        raise InvalidArgument(f"[linalg.{op}] k must be a positive int or None, got {k!r}")
    (a,) = _operands(op, check_finite, a=a)
    if k is not None:
        from ._topk import eigh_topk

        r = eigh_topk(a, k=int(k), which=which, lower=lower, eigvals_only=only, stream=stream)
        return r if only else EighResult(*r)
    call = _Call(op, a, check_info, device, fallback, stream)
    if op == "eigvalsh":  # its own native entry, whose messages name linalg.eigvalsh
        w, info = _gpula.linalg_eigvalsh(call.pkg.export(a), lower, **call.kwargs)
        return _with_info(call, w, info)
    w, v, info = _gpula.linalg_eigh(call.pkg.export(a), lower, only, **call.kwargs)
    return _with_info(call, w if only else EighResult(w, v), info)


def eigvalsh(
    a: Any,
    lower: bool = True,
    *,
    k: int | None = None,
    which: str = "largest",
    check_finite: bool = True,
    check_info: bool = True,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
) -> Any:
    """Eigenvalues (ascending, real dtype, shape ``(..., n)``) of Hermitian ``a``, as
    numpy.linalg.eigvalsh; :func:`eigh` with ``eigvals_only=True``.

    Example:
        >>> import numpy as np, gpula as gl
        >>> gl.linalg.eigvalsh(np.array([[2.0, 1.0], [1.0, 2.0]]))
        array([1., 3.])
    """
    return _eigh("eigvalsh", a, lower, True, k, which, check_finite, check_info, device,
                 fallback, stream)


__all__ = ["eigh", "eigvalsh"]
