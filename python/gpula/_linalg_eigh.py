"""gpula.linalg.eigh / eigvalsh: symmetric/Hermitian eigendecomposition (see gpula._linalg for
the common conventions and keyword arguments).

Full spectrum only: selecting a subset of eigenpairs (top-k, index or value ranges) is not
there yet.
"""

from __future__ import annotations

from typing import Any

from . import _gpula
from ._linalg import _bool, _Call, _with_info


def eigh(
    a: Any,
    lower: bool = True,
    eigvals_only: bool = False,
    *,
    k: int | None = None,
    which: str = "largest",
    check_info: bool = True,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
) -> Any:
    """Eigenvalues and eigenvectors of Hermitian (real symmetric) ``a`` (batched), as
    numpy.linalg.eigh: ``(w, v)``, or ``w`` alone with ``eigvals_only=True``.

    ``w`` (real dtype, shape ``(..., n)``) is ascending; column ``v[..., :, j]`` (``a``'s dtype)
    is the unit eigenvector of ``w[..., j]``, so ``a @ v == v * w[..., None, :]``. Only the
    lower triangle of ``a`` is read (the upper with ``lower=False``, numpy's ``UPLO='U'``).
    Eigenvector signs/phases are the solver's (LAPACK ?syevd/?heevd on the CPU; cuSOLVER syevd,
    or syevjBatched for batches of order <= 32, on a GPU). A solver that does not converge
    raises gl.LinAlgError unless ``check_info=False``, which returns ``(result, info)``. NaN or
    Inf input gives NaN results (or that LinAlgError), never a crash.

    With ``k`` (an int): only the k largest (``which="largest"``) or smallest eigenpairs,
    ascending, through gpula._linalg_topk.eigh_topk; ``k=None`` is the full spectrum.

    Example:
        >>> import numpy as np, gpula as gl
        >>> w, v = gl.linalg.eigh(np.array([[2.0, 1.0], [1.0, 2.0]]))
        >>> w
        array([1., 3.])
    """
    if which not in ("largest", "smallest"):
        raise ValueError(f"[linalg.eigh] which: expected 'largest' or 'smallest', got {which!r}")
    if k is not None:
        from ._linalg_topk import eigh_topk

        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise ValueError(f"[linalg.eigh] k: expected a positive int or None, got {k!r}")
        return eigh_topk(
            a,
            k=k,
            which=which,
            lower=_bool("eigh", "lower", lower),
            eigvals_only=_bool("eigh", "eigvals_only", eigvals_only),
            stream=stream,
        )
    call = _Call("eigh", a, check_info, device, fallback, stream)
    only = _bool("eigh", "eigvals_only", eigvals_only)
    w, v, info = _gpula.linalg_eigh(
        call.pkg.export(a), _bool("eigh", "lower", lower), only, **call.kwargs
    )
    value = call.out(w) if only else (call.out(w), call.out(v))
    return _with_info(call, value, info)


def eigvalsh(
    a: Any,
    lower: bool = True,
    *,
    k: int | None = None,
    which: str = "largest",
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
    return eigh(
        a,
        lower,
        True,
        k=k,
        which=which,
        check_info=check_info,
        device=device,
        fallback=fallback,
        stream=stream,
    )


__all__ = ["eigh", "eigvalsh"]
