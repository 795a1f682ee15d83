"""Top-k SVD and top-k Hermitian eigenpairs (gpula.linalg.svd(k=...) / eigh(k=...)).

svd_topk: randomized range finder (Halko, Martinsson, Tropp 2011) with oversampling p (10) and
q (2 in single precision, 4 in double) power (subspace) iterations, re-orthonormalized by QR after every product, or only after
each product with A where the first sample's R shows a spread of singular values small enough
for A^H A to lose nothing to rounding (halving the QRs); every large product is gpula's matmul
and every orthonormalization gpula's QR, so the work runs where the data lives
(cuBLAS/cuSOLVER for CUDA arrays, BLAS/LAPACK for NumPy). The projected (k + p) x n problem B
is solved through its float64 Gram matrix B B^H (a small eigh on the host) where that keeps the
singular vectors orthonormal to 1e-5 (sigma_1 / sigma_k <= 1e-5 / eps), else through a QR of
B^H and a small SVD. Cost O(m n (k + p) (2 q + 2)), growing with k.
Accuracy: the error of sigma_j is bounded by the tail sigma_{k+p+1} shrunk by the power
iterations (roughly (sigma_{k+p+1} / sigma_j)^(2 q + 1)); with fast singular value decay a few
iterations reach working precision, with a flat spectrum more are needed.

eigh_topk: Chebyshev-filtered block subspace iteration (Zhou-Saad CheFSI): spectrum bounds from a
few Lanczos steps, then per iteration a degree-d Chebyshev polynomial of A that damps the unwanted
part of the spectrum (d gpula matmuls of A with an n x b block), a QR re-orthonormalization and a
Rayleigh-Ritz step (one more matmul, a small b x b eigh on the host). Converged when every wanted
residual ||A v - v w|| <= tol ||A|| (tol = 10 sqrt(n) eps, ||A|| the Lanczos bound). Cost
O(n^2 b d) per iteration, growing with k; convergence depends on the gap between the k-th and
the (b+1)-th eigenvalue: fast for decaying spectra (PCA, kernels), slow for flat ones, where the
predicted rate stops it early and the full eigh runs instead (logged), returning the slice.

The random start is seeded (options["seed"], default 0): results are deterministic.
"""

from __future__ import annotations

import functools
import logging
from typing import Any, Callable

import numpy as np

from .._gpula import DTypeError, InvalidArgument, OutOfMemory
from ._operands import astype
from ._operands import to_host as _to_host

_log = logging.getLogger("gpula")

_SVD_METHODS = ("auto", "randomized")
_EIGH_METHODS = ("auto", "subspace", "full")


def _mm(a: Any, b: Any) -> Any:
    from .._matmul import matmul

    r = matmul(a, b)
    return r[0] if isinstance(r, tuple) else r


def _mT(x: Any) -> Any:
    return x.swapaxes(-1, -2) if hasattr(x, "swapaxes") else x.transpose(-1, -2)


def _adj(x: Any) -> Any:
    return _mT(x).conj() if _is_complex(x) else _mT(x)


def _is_complex(x: Any) -> bool:
    return "complex" in str(x.dtype)


def _real_dtype(x: Any) -> np.dtype:
    return {
        "float32": np.float32,
        "float64": np.float64,
        "complex64": np.float32,
        "complex128": np.float64,
    }[str(x.dtype).replace("torch.", "")]


def _np_dtype(x: Any) -> np.dtype:
    return np.dtype(str(x.dtype).replace("torch.", ""))


def _like(a: Any, x: np.ndarray) -> Any:
    if isinstance(a, np.ndarray):
        return x
    mod = type(a).__module__.split(".")[0]
    if mod == "torch":
        import torch

        return torch.as_tensor(np.ascontiguousarray(x), device=a.device)
    import cupy

    with a.device:
        return cupy.asarray(x)


def _contig(x: Any) -> Any:
    if isinstance(x, np.ndarray):
        return np.ascontiguousarray(x)
    return x.contiguous() if hasattr(x, "contiguous") else x.copy()


def _orth(y: Any) -> Any:
    from ._qr import qr

    return qr(_contig(y), check_finite=False)[0]


def _gaussian(shape: tuple, dt: np.dtype, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    g = rng.standard_normal(shape)
    if np.issubdtype(dt, np.complexfloating):
        g = g + 1j * rng.standard_normal(shape)
    return g.astype(dt)


def _check_common(op: str, a: Any, k: Any, options: Any) -> dict:
    shape = tuple(a.shape)
    if len(shape) < 2:
        raise InvalidArgument(f"[linalg.{op}] a: expected (..., m, n), got shape {shape}")
    if str(a.dtype).replace("torch.", "") not in ("float32", "float64", "complex64", "complex128"):
        raise DTypeError(
            f"[linalg.{op}] a: expected float32/float64/complex64/complex128, got {a.dtype}"
        )
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise InvalidArgument(f"[linalg.{op}] k: expected an int, got {k!r}")
    if options is not None and not isinstance(options, dict):
        raise InvalidArgument(f"[linalg.{op}] options: expected a dict or None, got {options!r}")
    return dict(options or {})


def _host_memory(op: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Turns NumPy's MemoryError (the random start, the host-side small problems) into
    gl.OutOfMemory naming the operation and a."""

    def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(f)
        def run(a: Any, **kw: Any) -> Any:
            try:
                return f(a, **kw)
            except OutOfMemory:
                raise
            except MemoryError as e:
                raise OutOfMemory(
                    f"[{op}] a: out of host memory for the top-k problem of a of shape "
                    f"{tuple(a.shape)}: {e}"
                ) from None

        return run

    return wrap


def _empty_results(a: Any, shapes: tuple, real: tuple) -> tuple:
    """Results of an empty batch: arrays of these shapes in a's package, a's dtype or its real
    dtype (real[i])."""
    return tuple(
        _like(a, np.empty(sh, _real_dtype(a) if r else _np_dtype(a))) for sh, r in zip(shapes, real)
    )


@_host_memory("linalg.svd")
def svd_topk(
    a: Any,
    *,
    k: int,
    compute_uv: bool = True,
    method: str = "auto",
    options: Any = None,
    stream: Any = None,
) -> Any:
    """The k largest singular triplets of (..., m, n) ``a``: ``(u (..., m, k), s (..., k)
    descending, vh (..., k, n))``, or ``s`` with ``compute_uv=False``.

    method: "randomized" (randomized range finder with power iterations); "auto" is
    "randomized". options: {"oversampling": p (default 10), "power_iterations": q (default 2
    for float32/complex64, 4 for float64/complex128),
    "seed": 0}. For k >= min(m, n) / 2 the randomized subspace is the whole space and the result
    is exact to working precision.
    """
    opts = _check_common("svd", a, k, options)
    m, n = int(a.shape[-2]), int(a.shape[-1])
    if not 1 <= k <= min(m, n):
        raise InvalidArgument(
            f"[linalg.svd] k: expected 1 <= k <= min(m, n) = {min(m, n)} for a of shape "
            f"{tuple(a.shape)}, got {k}"
        )
    if method not in _SVD_METHODS:
        raise InvalidArgument(
            f"[linalg.svd] method: expected one of {_SVD_METHODS}, got {method!r}"
        )
    p = int(opts.get("oversampling", 10))
    # Single precision saturates sooner: its rounding floor is reached in fewer iterations.
    q = int(opts.get("power_iterations", 2 if _real_dtype(a) == np.float32 else 4))
    seed = int(opts.get("seed", 0))
    if p < 0 or q < 0:
        raise InvalidArgument(
            f"[linalg.svd] options: oversampling and power_iterations must be >= 0, got {p}, {q}"
        )
    ell = min(k + p, min(m, n))
    batch = tuple(a.shape[:-2])
    if 0 in batch:  # nothing to compute; NumPy's shapes
        u, s, vh = _empty_results(a, (batch + (m, k), batch + (k,), batch + (k, n)),
                                  (False, True, False))
        return (u, s, vh) if compute_uv else s
    eps = float(np.finfo(_real_dtype(a)).eps)
    omega = _randn(a, batch + (n, ell), _np_dtype(a), seed)
    ah = _adj(a)
    qm, r = _qr(_mm(a, omega))
    # Orthonormalize after every product (randomized subspace iteration), unless the spread of
    # the sample's R diagonal (an estimate of sigma_1 / sigma_l, sharpened by each iteration)
    # is small enough that A^H A applied to an orthonormal block loses no more than 1e-4 of
    # the smallest direction to rounding: then only after each product with A (half the QRs).
    every = _spread(r) ** 2 * eps > 1e-4
    _log.info(
        "[linalg.svd] randomized: k=%d l=%d power_iterations=%d, orthonormalized after %s",
        k, ell, q, "every product" if every else "each product with A",
    )
    for _ in range(q):
        z = _mm(ah, qm)
        if every:
            z = _orth(z)
        qm, r = _qr(_mm(a, z))
    bh = _mm(ah, qm)  # (..., n, l) = B^H with B = Q^H A
    small = _small_svd_gram(bh, k, compute_uv, eps)
    if small is None:  # the Gram route would not keep v orthonormal: QR of B^H
        _log.info("[linalg.svd] projected problem by QR (sigma_1 / sigma_k too large for "
                  "its Gram matrix)")
        q2, r = _qr(bh)
        # B = R^H Q2^H; small SVD of R^H on the host.
        ur, s, vrh = np.linalg.svd(_adj(_to_host(r)))
        s = np.ascontiguousarray(s[..., :k]).astype(_real_dtype(a))
        if not compute_uv:
            return _like(a, s)
        u = _mm(qm, _like(a, np.ascontiguousarray(ur[..., :, :k])))
        v = _mm(q2, _like(a, np.ascontiguousarray(_adj(vrh)[..., :, :k])))
        return u, _like(a, s), _contig(_adj(v))
    s, ub, w = small
    if not compute_uv:
        return _like(a, s)
    u = _mm(qm, _like(a, ub))
    v = _mm(bh, _like(a, w))  # B^H u_j / sigma_j
    return u, _like(a, s), _contig(_adj(v))


def _qr(y: Any) -> tuple:
    from ._qr import qr

    return qr(_contig(y), check_finite=False)


def _spread(r: Any) -> float:
    """max |R_ii| / min |R_ii| over R's diagonal (worst over a batch); inf for a zero."""
    d = np.abs(np.diagonal(_to_host(r), axis1=-2, axis2=-1))
    lo = d.min(axis=-1)
    hi = d.max(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return float(np.max(np.where(lo > 0, hi / lo, np.inf)))


def _small_svd_gram(bh: Any, k: int, compute_uv: bool, eps: float) -> tuple | None:
    """The top k of the SVD of B from bh = B^H: the float64 Gram matrix B B^H = bh^H bh (one
    product where bh lives), an l x l eigenproblem on the host, v = B^H U_B / s. Returns
    (s, U_B[:, :k], U_B[:, :k] / s), or None where the route loses accuracy: its singular
    values are good to eps64 (sigma_1 / sigma_j)^2 (below the working precision's), but v's
    columns lose about eps sigma_1 / sigma_j of orthogonality, so it is taken only where
    eps sigma_1 / sigma_k <= 1e-5 (float32: sigma_1 / sigma_k <= ~170)."""
    bh64 = astype(bh, "complex128" if _is_complex(bh) else "float64")
    g = _to_host(_mm(_adj(bh64), bh64))
    lam, ub = np.linalg.eigh(g)
    lam, ub = lam[..., ::-1][..., :k], ub[..., :, ::-1][..., :, :k]
    s = np.sqrt(np.maximum(lam, 0.0))
    s1, sk = s[..., 0], s[..., -1]
    with np.errstate(divide="ignore", invalid="ignore"):
        if not np.all((sk > 0) & (eps * s1 <= 1e-5 * sk)):
            return None
    rdt = _real_dtype(bh)
    cdt = _np_dtype(bh)
    s_out = np.ascontiguousarray(s).astype(rdt)
    if not compute_uv:
        return s_out, None, None
    w = ub / s[..., None, :]
    return s_out, np.ascontiguousarray(ub).astype(cdt), np.ascontiguousarray(w).astype(cdt)


def _eigh_full(a: Any, lower: bool) -> tuple:
    from ._eigh import eigh

    return eigh(a, lower, check_finite=False)  # a was checked on entry


@_host_memory("linalg.eigh")
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
    Rayleigh-Ritz, falling back to "full" when it would not converge), "full" (full eigh,
    sliced); "auto" is "subspace" for k <= n / 4, else "full". options: {"tol": residual
    tolerance relative to ||A|| (default 10 sqrt(n) eps), "max_iter": 30, "degree": 12,
    "block": k + max(16, k // 2), "lanczos_steps": 24, "seed": 0}."""
    opts = _check_common("eigh", a, k, options)
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
    if method == "auto":
        method = "subspace" if 4 * k <= n else "full"
        _log.info("[linalg.eigh] auto: method %s (k=%d, n=%d)", method, k, n)
    sel = slice(n - k, n) if which == "largest" else slice(0, k)
    batch = tuple(a.shape[:-2])
    if 0 in batch:  # nothing to compute; NumPy's shapes
        w, v = _empty_results(a, (batch + (k,), batch + (n, k)), (True, False))
        return w if eigvals_only else (w, v)
    if method == "subspace":
        out = _subspace(a, k, which, lower, opts)
        if out is not None:
            w, v = out
            return w if eigvals_only else (w, v)
        _log.warning("[linalg.eigh] subspace iteration did not converge; full eigh")
    w, v = _eigh_full(a, lower)
    w = _contig(w[..., sel])
    return w if eigvals_only else (w, _contig(v[..., :, sel]))


def _tril(x: Any) -> Any:
    mod = type(x).__module__.split(".")[0]
    if mod == "torch":
        return x.tril(-1)
    if mod == "cupy":
        import cupy

        return cupy.tril(x, -1)
    return np.tril(x, -1)


def _hermitian(a: Any, lower: bool, eye: Any) -> Any:
    """The Hermitian matrix defined by a's `lower` (else upper) triangle, where a lives."""
    t = _tril(a) if lower else _adj(_tril(_adj(a)))
    d = a * eye
    return t + _adj(t) + (d + _adj(d)) / 2


def _scalar(a: Any, x: np.ndarray, dt: np.dtype) -> Any:
    """Per-batch host scalars (batch shape) as a (..., 1, 1) array where a lives; a Python
    number for a single matrix (no host-to-device copy, no synchronization)."""
    x = np.asarray(x, dtype=dt)
    if x.ndim == 0:
        return x.item()
    return _like(a, np.ascontiguousarray(x[..., None, None]))


def _eye(a: Any, n: int, dt: np.dtype) -> Any:
    """The n x n identity made where a lives (never an n^2 host array copied over)."""
    mod = type(a).__module__.split(".")[0]
    if mod == "torch":
        import torch

        return torch.eye(n, dtype=a.dtype, device=a.device)
    if mod == "cupy":
        import cupy

        with a.device:
            return cupy.eye(n, dtype=dt)
    return np.eye(n, dtype=dt)


def _randn(a: Any, shape: tuple, dt: np.dtype, seed: int) -> Any:
    """Seeded standard normal (complex: real and imaginary parts) drawn where a lives, by that
    package's generator: deterministic for a given seed and package."""
    mod = type(a).__module__.split(".")[0]
    cplx = np.issubdtype(dt, np.complexfloating)
    if mod == "torch":
        import torch

        g = torch.Generator(device=a.device).manual_seed(seed)
        real = torch.float64 if dt in (np.float64, np.complex128) else torch.float32
        x = torch.randn(shape, generator=g, dtype=real, device=a.device)
        if cplx:
            x = torch.complex(x, torch.randn(shape, generator=g, dtype=real, device=a.device))
        return x
    if mod == "cupy":
        import cupy

        with a.device:
            rs = cupy.random.RandomState(seed)
            real = np.float64 if dt in (np.float64, np.complex128) else np.float32
            x = rs.standard_normal(shape, dtype=real)
            if cplx:
                x = x + 1j * rs.standard_normal(shape, dtype=real)
            return x.astype(dt)
    return _gaussian(shape, dt, seed)


def _col_norms(x: Any) -> np.ndarray:
    m = abs(x)
    return np.sqrt(_to_host((m * m).sum(-2)))


def _lanczos_bounds(ah: Any, sign: float, steps: int, seed: int) -> tuple:
    """Bounds (low, high) of the spectrum of C = sign * A from `steps` Lanczos steps (no
    reorthogonalization: ghost copies do not move the extreme Ritz values), widened by the
    Ritz residuals |beta_m y_m| so they enclose the spectrum."""
    n = int(ah.shape[-1])
    batch = tuple(ah.shape[:-2])
    dt, rdt = _np_dtype(ah), _real_dtype(ah)
    q = _randn(ah, batch + (n, 1), dt, seed + 1)
    q = q * _scalar(ah, 1.0 / np.maximum(_col_norms(q)[..., 0], np.finfo(rdt).tiny), dt)
    q_prev = None
    alphas, betas = [], []
    beta = np.zeros(batch, dtype=rdt)
    for j in range(min(steps, n)):
        w = _mm(ah, q) * _scalar(ah, np.full(batch, sign), dt)
        alpha = np.real(_to_host(_mm(_adj(q), w))[..., 0, 0])
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
    dt = _np_dtype(x)
    e = (hi - lo) / 2
    c = (hi + lo) / 2
    sigma = e / (a0 - c)
    tau = 2 / sigma
    sgn = _scalar(x, np.full(lo.shape, sign), dt)

    def cx(v: Any) -> Any:
        return _mm(ah, v) * sgn

    y = (cx(x) - x * _scalar(x, c, dt)) * _scalar(x, sigma / e, dt)
    for _ in range(2, degree + 1):
        sigma_new = 1 / (tau - sigma)
        y_new = (cx(y) - y * _scalar(x, c, dt)) * _scalar(x, 2 * sigma_new / e, dt)
        y_new = y_new - x * _scalar(x, sigma * sigma_new, dt)
        x, y, sigma = y, y_new, sigma_new
    return y


def _subspace(a: Any, k: int, which: str, lower: bool, opts: dict) -> Any:
    """Chebyshev-filtered subspace iteration (CheFSI) with Rayleigh-Ritz on C = -A (largest) or
    C = A (smallest), whose wanted eigenvalues are then the smallest. Returns (w, v) or None
    when it would not converge within max_iter (the caller then runs the full eigh)."""
    n = int(a.shape[-1])
    rdt = _real_dtype(a)
    dt = _np_dtype(a)
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
    ah = _hermitian(a, lower, _eye(a, n, dt))
    batch = tuple(a.shape[:-2])
    low, high = _lanczos_bounds(ah, sign, int(opts.get("lanczos_steps", 24)), seed)
    norm = np.maximum(np.maximum(np.abs(low), np.abs(high)), np.finfo(rdt).tiny)
    tol = float(opts.get("tol", 10 * np.sqrt(n) * eps)) * norm
    x = _orth(_randn(a, batch + (n, b), dt, seed))
    # Before the first Rayleigh-Ritz there is no estimate of the cut: damp the upper half.
    cut = (low + high) / 2
    a0 = low
    for it in range(max_iter):
        if n > b:  # else the block is the whole space: Rayleigh-Ritz alone is exact
            x = _orth(_cheb_filter(ah, x, sign, degree, cut, high, a0))
        cxm = _mm(ah, x) * _scalar(x, np.full(batch, sign), dt)
        h = _to_host(_mm(_adj(x), cxm))
        h = (h + np.conj(np.swapaxes(h, -1, -2))) / 2
        theta, y = np.linalg.eigh(h)  # ascending: the wanted ones first
        yd = _like(a, np.ascontiguousarray(y.astype(dt)))
        x = _mm(x, yd)
        th = theta[..., :k]
        res = _mm(cxm, _like(a, np.ascontiguousarray(y[..., :, :k].astype(dt)))) - x[
            ..., :, :k
        ] * _like(a, np.ascontiguousarray(th[..., None, :].astype(dt)))
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
                v = v[..., :, ::-1] if isinstance(v, np.ndarray) else _flip_cols(v)
            return _like(a, np.ascontiguousarray(w).astype(rdt)), _contig(v)
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
            _log.info(
                "[linalg.eigh] predicted rate %.3g per iteration too slow after %d iterations",
                rate,
                it + 1,
            )
            break
    return None


def _flip_cols(v: Any) -> Any:
    mod = type(v).__module__.split(".")[0]
    if mod == "torch":
        return v.flip(-1)
    return v[..., :, ::-1]


__all__ = ["svd_topk", "eigh_topk"]
