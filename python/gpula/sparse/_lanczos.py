"""eigsh and svds with scipy.sparse.linalg's signatures: a thick-restart Lanczos (Krylov-Schur
form, full reorthogonalization done twice) over the caller's arrays.

The basis V (n x ncv) lives in the operator's package and device (NumPy, CuPy, torch); each
step is one operator product and two block projections (GEMV-like products in that package);
the small projected matrix H = V^H B OP V is solved on the host (numpy.linalg.eigh). A restart
keeps the wanted Ritz vectors and half of the rest, in the order of ``which``; a Ritz pair
is converged when ``|beta_m y_m| <= tol max(|theta|, eps^(2/3) ||H||)`` (ARPACK's test; tol=0:
machine precision), or at most ``eps ||H||`` (the backward error rounding allows: ARPACK's
own test for a tiny interior theta can ask for less than that). Shift-invert (sigma) and M
are ARPACK's modes 3 and 2: OP = (A - sigma M)^-1 M with gl.sparse.DirectSolver (or OPinv),
OP = M^-1 A with a DirectSolver on M (or Minv), in the M inner product; 'buckling' and
'cayley' are its modes 4 and 5. Wanted values inside OP's spectrum ('SM') are found as the
extremal ones of another operator (see _run).
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Callable

import numpy as np

from ..errors import DTypeError, Error, InvalidArgument, LinAlgError, NotSupported
from ._arrays import _dtype_name, _package, _to_numpy, result_dtype
from ._csr_ops import is_sparse
from ._direct import DirectSolver
from ._arrays import _from_numpy
from ._matrix import as_csr, csr_matrix, from_dense
from ._operator import LinearOperator, aslinearoperator
from ._vectors import Space

_WHICH = ("LM", "SM", "LA", "SA", "BE")


class ArpackError(Error, RuntimeError):
    """eigsh / svds failed (scipy's ArpackError: a gl.Error and a RuntimeError)."""


class ArpackNoConvergence(ArpackError):
    """eigsh / svds did not converge within maxiter restarts. ``eigenvalues`` (ascending) and
    ``eigenvectors`` (their columns) hold the pairs that did, in the caller's package, as
    scipy's ArpackNoConvergence; ``iterations`` is the number of restarts run.

    Example:
        >>> import numpy as np, scipy.sparse as sp, gpula.sparse.linalg as sla
        >>> A = sp.diags(np.linspace(1.0, 2.0, 400), format="csr")
        >>> try:
        ...     sla.eigsh(A, k=4, which="LA", ncv=8, maxiter=1, rng=0)
        ... except sla.ArpackNoConvergence as e:
        ...     print(isinstance(e, RuntimeError), len(e.eigenvalues) < 4, e.eigenvectors.shape[0])
        True True 400
    """

    def __init__(self, msg: str, eigenvalues: Any, eigenvectors: Any, iterations: int = 0):
        super().__init__(msg)
        self.eigenvalues = eigenvalues
        self.eigenvectors = eigenvectors
        self.iterations = iterations


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
    from a Ritz value theta of OP back to an eigenvalue of (A, M): ARPACK's modes 1 and 2
    (sigma None), 3 ('normal'), 4 ('buckling': OP = (A - sigma M)^-1 A, B = A) and 5
    ('cayley': OP = (A - sigma M)^-1 (A + sigma M), B = M)."""

    def __init__(self, op: str, A: Any, M: Any, sigma: Any, mode: str, Minv: Any, OPinv: Any,
                 n: int, dt: str):
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
            return
        s = float(np.real(sigma)) if np.isrealobj(sigma) else sigma
        inv = self._inverse(A, (M, s), OPinv, "A - sigma M", dt)
        if mode == "buckling":
            self.B = Aop.matvec
            self.OP = lambda x: inv(Aop.matvec(x))
            self.to_eig = lambda t: s * t / (t - 1.0)
        elif mode == "cayley":
            Mv: Callable[[Any], Any] = _identity if Mop is None else Mop.matvec
            self.OP = lambda x: inv(Aop.matvec(x) + s * Mv(x))
            self.to_eig = lambda t: s * (t + 1.0) / (t - 1.0)
        else:
            self.to_eig = lambda t: s + 1.0 / t
            self.OP = inv if Mop is None else (lambda x: inv(Mop.matvec(x)))

    def _inverse(self, A: Any, shift: Any, given: Any, what: str, dt: str) -> Callable[[Any], Any]:
        """x -> (A - s M)^-1 x: the user's operator, or one factorization by DirectSolver."""
        if given is not None:
            return aslinearoperator(given).matvec
        if _is_operator(A) or not (is_sparse(A) or getattr(A, "ndim", None) == 2):
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


def _identity(x: Any) -> Any:
    return x


def _is_operator(A: Any) -> bool:
    """A gpula or scipy LinearOperator (not a matrix)."""
    if isinstance(A, LinearOperator):
        return True
    # as aslinearoperator: is_sparse is also true of scipy's LinearOperator
    return hasattr(A, "matvec") and hasattr(A, "shape") and not hasattr(A, "format")


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
    operator without a v0), in the promoted dtype of A and M (v0's where they have none; as
    scipy, v0 takes A's type)."""
    dts = []
    for X in (A, M):
        d = getattr(X, "dtype", None)
        if d is not None:
            dts.append(d if _is_operator(X) else _dtype_name(X))
    if v0 is not None and not dts:
        dts.append(_dtype_name(v0) if hasattr(v0, "dtype") else np.asarray(v0).dtype)
    dt = result_dtype(op, *dts) if dts else "float64"
    for x in (v0, getattr(A, "data", None), A):
        if x is None or not hasattr(x, "shape") or _is_operator(x):
            continue
        try:
            return Space.of(x, dt)
        except Error:
            continue
    return Space("numpy", "cpu", dt)


def _lanczos(OP: Callable[[Any], Any], B: Callable[[Any], Any] | None, sp: Space, n: int,
             k: int, which: str, v0: Any, ncv: int, maxiter: int, tol: float, op: str,
             rng: np.random.Generator) -> tuple[np.ndarray, Any, int]:
    """(theta, vectors as an (n, k) array of the space, restarts run: 0 when not converged)
    for the k wanted Ritz pairs of OP in the B inner product."""
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
    for it in range(max(maxiter, 1)):
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
            raise InvalidArgument(
                f"[{op}] the operator produced NaN or Inf (A or M holds NaN or Inf)")
        theta, Y = np.linalg.eigh(H)
        res = np.abs(beta * Y[ncv - 1, :])
        anorm = float(np.abs(theta).max()) if theta.size else 0.0
        sel = _wanted(theta, which, k)
        ok = res[sel] <= np.maximum(tol * np.maximum(np.abs(theta[sel]), eps23 * anorm),
                                    sp.eps * anorm)
        if np.all(ok):
            return theta[sel], V[:, :ncv] @ sp.host(Y[:, sel]), it + 1
        keep = min(ncv - 1, max(k + (ncv - k) // 2, k + 1))
        kept = _order(theta, which)[:keep]
        V[:, :keep] = V[:, :ncv] @ sp.host(Y[:, kept])
        V[:, keep] = V[:, ncv]
        H = np.zeros((ncv, ncv), hdt)
        H[np.arange(keep), np.arange(keep)] = theta[kept]
        start = keep
    conv = sel[ok]
    return theta[conv], V[:, :ncv] @ sp.host(Y[:, conv]), 0


def _int_arg(op: str, name: str, v: Any, low: int) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < low:
        raise InvalidArgument(f"[{op}] {name} must be an int >= {low}, got {v!r}")
    return int(v)


def _integral(op: str, name: str, v: Any, rule: str, ok: Callable[[int], bool]) -> int:
    """v as an int where it is an integral number satisfying rule (scipy's svds checks)."""
    try:
        good = not isinstance(v, (bool, str)) and int(v) == v and ok(int(v))
    except (TypeError, ValueError, OverflowError):
        good = False
    if not good:
        raise InvalidArgument(f"[{op}] {name} must be an integer satisfying {rule}, got {v!r}")
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
    lives in v0's package, else A's). which: 'LM', 'SM', 'LA', 'SA', 'BE' (of the transformed
    values when sigma is given, as scipy: mode 'normal' 1 / (lambda - sigma), so 'LM' finds the
    eigenvalues nearest sigma; 'buckling' lambda / (lambda - sigma), B = A; 'cayley'
    (lambda + sigma) / (lambda - sigma)). sigma factorizes A - sigma M once with
    gl.sparse.DirectSolver (or uses OPinv); M without sigma factorizes M (or uses Minv).
    'SM' without sigma on a matrix A (not an operator) runs on A^-1 (M) (the same eigenvalues,
    found far faster and more surely than by ARPACK's Lanczos on A); an operator or a singular
    A runs on A^2 (M^-1 A squared) with a Rayleigh-Ritz step. tol <= 0: machine precision.
    maxiter: restarts (default 10 n). ncv > n is taken as n.

    Returns ``(w, v)`` with w ascending and v's columns M-orthonormal (A-orthonormal in
    'buckling'), or w alone, ordered as ARPACK's (scipy's) for a real A without sigma: 'LM'
    by ascending |w|, 'SM' by descending |w|, 'SA' descending, 'LA' / 'BE' ascending;
    ascending otherwise (complex A, sigma). k >= n: all n eigenpairs by a dense
    gl.linalg.eigh(A, M) with a RuntimeWarning, as scipy; a sparse or operator A (or M)
    raises gl.DTypeError (a TypeError, as scipy's). A complex Hermitian A takes the modes
    'normal' only (gl.InvalidArgument as scipy) but, unlike scipy, which='BE' and k = n - 1.
    Not converged within maxiter restarts: ArpackNoConvergence (a RuntimeError) carrying the
    pairs that did.

    Example:
        >>> import numpy as np, scipy.sparse as sp, gpula.sparse.linalg as sla
        >>> A = sp.diags(np.arange(1.0, 101.0), format="csr")
        >>> w, v = sla.eigsh(A, k=3)
        >>> np.round(w, 8).tolist(), v.shape
        ([98.0, 99.0, 100.0], (100, 3))
        >>> np.round(sla.eigsh(A, k=2, sigma=10.2, return_eigenvectors=False), 8).tolist()
        [10.0, 11.0]
        >>> np.round(sla.eigsh(A, k=2, which="SM", return_eigenvectors=False), 8).tolist()
        [2.0, 1.0]
    """
    op = "sparse.linalg.eigsh"
    if which not in _WHICH:
        raise InvalidArgument(f"[{op}] which must be one of {' '.join(_WHICH)}, got {which!r}")
    if mode not in _MODES:
        raise InvalidArgument(f"[{op}] unrecognized mode {mode!r}: one of {_MODES}")
    shape = tuple(int(s) for s in getattr(A, "shape", ()))
    if len(shape) != 2 or shape[0] != shape[1]:
        raise InvalidArgument(f"[{op}] A must be square, got shape {shape}")
    n = shape[0]
    if M is not None and tuple(getattr(M, "shape", ())) != (n, n):
        raise InvalidArgument(
            f"[{op}] M must have shape ({n}, {n}), got {tuple(getattr(M, 'shape', ()))}")
    if _is_complex(A) and mode != "normal":
        raise InvalidArgument(f"[{op}] mode={mode} cannot be used with complex matrix A")
    k = _int_arg(op, "k", k, 1)
    if k >= n:
        return _dense_eigh(op, A, M, k, n, return_eigenvectors)
    ncv = max(2 * k + 1, 20) if ncv is None else _int_arg(op, "ncv", ncv, 1)
    ncv = min(ncv, n)
    if not k < ncv:
        raise InvalidArgument(f"[{op}] ncv must satisfy k < ncv <= n ({k} < ncv <= {n}), got {ncv}")
    maxiter = 10 * n if maxiter is None else _int_arg(op, "maxiter", maxiter, 1)
    if isinstance(tol, bool) or not isinstance(tol, (int, float, np.integer, np.floating)) \
            or math.isnan(tol):
        raise InvalidArgument(f"[{op}] tol must be a real number, got {tol!r}")
    _check_inverses(op, M, sigma, Minv, OPinv)
    sp = _space(op, A, M, v0)
    if v0 is not None and not sp.complex:
        v0 = v0 if hasattr(v0, "dtype") else np.asarray(v0)
        v0 = v0.real if _is_complex(v0) else v0  # as scipy's cast to A's real type
    ops, (theta, X, iters) = _run(op, A, M, sigma, mode, Minv, OPinv, which, k, v0, sp, n, ncv,
                                  maxiter, max(float(tol), 0.0), _generator(rng))
    w = ops.to_eig(theta)
    order = _result_order(w, which, sigma is None and not sp.complex, return_eigenvectors)
    w = w[order]
    X = _columns(X, order, sp)
    w = _from_numpy(np.ascontiguousarray(w, _real(sp.dtype)), sp.package, sp.device)
    if not iters:
        raise ArpackNoConvergence(
            f"[{op}] No convergence ({maxiter} restarts: maxiter, {len(order)}/{k} "
            "eigenvectors converged)", w, X, maxiter)
    return (w, X) if return_eigenvectors else w


_MODES = ("normal", "buckling", "cayley")


def _run(op: str, A: Any, M: Any, sigma: Any, mode: str, Minv: Any, OPinv: Any, which: str,
         k: int, v0: Any, sp: Space, n: int, ncv: int, maxiter: int, tol: float,
         gen: np.random.Generator) -> tuple[_Operators, tuple[np.ndarray, Any, int]]:
    """The operators and the Lanczos' (theta, vectors, restarts). 'SM' asks for values inside
    the spectrum of OP, whose Ritz values restarted Lanczos (ARPACK's too) finds slowly or
    misses: the same eigenpairs are found as the extremal ones of another operator. 'SM'
    without sigma: 'LM' of A^-1 M (shift-invert at 0) where A factorizes, else (an operator, a
    singular A) 'SA' of OP^2 (OP = A or M^-1 A) and a Rayleigh-Ritz step with OP; 'SM' with
    sigma in mode 'normal' (the eigenvalues farthest from sigma): 'LM' of M^-1 A - sigma."""
    def lanczos(ops: _Operators, which: str) -> tuple[np.ndarray, Any, int]:
        return _lanczos(ops.OP, ops.B, sp, n, k, which, v0, ncv, maxiter, tol, op, gen)

    if which == "SM" and sigma is None and Minv is None and not _is_operator(A):
        try:
            ops = _Operators(op, A, M, 0.0, "normal", None, None, n, sp.dtype)
            return ops, lanczos(ops, "LM")
        except (LinAlgError, InvalidArgument, NotSupported):  # singular A, no direct solver
            pass                                                # here (NaN in A: raised below)
    if which == "SM" and sigma is not None and mode == "normal" and not _is_operator(M):
        ops = _Operators(op, A, M, None, mode, None, None, n, sp.dtype)
        s = float(np.real(sigma))
        inner = ops.OP
        ops.OP = lambda x: inner(x) - s * x
        ops.to_eig = lambda t: t + s
        return ops, lanczos(ops, "LM")
    ops = _Operators(op, A, M, sigma, mode, Minv, OPinv, n, sp.dtype)
    if which == "SM" and sigma is None:  # 'SA' of OP^2 (the bottom of its spectrum), then
        OP = ops.OP                        # Rayleigh-Ritz with OP in that subspace
        ops.OP = lambda x: OP(sp.result(OP(x), n, "the operator", op))
        theta, X, iters = lanczos(ops, "SA")
        ops.OP = OP
        return ops, (*_rayleigh_ritz(OP, ops.B, X, sp, n, op), iters)
    return ops, lanczos(ops, which)


def _rayleigh_ritz(OP: Callable[[Any], Any], B: Callable[[Any], Any] | None, X: Any, sp: Space,
                   n: int, op: str) -> tuple[np.ndarray, Any]:
    """The Ritz pairs of OP in the span of X's B-orthonormal columns."""
    k = int(X.shape[1])
    if k == 0:
        return np.zeros(0), X
    BAX = sp.zeros((n, k))
    for j in range(k):
        y = sp.result(OP(X[:, j]), n, "the operator", op)
        BAX[:, j] = y if B is None else sp.result(B(y), n, "M", op)
    H = _to_numpy(X.conj().T @ BAX, sp.package)
    theta, Y = np.linalg.eigh((H + H.conj().T) / 2)
    return theta, X @ sp.host(Y)


def _real(dtype: str) -> np.dtype:
    """The real dtype of a dtype name (float32 for complex64)."""
    return np.zeros(0, dtype).real.dtype


def _is_complex(A: Any) -> bool:
    return "complex" in str(getattr(A, "dtype", ""))


def _check_inverses(op: str, M: Any, sigma: Any, Minv: Any, OPinv: Any) -> None:
    """scipy's rules for Minv and OPinv."""
    if sigma is None:
        if OPinv is not None:
            raise InvalidArgument(f"[{op}] OPinv should not be specified with sigma = None")
        if M is None and Minv is not None:
            raise InvalidArgument(f"[{op}] Minv should not be specified with M = None")
    elif Minv is not None:
        raise InvalidArgument(f"[{op}] Minv should not be specified when sigma is specified")


def _result_order(w: np.ndarray, which: str, regular: bool, vectors: bool) -> np.ndarray:
    """Where each returned value comes from: ascending, or ARPACK's order of the values
    alone in its regular modes (a real A without sigma)."""
    if vectors or not regular or which in ("LA", "BE"):
        return np.argsort(w, kind="stable")
    if which == "LM":
        return np.argsort(np.abs(w), kind="stable")
    if which == "SM":
        return np.argsort(-np.abs(w), kind="stable")
    return np.argsort(-w, kind="stable")  # SA


def _dense_eigh(op: str, A: Any, M: Any, k: int, n: int, vectors: bool) -> Any:
    """k >= n: every eigenpair by the dense gl.linalg.eigh, as scipy's fallback."""
    warnings.warn(f"[{op}] k >= N for N * N square matrix (k = {k}, N = {n}): using the dense "
                  "gl.linalg.eigh instead", RuntimeWarning, stacklevel=3)
    for name, X in (("A", A), ("M", M)):
        if X is not None and (is_sparse(X) or _is_operator(X)):
            kind = "sparse" if is_sparse(X) else "LinearOperator"
            raise DTypeError(f"[{op}] cannot use the dense eigh for {kind} {name} with k >= N "
                             f"(k = {k}, N = {n}): reduce k, or call gl.linalg.eigh on dense "
                             "arrays")
    from ..linalg import eigh

    r = eigh(A, M, eigvals_only=not vectors)
    return tuple(r) if vectors else r


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
    solver = str(solver).lower()
    if solver not in ("arpack", "lobpcg", "propack"):
        raise InvalidArgument(
            f"[{op}] solver must be one of 'arpack', 'lobpcg', 'propack', got {solver!r}")
    if solver != "arpack":
        raise NotSupported(f"[{op}] solver={solver!r}: gpula's svds is the Lanczos one ('arpack')")
    which = str(which).upper()
    if which not in ("LM", "SM"):
        raise InvalidArgument(f"[{op}] which must be 'LM' or 'SM', got {which!r}")
    if not any(return_singular_vectors is f or return_singular_vectors == f
               for f in (True, False, "u", "vh")):
        raise InvalidArgument(f"[{op}] return_singular_vectors must be True, False, 'u' or 'vh', "
                              f"got {return_singular_vectors!r}")
    Aop = aslinearoperator(A)
    m, n = Aop.shape
    if m * n == 0:
        raise InvalidArgument(f"[{op}] A must not be empty, got shape {(m, n)}")
    small = min(m, n)
    k = _integral(op, "k", k, f"0 < k < min(A.shape) = {small}", lambda v: 0 < v < small)
    if ncv is not None:
        ncv = _integral(op, "ncv", ncv, f"k < ncv < min(A.shape) = {small}",
                        lambda v: k < v < small)
    if maxiter is not None:
        maxiter = _integral(op, "maxiter", maxiter, "maxiter > 0", lambda v: v > 0)
    if isinstance(tol, (bool, str)) or not isinstance(tol, (int, float, np.integer, np.floating)) \
            or not (math.isfinite(tol) and tol >= 0):
        raise InvalidArgument(f"[{op}] tol must be a non-negative finite number, got {tol!r}")
    if v0 is not None:
        if tuple(getattr(v0, "shape", np.shape(v0))) != (small,):
            raise InvalidArgument(f"[{op}] v0 must have shape ({small},), got "
                                  f"{tuple(getattr(v0, 'shape', np.shape(v0)))}")
        v0_dtype = str(getattr(v0, "dtype", np.asarray(v0).dtype))
        if not any(t in v0_dtype for t in ("float", "complex")):
            raise InvalidArgument(f"[{op}] v0 must be of floating or complex floating data type")
    if rng is None:
        rng = random_state
    if rng is not None and not isinstance(rng, (np.random.Generator, np.random.RandomState,
                                                int, np.integer)) or isinstance(rng, bool):
        raise InvalidArgument(f"[{op}] rng must be a NumPy Generator, RandomState or an int seed, "
                              f"got {rng!r}")
    if isinstance(rng, np.random.RandomState):
        rng = np.random.default_rng(rng.randint(2**31))
    tall = m >= n
    X = Aop if tall else Aop.H  # X is tall: X^H X is the small side
    XhX = LinearOperator((min(m, n),) * 2, lambda x: X.rmatvec(X.matvec(x)), dtype=Aop.dtype)
    if v0 is None:  # a random start in A's package and device (the operator has none)
        home = _space(op, A, None, None)
        g = _generator(rng)
        v0 = home.host(g.standard_normal(min(m, n)))
    try:
        _, V = eigsh(XhX, k=k, which="LA" if which == "LM" else "SA", v0=v0, ncv=ncv,
                     maxiter=maxiter, tol=tol ** 2, rng=rng)
    except ArpackNoConvergence as e:
        raise ArpackNoConvergence(str(e).replace("eigsh", "svds"), e.eigenvalues, e.eigenvectors,
                                  e.iterations) from None
    XV = X.matmat(V)
    # Rayleigh-Ritz, k columns
    U, s, Wh = np.linalg.svd(_to_numpy(XV, _package(XV)), full_matrices=False)
    order = np.argsort(s, kind="stable")
    s, U, Wh = s[order], U[:, order], Wh[order, :]
    sp = Space.of(XV, _dtype_name(XV))
    u = sp.host(U)
    vh = (V @ sp.host(Wh.conj().T)).conj().T  # (k, n) of X's right side
    if not tall:
        u, vh = vh.conj().T, u.conj().T
    s = _from_numpy(np.ascontiguousarray(s, _real(sp.dtype)), sp.package, sp.device)
    rsv = return_singular_vectors
    if rsv is False:
        return s
    return (u if rsv in (True, "u") else None), s, (vh if rsv in (True, "vh") else None)

