"""Top-k SVD (gpula.linalg.svd(k=...)), and what it shares with the top-k eigh of _eigh.py
(eigh(k=...)): argument checks, the seeded random start, QR re-orthonormalization.

svd_topk: randomized range finder (Halko, Martinsson, Tropp 2011) with oversampling p (10) and
q (2 in single precision, 4 in double) power (subspace) iterations, re-orthonormalized by QR
after every product, or only after each product with A where the first sample's R shows a
spread of singular values small enough for A^H A to lose nothing to rounding (halving the QRs);
every large product is gpula's matmul and every orthonormalization gpula's QR, so the work runs
where the data lives (cuBLAS/cuSOLVER for CUDA arrays, BLAS/LAPACK for NumPy). The projected
(k + p) x n problem B is solved through its float64 Gram matrix B B^H (a small eigh on the
host) where that keeps the singular vectors orthonormal to 1e-5 (sigma_1 / sigma_k <= 1e-5 /
eps), else through a QR of B^H and a small SVD. Cost O(m n (k + p) (2 q + 2)), growing with k.
Accuracy: the error of sigma_j is bounded by the tail sigma_{k+p+1} shrunk by the power
iterations (roughly (sigma_{k+p+1} / sigma_j)^(2 q + 1)); with fast singular value decay a few
iterations reach working precision, with a flat spectrum more are needed.

The random start is seeded (options["seed"], default 0): results are deterministic.
"""

from __future__ import annotations

import functools
import logging
from typing import Any, Callable

import numpy as np

from .. import _interop
from .._gpula import DTypeError, InvalidArgument, LinAlgError, OutOfMemory
from ._operands import (
    adj,
    astype,
    contig,
    is_complex,
    like,
    mm,
    np_dtype,
    out_of_memory,
    real_np_dtype,
    to_host,
)
from ._qr import qr

_log = logging.getLogger("gpula")

_SVD_METHODS = ("auto", "randomized")


def check_common(op: str, a: Any, k: Any, options: Any) -> dict:
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


# The full factorization's cost in units of the same machine's gemm flops, per n^3 (eigh) or
# m n min(m, n) (svd), with vectors: LAPACK's reductions are half BLAS2 (about 12 on a CPU);
# cuSOLVER's run far below cuBLAS's gemm rate (about 60). Without vectors about half.
_FULL_COST = {"cpu": 12.0, "gpu": 60.0}
# Relative weight of an n x b QR's 4 n b^2 flops (panel factorizations) and of a matrix-vector
# product's 2 n^2 (memory bound) against gemm's.
QR_WEIGHT = 3.0
GEMV_WEIGHT = 5.0

_switched: set = set()


def full_cost(a: Any, size: float, vectors: bool) -> float:
    """The modelled cost of the full factorization of a, whose size (n^3 or m n min(m, n)) is
    given, in gemm flops."""
    c = _FULL_COST["gpu" if _interop.is_gpu_array(a) else "cpu"] * size
    return c if vectors else c / 2


def log_switch(op: str, msg: str) -> None:
    """Logs a top-k solver's switch to the full factorization: a WARNING the first time per op
    in a process, INFO after that (a loop over many such matrices is told once)."""
    if op in _switched:
        _log.info("[%s] %s", op, msg)
    else:
        _switched.add(op)
        _log.warning("[%s] %s (logged once; later switches at INFO)", op, msg)


class Budget:
    """The work an iterative top-k solver may spend before the full factorization is the cheaper
    way, in gemm flops (the model above): `full` is the budget, `step` one iteration's cost,
    `spent` the start's. give_up() after each iteration says when to stop: the budget is spent,
    the error stalls (it fell less than `stall` x over the last two iterations: a solver held at
    its rounding floor), or, with `extrapolate` (for linear convergence, as the power
    iteration's; the Chebyshev iteration's speeds up as its filter improves), the iterations
    still needed at the rate of the last two would spend past the budget."""

    def __init__(self, full: float, step: float, spent: float = 0.0, stall: float = 4.0,
                 extrapolate: bool = False) -> None:
        self.full, self.step, self.spent = full, step, spent
        self.stall, self.extrapolate = stall, extrapolate
        self.errs: list = []

    def affordable(self, steps: float) -> bool:
        return self.spent + steps * self.step <= self.full

    def give_up(self, err: float) -> str | None:
        """err: this iteration's error over the tolerance (converged at <= 1). None to go on,
        else why not."""
        self.spent += self.step
        self.errs.append(err)
        if len(self.errs) >= 3 and err > self.errs[-3] / self.stall:
            return f"stalled (error {err:.3g} x tol, {self.errs[-3]:.3g} two iterations before)"
        if not self.affordable(1):
            return "went past the cost of the full factorization"
        if self.extrapolate and len(self.errs) >= 3:
            need = np.ceil(np.log(err) / np.log(self.errs[-3] / err) * 2)
            if not self.affordable(need):
                return f"would need {need:.0f} more iterations, past the cost of the full one"
        return None


def host_memory(op: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Turns what the host-side parts raise into gpula's typed errors naming the operation and
    a: NumPy's MemoryError and torch's allocation failures (the random start, the small
    problems) into gl.OutOfMemory, NumPy's LinAlgError (a small problem of NaN or Inf, with
    check_finite=False) into gl.LinAlgError."""

    def wrap(f: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(f)
        def run(a: Any, **kw: Any) -> Any:
            try:
                return f(a, **kw)
            except (OutOfMemory, LinAlgError):
                raise
            except (MemoryError, RuntimeError) as e:
                oom = out_of_memory(op, "a", e)
                if oom is None:
                    raise
                raise oom from None
            except np.linalg.LinAlgError as e:
                raise LinAlgError(
                    f"[{op}] the top-k problem of a did not converge ({e}); a may hold NaN or "
                    "Inf (check_finite=False)"
                ) from None

        return run

    return wrap


def empty_results(a: Any, shapes: tuple, real: tuple) -> tuple:
    """Results of an empty batch: arrays of these shapes in a's package, a's dtype or its real
    dtype (real[i])."""
    return tuple(
        like(a, np.empty(sh, real_np_dtype(a) if r else np_dtype(a))) for sh, r in zip(shapes, real)
    )


def randn(a: Any, shape: tuple, dt: np.dtype, seed: int) -> Any:
    """Seeded standard normal (complex: real and imaginary parts) of dtype dt drawn where a
    lives, by that package's generator: deterministic for a given seed and package."""
    pkg = _interop.package_of(a)
    return pkg.randn(shape, np.dtype(dt).name, pkg.device_of(a), seed)


def orth(y: Any) -> Any:
    """An orthonormal basis of y's columns (gpula's QR, where y lives)."""
    return qr(contig(y), check_finite=False)[0]


def qr_of(y: Any) -> tuple:
    return qr(contig(y), check_finite=False)


@host_memory("linalg.svd")
def svd_topk(
    a: Any,
    *,
    k: int,
    compute_uv: bool = True,
    method: str = "auto",
    tol: float | None = None,
    full: Callable[[Any], Any] | None = None,
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

    tol (None: the fixed power_iterations above): iterate until every returned singular value
    is within tol * s[0] of A's (see _svd_tol; 0 means working precision), or switch to
    ``full`` (the full SVD, returning (u, s, vh) or s) where that is the cheaper way.
    """
    opts = check_common("svd", a, k, options)
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
    q = int(opts.get("power_iterations", 2 if real_np_dtype(a) == np.float32 else 4))
    seed = int(opts.get("seed", 0))
    if p < 0 or q < 0:
        raise InvalidArgument(
            f"[linalg.svd] options: oversampling and power_iterations must be >= 0, got {p}, {q}"
        )
    ell = min(k + p, min(m, n))
    batch = tuple(a.shape[:-2])
    if 0 in batch:  # nothing to compute; NumPy's shapes
        u, s, vh = empty_results(a, (batch + (m, k), batch + (k,), batch + (k, n)),
                                  (False, True, False))
        return (u, s, vh) if compute_uv else s
    eps = float(np.finfo(real_np_dtype(a)).eps)
    omega = randn(a, batch + (n, ell), np_dtype(a), seed)
    if tol is not None:
        return _svd_tol(a, k, ell, omega, compute_uv, tol, int(opts.get("max_iter", 100)), full)
    ah = adj(a)
    qm, r = qr_of(mm(a, omega))
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
        z = mm(ah, qm)
        if every:
            z = orth(z)
        qm, r = qr_of(mm(a, z))
    bh = mm(ah, qm)  # (..., n, l) = B^H with B = Q^H A
    small = _small_svd_gram(bh, k, compute_uv, eps)
    if small is None:  # the Gram route would not keep v orthonormal: QR of B^H
        _log.info("[linalg.svd] projected problem by QR (sigma_1 / sigma_k too large for "
                  "its Gram matrix)")
        q2, r = qr_of(bh)
        # B = R^H Q2^H; small SVD of R^H on the host.
        ur, s, vrh = np.linalg.svd(adj(to_host(r)))
        s = np.ascontiguousarray(s[..., :k]).astype(real_np_dtype(a))
        if not compute_uv:
            return like(a, s)
        u = mm(qm, like(a, np.ascontiguousarray(ur[..., :, :k])))
        v = mm(q2, like(a, np.ascontiguousarray(adj(vrh)[..., :, :k])))
        return u, like(a, s), contig(adj(v))
    s, ub, w = small
    if not compute_uv:
        return like(a, s)
    u = mm(qm, like(a, ub))
    v = mm(bh, like(a, w))  # B^H u_j / sigma_j
    return u, like(a, s), contig(adj(v))


def _svd_tol(a: Any, k: int, ell: int, omega: Any, compute_uv: bool, tol: float, max_iter: int,
             full: Callable[[Any], Any] | None) -> Any:
    """svd_topk to a tolerance: subspace iteration orthonormalized after every product. Each
    round takes Z R = QR(A^H Q) and the SVD of the small R^H (B = Q^H A = R^H Z^H), so
    U = Q U_R, V = Z V_R and A^H U = V S exactly; the residual A V - U S = (A Z) V_R - U S
    (A Z is the next round's sample) then bounds the error of every returned singular value:
    ||A V - U S||_F <= tol s[0] is the stopping test. A cost model (Budget) switches to the full
    SVD, sliced, where the iteration stalls or would cost more."""
    m, n = int(a.shape[-2]), int(a.shape[-1])
    rdt = real_np_dtype(a)
    tol = max(float(tol), 10 * np.sqrt(max(m, n)) * float(np.finfo(rdt).eps))
    size = float(m) * n * min(m, n)
    step = 4.0 * m * n * ell + QR_WEIGHT * 4 * (m + n) * ell * ell + 2.0 * m * ell * k
    budget = Budget(full_cost(a, size, compute_uv), step, 2.0 * m * n * ell, 1.1, True)
    if full is not None and not budget.affordable(2):
        _log.info("[linalg.svd] tol: full SVD (k=%d, l=%d, m=%d, n=%d)", k, ell, m, n)
        return _sliced(full(a), k, compute_uv)
    qm = orth(mm(a, omega))
    for it in range(max_iter):
        z, r = qr_of(mm(adj(a), qm))
        ur, s, vrh = np.linalg.svd(adj(to_host(r)))
        ur_k, s_k, vr_k = ur[..., :, :k], s[..., :k], adj(vrh)[..., :, :k]
        y = mm(a, z)
        res = mm(y, like(a, np.ascontiguousarray(vr_k))) - mm(
            qm, like(a, np.ascontiguousarray(ur_k * s_k[..., None, :]))
        )
        err = np.sqrt(to_host(abs(res) ** 2).sum(axis=(-2, -1)))
        worst = float(np.max(err / np.maximum(tol * s[..., 0], np.finfo(rdt).tiny)))
        if worst <= 1.0:
            _log.info("[linalg.svd] tol %.3g reached in %d iterations", tol, it + 1)
            s_out = like(a, np.ascontiguousarray(s_k).astype(rdt))
            if not compute_uv:
                return s_out
            u = mm(qm, like(a, np.ascontiguousarray(ur_k)))
            v = mm(z, like(a, np.ascontiguousarray(vr_k)))
            return u, s_out, contig(adj(v))
        why = budget.give_up(worst) if full is not None else None
        if why is not None:
            log_switch("linalg.svd", f"top-k iteration to tol {why} after {it + 1} iterations; "
                       "full SVD")
            return _sliced(full(a), k, compute_uv)
        qm = orth(y)
    raise LinAlgError(f"[linalg.svd] tol {tol:.3g} not reached in max_iter = {max_iter} "
                      f"iterations (error {worst:.3g} x tol)")


def _sliced(r: Any, k: int, compute_uv: bool) -> Any:
    """The top k of a full (economy) SVD's result."""
    if not compute_uv:
        return contig(r[..., :k])
    u, s, vh = r
    return contig(u[..., :, :k]), contig(s[..., :k]), contig(vh[..., :k, :])


def _spread(r: Any) -> float:
    """max |R_ii| / min |R_ii| over R's diagonal (worst over a batch); inf for a zero."""
    d = np.abs(np.diagonal(to_host(r), axis1=-2, axis2=-1))
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
    bh64 = astype(bh, "complex128" if is_complex(bh) else "float64")
    g = to_host(mm(adj(bh64), bh64))
    lam, ub = np.linalg.eigh(g)
    lam, ub = lam[..., ::-1][..., :k], ub[..., :, ::-1][..., :, :k]
    s = np.sqrt(np.maximum(lam, 0.0))
    s1, sk = s[..., 0], s[..., -1]
    with np.errstate(divide="ignore", invalid="ignore"):
        if not np.all((sk > 0) & (eps * s1 <= 1e-5 * sk)):
            return None
    rdt = real_np_dtype(bh)
    cdt = np_dtype(bh)
    s_out = np.ascontiguousarray(s).astype(rdt)
    if not compute_uv:
        return s_out, None, None
    w = ub / s[..., None, :]
    return s_out, np.ascontiguousarray(ub).astype(cdt), np.ascontiguousarray(w).astype(cdt)


__all__ = ["svd_topk"]
