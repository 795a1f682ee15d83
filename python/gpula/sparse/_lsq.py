"""lsqr and lsmr: sparse / matrix-free least squares with scipy.sparse.linalg's signatures and
return tuples (Paige and Saunders' LSQR, Fong and Saunders' LSMR, after scipy's BSD-licensed
ports). A is anything :func:`aslinearoperator` takes (it needs ``A^H x``); the vectors are b's
arrays (NumPy, CuPy, torch: on b's device, the matvecs receive them), in float64 or complex128
as scipy's (x's dtype)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..errors import InvalidArgument
from ._arrays import _dtype_name, result_dtype
from ._operator import aslinearoperator
from ._vectors import Space, norm


def _sym_ortho(a: float, b: float) -> tuple[float, float, float]:
    """A stable Givens rotation (c, s, r) with [c s; -s c] [a; b] = [r; 0] (Choi's SymOrtho)."""
    if b == 0:
        return float(np.sign(a)), 0.0, abs(a)
    if a == 0:
        return 0.0, float(np.sign(b)), abs(b)
    if abs(b) > abs(a):
        tau = a / b
        s = float(np.sign(b)) / math.sqrt(1 + tau * tau)
        return s * tau, s, b / s
    tau = b / a
    c = float(np.sign(a)) / math.sqrt(1 + tau * tau)
    return c, c * tau, a / c


class _Problem:
    """A, b and x0 in one space (b's package and device, scipy's float64 / complex128)."""

    def __init__(self, op: str, A: Any, b: Any, x0: Any, damp: Any):
        self.A = aslinearoperator(A)
        m, n = self.A.shape
        if isinstance(damp, (bool, np.bool_)) or not isinstance(damp, (int, float, np.integer, np.floating)):
            raise InvalidArgument(f"[{op}] damp must be a real number, got {damp!r}")
        where = b if hasattr(b, "shape") else np.asarray(b)
        if getattr(where, "ndim", 1) == 2 and where.shape[1] == 1:
            where = where.reshape(-1)
        b_dt = _dtype_name(where)
        result_dtype(op, b_dt, args=("b",))  # a non-numeric b named
        dts = [d for d in (self.A.dtype, b_dt, None if x0 is None else _dtype_name(x0)) if d is not None]
        dt = result_dtype(op, "float64", *dts)
        self.space = Space.of(where, dt)
        self.b = self.space.vector(where, m, "b", op)
        self.x = self.space.zeros(n) if x0 is None else self.space.vector(x0, n, "x0", op)
        self.op, self.m, self.n = op, m, n

    def mv(self, v: Any) -> Any:
        return self.space.result(self.A.matvec(v), self.m, "A.matvec", self.op)

    def rmv(self, u: Any) -> Any:
        return self.space.result(self.A.rmatvec(u), self.n, "A.rmatvec", self.op)

    def start(self, given_x0: bool) -> tuple[Any, Any, float, Any, float, float]:
        """The first Golub-Kahan step: (u, v, beta, x, alpha, ||b||) with beta u = b - A x0
        and alpha v = A^H u (v zero where beta is)."""
        u = self.b - self.mv(self.x) if given_x0 else self.b
        beta = norm(u)
        v, alpha = self.space.zeros(self.n), 0.0
        if beta > 0:
            u = (1 / beta) * u
            v = self.rmv(u)
            alpha = norm(v)
        if alpha > 0:
            v = (1 / alpha) * v
        return u, v, beta, self.x, alpha, norm(self.b)

    def step(self, u: Any, v: Any, alpha: float) -> tuple[Any, Any, float, float]:
        """One Golub-Kahan bidiagonalization step: (u, v, beta, alpha) of the next column."""
        u = self.mv(v) - alpha * u
        beta = norm(u)
        if beta > 0:
            u = (1 / beta) * u
            v = self.rmv(u) - beta * v
            alpha = norm(v)
            if alpha > 0:
                v = (1 / alpha) * v
        return u, v, beta, alpha


def _limit(op: str, name: str, v: Any, default: int) -> int:
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 0:
        raise InvalidArgument(f"[{op}] {name} must be None or an int >= 0, got {v!r}")
    return int(v)


def lsqr(A: Any, b: Any, damp: float = 0.0, atol: float = 1e-6, btol: float = 1e-6,
         conlim: float = 1e8, iter_lim: int | None = None, show: bool = False,
         calc_var: bool = False, x0: Any = None) -> tuple[Any, ...]:
    """Least squares ``min ||A x - b||^2 + damp^2 ||x||^2`` by LSQR, as scipy.sparse.linalg.lsqr.

    Returns ``(x, istop, itn, r1norm, r2norm, anorm, acond, arnorm, xnorm, var)`` with scipy's
    meanings (istop 1: ``A x = b`` solved to atol / btol, 2: least squares solved, 3: conlim,
    4-6: the same at machine precision, 7: iter_lim, default 2n). ``show`` prints nothing here.

    Example:
        >>> import numpy as np, scipy.sparse as sp, gpula.sparse.linalg as sla
        >>> A = sp.random(30, 10, density=0.5, random_state=0, format="csr") + sp.eye(30, 10)
        >>> b = np.ones(30)
        >>> x, istop, itn = sla.lsqr(A, b, atol=1e-12, btol=1e-12)[:3]
        >>> istop in (1, 2), bool(np.allclose(x, np.linalg.lstsq(A.toarray(), b)[0]))
        (True, True)
    """
    op = "sparse.linalg.lsqr"
    P = _Problem(op, A, b, x0, damp)
    n = P.n
    iter_lim = _limit(op, "iter_lim", iter_lim, 2 * n)
    eps = float(np.finfo(np.float64).eps)
    var = P.space.zeros(n).real
    itn = istop = 0
    ctol = 1 / conlim if conlim > 0 else 0.0
    anorm = acond = ddnorm = res2 = xnorm = xxnorm = z = 0.0
    dampsq = float(damp) ** 2
    cs2, sn2 = -1.0, 0.0
    u, v, beta, x, alfa, bnorm = P.start(x0 is not None)
    w = v * 1
    rhobar, phibar = alfa, beta
    rnorm = r1norm = r2norm = beta
    arnorm = alfa * beta
    if arnorm == 0:
        return x, istop, itn, r1norm, r2norm, anorm, acond, arnorm, xnorm, var
    while itn < iter_lim:
        itn += 1
        old = alfa
        u, v, beta, alfa = P.step(u, v, alfa)
        if beta > 0:
            anorm = math.sqrt(anorm**2 + old**2 + beta**2 + dampsq)
        if damp > 0:
            rhobar1 = math.sqrt(rhobar**2 + dampsq)
            cs1, sn1 = rhobar / rhobar1, damp / rhobar1
            psi = sn1 * phibar
            phibar = cs1 * phibar
        else:
            rhobar1, psi = rhobar, 0.0
        cs, sn, rho = _sym_ortho(rhobar1, beta)
        theta = sn * alfa
        rhobar = -cs * alfa
        phi = cs * phibar
        phibar = sn * phibar
        tau = sn * phi
        dk = (1 / rho) * w
        x = x + (phi / rho) * w
        w = v + (-theta / rho) * w
        ddnorm += norm(dk) ** 2
        if calc_var:
            var = var + abs(dk) ** 2
        delta = sn2 * rho
        gambar = -cs2 * rho
        rhs = phi - delta * z
        zbar = rhs / gambar
        xnorm = math.sqrt(xxnorm + zbar**2)
        gamma = math.sqrt(gambar**2 + theta**2)
        cs2, sn2 = gambar / gamma, theta / gamma
        z = rhs / gamma
        xxnorm += z**2
        acond = anorm * math.sqrt(ddnorm)
        res2 += psi**2
        rnorm = math.sqrt(phibar**2 + res2)
        arnorm = alfa * abs(tau)
        if damp > 0:
            r1sq = rnorm**2 - dampsq * xxnorm
            r1norm = math.copysign(math.sqrt(abs(r1sq)), r1sq)
        else:
            r1norm = rnorm
        r2norm = rnorm
        test1 = rnorm / bnorm
        test2 = arnorm / (anorm * rnorm + eps)
        test3 = 1 / (acond + eps)
        t1 = test1 / (1 + anorm * xnorm / bnorm)
        rtol = btol + atol * anorm * xnorm / bnorm
        istop = _istop(itn, iter_lim, test1, test2, test3, t1, rtol, atol, ctol)
        if istop:
            break
    return x, istop, itn, r1norm, r2norm, anorm, acond, arnorm, xnorm, var


def _istop(itn: int, limit: int, test1: float, test2: float, test3: float, t1: float,
           rtol: float, atol: float, ctol: float) -> int:
    """The stopping reason of LSQR / LSMR (the last test that holds wins, as scipy's order)."""
    istop = 0
    for cond, code in ((itn >= limit, 7), (1 + test3 <= 1, 6), (1 + test2 <= 1, 5),
                       (1 + t1 <= 1, 4), (test3 <= ctol, 3), (test2 <= atol, 2),
                       (test1 <= rtol, 1)):
        if cond:
            istop = code
    return istop


def lsmr(A: Any, b: Any, damp: float = 0.0, atol: float = 1e-6, btol: float = 1e-6,
         conlim: float = 1e8, maxiter: int | None = None, show: bool = False,
         x0: Any = None) -> tuple[Any, ...]:
    """Least squares by LSMR, as scipy.sparse.linalg.lsmr: ``||A^H r||`` decreases
    monotonically, so it may stop earlier than LSQR.

    Returns ``(x, istop, itn, normr, normar, norma, conda, normx)`` with scipy's meanings
    (istop as :func:`lsqr`; maxiter default min(m, n)). ``show`` prints nothing here.

    Example:
        >>> import numpy as np, scipy.sparse as sp, gpula.sparse.linalg as sla
        >>> A = sp.random(30, 10, density=0.5, random_state=0, format="csr") + sp.eye(30, 10)
        >>> b = np.ones(30)
        >>> x, istop, itn = sla.lsmr(A, b, atol=1e-12, btol=1e-12, maxiter=100)[:3]
        >>> istop in (1, 2), bool(np.allclose(x, np.linalg.lstsq(A.toarray(), b)[0]))
        (True, True)
    """
    op = "sparse.linalg.lsmr"
    P = _Problem(op, A, b, x0, damp)
    m, n = P.m, P.n
    maxiter = _limit(op, "maxiter", maxiter, min(m, n))
    u, v, beta, x, alpha, normb = P.start(x0 is not None)
    itn = istop = 0
    zetabar, alphabar = alpha * beta, alpha
    rho = rhobar = cbar = 1.0
    sbar = 0.0
    h, hbar = v * 1, P.space.zeros(n)
    betadd, betad, rhodold, tautildeold, thetatilde, zeta, d = beta, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0
    normA2 = alpha * alpha
    maxrbar, minrbar = 0.0, 1e100
    normA, condA, normx = math.sqrt(normA2), 1.0, 0.0
    ctol = 1 / conlim if conlim > 0 else 0.0
    normr, normar = beta, alpha * beta
    if normar == 0:
        return x, istop, itn, normr, normar, normA, condA, normx
    if normb == 0:
        return x * 0, istop, itn, normr, normar, normA, condA, normx
    while itn < maxiter:
        itn += 1
        u, v, beta, alpha = P.step(u, v, alpha)
        chat, shat, alphahat = _sym_ortho(alphabar, damp)
        rhoold = rho
        c, s, rho = _sym_ortho(alphahat, beta)
        thetanew = s * alpha
        alphabar = c * alpha
        rhobarold, zetaold = rhobar, zeta
        thetabar = sbar * rho
        rhotemp = cbar * rho
        cbar, sbar, rhobar = _sym_ortho(cbar * rho, thetanew)
        zeta = cbar * zetabar
        zetabar = -sbar * zetabar
        hbar = h + (-(thetabar * rho / (rhoold * rhobarold))) * hbar
        x = x + (zeta / (rho * rhobar)) * hbar
        h = v + (-(thetanew / rho)) * h
        betaacute = chat * betadd
        betacheck = -shat * betadd
        betahat = c * betaacute
        betadd = -s * betaacute
        thetatildeold = thetatilde
        ctildeold, stildeold, rhotildeold = _sym_ortho(rhodold, thetabar)
        thetatilde = stildeold * rhobar
        rhodold = ctildeold * rhobar
        betad = -stildeold * betad + ctildeold * betahat
        tautildeold = (zetaold - thetatildeold * tautildeold) / rhotildeold
        taud = (zeta - thetatilde * tautildeold) / rhodold
        d += betacheck * betacheck
        normr = math.sqrt(d + (betad - taud) ** 2 + betadd * betadd)
        normA2 += beta * beta
        normA = math.sqrt(normA2)
        normA2 += alpha * alpha
        maxrbar = max(maxrbar, rhobarold)
        if itn > 1:
            minrbar = min(minrbar, rhobarold)
        condA = max(maxrbar, rhotemp) / min(minrbar, rhotemp)
        normar = abs(zetabar)
        normx = norm(x)
        test1 = normr / normb
        test2 = normar / (normA * normr) if normA * normr != 0 else math.inf
        test3 = 1 / condA
        t1 = test1 / (1 + normA * normx / normb)
        rtol = btol + atol * normA * normx / normb
        istop = _istop(itn, maxiter, test1, test2, test3, t1, rtol, atol, ctol)
        if istop:
            break
    return x, istop, itn, normr, normar, normA, condA, normx
