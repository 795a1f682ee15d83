"""gpula.linalg.svd / svdvals: singular value decomposition (see gpula.linalg for the common
conventions and keyword arguments).

CPU: LAPACK ?gesdd for every method but "gram". GPU (cuSOLVER): ``method`` picks the routine
(see :func:`svd` for what "auto" takes). ``k=`` computes only the k largest
singular triplets through gpula.linalg._topk.svd_topk (randomized).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _gpula
from .._gpula import InvalidArgument
from ._operands import Call, flag, operands_of, with_info
from ._results import SVDResult
from ._svd_gram import svd_gram, wants_gram
from ._topk import svd_topk

_METHODS = ("auto", "gesvd", "gesvdj", "gesvdp", "gesvda", "jacobi_batched", "gram")


def _method(op: str, method: Any) -> str:
    if not isinstance(method, str) or method not in _METHODS:
        raise InvalidArgument(
            f"[linalg.{op}] method must be one of {', '.join(repr(m) for m in _METHODS)}, "
            f"got {method!r}"
        )
    return method


def _topk(
    a: Any,
    k: Any,
    full: bool,
    compute_uv: bool,
    method: str,
    check_info: Any,
    device: Any,
    fallback: Any,
    stream: Any,
    tol: Any,
) -> Any:
    if tol is not None and (isinstance(tol, (bool, np.bool_)) or not isinstance(
            tol, (int, float, np.integer, np.floating)) or not 0 <= tol < 1):
        raise InvalidArgument(f"[linalg.svd] tol must be a float in [0, 1) or None, got {tol!r}")
    if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InvalidArgument(f"[linalg.svd] k must be a positive int or None, got {k!r}")
    shape = tuple(a.shape)
    if len(shape) >= 2 and not k <= min(shape[-2], shape[-1]):
        raise InvalidArgument(
            f"[linalg.svd] k must be <= min(m, n) = {min(shape[-2], shape[-1])} for a of shape "
            f"{shape}, got {k}"
        )
    if full:
        raise InvalidArgument(
            "[linalg.svd] full_matrices=True cannot be combined with k: the top-k SVD returns "
            "u (..., m, k) and vh (..., k, n) (leave full_matrices out)"
        )
    if method != "auto":
        raise InvalidArgument(
            f"[linalg.svd] method {method!r} names a full-SVD routine; with k only "
            "method='auto' (randomized top-k) is accepted"
        )
    if not flag("svd", "check_info", check_info):
        raise InvalidArgument(
            "[linalg.svd] check_info=False cannot be combined with k: the "
            "randomized top-k SVD has no info to return"
        )
    if device is not None or fallback is not None:
        raise InvalidArgument(
            "[linalg.svd] device and fallback cannot be combined with k: the "
            "top-k SVD runs where the data lives"
        )
    r = svd_topk(a, k=int(k), compute_uv=compute_uv, tol=tol, stream=stream,
                 full=lambda x: svd(x, False, compute_uv, check_finite=False))
    return SVDResult(*r) if compute_uv else r


def svd(
    a: Any,
    full_matrices: bool | None = None,
    compute_uv: bool = True,
    *,
    k: int | None = None,
    tol: float | None = None,
    method: str = "auto",
    check_finite: bool = True,
    check_info: bool = True,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
) -> Any:
    """Singular value decomposition of each ``(..., m, n)`` matrix, as numpy.linalg.svd:
    ``SVDResult(U, S, Vh)``, ``(u, s, vh)`` below, with ``a == (u[..., :, :K] * s[..., None, :])
    @ vh[..., :K, :]``, or ``s`` alone with ``compute_uv=False``.

    K = min(m, n). ``s`` (real dtype, ``(..., K)``) is descending and non-negative. As in NumPy,
    ``full_matrices`` is True by default (None means True, or the thin result with ``k``): the
    square unitary ``u`` ``(..., m, m)`` and ``vh`` ``(..., n, n)``; False gives ``u``
    ``(..., m, K)`` with orthonormal columns and ``vh`` ``(..., K, n)`` with orthonormal rows.
    Singular vector signs/phases are the solver's.

    ``method`` (GPU only, but "gram"; the CPU runs LAPACK ?gesdd): "auto" (gesvdjBatched for
    batches of m, n <= 32, "jacobi_batched" for other real batches that fit it, gesvdj for
    single matrices with min(m, n) < 1024, see below for larger ones),
    "gesvd" (QR iteration), "gesvdj" (Jacobi), "gesvdp" (polar decomposition; may perturb
    singular values near zero; a matrix whose perturbation cuSOLVER reports past sqrt(eps) s[0]
    raises gl.LinAlgError "did not converge", with a logged warning), "gesvda" (approximate,
    through a^H a; economy u/vh only, so full_matrices=True with m != n raises gl.NotSupported),
    "jacobi_batched" (gpula's batched one-sided Jacobi kernel, one matrix per thread block in
    shared memory: real batches up to about 128 x 128 float32 / 90 x 90 float64; gl.NotSupported
    otherwise), "gram" (float32 / complex64 on any device: float64 eigh of a^H a, accepted only
    where its accuracy matches the float32 reference, else rerun as "gesvd"; see
    gpula.linalg._svd_gram). On a GPU, "auto"
    is "gram" for float32/complex64 matrices with min(m, n) >= 1024 (economy or square; not
    with check_info=False, device, fallback or stream) and gesvd for other single matrices of
    that size.
    A solver that does not converge raises gl.LinAlgError (naming the batch index) unless
    ``check_info=False``, which returns ``(result, info)``. With ``check_finite=False``, NaN or
    Inf input gives NaN results (or that LinAlgError), never a crash.

    With ``k`` (an int, 1 <= k <= K): only the k largest singular triplets, ``u (..., m, k)``,
    ``s (..., k)``, ``vh (..., k, n)``, through gpula.linalg._topk.svd_topk (randomized range
    finder with power iterations); it takes neither full_matrices=True, a method other than
    "auto", check_info=False, nor device/fallback. Its accuracy: with ``tol=None`` a fixed number
    of power iterations (fast; singular values good to about 1e-2 relative where the spectrum
    decays slowly, to working precision where it decays fast); with ``tol`` (a float in [0, 1),
    0 meaning working precision, as scipy.sparse.linalg.svds) it iterates until every returned
    singular value is within ``tol * s[0]`` of the exact one (the residual
    ``||a v - u s||_F <= tol * s[0]`` bounds it; vectors to about ``tol * s[0]`` over the gap to
    the next singular value), switching to the full SVD (sliced, logged) where that is cheaper.
    ``tol`` is only accepted with ``k``.

    Example:
        >>> import numpy as np, gpula as gl
        >>> a = np.array([[3.0, 0.0], [4.0, 5.0]])
        >>> u, s, vh = gl.linalg.svd(a)
        >>> s
        array([6.70820393, 2.23606798])
        >>> bool(np.allclose((u * s) @ vh, a))
        True
    """
    method = _method("svd", method)
    full = full_matrices is None and k is None
    if full_matrices is not None:
        full = flag("svd", "full_matrices", full_matrices)
    uv = flag("svd", "compute_uv", compute_uv)
    (a,) = operands_of("svd", check_finite, a=a)
    if k is not None:
        return _topk(a, k, full, uv, method, check_info, device, fallback, stream, tol)
    if tol is not None:
        raise InvalidArgument("[linalg.svd] tol is the accuracy of the top-k SVD: pass it with k")
    if _gram("svd", a, full, method, check_info, device, fallback, stream):
        r = svd_gram(a, full, uv, lambda x: svd(x, full, uv, method="gesvd", check_finite=False))
        return SVDResult(*r) if uv else r
    call = Call("svd", a, check_info, device, fallback, stream)
    u, s, vh, info = _gpula.linalg_svd(call.pkg.export(a), full, uv, method, **call.kwargs)
    return with_info(call, SVDResult(u, s, vh) if uv else s, info)


def _gram(op: str, a: Any, full: bool, method: str, check_info: Any, device: Any, fallback: Any,
          stream: Any) -> bool:
    """Whether this call runs gpula.linalg._svd_gram: method="gram", or "auto" on a large
    single-precision GPU matrix (without check_info=False, device, fallback or stream)."""
    plain = flag(op, "check_info", check_info) and device is None and fallback is None
    plain = plain and stream is None
    if method == "auto":
        return plain and wants_gram(a, full)
    if method != "gram":
        return False
    name = str(getattr(a, "dtype", "")).replace("torch.", "")
    if name not in ("float32", "complex64"):
        raise InvalidArgument(
            f"[linalg.{op}] method 'gram' takes float32 or complex64 a, got {name or type(a)}"
        )
    if len(a.shape) < 2:
        raise InvalidArgument(f"[linalg.{op}] a: expected (..., m, n), got shape {tuple(a.shape)}")
    if full and a.shape[-2] != a.shape[-1]:
        raise InvalidArgument(
            f"[linalg.{op}] method 'gram' computes economy u and vh only; full_matrices=True "
            f"needs a square a, got shape {tuple(a.shape)}"
        )
    if not plain:
        raise InvalidArgument(
            f"[linalg.{op}] method 'gram' cannot be combined with check_info=False, device, "
            "fallback or stream: it runs where the data lives, on the caller's current stream"
        )
    return True


def svdvals(
    a: Any,
    *,
    method: str = "auto",
    check_finite: bool = True,
    check_info: bool = True,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
) -> Any:
    """Singular values (descending, real dtype, shape ``(..., min(m, n))``) of each matrix, as
    numpy.linalg.svdvals; :func:`svd` with ``compute_uv=False``.

    Example:
        >>> import numpy as np, gpula as gl
        >>> gl.linalg.svdvals(np.array([[0.0, 2.0], [1.0, 0.0], [0.0, 0.0]]))
        array([2., 1.])
    """
    method = _method("svdvals", method)
    (a,) = operands_of("svdvals", check_finite, a=a)
    if _gram("svdvals", a, False, method, check_info, device, fallback, stream):
        return svd_gram(
            a, False, False, lambda x: svdvals(x, method="gesvd", check_finite=False)
        )
    call = Call("svdvals", a, check_info, device, fallback, stream)
    s, info = _gpula.linalg_svdvals(call.pkg.export(a), method, **call.kwargs)
    return with_info(call, s, info)


__all__ = ["svd", "svdvals"]
