"""Top-k SVD and top-k Hermitian eigenpairs (gpula.linalg.svd(k=...) / eigh(k=...)).

svd_topk: randomized range finder (Halko, Martinsson, Tropp 2011) with oversampling p and q
power (subspace) iterations, each followed by a QR re-orthonormalization; every large product
is gpula's matmul and every orthonormalization gpula's QR, so the work runs where the data
lives (cuBLAS/cuSOLVER for CUDA arrays, BLAS/LAPACK for NumPy). The (k + p) x (k + p) projected
problem is a small dense SVD on the host. Cost O(m n (k + p) (2 q + 2)), growing with k.
Accuracy: the error of sigma_j is bounded by the tail sigma_{k+p+1} shrunk by the power
iterations (roughly (sigma_{k+p+1} / sigma_j)^(2 q + 1)); with fast singular value decay a few
iterations reach working precision, with a flat spectrum more are needed.

eigh_topk: block subspace iteration with Rayleigh-Ritz (gpula matmul + QR, a small dense eigh)
and a convergence test on the residuals ||A v - v w|| <= tol ||A||; when it does not converge
within max_iter it falls back to the full eigh (logged) and returns the slice.

The random start is seeded (options["seed"], default 0): results are deterministic.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

_log = logging.getLogger("gpula")

_SVD_METHODS = ("auto", "randomized")
_EIGH_METHODS = ("auto", "subspace", "full")


def _mm(a: Any, b: Any) -> Any:
    from ._matmul import matmul

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


def _to_host(x: Any) -> np.ndarray:
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "get"):
        return x.get()
    return x.detach().cpu().numpy()


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
    from ._linalg_qr import qr

    return qr(_contig(y))[0]


def _gaussian(shape: tuple, dt: np.dtype, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    g = rng.standard_normal(shape)
    if np.issubdtype(dt, np.complexfloating):
        g = g + 1j * rng.standard_normal(shape)
    return g.astype(dt)


def _check_common(op: str, a: Any, k: Any, options: Any) -> dict:
    shape = tuple(a.shape)
    if len(shape) < 2:
        raise ValueError(f"[linalg.{op}] a: expected (..., m, n), got shape {shape}")
    if str(a.dtype).replace("torch.", "") not in ("float32", "float64", "complex64", "complex128"):
        raise TypeError(f"[linalg.{op}] a: expected float32/float64/complex64/complex128, got {a.dtype}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise ValueError(f"[linalg.{op}] k: expected an int, got {k!r}")
    if options is not None and not isinstance(options, dict):
        raise ValueError(f"[linalg.{op}] options: expected a dict or None, got {options!r}")
    return dict(options or {})


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
    "randomized". options: {"oversampling": p (default 10), "power_iterations": q (default 4),
    "seed": 0}. For k >= min(m, n) / 2 the randomized subspace is the whole space and the result
    is exact to working precision.
    """
    opts = _check_common("svd_topk", a, k, options)
    m, n = int(a.shape[-2]), int(a.shape[-1])
    if not 1 <= k <= min(m, n):
        raise ValueError(f"[linalg.svd_topk] k: expected 1 <= k <= min(m, n) = {min(m, n)}, got {k}")
    if method not in _SVD_METHODS:
        raise ValueError(f"[linalg.svd_topk] method: expected one of {_SVD_METHODS}, got {method!r}")
    p = int(opts.get("oversampling", 10))
    q = int(opts.get("power_iterations", 4))
    seed = int(opts.get("seed", 0))
    if p < 0 or q < 0:
        raise ValueError(f"[linalg.svd_topk] options: oversampling and power_iterations must be >= 0, got {p}, {q}")
    ell = min(k + p, min(m, n))
    _log.info("[linalg.svd_topk] randomized: k=%d l=%d power_iterations=%d", k, ell, q)
    batch = tuple(a.shape[:-2])
    omega = _like(a, _gaussian(batch + (n, ell), _np_dtype(a), seed))
    ah = _adj(a)
    qm = _orth(_mm(a, omega))
    for _ in range(q):
        z = _orth(_mm(ah, qm))
        qm = _orth(_mm(a, z))
    bh = _mm(ah, qm)  # (..., n, l) = B^H with B = Q^H A
    q2, r = __import__("gpula._linalg_qr", fromlist=["qr"]).qr(_contig(bh))
    # B = R^H Q2^H; small SVD of R^H on the host.
    ur, s, vrh = np.linalg.svd(_adj(_to_host(r)))
    s = np.ascontiguousarray(s[..., :k]).astype(_real_dtype(a))
    if not compute_uv:
        return _like(a, s)
    u = _mm(qm, _like(a, np.ascontiguousarray(ur[..., :, :k])))
    v = _mm(q2, _like(a, np.ascontiguousarray(_adj(vrh)[..., :, :k])))
    return u, _like(a, s), _contig(_adj(v))


def _eigh_full(a: Any, lower: bool) -> tuple:
    from ._linalg_eigh import eigh

    return eigh(a, lower)


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
    v (..., n, k))``, or ``w``. method: "subspace" (block subspace iteration + Rayleigh-Ritz,
    falling back to "full" when it does not converge), "full" (full eigh, sliced); "auto" is
    "subspace" for k <= n / 4, else "full". options: {"tol": residual tolerance relative to
    ||A|| (default 10 sqrt(n) eps), "max_iter": 300, "block": k + 16, "seed": 0}."""
    opts = _check_common("eigh_topk", a, k, options)
    n = int(a.shape[-1])
    if int(a.shape[-2]) != n:
        raise ValueError(f"[linalg.eigh_topk] a: expected (..., n, n), got shape {tuple(a.shape)}")
    if not 1 <= k <= n:
        raise ValueError(f"[linalg.eigh_topk] k: expected 1 <= k <= n = {n}, got {k}")
    if which not in ("largest", "smallest"):
        raise ValueError(f"[linalg.eigh_topk] which: expected 'largest' or 'smallest', got {which!r}")
    if method not in _EIGH_METHODS:
        raise ValueError(f"[linalg.eigh_topk] method: expected one of {_EIGH_METHODS}, got {method!r}")
    if method == "auto":
        method = "subspace" if 4 * k <= n else "full"
        _log.info("[linalg.eigh_topk] auto: method %s (k=%d, n=%d)", method, k, n)
    sel = slice(n - k, n) if which == "largest" else slice(0, k)
    if method == "subspace":
        out = _subspace(a, k, which, lower, opts)
        if out is not None:
            w, v = out
            return w if eigvals_only else (w, v)
        _log.warning("[linalg.eigh_topk] subspace iteration did not converge; full eigh")
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


def _subspace(a: Any, k: int, which: str, lower: bool, opts: dict) -> Any:
    n = int(a.shape[-1])
    rdt = _real_dtype(a)
    dt = _np_dtype(a)
    eps = np.finfo(rdt).eps
    tol = float(opts.get("tol", 10 * np.sqrt(n) * eps))
    max_iter = int(opts.get("max_iter", 300))
    b = min(int(opts.get("block", k + 16)), n)
    seed = int(opts.get("seed", 0))
    eye = _like(a, np.eye(n, dtype=dt))
    ah = _hermitian(a, lower, eye)
    mag = abs(ah)
    norm = np.sqrt(_to_host((mag * mag).sum(-1)).sum(-1))
    # Shift so that the wanted end of the spectrum dominates: A - sigma I with sigma at the
    # other end (a Gershgorin bound).
    radius = _to_host(mag.sum(-1)).max(-1)
    shift = np.asarray(-radius if which == "largest" else radius, dtype=dt)
    sh = ah - _like(a, np.ascontiguousarray(shift[..., None, None])) * eye
    batch = tuple(a.shape[:-2])
    sel = slice(b - k, b) if which == "largest" else slice(0, k)
    x = _orth(_like(a, _gaussian(batch + (n, b), dt, seed)))
    bound = tol * np.maximum(np.asarray(norm)[..., None], np.finfo(rdt).tiny)
    for it in range(max_iter):
        ax = _mm(ah, x)
        h = _to_host(_mm(_adj(x), ax))
        h = (h + np.conj(np.swapaxes(h, -1, -2))) / 2
        theta, y = np.linalg.eigh(h)
        yk = _like(a, np.ascontiguousarray(y[..., :, sel]).astype(dt))
        vk = _mm(x, yk)
        th = _like(a, np.ascontiguousarray(theta[..., None, sel]).astype(dt))
        res = abs(_mm(ax, yk) - vk * th)
        rn = np.sqrt(_to_host((res * res).sum(-2)))
        if np.all(rn <= bound):
            _log.info("[linalg.eigh_topk] subspace iteration converged in %d iterations", it + 1)
            return _like(a, np.ascontiguousarray(theta[..., sel]).astype(rdt)), vk
        x = _orth(_mm(sh, _mm(x, _like(a, y.astype(dt)))))
    return None


__all__ = ["svd_topk", "eigh_topk"]
