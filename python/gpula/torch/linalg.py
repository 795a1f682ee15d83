"""Differentiable linear algebra for PyTorch models: gpula's factorizations and solvers with
torch.linalg's signatures, results and gradients (formulas as torch.linalg's backward, see
gpula/torch/_linalg_ops.py), traced by ``torch.compile(fullgraph=True)`` as custom ops.

Inputs are real float32/float64 torch tensors, batched over leading dimensions (broadcast where
torch.linalg broadcasts); CUDA tensors run on torch's current stream, CPU tensors on gpula's CPU
backend. For complex input use gpula.linalg (no gradients). Gradients through eigenvectors and
singular vectors are undefined for repeated eigen/singular values (inf/NaN there, as torch).

Example:
    >>> import torch
    >>> import gpula.torch as gt
    >>> a = torch.tensor([[4.0, 2.0], [2.0, 3.0]], dtype=torch.float64, requires_grad=True)
    >>> gt.linalg.logdet(a).backward()
    >>> torch.allclose(a.grad, torch.linalg.inv(a).T)
    True
"""

from __future__ import annotations

import functools
import numbers
from typing import Any, Callable, NamedTuple, Optional, TypeVar

import numpy as np
import torch

from ..errors import DTypeError, Error, InvalidArgument
from ..linalg._operands import flag as _flag
from . import _linalg_ops as _ops
from ._ops import type_name

Tensor = torch.Tensor
_DTYPES = (torch.float32, torch.float64)
_F = TypeVar("_F", bound=Callable[..., Any])


def _named(op: str) -> Callable[[_F], _F]:
    """gpula's errors from inside the function (gpula.linalg's "[linalg.<x>] ...", another
    function's of this module) named as the one called: "[torch.linalg.<op>] ..."; same
    exception object, class and attributes."""

    def wrap(f: _F) -> _F:
        @functools.wraps(f)
        def run(*args: Any, **kwargs: Any) -> Any:
            try:
                return f(*args, **kwargs)
            except Error as e:
                msg = e.args[0] if len(e.args) == 1 and isinstance(e.args[0], str) else ""
                if msg.startswith(("[linalg.", "[torch.linalg.")):
                    e.args = (f"[torch.linalg.{op}]{msg[msg.index(']') + 1:]}",)
                raise

        return run  # type: ignore[return-value]

    return wrap


def _k(op: str, k: Any) -> Optional[int]:
    """k of eigh/svd: None or an int (gpula.linalg checks its range)."""
    if k is None or (isinstance(k, (int, np.integer, torch.SymInt)) and not isinstance(k, bool)):
        return None if k is None else int(k)
    raise InvalidArgument(f"[torch.linalg.{op}] k must be a positive int or None, got {k!r}")


class SlogdetResult(NamedTuple):
    sign: Tensor
    logabsdet: Tensor


class EighResult(NamedTuple):
    eigenvalues: Tensor
    eigenvectors: Tensor


class SVDResult(NamedTuple):
    U: Tensor
    S: Tensor
    Vh: Tensor


class LstsqResult(NamedTuple):
    solution: Tensor
    residuals: Tensor
    rank: Tensor
    singular_values: Tensor


class QRResult(NamedTuple):
    Q: Tensor
    R: Tensor


def _check(op: str, square: tuple[str, ...] = (), **tensors: Tensor) -> None:
    """Typed errors naming the op and the argument: torch tensors of one real float dtype on one
    device, matrices (at least 2-D), square where the op needs it."""
    first = None
    for name, t in tensors.items():
        if not isinstance(t, Tensor):
            raise DTypeError(f"[torch.linalg.{op}] {name} must be a torch.Tensor, got "
                             f"{type_name(t)}")
        if t.dtype not in _DTYPES:
            raise DTypeError(f"[torch.linalg.{op}] {name} has dtype {t.dtype}; gpula.torch.linalg "
                             "takes float32 and float64 (gpula.linalg takes complex, without "
                             "gradients)")
        if t.dim() < 2:
            raise InvalidArgument(f"[torch.linalg.{op}] {name} must have at least 2 dimensions, "
                                  f"got shape {tuple(t.shape)}")
        if name in square and t.shape[-1] != t.shape[-2]:
            raise InvalidArgument(f"[torch.linalg.{op}] {name} must be square (..., n, n), got "
                                  f"shape {tuple(t.shape)}")
        if first is None:
            first = (name, t)
            continue
        if t.dtype != first[1].dtype:
            raise DTypeError(f"[torch.linalg.{op}] {name} has dtype {t.dtype}, {first[0]} has "
                             f"{first[1].dtype}")
        if t.device != first[1].device:
            raise InvalidArgument(f"[torch.linalg.{op}] {name} is on {t.device}, {first[0]} on "
                                  f"{first[1].device}")


def _rows_match(op: str, a: Tensor, b: Tensor, left: bool = True) -> None:
    n = a.shape[-2] if left else a.shape[-1]
    have = b.shape[-2] if left else b.shape[-1]
    if have != n:
        side = "rows" if left else "columns"
        raise InvalidArgument(f"[torch.linalg.{op}] B must have {n} {side} to match A "
                              f"{tuple(a.shape)}, got shape {tuple(b.shape)}")
    try:
        torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    except RuntimeError:
        raise InvalidArgument(f"[torch.linalg.{op}] the batch dimensions of A {tuple(a.shape)} and "
                              f"B {tuple(b.shape)} do not broadcast") from None


@_named("cholesky")
def cholesky(A: Tensor, *, upper: bool = False) -> Tensor:
    """The Cholesky factor of symmetric positive-definite ``A``, as torch.linalg.cholesky: lower
    ``L`` with ``A = L L^T`` (only A's lower triangle is read), or upper ``U`` with
    ``A = U^T U`` (only the upper triangle). Not positive definite: gl.LinAlgError naming the
    item. The gradient is torch's (symmetric).

    Example:
        >>> import torch, gpula.torch as gt
        >>> gt.linalg.cholesky(torch.tensor([[4.0, 2.0], [2.0, 5.0]]))
        tensor([[2., 0.],
                [1., 2.]])
    """
    _check("cholesky", ("A",), A=A)
    return _ops.cholesky_op(A, _flag("cholesky", "upper", upper))


@_named("cho_solve")
def cho_solve(c_and_lower: tuple[Tensor, bool], B: Tensor) -> Tensor:
    """X with ``A X = B`` from A's Cholesky factor, as scipy.linalg.cho_solve (and
    gpula.linalg.cho_solve): ``c_and_lower`` is ``(L, True)`` for ``A = L L^T`` or ``(U, False)``
    for ``A = U^T U``; torch.cholesky_solve(B, L) in torch's terms. Differentiable in the factor
    (its triangle) and in B, as torch.cholesky_solve.

    Example:
        >>> import torch, gpula.torch as gt
        >>> a = torch.tensor([[4.0, 2.0], [2.0, 5.0]])
        >>> gt.linalg.cho_solve((gt.linalg.cholesky(a), True), torch.tensor([[6.0], [7.0]]))
        tensor([[1.],
                [1.]])
    """
    if not isinstance(c_and_lower, tuple) or len(c_and_lower) != 2:
        raise InvalidArgument("[torch.linalg.cho_solve] c_and_lower must be a (factor, lower) "
                              "pair, as cholesky's result with its side")
    c, lower = c_and_lower
    _check("cho_solve", ("c",), c=c, B=B)
    _rows_match("cho_solve", c, B)
    return _ops.cho_solve_op(c, B, not _flag("cho_solve", "lower", lower))


def _as_matrix(a: Tensor, b: Tensor) -> bool:
    """torch.linalg.solve's rule: B is a (batch of) vector(s) when it is 1-D or has one
    dimension fewer than A with A's leading shape."""
    return b.dim() == 1 or (b.dim() == a.dim() - 1 and b.shape == a.shape[:-1])


@_named("solve")
def solve(A: Tensor, B: Tensor, *, left: bool = True) -> Tensor:
    """X with ``A X = B`` (``left=False``: ``X A = B``), as torch.linalg.solve (B may be a vector
    or a batch of vectors, by torch's rule; batch dimensions broadcast). Singular A:
    gl.LinAlgError. The gradient is torch's.

    Example:
        >>> import torch, gpula.torch as gt
        >>> gt.linalg.solve(torch.tensor([[2.0, 0.0], [0.0, 4.0]]), torch.tensor([2.0, 2.0]))
        tensor([1.0000, 0.5000])
    """
    left = _flag("solve", "left", left)
    if isinstance(A, Tensor) and isinstance(B, Tensor) and _as_matrix(A, B):
        if not left:
            raise InvalidArgument("[torch.linalg.solve] left=False takes a matrix B (as torch)")
        _check("solve", ("A",), A=A, B=B.unsqueeze(-1))
        _rows_match("solve", A, B.unsqueeze(-1))
        return _ops.solve_op(A, B.unsqueeze(-1), True).squeeze(-1)
    _check("solve", ("A",), A=A, B=B)
    _rows_match("solve", A, B, left)
    return _ops.solve_op(A, B, left)


@_named("solve_triangular")
def solve_triangular(A: Tensor, B: Tensor, *, upper: bool, left: bool = True,
                     unitriangular: bool = False) -> Tensor:
    """X with ``A X = B`` (``left=False``: ``X A = B``) for triangular A, as
    torch.linalg.solve_triangular (``upper`` required; only that triangle of A is read, its
    diagonal taken as ones with ``unitriangular``). The gradient of A stays in its triangle.

    Example:
        >>> import torch, gpula.torch as gt
        >>> a = torch.tensor([[2.0, 1.0], [0.0, 4.0]])
        >>> gt.linalg.solve_triangular(a, torch.tensor([[4.0], [8.0]]), upper=True)
        tensor([[1.],
                [2.]])
    """
    upper, left, unitriangular = (_flag("solve_triangular", n, v) for n, v in (
        ("upper", upper), ("left", left), ("unitriangular", unitriangular)))
    _check("solve_triangular", ("A",), A=A, B=B)
    _rows_match("solve_triangular", A, B, left)
    return _ops.solve_triangular_op(A, B, upper, left, unitriangular)


@_named("inv")
def inv(A: Tensor) -> Tensor:
    """The inverse of square ``A``, as torch.linalg.inv (singular: gl.LinAlgError).

    Example:
        >>> import torch, gpula.torch as gt
        >>> gt.linalg.inv(torch.tensor([[2.0, 1.0], [1.0, 1.0]]))
        tensor([[ 1., -1.],
                [-1.,  2.]])
    """
    _check("inv", ("A",), A=A)
    return _ops.inv_op(A)


@_named("slogdet")
def slogdet(A: Tensor) -> SlogdetResult:
    """``(sign, logabsdet)`` of square ``A``, as torch.linalg.slogdet (singular A: sign 0 and
    logabsdet -inf, no error). The gradient of logabsdet is ``A^-T`` (inf for singular A).

    Example:
        >>> import torch, gpula.torch as gt
        >>> gt.linalg.slogdet(torch.tensor([[-2.0, 0.0], [0.0, 3.0]]))
        SlogdetResult(sign=tensor(-1.), logabsdet=tensor(1.7918))
    """
    _check("slogdet", ("A",), A=A)
    return SlogdetResult(*_ops.slogdet_op(A))


@_named("logdet")
def logdet(A: Tensor) -> Tensor:
    """log det A, as torch.logdet: NaN where det A < 0, -inf where A is singular. For the
    log-determinant of a positive-definite matrix from its Cholesky factor L, ``2 *
    L.diagonal(dim1=-2, dim2=-1).log().sum(-1)`` costs no second factorization.

    Example:
        >>> import torch, gpula.torch as gt
        >>> gt.linalg.logdet(torch.tensor([[2.0, 0.0], [0.0, 3.0]]))
        tensor(1.7918)
    """
    sign, logabsdet = slogdet(A)
    return torch.where(sign < 0, torch.full_like(logabsdet, float("nan")), logabsdet)


@_named("eigh")
def eigh(A: Tensor, UPLO: str = "L", *, k: Optional[int] = None,
         which: str = "largest") -> EighResult:
    """Eigenvalues (ascending) and orthonormal eigenvectors of symmetric ``A``, as
    torch.linalg.eigh (only the ``UPLO`` triangle is read). ``k``: only the k largest
    (``which="largest"``) or smallest eigenpairs, ascending, through gpula's subspace iteration;
    the gradient then flows through the eigenvalues only (the eigenvectors' needs the rest of the
    spectrum: NotSupported in eager mode, NaN in a compiled graph). The gradient is torch's
    (symmetric; inf/NaN for repeated eigenvalues).

    Example:
        >>> import torch, gpula.torch as gt
        >>> gt.linalg.eigh(torch.tensor([[2.0, 1.0], [1.0, 2.0]])).eigenvalues
        tensor([1., 3.])
    """
    _check("eigh", ("A",), A=A)
    if UPLO not in ("L", "U"):
        raise InvalidArgument(f"[torch.linalg.eigh] UPLO must be 'L' or 'U', got {UPLO!r}")
    return EighResult(*_ops.eigh_op(A, UPLO == "U", _k("eigh", k), which))


@_named("svd")
def svd(A: Tensor, full_matrices: bool = True, *, k: Optional[int] = None) -> SVDResult:
    """``(U, S, Vh)`` with ``A = U diag(S) Vh``, S descending, as torch.linalg.svd. ``k``: the k
    largest singular triplets only (gpula's top-k route: thin U (..., m, k) and Vh (..., k, n)
    whatever ``full_matrices``); the gradient then flows through S only (as eigh's k). Gradients through U and Vh are torch's: of the first min(m, n) columns of U
    and rows of Vh when ``full_matrices=True``; inf/NaN for repeated singular values.

    Example:
        >>> import torch, gpula.torch as gt
        >>> gt.linalg.svd(torch.tensor([[0.0, 2.0], [1.0, 0.0]])).S
        tensor([2., 1.])
    """
    _check("svd", A=A)
    full_matrices = _flag("svd", "full_matrices", full_matrices)
    return SVDResult(*_ops.svd_op(A, full_matrices, _k("svd", k)))


@_named("lstsq")
def lstsq(A: Tensor, B: Tensor, rcond: Optional[float] = None) -> LstsqResult:
    """The minimum-norm least-squares solution of ``A X = B``, as torch.linalg.lstsq's fields:
    ``(solution, residuals, rank, singular_values)``; B is a (batch of) vector(s) where it has one
    dimension fewer than A, as in torch (residuals (..., 1) then, as torch's). gpula computes every
    field for every input, where torch leaves some empty by driver: ``residuals`` (the squared
    column norms of ``A X - B``) whenever m > n, else empty; ``rank`` counts the singular values
    above ``rcond * S[0]`` (default: eps * max(m, n)). Differentiable through the solution
    (torch's formula, the rank taken as fixed).

    Example:
        >>> import torch, gpula.torch as gt
        >>> a = torch.tensor([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
        >>> gt.linalg.lstsq(a, torch.tensor([[1.0], [2.0], [3.0]])).residuals
        tensor([9.])
    """
    vector = isinstance(A, Tensor) and isinstance(B, Tensor) and B.dim() == A.dim() - 1
    b = B.unsqueeze(-1) if vector else B
    _check("lstsq", A=A, B=b)
    _rows_match("lstsq", A, b)
    if rcond is not None and (isinstance(rcond, bool) or not isinstance(rcond, numbers.Real)):
        raise InvalidArgument(f"[torch.linalg.lstsq] rcond must be a float or None, got {rcond!r}")
    x, rank, sv = _ops.lstsq_op(A, b, None if rcond is None else float(rcond))
    m, n = A.shape[-2:]
    if m > n:
        res = (A @ x - b).square().sum(-2)
    else:
        res = x.new_empty((0,))
    return LstsqResult(x.squeeze(-1) if vector else x, res, rank, sv)


@_named("qr")
def qr(A: Tensor, mode: str = "reduced") -> QRResult:
    """``(Q, R)`` with ``A = Q R``, as torch.linalg.qr: ``mode`` 'reduced' (Q (m, k), R (k, n),
    k = min(m, n)), 'complete' (Q (m, m)) or 'r' (Q empty). The gradient is torch's; like torch,
    it is not defined for mode='r' nor for 'complete' with m > n (NotSupported).

    Example:
        >>> import torch, gpula.torch as gt
        >>> q, r = gt.linalg.qr(torch.tensor([[3.0, 1.0], [4.0, 2.0]]))
        >>> torch.allclose(q @ r, torch.tensor([[3.0, 1.0], [4.0, 2.0]]))
        True
    """
    _check("qr", A=A)
    if mode not in ("reduced", "complete", "r"):
        raise InvalidArgument(f"[torch.linalg.qr] mode must be 'reduced', 'complete' or 'r', got "
                              f"{mode!r}")
    return QRResult(*_ops.qr_op(A, mode))


__all__ = ["cho_solve", "cholesky", "eigh", "inv", "logdet", "lstsq", "qr", "slogdet", "solve",
           "solve_triangular", "svd", "EighResult", "LstsqResult", "QRResult", "SVDResult",
           "SlogdetResult"]
