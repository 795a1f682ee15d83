"""SVD of float32 / complex64 matrices through the float64 eigendecomposition of a^H a
(gpula.linalg.svd(method="gram"), and method="auto" for large GPU matrices).

For tall a (m >= n; a wide a is handled as a^H): a64 = a in float64 (complex128), G = a64^H a64
(gpula matmul), G = V diag(w) V^H (gpula eigh, float64), sigma = sqrt(w), u = a64 V / sigma,
every step where the data lives; then u, sigma, V^H rounded to the input's precision.

Accuracy, checked on every call against the float32 reference routine (gesvd):
- singular values: sigma_i = sqrt(w_i) is off by about c eps64 ||a||^2 / (2 sigma_i), against
  the reference's c eps32 ||a|| (the same order-of-n factor c in both worst-case bounds), so it
  is as accurate wherever sigma_i / sigma_1 >= 2 eps64 / eps32 (3.7e-9). The smallest one is
  tested (one host read of the n eigenvalues).
- u = a64 V / sigma: its columns lose orthogonality as about eps64 (sigma_1 / sigma_i)^2 (the
  eigenvectors' residual, divided by two small sigmas), so it is measured: ||u^H u - I||_F in
  float64 (one n x n x m matmul) must be at most n eps32, below what gesvd reaches (5.1e-4 =
  2.1 n eps32 at n = 4096 on the H200). V from eigh is orthonormal to float64 accuracy, and
  u diag(sigma) = a64 V, so a = u diag(sigma) V^H to float64 accuracy before rounding.
A call that fails either test (nearly rank-deficient input, condition numbers past about 1e6
at n = 4096, NaN or Inf) reruns as method="gesvd" and logs it, so the method never returns
less accuracy than the reference routine. svdvals (no u) takes the singular-value test only.

Cost: three n x n x m matmuls (the third measures u's orthogonality) and one n x n eigh in
float64, against cuSOLVER's float32 QR
iteration or Jacobi on the whole m x n matrix; see bench/results for the measured times.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np

from .._gpula import InvalidArgument
from .._interop import is_gpu_array
from ._eigh import eigh, eigvalsh
from ._operands import adj, astype, contig, flip_last, like, mm, to_host

_log = logging.getLogger("gpula")

# method="auto" takes this path for GPU matrices whose smaller side is at least this.
AUTO_MIN_N = 1024


def wants_gram(a: Any, full: bool) -> bool:
    """Whether method="auto" takes this path for a: a single-precision GPU matrix (or batch)
    whose smaller side is at least AUTO_MIN_N, economy or square."""
    if len(a.shape) < 2 or not is_gpu_array(a):
        return False
    m, n = int(a.shape[-2]), int(a.shape[-1])
    name = str(a.dtype).replace("torch.", "")
    return name in ("float32", "complex64") and min(m, n) >= AUTO_MIN_N and (not full or m == n)


def svd_gram(a: Any, full: bool, compute_uv: bool, fallback: Any) -> Any:
    """(u, s, vh) or s of float32/complex64 a; `fallback(a)` computes the result another way
    when the accuracy test fails (see the module docstring)."""
    m, n = int(a.shape[-2]), int(a.shape[-1])
    if full and m != n:
        raise InvalidArgument(
            "[linalg.svd] full_matrices=True needs a square matrix for method='gram'"
        )
    r = _tall(a if m >= n else contig(adj(a)), compute_uv)
    if r is None:
        return fallback(a)
    if not compute_uv or m >= n:
        return r
    u, s, vh = r
    return contig(adj(vh)), s, contig(adj(u))


def _tall(a: Any, compute_uv: bool) -> Any:
    """svd_gram of tall a, or None when the accuracy test fails."""
    n = int(a.shape[-1])
    single = np.dtype(str(a.dtype).replace("torch.", ""))
    wide = np.dtype(np.complex128 if single.kind == "c" else np.float64)
    a64 = astype(a, wide.name)
    g = mm(contig(adj(a64)), a64)
    if compute_uv:
        w, v = eigh(g, check_finite=False)  # a was checked on entry
    else:
        w, v = eigvalsh(g, check_finite=False), None
    wh = to_host(w)  # ascending
    tau = 2 * np.finfo(np.float64).eps / np.finfo(np.float32).eps
    wmax, wmin = wh[..., -1], wh[..., 0]
    if not (np.all(np.isfinite(wh)) and np.all(wmax > 0) and np.all(wmin >= tau**2 * wmax)):
        _log.info(
            "[linalg.svd] method gram: smallest sigma below %.1e sigma_1 (or not finite); "
            "rerunning with gesvd",
            tau,
        )
        return None
    s_host = np.sqrt(wh[..., ::-1])
    s = like(a, np.ascontiguousarray(s_host.astype(np.float32)))
    if not compute_uv:
        return s
    v = flip_last(v)
    inv_s = like(a64, np.ascontiguousarray((1.0 / s_host)[..., None, :]))
    u = mm(a64, v) * inv_s
    err = _orthogonality(u)
    limit = n * np.finfo(np.float32).eps
    if not np.all(err <= limit):  # NaN fails too
        _log.info(
            "[linalg.svd] method gram: ||u^H u - I||_F = %.1e above n eps32 = %.1e; "
            "rerunning with gesvd",
            float(np.max(err)),
            limit,
        )
        return None
    _log.debug("[linalg.svd] method gram: float64 eigh of a^H a, n=%d, orthogonality %.1e",
               n, float(np.max(err)))
    return astype(u, single.name), s, contig(adj(astype(v, single.name)))


def _orthogonality(u: Any) -> np.ndarray:
    """||u^H u - I||_F per matrix, on the host (float64 u on any package and device)."""
    p = mm(contig(adj(u)), u)
    d = p.diagonal(0, -2, -1)  # the same call on NumPy, CuPy and torch
    total = to_host((abs(p) ** 2).sum(-1).sum(-1))
    diag = to_host((abs(d) ** 2).sum(-1))
    dev = to_host((abs(d - 1) ** 2).sum(-1))
    return np.sqrt(np.maximum(total - diag, 0.0) + dev)
