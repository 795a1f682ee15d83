"""gpula.linalg.eigh / eigvalsh: symmetric/Hermitian eigendecomposition (see gpula.linalg for
the common conventions and keyword arguments), and its top-k route (eigh(k=...)).

eigh_topk: Chebyshev-filtered block subspace iteration (Zhou-Saad CheFSI): spectrum bounds from a
few Lanczos steps, then per iteration a degree-d Chebyshev polynomial of A that damps the unwanted
part of the spectrum (d gpula matmuls of A with an n x b block), a QR re-orthonormalization and a
Rayleigh-Ritz step (one more matmul, a small b x b eigh on the host). Converged when every wanted
residual ||A v - v w|| <= tol ||A|| (tol = 10 sqrt(n) eps, ||A|| the Lanczos bound). Cost
O(n^2 b d) per iteration, growing with k; convergence depends on the gap between the k-th and
the (b+1)-th eigenvalue: fast for decaying spectra (PCA, kernels), slow for flat ones.

method="auto" weighs both routes in gemm flops (_topk.Budget): it runs the full eigh straight
away where three iterations would cost more, and otherwise gives the iteration the full eigh's
cost as its budget, switching to the full eigh (returning the slice) as soon as the iterations
still needed at the observed rate of convergence, or a stall, would go past it; so a flat
spectrum costs at most about twice the full eigh, never many times it. The switch is logged as
a WARNING once per process, at INFO after that.

The random start is seeded (options["seed"], default 0): results are deterministic.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from .. import _gpula, _interop
from .._gpula import InvalidArgument
from ._operands import (
    Call,
    adj,
    array_module,
    contig,
    flag,
    flip_last,
    like,
    mm,
    np_dtype,
    operands_of,
    real_np_dtype,
    to_host,
    with_info,
)
from ._grouped import grouped, is_group
from ._results import EighResult
from ._topk import (
    GEMV_WEIGHT,
    QR_WEIGHT,
    Budget,
    check_common,
    empty_results,
    full_cost,
    host_memory,
    log_switch,
    orth,
    randn,
)

_log = logging.getLogger("gpula")

_EIGH_METHODS = ("auto", "subspace", "full")
_WHICH = ("largest", "smallest")


def eigh(
    a: Any,
    b: Any = None,
    lower: bool | None = None,
    eigvals_only: bool | None = None,
    *,
    type: int = 1,  # noqa: A002  (scipy's name)
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
    ascending, through eigh_topk below; ``k=None`` is the full spectrum.

    ``lower`` defaults to True and ``eigvals_only`` to False. A True/False second positional
    argument is ``lower`` (and a third ``eigvals_only``), gpula's positional form before ``b``.

    With ``b`` (Hermitian positive definite; scipy.linalg.eigh(a, b)): the generalized problem of scipy's ``type`` 1 (``a v = w b v``), 2
    (``a b v = w v``) or 3 (``b a v = w v``); ``v`` is normalized as scipy's (``v^H b v = I`` for
    types 1 and 2, ``v^H inv(b) v = I`` for type 3); ``a`` and ``b`` are promoted to their common
    type and their batch dimensions broadcast. LAPACK ?sygvd/?hegvd on the CPU, cuSOLVER
    sygvd per matrix on a GPU. A ``b`` that is not positive definite raises
    gl.NotPositiveDefinite (unless ``check_info=False``); ``k`` does not combine with ``b``.

    ``gl.linalg.group(matrices)`` (matrices of different sizes: Shampoo's preconditioner blocks)
    is a grouped call: a list of results, one per item in order, computed by one batched call
    per distinct shape, dtype and device; an error names the list item. A plain list of arrays
    is NumPy's: one stacked batch.

    Example:
        >>> import numpy as np, gpula as gl
        >>> w, v = gl.linalg.eigh(np.array([[2.0, 1.0], [1.0, 2.0]]))
        >>> w
        array([1., 3.])
        >>> blocks = gl.linalg.group([np.diag([3.0, 1.0]), np.eye(3)])
        >>> [r.eigenvalues for r in gl.linalg.eigh(blocks)]
        [array([1., 3.]), array([1., 1., 1.])]
    """
    if _is_flag(b):  # eigh(a, lower[, eigvals_only]): the positional form before b
        if lower is not None and eigvals_only is not None:
            raise TypeError("eigh() got lower twice: a flag in the place of b, and lower")
        b, lower, eigvals_only = None, b, (lower if lower is not None else eigvals_only)
    lower = True if lower is None else lower
    eigvals_only = False if eigvals_only is None else eigvals_only
    if is_group(a, marked_only=True):
        if b is not None:
            raise InvalidArgument("[linalg.eigh] b (the generalized problem) does not combine "
                                  "with a group of matrices a (gl.linalg.group)")
        return grouped("linalg.eigh", a, lambda x: _eigh(
            "eigh", x, lower, eigvals_only, k, which, check_finite, check_info, device, fallback,
            stream))
    if b is not None:
        if k is not None:
            raise InvalidArgument("[linalg.eigh] k does not combine with b (the generalized problem)")
        return _eigh_generalized(a, b, lower, eigvals_only, type, check_finite, check_info, device,
                                 fallback, stream)
    return _eigh("eigh", a, lower, eigvals_only, k, which, check_finite, check_info, device,
                 fallback, stream)


def _is_flag(x: Any) -> bool:
    """Whether x is True/False (NumPy's too, and 0-d bool arrays), not a matrix b."""
    if isinstance(x, (bool, np.bool_)):
        return True
    return isinstance(x, np.ndarray) and x.shape == () and x.dtype == np.bool_


def _eigh_generalized(a: Any, b: Any, lower: Any, eigvals_only: Any, type_: Any,
                      check_finite: Any, check_info: Any, device: Any, fallback: Any,
                      stream: Any) -> Any:
    """eigh(a, b): the generalized symmetric-definite problem, natively."""
    lower = flag("eigh", "lower", lower)
    only = flag("eigh", "eigvals_only", eigvals_only)
    if isinstance(type_, (bool, np.bool_)) or type_ not in (1, 2, 3):
        raise InvalidArgument(f"[linalg.eigh] type must be 1, 2 or 3, got {type_!r}")
    a, b = operands_of("eigh", check_finite, a=a, b=b)
    call = Call("eigh", a, check_info, device, fallback, stream)
    w, v, info = _gpula.linalg_eigh_generalized(
        call.pkg.export(a), _interop.export(b, "linalg.eigh", "b"), int(type_), lower, only,
        **call.kwargs
    )
    return with_info(call, w if only else EighResult(w, v), info)


def _eigh(op: str, a: Any, lower: Any, eigvals_only: Any, k: Any, which: Any, check_finite: Any,
          check_info: Any, device: Any, fallback: Any, stream: Any) -> Any:
    """eigh and eigvalsh, whose messages name ``op``."""
    if not isinstance(which, str) or which not in _WHICH:
        raise InvalidArgument(
            f"[linalg.{op}] which must be 'largest' or 'smallest', got {which!r}"
        )
    lower = flag(op, "lower", lower)
    only = flag(op, "eigvals_only", eigvals_only)
    bad_k = isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)) or k < 1
    if k is not None and bad_k:
        raise InvalidArgument(f"[linalg.{op}] k must be a positive int or None, got {k!r}")
    (a,) = operands_of(op, check_finite, a=a)
    if k is not None:
        r = eigh_topk(a, k=int(k), which=which, lower=lower, eigvals_only=only, stream=stream)
        return r if only else EighResult(*r)
    call = Call(op, a, check_info, device, fallback, stream)
    if op == "eigvalsh":  # its own native entry, whose messages name linalg.eigvalsh
        w, info = _gpula.linalg_eigvalsh(call.pkg.export(a), lower, **call.kwargs)
        return with_info(call, w, info)
    w, v, info = _gpula.linalg_eigh(call.pkg.export(a), lower, only, **call.kwargs)
    return with_info(call, w if only else EighResult(w, v), info)


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
    numpy.linalg.eigvalsh; :func:`eigh` with ``eigvals_only=True`` (its grouped form too).

    Example:
        >>> import numpy as np, gpula as gl
        >>> gl.linalg.eigvalsh(np.array([[2.0, 1.0], [1.0, 2.0]]))
        array([1., 3.])
    """
    if is_group(a, marked_only=True):
        return grouped("linalg.eigvalsh", a, lambda x: _eigh(
            "eigvalsh", x, lower, True, k, which, check_finite, check_info, device, fallback,
            stream))
    return _eigh("eigvalsh", a, lower, True, k, which, check_finite, check_info, device,
                 fallback, stream)


@host_memory("linalg.eigh")
def eigh_topk(
    a: Any,
    *,
    k: int,
    which: str = "largest",
    lower: bool = True,
    eigvals_only: bool = False,
    method: str = "auto",
    options: Any = None,
    stream: Any = None,
) -> Any:
    """The k largest (or smallest) eigenpairs of Hermitian ``a``: ``(w (..., k) ascending,
    v (..., n, k))``, or ``w``. method: "subspace" (Chebyshev-filtered block subspace iteration +
    Rayleigh-Ritz, falling back to "full" when it stalls or would not converge within max_iter),
    "full" (full eigh, sliced); "auto" is "subspace" for k <= n / 4 where the cost model expects
    it to be cheaper, with a budget of the full eigh's cost (see the module), else "full". options: {"tol": residual
    tolerance relative to ||A|| (default 10 sqrt(n) eps), "max_iter": 30, "degree": 12,
    "block": k + max(16, k // 2), "lanczos_steps": 24, "seed": 0}."""
    opts = check_common("eigh", a, k, options)
    n = int(a.shape[-1])
    if int(a.shape[-2]) != n:
        raise InvalidArgument(f"[linalg.eigh] a: expected (..., n, n), got shape {tuple(a.shape)}")
    if not 1 <= k <= n:
        raise InvalidArgument(
            f"[linalg.eigh] k: expected 1 <= k <= n = {n} for a of shape {tuple(a.shape)}, got {k}"
        )
    if which not in ("largest", "smallest"):
        raise InvalidArgument(
            f"[linalg.eigh] which: expected 'largest' or 'smallest', got {which!r}"
        )
    if method not in _EIGH_METHODS:
        raise InvalidArgument(
            f"[linalg.eigh] method: expected one of {_EIGH_METHODS}, got {method!r}"
        )
    budget = _budget(a, k, eigvals_only, opts) if method == "auto" else Budget(np.inf, 0.0)
    if method == "auto":
        method = "subspace" if 4 * k <= n and budget.affordable(3) else "full"
        _log.info("[linalg.eigh] auto: method %s (k=%d, n=%d)", method, k, n)
    sel = slice(n - k, n) if which == "largest" else slice(0, k)
    batch = tuple(a.shape[:-2])
    if 0 in batch:  # nothing to compute; NumPy's shapes
        w, v = empty_results(a, (batch + (k,), batch + (n, k)), (True, False))
        return w if eigvals_only else (w, v)
    if method == "subspace":
        out = _subspace(a, k, which, lower, opts, budget)
        if not isinstance(out, str):
            w, v = out
            return w if eigvals_only else (w, v)
        log_switch("linalg.eigh", f"subspace iteration {out}; full eigh")
    w, v = _eigh_full(a, lower)
    w = contig(w[..., sel])
    return w if eigvals_only else (w, contig(v[..., :, sel]))


def _budget(a: Any, k: int, eigvals_only: bool, opts: dict) -> Budget:
    """The cost model of _subspace for a (gemm flops per matrix): an iteration is degree + 2
    products of A with the n x b block, a QR of it and three n x b x b products; the start is
    the Lanczos steps (matrix-vector products) and a QR."""
    n = float(a.shape[-1])
    b = min(float(opts.get("block", k + max(16, k // 2))), n)
    d = float(opts.get("degree", 12)) if n > b else 0.0
    step = (d + 2) * 2 * n * n * b + (QR_WEIGHT * 4 + 6) * n * b * b
    start = GEMV_WEIGHT * float(opts.get("lanczos_steps", 24)) * 2 * n * n + QR_WEIGHT * 4 * n * b * b
    return Budget(full_cost(a, n**3, not eigvals_only), step, start)


def _eigh_full(a: Any, lower: bool) -> tuple:
    return eigh(a, lower, check_finite=False)  # a was checked on entry


def _hermitian(a: Any, lower: bool, eye: Any) -> Any:
    """The Hermitian matrix defined by a's `lower` (else upper) triangle, where a lives."""
    tril = array_module(a).tril  # numpy.tril, cupy.tril, torch.tril: (x, -1) alike
    t = tril(a, -1) if lower else adj(tril(adj(a), -1))
    d = a * eye
    return t + adj(t) + (d + adj(d)) / 2


def _scalar(a: Any, x: np.ndarray, dt: np.dtype) -> Any:
    """Per-batch host scalars (batch shape) as a (..., 1, 1) array where a lives; a Python
    number for a single matrix (no host-to-device copy, no synchronization)."""
    x = np.asarray(x, dtype=dt)
    if x.ndim == 0:
        return x.item()
    return like(a, np.ascontiguousarray(x[..., None, None]))


def _col_norms(x: Any) -> np.ndarray:
    m = abs(x)
    return np.sqrt(to_host((m * m).sum(-2)))


def _lanczos_bounds(ah: Any, sign: float, steps: int, seed: int) -> tuple:
    """Bounds (low, high) of the spectrum of C = sign * A from `steps` Lanczos steps (no
    reorthogonalization: ghost copies do not move the extreme Ritz values), widened by the
    Ritz residuals |beta_m y_m| so they enclose the spectrum."""
    n = int(ah.shape[-1])
    batch = tuple(ah.shape[:-2])
    dt, rdt = np_dtype(ah), real_np_dtype(ah)
    q = randn(ah, batch + (n, 1), dt, seed + 1)
    q = q * _scalar(ah, 1.0 / np.maximum(_col_norms(q)[..., 0], np.finfo(rdt).tiny), dt)
    q_prev = None
    alphas, betas = [], []
    beta = np.zeros(batch, dtype=rdt)
    for j in range(min(steps, n)):
        w = mm(ah, q) * _scalar(ah, np.full(batch, sign), dt)
        alpha = np.real(to_host(mm(adj(q), w))[..., 0, 0])
        w = w - q * _scalar(ah, alpha, dt)
        if q_prev is not None:
            w = w - q_prev * _scalar(ah, beta, dt)
        alphas.append(alpha)
        beta = _col_norms(w)[..., 0]
        betas.append(beta)
        if j + 1 == min(steps, n) or np.all(beta <= np.finfo(rdt).eps * np.abs(alpha)):
            break
        q_prev, q = q, w * _scalar(ah, 1.0 / np.maximum(beta, np.finfo(rdt).tiny), dt)
    m = len(alphas)
    t = np.zeros(batch + (m, m), dtype=np.float64)
    for i in range(m):
        t[..., i, i] = alphas[i]
        if i + 1 < m:
            t[..., i, i + 1] = t[..., i + 1, i] = betas[i]
    theta, y = np.linalg.eigh(t)
    r = np.abs(betas[-1][..., None] * y[..., -1, :])
    return theta[..., 0] - r[..., 0], theta[..., -1] + r[..., -1]


def _cheb_filter(
    ah: Any, x: Any, sign: float, degree: int, lo: np.ndarray, hi: np.ndarray, a0: np.ndarray
) -> Any:
    """p(C) x with p the degree-`degree` Chebyshev polynomial damping [lo, hi] (the unwanted part
    of the spectrum of C = sign * A), scaled so that p(a0) = 1 (a0 < lo: the wanted end), by the
    three-term recurrence of Zhou, Saad, Tiago and Chelikowsky (J. Comput. Phys. 2006)."""
    dt = np_dtype(x)
    e = (hi - lo) / 2
    c = (hi + lo) / 2
    sigma = e / (a0 - c)
    tau = 2 / sigma
    sgn = _scalar(x, np.full(lo.shape, sign), dt)

    def cx(v: Any) -> Any:
        return mm(ah, v) * sgn

    y = (cx(x) - x * _scalar(x, c, dt)) * _scalar(x, sigma / e, dt)
    for _ in range(2, degree + 1):
        sigma_new = 1 / (tau - sigma)
        y_new = (cx(y) - y * _scalar(x, c, dt)) * _scalar(x, 2 * sigma_new / e, dt)
        y_new = y_new - x * _scalar(x, sigma * sigma_new, dt)
        x, y, sigma = y, y_new, sigma_new
    return y


def _subspace(a: Any, k: int, which: str, lower: bool, opts: dict, budget: Budget) -> Any:
    """Chebyshev-filtered subspace iteration (CheFSI) with Rayleigh-Ritz on C = -A (largest) or
    C = A (smallest), whose wanted eigenvalues are then the smallest. Returns (w, v), or why it
    stopped short (a str: not within max_iter, or past the budget; the caller then runs the
    full eigh)."""
    n = int(a.shape[-1])
    rdt = real_np_dtype(a)
    dt = np_dtype(a)
    eps = np.finfo(rdt).eps
    degree = int(opts.get("degree", 12))
    max_iter = int(opts.get("max_iter", 30))
    b = min(int(opts.get("block", k + max(16, k // 2))), n)
    seed = int(opts.get("seed", 0))
    if degree < 1 or max_iter < 1 or b < k:
        raise InvalidArgument(
            f"[linalg.eigh] options: need degree >= 1, max_iter >= 1, block >= k, "
            f"got {degree}, {max_iter}, {b}"
        )
    sign = -1.0 if which == "largest" else 1.0
    pkg = _interop.package_of(a)
    ah = _hermitian(a, lower, pkg.eye(n, dt.name, pkg.device_of(a)))
    batch = tuple(a.shape[:-2])
    low, high = _lanczos_bounds(ah, sign, int(opts.get("lanczos_steps", 24)), seed)
    norm = np.maximum(np.maximum(np.abs(low), np.abs(high)), np.finfo(rdt).tiny)
    tol = float(opts.get("tol", 10 * np.sqrt(n) * eps)) * norm
    x = orth(randn(a, batch + (n, b), dt, seed))
    # Before the first Rayleigh-Ritz there is no estimate of the cut: damp the upper half.
    cut = (low + high) / 2
    a0 = low
    for it in range(max_iter):
        if n > b:  # else the block is the whole space: Rayleigh-Ritz alone is exact
            x = orth(_cheb_filter(ah, x, sign, degree, cut, high, a0))
        cxm = mm(ah, x) * _scalar(x, np.full(batch, sign), dt)
        h = to_host(mm(adj(x), cxm))
        h = (h + np.conj(np.swapaxes(h, -1, -2))) / 2
        theta, y = np.linalg.eigh(h)  # ascending: the wanted ones first
        yd = like(a, np.ascontiguousarray(y.astype(dt)))
        x = mm(x, yd)
        th = theta[..., :k]
        res = mm(cxm, like(a, np.ascontiguousarray(y[..., :, :k].astype(dt)))) - x[
            ..., :, :k
        ] * like(a, np.ascontiguousarray(th[..., None, :].astype(dt)))
        rn = _col_norms(res)
        worst = float(np.max(rn / tol[..., None]))
        if worst <= 1.0:
            _log.info(
                "[linalg.eigh] Chebyshev subspace iteration converged in %d iterations "
                "(degree %d, block %d)",
                it + 1,
                degree,
                b,
            )
            w = sign * th  # eigenvalues of A, wanted-first order
            v = x[..., :, :k]
            if which == "largest":  # ascending order of A's eigenvalues
                w = w[..., ::-1]
                v = flip_last(v)
            return like(a, np.ascontiguousarray(w).astype(rdt)), contig(v)
        cut = theta[..., -1]
        a0 = theta[..., 0]
        if n <= b:
            break
        # Predicted convergence: each filter shrinks the k-th wanted direction's error relative
        # to the (b+1)-th by 1 / T_degree((theta_k - c) / e); give up early when the remaining
        # iterations cannot reach tol.
        e = np.maximum((high - cut) / 2, np.finfo(rdt).tiny)
        z = np.abs((theta[..., k - 1] - (high + cut) / 2) / e)
        rate = np.min(np.cosh(degree * np.arccosh(np.maximum(z, 1.0))))
        if rate < 1.0 + 1e-3 or np.log(max(worst, 1.0)) / np.log(rate) > 2 * (max_iter - it - 1):
            return f"would not converge (predicted rate {rate:.3g}) after {it + 1} iterations"
        why = budget.give_up(worst)
        if why is not None:
            return f"{why} after {it + 1} iterations"
    return f"did not converge in {max_iter} iterations"


__all__ = ["eigh", "eigvalsh", "eigh_topk"]
