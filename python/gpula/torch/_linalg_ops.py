"""The custom ops behind gpula.torch.linalg: gpula's factorizations and solvers as
``torch.library`` ops with fake implementations (torch.compile traces them) and registered
autograd whose formulas are torch.linalg's (see each backward).

Conventions: real float32/float64 tensors, batched over leading dimensions; each op's outputs are
new contiguous tensors. A backward built from differentiable ops (torch's and these) supports
double backward; the others (eigh, svd, qr) raise NotSupported when asked for a second
derivative (``create_graph=True``) instead of returning a wrong one.
"""

from __future__ import annotations

from typing import Optional

import torch

from .. import linalg as _gl
from ..errors import NotSupported
from ._library import op

Tensor = torch.Tensor


def _mt(x: Tensor) -> Tensor:
    return x.transpose(-2, -1)


def _sum_to(g: Tensor, shape: torch.Size) -> Tensor:
    """g summed over the batch dimensions that broadcasting added to an input of `shape`."""
    if g.shape == shape:
        return g
    lead = g.dim() - len(shape)
    g = g.sum(dim=tuple(range(lead))) if lead else g
    dims = tuple(i for i, (a, b) in enumerate(zip(g.shape, shape)) if b == 1 and a != 1)
    return g.sum(dim=dims, keepdim=True) if dims else g


def _batch(*ts: Tensor) -> tuple[int, ...]:
    return tuple(torch.broadcast_shapes(*(t.shape[:-2] for t in ts)))


def _expand(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """a and b with their batch dimensions broadcast (views, no copy)."""
    batch = _batch(a, b)
    return a.expand(*batch, *a.shape[-2:]), b.expand(*batch, *b.shape[-2:])


def _once(op: str) -> None:
    """Raises for a second derivative through a backward made of non-differentiable parts."""
    if torch.is_grad_enabled() and not torch.compiler.is_compiling():
        raise NotSupported(f"[torch.linalg.{op}] double backward (create_graph=True) is not "
                           "implemented for this op")


def _tensor(x, like: Tensor) -> Tensor:
    """x (a gpula result: a tensor, or a NumPy/Python scalar for an unbatched input) as a tensor
    on like's device."""
    return x if isinstance(x, Tensor) else torch.as_tensor(x, device=like.device)


# ---- cholesky --------------------------------------------------------------------------------

@op("cholesky")
def cholesky_op(a: Tensor, upper: bool) -> Tensor:
    return _gl.cholesky(a, lower=not upper, check_finite=False).contiguous()


@cholesky_op.register_fake
def _(a, upper):
    return a.new_empty(a.shape)


def _cholesky_setup(ctx, inputs, output):
    ctx.upper = inputs[1]
    ctx.save_for_backward(output)


def _cholesky_backward(ctx, gl_):
    """torch's cholesky_backward: gA = L^-T Phi(L^T gL) L^-1, symmetrized, where Phi takes the
    lower triangle and halves the diagonal."""
    (l,) = ctx.saved_tensors
    if ctx.upper:
        l, gl_ = _mt(l), _mt(gl_)
    p = (_mt(l) @ gl_).tril()
    p = p - 0.5 * torch.diag_embed(p.diagonal(dim1=-2, dim2=-1))
    y = solve_triangular_op(l, p, False, False, False)  # p L^-1
    ga = solve_triangular_op(_mt(l), y, True, True, False)  # L^-T p L^-1
    return 0.5 * (ga + _mt(ga)), None


cholesky_op.register_autograd(_cholesky_backward, setup_context=_cholesky_setup)


# ---- solve_triangular ------------------------------------------------------------------------

@op("solve_triangular")
def solve_triangular_op(a: Tensor, b: Tensor, upper: bool, left: bool,
                        unitriangular: bool) -> Tensor:
    a, b = _expand(a, b)
    if left:
        x = _gl.solve_triangular(a, b, lower=not upper, unit_diagonal=unitriangular,
                                 check_finite=False)
    else:  # x a = b  <=>  a^T x^T = b^T
        x = _mt(_gl.solve_triangular(a, _mt(b), trans=1, lower=not upper,
                                     unit_diagonal=unitriangular, check_finite=False))
    return x.contiguous()


@solve_triangular_op.register_fake
def _(a, b, upper, left, unitriangular):
    return b.new_empty((*_batch(a, b), *b.shape[-2:]))


def _solve_triangular_setup(ctx, inputs, output):
    a, b, ctx.upper, ctx.left, ctx.unit = inputs
    ctx.a_shape, ctx.b_shape = a.shape, b.shape
    ctx.save_for_backward(a, output)


def _solve_triangular_backward(ctx, gx):
    """gB = A^-T gX (left) or gX A^-T (right); gA = -gB X^T (left) or -X^T gB (right), kept to
    A's triangle (and off the diagonal when unitriangular), as torch's."""
    a, x = ctx.saved_tensors
    gb = ga = None
    if ctx.needs_input_grad[0] or ctx.needs_input_grad[1]:
        gb = solve_triangular_op(_mt(a), gx, not ctx.upper, ctx.left, ctx.unit)
    if ctx.needs_input_grad[0]:
        ga = -(gb @ _mt(x) if ctx.left else _mt(x) @ gb)
        ga = ga.triu(1 if ctx.unit else 0) if ctx.upper else ga.tril(-1 if ctx.unit else 0)
        ga = _sum_to(ga, ctx.a_shape)
    if gb is not None:
        gb = _sum_to(gb, ctx.b_shape)
    return ga, gb, None, None, None


solve_triangular_op.register_autograd(_solve_triangular_backward,
                                      setup_context=_solve_triangular_setup)


# ---- solve -----------------------------------------------------------------------------------

@op("solve")
def solve_op(a: Tensor, b: Tensor, left: bool) -> Tensor:
    a, b = _expand(a, b)
    if left:
        return _gl.solve(a, b, check_finite=False).contiguous()
    return _mt(_gl.solve(_mt(a), _mt(b), check_finite=False)).contiguous()


@solve_op.register_fake
def _(a, b, left):
    return b.new_empty((*_batch(a, b), *b.shape[-2:]))


def _solve_setup(ctx, inputs, output):
    a, b, ctx.left = inputs
    ctx.a_shape, ctx.b_shape = a.shape, b.shape
    ctx.save_for_backward(a, output)


def _solve_backward(ctx, gx):
    """torch's linalg_solve backward: gB = A^-T gX (left) or gX A^-T; gA = -gB X^T or -X^T gB."""
    a, x = ctx.saved_tensors
    gb = solve_op(_mt(a), gx, ctx.left)
    ga = None
    if ctx.needs_input_grad[0]:
        ga = _sum_to(-(gb @ _mt(x) if ctx.left else _mt(x) @ gb), ctx.a_shape)
    return ga, _sum_to(gb, ctx.b_shape), None


solve_op.register_autograd(_solve_backward, setup_context=_solve_setup)


# ---- cho_solve -------------------------------------------------------------------------------

@op("cho_solve")
def cho_solve_op(c: Tensor, b: Tensor, upper: bool) -> Tensor:
    c, b = _expand(c, b)
    return _gl.cho_solve((c, not upper), b, check_finite=False).contiguous()


@cho_solve_op.register_fake
def _(c, b, upper):
    return b.new_empty((*_batch(c, b), *b.shape[-2:]))


def _cho_solve_setup(ctx, inputs, output):
    c, b, ctx.upper = inputs
    ctx.c_shape, ctx.b_shape = c.shape, b.shape
    ctx.save_for_backward(c, output)


def _cho_solve_backward(ctx, gx):
    """torch's cholesky_solve backward: gB = A^-1 gX; with S = gB X^T + X gB^T, gL = -S L (or
    gU = -U S), kept to the factor's triangle (the only part the forward reads)."""
    c, x = ctx.saved_tensors
    gb = cho_solve_op(c, gx, ctx.upper)
    gc = None
    if ctx.needs_input_grad[0]:
        s = gb @ _mt(x)
        s = s + _mt(s)
        gc = (-(c @ s)).triu() if ctx.upper else (-(s @ c)).tril()
        gc = _sum_to(gc, ctx.c_shape)
    return gc, _sum_to(gb, ctx.b_shape), None


cho_solve_op.register_autograd(_cho_solve_backward, setup_context=_cho_solve_setup)


# ---- inv, slogdet ----------------------------------------------------------------------------

@op("inv")
def inv_op(a: Tensor) -> Tensor:
    return _gl.inv(a, check_finite=False).contiguous()


@inv_op.register_fake
def _(a):
    return a.new_empty(a.shape)


def _inv_setup(ctx, inputs, output):
    ctx.save_for_backward(output)


def _inv_backward(ctx, gx):
    """gA = -X^T gX X^T (X = A^-1)."""
    (x,) = ctx.saved_tensors
    return -(_mt(x) @ gx @ _mt(x))


inv_op.register_autograd(_inv_backward, setup_context=_inv_setup)


@op("slogdet")
def slogdet_op(a: Tensor) -> tuple[Tensor, Tensor]:
    sign, logabsdet = _gl.slogdet(a, check_finite=False)
    return _tensor(sign, a).contiguous(), _tensor(logabsdet, a).contiguous()


@slogdet_op.register_fake
def _(a):
    return a.new_empty(a.shape[:-2]), a.new_empty(a.shape[:-2])


def _slogdet_setup(ctx, inputs, output):
    ctx.save_for_backward(inputs[0])


def _slogdet_backward(ctx, gsign, glogabsdet):
    """Real input: the sign is piecewise constant; gA = g A^-T (inf where A is singular)."""
    (a,) = ctx.saved_tensors
    return glogabsdet[..., None, None] * _mt(inv_op(a))


slogdet_op.register_autograd(_slogdet_backward, setup_context=_slogdet_setup)


# ---- eigh ------------------------------------------------------------------------------------

@op("eigh")
def eigh_op(a: Tensor, upper: bool, k: Optional[int], which: str) -> tuple[Tensor, Tensor]:
    w, v = _gl.eigh(a, lower=not upper, k=k, which=which, check_finite=False)
    return w.contiguous(), v.contiguous()


@eigh_op.register_fake
def _(a, upper, k, which):
    n = a.shape[-1] if k is None else k
    return a.new_empty((*a.shape[:-2], n)), a.new_empty((*a.shape[:-1], n))


def _eigh_setup(ctx, inputs, output):
    ctx.partial = inputs[2] is not None and inputs[2] < inputs[0].shape[-1]
    ctx.save_for_backward(*output)


def _vectors_not_differentiable(op: str, gv: Tensor, basis: Tensor) -> Tensor:
    """The top-k forms: the eigen/singular vectors' gradient needs the part of gV outside their
    span, which this op does not compute. Eager mode raises where that part is nonzero; a
    compiled graph (no data-dependent raise there) gets NaN gradients instead."""
    outside = gv - basis @ (_mt(basis) @ gv)
    if torch.compiler.is_compiling():
        return torch.where(outside.abs().amax() > 0, float("nan"), 0.0)
    if bool((outside != 0).any()):
        raise NotSupported(f"[torch.linalg.{op}] k=: the gradient through the vectors of a "
                           "partial decomposition is not implemented (only through the values); "
                           "use k=None")
    return gv.new_zeros(())


def _eigh_backward(ctx, gw, gv):
    """torch's linalg_eig_backward for Hermitian input: with E_ij = w_j - w_i,
    gA = V (skew(V^T gV) / 2E + diag(gw)) V^T. Degenerate eigenvalues give inf/NaN, as torch."""
    _once("eigh")
    w, v = ctx.saved_tensors
    vtgv = _mt(v) @ gv
    inner = 0.5 * (vtgv - _mt(vtgv))
    e = w.unsqueeze(-2) - w.unsqueeze(-1)
    e = e + torch.eye(e.shape[-1], dtype=e.dtype, device=e.device)
    inner = inner / e
    inner = inner - torch.diag_embed(inner.diagonal(dim1=-2, dim2=-1)) + torch.diag_embed(gw)
    ga = v @ inner @ _mt(v)
    if ctx.partial:
        ga = ga + _vectors_not_differentiable("eigh", gv, v)
    return ga, None, None, None


eigh_op.register_autograd(_eigh_backward, setup_context=_eigh_setup)


# ---- svd -------------------------------------------------------------------------------------

@op("svd")
def svd_op(a: Tensor, full_matrices: bool, k: Optional[int]) -> tuple[Tensor, Tensor, Tensor]:
    full = full_matrices if k is None else None  # the top-k form returns thin factors
    u, s, vh = _gl.svd(a, full_matrices=full, k=k, check_finite=False)
    return u.contiguous(), s.contiguous(), vh.contiguous()


@svd_op.register_fake
def _(a, full_matrices, k):
    m, n = a.shape[-2:]
    r = min(m, n) if k is None else k
    ucols, vrows = (m, n) if full_matrices and k is None else (r, r)
    batch = a.shape[:-2]
    return (a.new_empty((*batch, m, ucols)), a.new_empty((*batch, r)),
            a.new_empty((*batch, vrows, n)))


def _svd_setup(ctx, inputs, output):
    a, _, k = inputs
    ctx.partial = k is not None and k < min(a.shape[-2:])
    ctx.save_for_backward(*output)


def _svd_backward(ctx, gu, gs, gvh):
    """torch's svd_backward (real case), on the first min(m, n) columns of U and rows of Vh (as
    torch narrows full_matrices=True): with E_ij = s_j^2 - s_i^2,
    gA = U [(skew(U^T gU) S + S skew(V^T gV)) / E + diag(gS)] V^T
         + (I - U U^T) gU S^-1 V^T + U S^-1 gV^T (I - V V^T)."""
    _once("svd")
    u, s, vh = ctx.saved_tensors
    r = s.shape[-1]
    u, vh, gu, gvh = u[..., :r], vh[..., :r, :], gu[..., :r], gvh[..., :r, :]
    m, n = u.shape[-2], vh.shape[-1]
    v, gv = _mt(vh), _mt(gvh)
    utgu, vtgv = _mt(u) @ gu, _mt(v) @ gv
    utgu, vtgv = utgu - _mt(utgu), vtgv - _mt(vtgv)
    s2 = s * s
    e = s2.unsqueeze(-2) - s2.unsqueeze(-1)
    e = e + torch.eye(r, dtype=e.dtype, device=e.device)
    inner = (utgu * s.unsqueeze(-2) + s.unsqueeze(-1) * vtgv) / e + torch.diag_embed(gs)
    ga = u @ inner @ vh
    if m > r:
        gus = gu / s.unsqueeze(-2)
        ga = ga + (gus - u @ (_mt(u) @ gus)) @ vh
    if n > r:
        sgv = _mt(gv) / s.unsqueeze(-1)
        ga = ga + u @ (sgv - (sgv @ v) @ vh)
    if ctx.partial:
        ga = ga + _vectors_not_differentiable("svd", gu, u) + \
            _vectors_not_differentiable("svd", gv, v)
    return ga, None, None


svd_op.register_autograd(_svd_backward, setup_context=_svd_setup)


# ---- lstsq -----------------------------------------------------------------------------------

@op("lstsq")
def lstsq_op(a: Tensor, b: Tensor, rcond: Optional[float]) -> tuple[Tensor, Tensor, Tensor]:
    """(solution, rank, singular values); the residuals are computed by the caller."""
    a, b = _expand(a, b)
    r = _gl.lstsq(a, b, rcond, check_finite=False)
    rank = _tensor(r.rank, a).to(torch.int64)
    return r.solution.contiguous(), rank.contiguous(), _tensor(r.singular_values, a).contiguous()


@lstsq_op.register_fake
def _(a, b, rcond):
    batch = _batch(a, b)
    m, n = a.shape[-2:]
    return (b.new_empty((*batch, n, b.shape[-1])), a.new_empty(batch, dtype=torch.int64),
            a.new_empty((*batch, min(m, n))))


def _lstsq_setup(ctx, inputs, output):
    a, b, ctx.rcond = inputs
    ctx.a_shape, ctx.b_shape = a.shape, b.shape
    ctx.save_for_backward(a, b, output[0])
    ctx.mark_non_differentiable(output[1], output[2])


def _lstsq_backward(ctx, gx, grank, gsv):
    """torch's (through the pseudo-inverse P = A^+, rank taken as locally constant): gB = P^T gX,
    gA = -P^T gX X^T + R (gX^T P P^T) + P^T X gX^T (I - P A), R = B - A X; P from lstsq(A, I)."""
    a, b, x = ctx.saved_tensors
    a, b = _expand(a, b)
    m = a.shape[-2]
    eye = torch.eye(m, dtype=a.dtype, device=a.device).expand(*a.shape[:-2], m, m)
    p = lstsq_op(a, eye, ctx.rcond)[0]  # n x m
    pt = _mt(p)
    gb = pt @ gx
    ga = None
    if ctx.needs_input_grad[0]:
        res = b - a @ x
        ga = -gb @ _mt(x) + res @ (_mt(gx) @ (p @ pt))
        pa = p @ a
        ga = ga + pt @ (x @ _mt(gx)) @ (torch.eye(pa.shape[-1], dtype=a.dtype, device=a.device) - pa)
        ga = _sum_to(ga, ctx.a_shape)
    return ga, _sum_to(gb, ctx.b_shape), None


lstsq_op.register_autograd(_lstsq_backward, setup_context=_lstsq_setup)


# ---- qr --------------------------------------------------------------------------------------

@op("qr")
def qr_op(a: Tensor, mode: str) -> tuple[Tensor, Tensor]:
    if mode == "r":
        r = _gl.qr(a, mode="r", check_finite=False)
        return a.new_empty((0,)), _tensor(r, a).contiguous()
    q, r = _gl.qr(a, mode=mode, check_finite=False)
    return q.contiguous(), r.contiguous()


@qr_op.register_fake
def _(a, mode):
    m, n = a.shape[-2:]
    k = m if mode == "complete" else min(m, n)
    batch = a.shape[:-2]
    q = a.new_empty((0,)) if mode == "r" else a.new_empty((*batch, m, k))
    return q, a.new_empty((*batch, k, n))


def _qr_setup(ctx, inputs, output):
    a, ctx.mode = inputs
    ctx.shape = a.shape
    ctx.save_for_backward(*output)


def _qr_square_backward(q: Tensor, r: Tensor, gq: Tensor, gr: Tensor) -> Tensor:
    """A = QR with m >= n, Q (m, n): M = R gR^T - gQ^T Q,
    gA = (gQ + Q copyltu(M)) R^-T, copyltu(M) = tril(M) + tril(M, -1)^T."""
    mm = r @ _mt(gr) - _mt(gq) @ q
    sym = mm.tril() + _mt(mm.tril(-1))
    return _mt(solve_triangular_op(r, _mt(gq + q @ sym), True, True, False))


def _qr_backward(ctx, gq, gr):
    """torch's linalg_qr_backward (real): defined for mode='reduced' and for 'complete' with
    m <= n; a wide A = [X | Y] (m < n) goes through X = Q U and Y = Q V."""
    _once("qr")
    m, n = ctx.shape[-2:]
    if ctx.mode == "r" or (ctx.mode == "complete" and m > n):
        raise NotSupported(f"[torch.linalg.qr] the gradient is not defined for mode={ctx.mode!r}"
                           + (" with m > n" if ctx.mode == "complete" else "")
                           + " (as torch.linalg.qr); use mode='reduced'")
    q, r = ctx.saved_tensors
    if m >= n:
        return _qr_square_backward(q, r, gq, gr), None
    u, v = r[..., :m], r[..., m:]
    gu, gv = gr[..., :m], gr[..., m:]
    y = q @ v
    gx = _qr_square_backward(q, u, gq + y @ _mt(gv), gu)
    return torch.cat([gx, q @ gv], dim=-1), None


qr_op.register_autograd(_qr_backward, setup_context=_qr_setup)
