"""eigsh and svds with scipy.sparse.linalg's signatures: a thick-restart Lanczos (Krylov-Schur
form, full reorthogonalization done twice) over the caller's arrays.

The basis V (n x ncv) lives in the operator's package and device (NumPy, CuPy, torch); each
step is one operator product and two block projections (GEMV-like products in that package);
the small projected matrix H = V^H B OP V is solved on the host (numpy.linalg.eigh). A restart
keeps the wanted Ritz vectors and half of the rest, in the order of ``which``; a Ritz pair
is converged when ``|beta_m y_m| <= tol max(|theta|, eps^(2/3) ||H||)`` (ARPACK's test; tol=0:
machine precision), or at most ``eps ||H||`` (the backward error rounding allows: ARPACK's
own test for a tiny interior theta can ask for less than that). Shift-invert (sigma) and M are ARPACK's modes 3 and 2: OP = (A - sigma
M)^-1 M with gl.sparse.DirectSolver (or OPinv), OP = M^-1 A with a DirectSolver on M (or
Minv), in the M inner product.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ..errors import Error, InvalidArgument, NotSupported
from ._arrays import _dtype_name, _package, _to_numpy, result_dtype
from ._csr_ops import is_sparse
from ._direct import DirectSolver
from ._arrays import _from_numpy
from ._matrix import as_csr, csr_matrix, from_dense
from ._operator import LinearOperator, aslinearoperator
from ._vectors import Space

_WHICH = ("LM", "SM", "LA", "SA", "BE")


class ArpackNoConvergence(Error, RuntimeError):
    """eigsh / svds did not converge within maxiter restarts; ``eigenvalues`` and
    ``eigenvectors`` hold the pairs that did (as scipy's ArpackNoConvergence)."""

    def __init__(self, msg: str, eigenvalues: Any, eigenvectors: Any):
        super().__init__(msg)
        self.eigenvalues = eigenvalues
        self.eigenvectors = eigenvectors


def _order(theta: np.ndarray, which: str) -> np.ndarray:
    """Indices of theta, most wanted first."""
    if which == "LM":
        return np.argsort(-np.abs(theta), kind="stable")
    if which == "SM":
        return np.argsort(np.abs(theta), kind="stable")
    if which == "LA":
        return np.argsort(-theta, kind="stable")
    if which == "SA":
        return np.argsort(theta, kind="stable")
    up = np.argsort(-theta, kind="stable")  # BE: alternate ends, the high end first
    out = []
    lo, hi = len(theta) - 1, 0
    while hi <= lo:
        out.append(up[hi])
        hi += 1
        if hi <= lo:
            out.append(up[lo])
            lo -= 1
    return np.asarray(out, dtype=np.int64)


def _wanted(theta: np.ndarray, which: str, k: int) -> np.ndarray:
    if which != "BE":
        return _order(theta, which)[:k]
    up = np.argsort(theta, kind="stable")
    hi = k - k // 2  # odd k: one more from the high end, as scipy
    return np.concatenate([up[: k // 2], up[len(theta) - hi:]])


class _Operators:
    """OP (what the Lanczos runs on), B (the inner product; None: the identity), and the map
    from a Ritz value theta of OP back to an eigenvalue of (A, M)."""

    def __init__(self, op: str, A: Any, M: Any, sigma: Any, Minv: Any, OPinv: Any, n: int, dt: str):
        self.op, self.n, self.sigma = op, n, sigma
        Aop = aslinearoperator(A)
        Mop = None if M is None else aslinearoperator(M)
        self.B: Callable[[Any], Any] | None = None if Mop is None else Mop.matvec
        self.OP: Callable[[Any], Any]
        if sigma is None:
            self.to_eig: Callable[[np.ndarray], np.ndarray] = lambda t: t
            if Mop is None:
                self.OP = Aop.matvec
            else:
                inv = self._inverse(M, None, Minv, "M", dt)
                self.OP = lambda x: inv(Aop.matvec(x))
        else:
            s = float(np.real(sigma)) if np.isrealobj(sigma) else sigma
            self.to_eig = lambda t: s + 1.0 / t
            inv = self._inverse(A, (M, s), OPinv, "A - sigma M", dt)
            self.OP = inv if Mop is None else (lambda x: inv(Mop.matvec(x)))

    def _inverse(self, A: Any, shift: Any, given: Any, what: str, dt: str) -> Callable[[Any], Any]:
        """x -> (A - s M)^-1 x: the user's operator, or one factorization by DirectSolver."""
        if given is not None:
            return aslinearoperator(given).matvec
        if isinstance(A, LinearOperator) or not (is_sparse(A) or getattr(A, "ndim", None) == 2):
            raise NotSupported(
                f"[{self.op}] {what} must be a sparse or dense matrix to factorize (a "
                "LinearOperator needs OPinv= / Minv=)"
            )
        C = as_csr(A, self.op) if is_sparse(A) else as_csr(_dense_csr(A), self.op)
        if shift is not None:
            M, s = shift
            if M is None:
                M = _identity_like(C)
            else:
                M = as_csr(M, self.op) if is_sparse(M) else as_csr(_dense_csr(M), self.op)
            C = C - s * M if s != 0 else C
        C = C.astype(result_dtype(self.op, C.dtype, dt), copy=False)
        solver = DirectSolver(C, _zeros_like_package(C))
        solver.plan()
        solver.factorize()

        def solve(x: Any) -> Any:
            solver.reset_operands(b=x)
            return solver.solve()

        return solve


def _dense_csr(A: Any) -> Any:
    return from_dense(A, "sparse.linalg.eigsh")


def _identity_like(C: Any) -> Any:
    n = C.shape[0]
    idx = _from_numpy(np.arange(n, dtype=np.int64), C.package, C.device)
    return csr_matrix((_from_numpy(np.ones(n), C.package, C.device), (idx, idx)), shape=C.shape)


def _zeros_like_package(C: Any) -> Any:
    return _from_numpy(np.zeros(C.shape[0], C.dtype), C.package, C.device)


def _space(op: str, A: Any, M: Any, v0: Any) -> Space:
    """Where the basis lives: v0's package and device, else the matrix's (NumPy for an
    operator without a v0), in the promoted dtype of A, M and v0."""
    dts = []
    for X in (A, M):
        d = getattr(X, "dtype", None)
        if d is not None:
            dts.append(_dtype_name(X) if hasattr(X, "ndim") or is_sparse(X) else d)
    if v0 is not None:
        dts.append(_dtype_name(v0) if hasattr(v0, "dtype") else np.asarray(v0).dtype)
    dt = result_dtype(op, *dts) if dts else "float64"
    for x in (v0, getattr(A, "data", None), A):
        if x is None or not hasattr(x, "shape") or isinstance(x, LinearOperator):
            continue
        try:
            return Space.of(x, dt)
        except Error:
            continue
    return Space("numpy", "cpu", dt)


def _lanczos(OP: Callable[[Any], Any], B: Callable[[Any], Any] | None, sp: Space, n: int,
             k: int, which: str, v0: Any, ncv: int, maxiter: int, tol: float, op: str,
             rng: np.random.Generator) -> tuple[np.ndarray, Any, bool]:
    """(theta, vectors as an (n, k) array of the space, converged) for the k wanted Ritz
    pairs of OP in the B inner product."""
    pkg = sp.package
    V = sp.zeros((n, ncv + 1))
    hdt = np.complex128 if sp.complex else np.float64

    def inner(x: Any) -> Any:
        return x if B is None else sp.result(B(x), n, "M", op)

    def bnorm(x: Any) -> float:
        return math.sqrt(max(float(np.real((x.conj() * inner(x)).sum().item())), 0.0))

    def orthogonalize(w: Any, j: int) -> tuple[np.ndarray, Any]:
        c = np.zeros(j, hdt)
        for _ in range(2):  # twice is enough (Kahan / Parlett)
            Vj = V[:, :j]
            cj = Vj.conj().T @ inner(w)
            w = w - Vj @ cj
            c += _to_numpy(cj, pkg)
        return c, w

    def random_vector() -> Any:
        g = rng.standard_normal(n) + (1j * rng.standard_normal(n) if sp.complex else 0)
        return sp.host(g)

    v = sp.vector(v0, n, "v0", op) if v0 is not None else random_vector()
    nv = bnorm(v)
    if nv == 0:
        raise InvalidArgument(f"[{op}] v0 must not be zero")
    V[:, 0] = v * (1.0 / nv)
    H = np.zeros((ncv, ncv), hdt)
    start, beta = 0, 0.0
    eps23 = sp.eps ** (2.0 / 3.0)
    tol = tol if tol > 0 else sp.eps
    theta = np.zeros(0)
    Y = np.zeros((ncv, 0))
    sel = ok = np.zeros(0, dtype=np.int64)
    for _ in range(max(maxiter, 1)):
        for j in range(start, ncv):
            w = sp.result(OP(V[:, j]), n, "the operator", op)
            c, w = orthogonalize(w, j + 1)
            H[: j + 1, j] = c
            H[j, : j + 1] = c.conj()
            H[j, j] = c[j].real
            beta = bnorm(w)
            scale = max(float(np.abs(c).max()), 1e-300)
            if beta <= sp.eps * scale:  # an invariant subspace: go on from a fresh direction
                beta = 0.0
                _, w = orthogonalize(random_vector(), j + 1)
                w = w * (1.0 / bnorm(w))
            else:
                w = w * (1.0 / beta)
            V[:, j + 1] = w
            if j + 1 < ncv:
                H[j + 1, j] = H[j, j + 1] = beta
        if not np.isfinite(H).all():
            raise InvalidArgument(f"[{op}] the operator produced NaN or Inf (A or M holds NaN or Inf)")
        theta, Y = np.linalg.eigh(H)
        res = np.abs(beta * Y[ncv - 1, :])
        anorm = float(np.abs(theta).max()) if theta.size else 0.0
        sel = _wanted(theta, which, k)
        ok = res[sel] <= np.maximum(tol * np.maximum(np.abs(theta[sel]), eps23 * anorm), sp.eps * anorm)
        if np.all(ok):
            return theta[sel], V[:, :ncv] @ sp.host(Y[:, sel]), True
        keep = min(ncv - 1, max(k + (ncv - k) // 2, k + 1))
        kept = _order(theta, which)[:keep]
        V[:, :keep] = V[:, :ncv] @ sp.host(Y[:, kept])
        V[:, keep] = V[:, ncv]
        H = np.zeros((ncv, ncv), hdt)
        H[np.arange(keep), np.arange(keep)] = theta[kept]
        start = keep
    conv = sel[ok]
    return theta[conv], V[:, :ncv] @ sp.host(Y[:, conv]), False


def _int_arg(op: str, name: str, v: Any, low: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
        raise InvalidArgument(f"[{op}] {name} must be an int >= {low}, got {v!r}")
    return int(v)


def _generator(rng: Any) -> np.random.Generator:
    return rng if isinstance(rng, np.random.Generator) else np.random.default_rng(rng)


def eigsh(A: Any, k: int = 6, M: Any = None, sigma: Any = None, which: str = "LM", v0: Any = None,
          ncv: int | None = None, maxiter: int | None = None, tol: float = 0,
          return_eigenvectors: bool = True, Minv: Any = None, OPinv: Any = None,
          mode: str = "normal", rng: Any = None) -> Any:
    """k eigenvalues (and eigenvectors) of a Hermitian A, or of A x = lambda M x with M
    Hermitian positive definite, as scipy.sparse.linalg.eigsh.

    A and M: sparse matrices, dense arrays or LinearOperators (NumPy, CuPy, torch; the basis
    lives in v0's package, else A's). which: 'LM', 'SM', 'LA', 'SA', 'BE' (of the shifted and
    inverted values 1 / (lambda - sigma) when sigma is given: 'LM' finds the eigenvalues
    nearest sigma). sigma factorizes A - sigma M once with gl.sparse.DirectSolver (or uses
    OPinv); M without sigma factorizes M (or uses Minv). 'SM' without sigma asks for interior
    eigenvalues of an indefinite A, which restarted Lanczos (ARPACK's too) finds slowly and may
    miss: prefer ``sigma=0``. Returns ``(w, v)`` with w ascending,
    or w alone; v's columns are M-orthonormal. mode: 'normal' only. Not converged within
    maxiter restarts (default 10 n): ArpackNoConvergence with the pairs that did.

    Example:
        >>> import numpy as np, scipy.sparse as sp, gpula.sparse.linalg as sla
        >>> A = sp.diags(np.arange(1.0, 101.0), format="csr")
        >>> w, v = sla.eigsh(A, k=3)
        >>> np.round(w, 8).tolist(), v.shape
        ([98.0, 99.0, 100.0], (100, 3))
        >>> np.round(sla.eigsh(A, k=2, sigma=10.2, return_eigenvectors=False), 8).tolist()
        [10.0, 11.0]
    """
    op = "sparse.linalg.eigsh"
    if which not in _WHICH:
        raise InvalidArgument(f"[{op}] which must be one of {_WHICH}, got {which!r}")
    if mode != "normal":
        raise NotSupported(f"[{op}] mode={mode!r}: only 'normal' is supported")
    shape = tuple(int(s) for s in getattr(A, "shape", ()))
    if len(shape) != 2 or shape[0] != shape[1]:
        raise InvalidArgument(f"[{op}] A must be square, got shape {shape}")
    n = shape[0]
    k = _int_arg(op, "k", k, 1)
    if k >= n:
        raise InvalidArgument(f"[{op}] k must be less than n = {n} (A is {n} x {n}), got k = {k}")
    ncv = min(n, max(2 * k + 1, 20)) if ncv is None else _int_arg(op, "ncv", ncv, 1)
    if not k < ncv <= n:
        raise InvalidArgument(f"[{op}] ncv must satisfy k < ncv <= n ({k} < ncv <= {n}), got {ncv}")
    maxiter = 10 * n if maxiter is None else _int_arg(op, "maxiter", maxiter, 1)
    if isinstance(tol, bool) or not isinstance(tol, (int, float, np.integer, np.floating)) or tol < 0:
        raise InvalidArgument(f"[{op}] tol must be a real number >= 0, got {tol!r}")
    if M is not None and tuple(M.shape) != (n, n):
        raise InvalidArgument(f"[{op}] M must have shape ({n}, {n}), got {tuple(M.shape)}")
    sp = _space(op, A, M, v0)
    ops = _Operators(op, A, M, sigma, Minv, OPinv, n, sp.dtype)
    theta, X, done = _lanczos(ops.OP, ops.B, sp, n, k, which, v0, ncv, maxiter, float(tol), op,
                              _generator(rng))
    w = ops.to_eig(theta)
    order = np.argsort(w, kind="stable")
    w = w[order]
    X = _columns(X, order, sp)
    w = _from_numpy(np.ascontiguousarray(w), sp.package, sp.device)
    if not done:
        raise ArpackNoConvergence(
            f"[{op}] ARPACK-style error -1: no convergence ({len(w)} of {k} eigenvalues "
            f"converged in {maxiter} restarts)", w, X)
    return (w, X) if return_eigenvectors else w


def _columns(X: Any, order: np.ndarray, sp: Space) -> Any:
    """X's columns in `order` (a host index array), in X's package."""
    return X @ sp.host(np.eye(len(order))[:, order]) if len(order) else X


def svds(A: Any, k: int = 6, ncv: int | None = None, tol: float = 0, which: str = "LM",
         v0: Any = None, maxiter: int | None = None, return_singular_vectors: Any = True,
         solver: str = "arpack", rng: Any = None, options: Any = None, *,
         random_state: Any = None) -> Any:
    """k singular values (and vectors) of A, as scipy.sparse.linalg.svds: eigsh on A^H A (or
    A A^H when A is wide), then a Rayleigh-Ritz step (an SVD of A V) for accurate singular
    values and left vectors. which 'LM' (largest) or 'SM' (smallest). Returns ``(u, s, vh)``
    with s ascending, or s alone (return_singular_vectors False; 'u' / 'vh' return u or vh
    with None for the other). solver: 'arpack' (the Lanczos here; 'propack' / 'lobpcg' are
    refused).

    Example:
        >>> import numpy as np, scipy.sparse as sp, gpula.sparse.linalg as sla
        >>> A = sp.diags(np.arange(1.0, 41.0), format="csr")[:, :30]
        >>> u, s, vh = sla.svds(A, k=2)
        >>> np.round(s, 8).tolist(), u.shape, vh.shape
        ([29.0, 30.0], (40, 2), (2, 30))
    """
    op = "sparse.linalg.svds"
    if solver != "arpack":
        raise NotSupported(f"[{op}] solver={solver!r}: gpula's svds is the Lanczos one ('arpack')")
    if which not in ("LM", "SM"):
        raise InvalidArgument(f"[{op}] which must be 'LM' or 'SM', got {which!r}")
    if return_singular_vectors not in (True, False, "u", "vh"):
        raise InvalidArgument(f"[{op}] return_singular_vectors must be True, False, 'u' or 'vh', "
                              f"got {return_singular_vectors!r}")
    Aop = aslinearoperator(A)
    m, n = Aop.shape
    k = _int_arg(op, "k", k, 1)
    if k >= min(m, n):
        raise InvalidArgument(f"[{op}] k must be less than min(A.shape) = {min(m, n)}, got {k}")
    tall = m >= n
    X = Aop if tall else Aop.H  # X is tall: X^H X is the small side
    XhX = LinearOperator((min(m, n),) * 2, lambda x: X.rmatvec(X.matvec(x)), dtype=Aop.dtype)
    if v0 is None:  # a random start in A's package and device (the operator has none)
        home = _space(op, A, None, None)
        g = _generator(rng if rng is not None else random_state)
        v0 = home.host(g.standard_normal(min(m, n)))
    try:
        _, V = eigsh(XhX, k=k, which="LA" if which == "LM" else "SA", v0=v0, ncv=ncv,
                     maxiter=maxiter, tol=tol, rng=rng if rng is not None else random_state)
    except ArpackNoConvergence as e:
        raise ArpackNoConvergence(str(e).replace("eigsh", "svds"), e.eigenvalues, e.eigenvectors) from None
    XV = X.matmat(V)
    U, s, Wh = np.linalg.svd(_to_numpy(XV, _package(XV)), full_matrices=False)  # Rayleigh-Ritz, k columns
    order = np.argsort(s, kind="stable")
    s, U, Wh = s[order], U[:, order], Wh[order, :]
    sp = Space.of(XV, _dtype_name(XV))
    u = sp.host(U)
    vh = (V @ sp.host(Wh.conj().T)).conj().T  # (k, n) of X's right side
    if not tall:
        u, vh = vh.conj().T, u.conj().T
    s = _from_numpy(np.ascontiguousarray(s), sp.package, sp.device)
    rsv = return_singular_vectors
    if rsv is False:
        return s
    return (u if rsv in (True, "u") else None), s, (vh if rsv in (True, "vh") else None)

