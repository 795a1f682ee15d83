"""Krylov loops in Python over the caller's arrays (NumPy, CuPy, torch; any dtype): for a
LinearOperator or dense A on a GPU, where the user's matvec must receive the caller's arrays,
and for gmres's per-inner-iteration callbacks (callback_type 'pr_norm' / 'legacy'). The C++
loops (sparse_iterative) serve every other case.

Each returns (info, iterations, residual_norm) with the C++ loops' meaning: info 0 converged
(``||b - A x|| <= tol``), > 0 the limit reached, < 0 a breakdown; x is updated in place.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ._vectors import norm, vdot

Apply = Callable[[Any], Any]


def _none(r: Any) -> Any:
    return r


def _bad(v: complex | float) -> bool:
    return v == 0 or not math.isfinite(abs(v))


def _residual(A: Apply, b: Any, x: Any) -> tuple[Any, float]:
    r = b - A(x)
    return r, norm(r)


def cg(A: Apply, b: Any, x: Any, tol: float, maxiter: int, M: Apply | None, cb: Any) -> tuple[int, int, float]:
    M = M or _none
    r, rn = _residual(A, b, x)
    if rn <= tol:
        return 0, 0, rn
    z = M(r)
    p = z * 1
    rz = vdot(r, z)
    for it in range(1, maxiter + 1):
        q = A(p)
        pq = vdot(p, q)
        if _bad(pq) or _bad(rz):
            return -1, it, rn
        alpha = rz / pq
        x += alpha * p
        r -= alpha * q
        rn = norm(r)
        if cb:
            cb(x)
        if rn <= tol:
            return 0, it, rn
        z = M(r)
        rz_new = vdot(r, z)
        p = z + (rz_new / rz) * p
        rz = rz_new
    return max(maxiter, 1), maxiter, rn


def bicgstab(A: Apply, b: Any, x: Any, tol: float, maxiter: int, M: Apply | None, cb: Any) -> tuple[int, int, float]:
    M = M or _none
    r, rn = _residual(A, b, x)
    if rn <= tol:
        return 0, 0, rn
    rhat = r * 1
    rho: Any = 1.0
    alpha: Any = 1.0
    omega: Any = 1.0
    p = v = r * 0
    for it in range(1, maxiter + 1):
        rho_new = vdot(rhat, r)
        if _bad(rho_new):
            return -10, it, rn
        p = r if it == 1 else r + ((rho_new / rho) * (alpha / omega)) * (p - omega * v)
        ph = M(p)
        v = A(ph)
        rv = vdot(rhat, v)
        if _bad(rv):
            return -10, it, rn
        alpha = rho_new / rv
        s = r - alpha * v
        if norm(s) <= tol:
            x += alpha * ph
            if cb:
                cb(x)
            return 0, it, norm(s)
        sh = M(s)
        t = A(sh)
        tt = vdot(t, t)
        if _bad(tt):
            return -11, it, rn
        omega = vdot(t, s) / tt
        x += alpha * ph + omega * sh
        r = s - omega * t
        rn = norm(r)
        if cb:
            cb(x)
        if rn <= tol:
            return 0, it, rn
        if _bad(omega):
            return -11, it, rn
        rho = rho_new
    return max(maxiter, 1), maxiter, rn


def minres(A: Apply, b: Any, x: Any, tol: float, maxiter: int, M: Apply | None, cb: Any,
           eps: float) -> tuple[int, int, float]:
    """Paige and Saunders' MINRES (A Hermitian, M Hermitian positive definite); stops on the
    true residual (computed where the recurrence's estimate says so, every step with an M)."""
    precond = M is not None
    M = M or _none
    r1 = b - A(x)
    rn = norm(r1)
    if rn <= tol:
        return 0, 0, rn
    y = M(r1)
    beta1 = vdot(r1, y).real
    if beta1 <= 0 or not math.isfinite(beta1):
        return -1, 0, rn
    beta1 = math.sqrt(beta1)
    oldb, beta, dbar, epsln, phibar, cs, sn = 0.0, beta1, 0.0, 0.0, beta1, -1.0, 0.0
    r2 = r1
    w = w2 = r1 * 0
    for it in range(1, maxiter + 1):
        v = y * (1.0 / beta)
        y = A(v)
        if it >= 2:
            y = y - (beta / oldb) * r1
        alfa = vdot(v, y).real
        y = y - (alfa / beta) * r2
        r1, r2 = r2, y
        y = M(r2)
        oldb = beta
        beta2 = vdot(r2, y).real
        if beta2 < 0 or not math.isfinite(beta2):
            return -1, it, rn
        beta = math.sqrt(beta2)
        oldeps = epsln
        delta = cs * dbar + sn * alfa
        gbar = sn * dbar - cs * alfa
        epsln = sn * beta
        dbar = -cs * beta
        gamma = max(math.hypot(gbar, beta), eps)
        cs, sn = gbar / gamma, beta / gamma
        phi = cs * phibar
        phibar = sn * phibar
        w1, w2 = w2, w
        w = (v - oldeps * w1 - delta * w2) * (1.0 / gamma)
        x += phi * w
        if cb:
            cb(x)
        if precond or phibar <= tol or beta <= eps * beta1:
            rn = norm(b - A(x))
            if rn <= tol:
                return 0, it, rn
            if beta <= eps * beta1:  # an invariant subspace: no further progress
                return it, it, rn
        else:
            rn = phibar
    return max(maxiter, 1), maxiter, rn


def _givens(f: complex, g: complex) -> tuple[float, complex, complex]:
    """(c, s, r) with [[c, s], [-conj(s), c]] @ [f, g] = [r, 0], c real (LAPACK's lartg)."""
    af, ag = abs(f), abs(g)
    if ag == 0:
        return 1.0, 0.0, f
    if af == 0:
        return 0.0, np.conj(g) / ag, ag
    nrm = math.hypot(af, ag)
    phase = f / af
    return af / nrm, phase * np.conj(g) / nrm, phase * nrm


def gmres(A: Apply, b: Any, x: Any, tol: float, maxiter: int, M: Apply | None, cb: Any,
          restart: int, callback_type: str, space: Any) -> tuple[int, int, float]:
    """scipy's restarted GMRES (left preconditioning, modified Gram-Schmidt, the inner test on
    the preconditioned residual): callback_type 'x' calls cb(x) per cycle, 'pr_norm' and
    'legacy' cb(relative preconditioned residual) per inner step; 'legacy' counts maxiter in
    inner steps, as scipy."""
    M = M or _none
    n = int(b.shape[0])
    bn = norm(b)
    if bn == 0:
        x *= 0
        return 0, 0, 0.0
    restart = max(1, min(restart, n))
    dt = np.complex128 if space.complex else np.float64
    ptol_factor = 1.0
    ptol = norm(M(b)) * min(1.0, tol / bn)
    r = b - A(x)
    rn = norm(r)
    if rn <= tol:
        return 0, 0, rn
    inner = 0
    presid = 0.0
    for _cycle in range(maxiter):
        z = M(r)
        beta = norm(z)
        V = [z * (1.0 / beta)]
        h = np.zeros((restart + 1, restart), dt)
        g = np.zeros(restart + 1, dt)
        g[0] = beta
        rot: list[tuple[float, complex]] = []
        breakdown = False
        for col in range(restart):
            w = M(A(V[col]))
            h0 = norm(w)
            for k in range(col + 1):
                h[k, col] = vdot(V[k], w)
                w = w - h[k, col] * V[k]
            h1 = norm(w)
            h[col + 1, col] = h1
            if h1 <= space.eps * h0:
                h[col + 1, col] = 0
                breakdown = True
                V.append(w)
            else:
                V.append(w * (1.0 / h1))
            for k, (c, s) in enumerate(rot):
                a0, a1 = h[k, col], h[k + 1, col]
                h[k, col], h[k + 1, col] = c * a0 + s * a1, -np.conj(s) * a0 + c * a1
            c, s, mag = _givens(h[col, col], h[col + 1, col])
            rot.append((c, s))
            h[col, col], h[col + 1, col] = mag, 0
            g[col + 1] = -np.conj(s) * g[col]
            g[col] = c * g[col]
            presid = abs(g[col + 1])
            inner += 1
            if cb and callback_type in ("legacy", "pr_norm"):
                cb(presid / bn)
            if callback_type == "legacy" and inner == maxiter:
                break
            if presid <= ptol or breakdown:
                break
        k = col + 1
        y = np.zeros(k, dt)
        for i in range(k - 1, -1, -1):  # back substitution, pseudo-solving a zero pivot
            s_ = g[i] - h[i, i + 1:k] @ y[i + 1:k]
            y[i] = s_ / h[i, i] if h[i, i] != 0 else 0
        for i in range(k):
            x += complex(y[i]) * V[i] if space.complex else float(y[i].real) * V[i]
        r = b - A(x)
        rn = norm(r)
        if callback_type == "legacy" and inner == maxiter:
            return (0 if rn <= tol else max(maxiter, 1)), inner, rn
        if cb and callback_type == "x":
            cb(x)
        if rn <= tol:
            return 0, inner, rn
        if breakdown:
            break
        if presid <= ptol:
            ptol_factor = max(space.eps, 0.25 * ptol_factor)
        else:
            ptol_factor = min(1.0, 1.5 * ptol_factor)
        ptol = presid * min(ptol_factor, tol / rn)
    return (0 if rn <= tol else max(maxiter, 1)), inner, rn
