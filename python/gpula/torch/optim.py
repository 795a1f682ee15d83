"""Optimizers built on gpula's matrix functions for second-order training.

``Muon``: torch.optim.Muon's update (same hyperparameters, defaults and state), with the
Newton-Schulz orthogonalization of every parameter of one shape, dtype and device done in one
batched gpula call (gl.linalg.orthogonalize over the stack) instead of one call per parameter.
``Shampoo``: block-diagonal Shampoo with Adam grafting, every block's inverse fourth roots in one
grouped gl.linalg.inv_root call.

Example:
    >>> import torch
    >>> import gpula.torch as gt
    >>> w = torch.nn.Parameter(torch.randn(8, 4))
    >>> opt = gt.optim.Muon([w], lr=0.02)
    >>> (w.square().sum()).backward()
    >>> opt.step()
"""

from __future__ import annotations

import math
import numbers
import threading
from collections.abc import Callable, Iterable
from typing import Any, Optional

import torch

from .. import linalg as _gl
from ..errors import InvalidArgument, NotSupported

MUON_COEFFICIENTS = (3.4445, -4.7750, 2.0315)


def _loss_of(closure: Optional[Callable[[], Any]]) -> Any:
    """What torch.optim's step(closure) returns: the closure's loss, computed with gradients."""
    if closure is None:
        return None
    with torch.enable_grad():
        return closure()


def _check_dense_real(op: str, p: torch.Tensor) -> None:
    if torch.is_complex(p) or p.grad.is_sparse:
        raise NotSupported(f"[torch.optim.{op}] params: complex parameters and sparse gradients "
                           f"are not supported (got {p.dtype}, a {p.grad.layout} gradient)")


def _is_real(v: Any) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _check_nonneg(op: str, name: str, v: Any, finite: bool = False) -> None:
    """A real number >= 0 (not NaN; finite where asked), else InvalidArgument naming it."""
    if not _is_real(v) or not 0.0 <= v or (finite and not math.isfinite(v)):
        raise InvalidArgument(f"[torch.optim.{op}] {name} must be >= 0 (a "
                              f"{'finite ' if finite else ''}number), got {v!r}")


def _adjusted_lr(lr: float, adjust_lr_fn: Optional[str], shape: torch.Size) -> float:
    """torch.optim.Muon's rule: "original" (Keller Jordan's) scales by sqrt(max(1, A / B)),
    "match_rms_adamw" (Moonshot's) by 0.2 sqrt(max(A, B)), for a parameter of shape (A, B)."""
    a, b = shape[:2]
    if adjust_lr_fn in (None, "original"):
        return lr * math.sqrt(max(1.0, a / max(b, 1)))  # an n x 0 parameter: nothing to move
    return lr * 0.2 * math.sqrt(max(a, b))


class Muon(torch.optim.Optimizer):
    """Muon (MomentUm Orthogonalized by Newton-schulz) for 2-D parameters, as torch.optim.Muon:
    ``B = mu B + (1 - mu) G`` (a lerp), the update ``G + mu (B - G)`` lerped (nesterov) or ``B``,
    orthogonalized by ``ns_steps`` Newton-Schulz steps in bfloat16 (see
    gpula.linalg.orthogonalize), then ``p = p (1 - lr wd) - lr' update`` with lr' from
    ``adjust_lr_fn``. Parameters of one shape, dtype and device are orthogonalized in one
    batched call (a stack of experts or of same-sized layers). Hyperparameters, defaults and
    errors (ValueError) are torch.optim.Muon's.

    Example:
        >>> import torch
        >>> import gpula.torch as gt
        >>> experts = [torch.nn.Parameter(torch.randn(16, 8)) for _ in range(4)]
        >>> opt = gt.optim.Muon(experts, lr=0.02)  # one orthogonalize call for all four
        >>> sum(e.square().sum() for e in experts).backward()
        >>> opt.step()
        >>> experts[0].shape
        torch.Size([16, 8])
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, weight_decay: float = 0.1,
                 momentum: float = 0.95, nesterov: bool = True,
                 ns_coefficients: tuple[float, float, float] = MUON_COEFFICIENTS,
                 eps: float = 1e-7, ns_steps: int = 5,
                 adjust_lr_fn: Optional[str] = None) -> None:
        if isinstance(lr, torch.Tensor):
            if lr.numel() != 1:
                raise InvalidArgument("[torch.optim.Muon] Tensor lr must be 1-element")
            _check_nonneg("Muon", "lr", float(lr))
        else:
            _check_nonneg("Muon", "lr", lr)
        for name, v in (("momentum", momentum), ("weight_decay", weight_decay)):
            _check_nonneg("Muon", name, v)
        _check_nonneg("Muon", "eps", eps, finite=True)
        if not (isinstance(ns_coefficients, (tuple, list)) and len(ns_coefficients) == 3
                and all(_is_real(c) and math.isfinite(c) for c in ns_coefficients)):
            raise InvalidArgument(f"[torch.optim.Muon] ns_coefficients must be three finite "
                                  f"numbers (a, b, c), got {ns_coefficients!r}")
        if adjust_lr_fn not in (None, "original", "match_rms_adamw"):
            raise InvalidArgument(f"[torch.optim.Muon] adjust_lr_fn must be None, 'original' or "
                                  f"'match_rms_adamw', got {adjust_lr_fn!r}")
        if not isinstance(ns_steps, int) or not 0 <= ns_steps < 100:
            raise InvalidArgument(f"[torch.optim.Muon] ns_steps must be an int in [0, 100), got "
                                  f"{ns_steps!r}")
        defaults = {"lr": lr, "weight_decay": weight_decay, "momentum": momentum,
                    "nesterov": nesterov, "ns_coefficients": tuple(ns_coefficients), "eps": eps,
                    "ns_steps": ns_steps, "adjust_lr_fn": adjust_lr_fn}
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise InvalidArgument(f"[torch.optim.Muon] Muon takes 2-D parameters only; "
                                          f"params holds one of shape {tuple(p.shape)}")

    @torch.no_grad()
    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        loss = _loss_of(closure)
        for group in self.param_groups:
            lr = float(group["lr"])
            momentum, wd = group["momentum"], group["weight_decay"]
            buckets: dict[tuple, list[tuple[torch.Tensor, torch.Tensor]]] = {}
            for p in group["params"]:
                if p.grad is None:
                    continue
                _check_dense_real("Muon", p)
                state = self.state[p]
                if "momentum_buffer" not in state:
                    state["momentum_buffer"] = torch.zeros_like(
                        p.grad, memory_format=torch.preserve_format)
                buf = state["momentum_buffer"]
                buf.lerp_(p.grad, 1 - momentum)
                update = p.grad.lerp(buf, momentum) if group["nesterov"] else buf
                key = (tuple(update.shape), update.dtype, update.device)
                buckets.setdefault(key, []).append((p, update))
            for items in buckets.values():
                stack = torch.stack([u for _, u in items])
                ortho = _gl.orthogonalize(stack, steps=group["ns_steps"],
                                          coefficients=group["ns_coefficients"],
                                          dtype="bfloat16", eps=group["eps"])
                for (p, _), o in zip(items, ortho):
                    p.mul_(1 - lr * wd)
                    p.add_(o, alpha=-_adjusted_lr(lr, group["adjust_lr_fn"], p.shape))
        return loss


def _blocks(shape: torch.Size, size: int) -> list[tuple[slice, slice]]:
    """The (row, column) slices of the blocks of at most size x size that tile a matrix."""
    rows = [slice(i, min(i + size, shape[0])) for i in range(0, shape[0], size)]
    cols = [slice(j, min(j + size, shape[1])) for j in range(0, shape[1], size)]
    return [(r, c) for r in rows for c in cols]


class Shampoo(torch.optim.Optimizer):
    """Block-diagonal Shampoo with Adam grafting (Gupta et al. 2018; Anil et al. 2020) for 2-D
    parameters; other parameters take the Adam (grafting) update alone.

    Each 2-D parameter is cut into blocks of at most ``max_preconditioner_dim`` on a side. For
    each block ``G`` of the gradient: ``L = b2 L + (1 - b2) G G^T`` and ``R = b2 R + (1 - b2)
    G^T G``; every ``precondition_frequency`` steps (and at the first) the preconditioners
    ``(L + eps I)^(-1/4)`` and ``(R + eps I)^(-1/4)`` of every block of every parameter are
    computed by one grouped gl.linalg.inv_root call (blocks of one size batched together). The
    Shampoo direction of a block is ``L^(-1/4) M R^(-1/4)`` with ``M`` the block of Adam's first
    moment; it is rescaled to the norm of the block's Adam direction ``M_hat / (sqrt(V_hat) +
    adam_eps)`` (grafting). The parameter then moves by ``-lr (direction + weight_decay p)``.

    Example:
        >>> import torch
        >>> import gpula.torch as gt
        >>> w = torch.nn.Parameter(torch.randn(6, 4))
        >>> opt = gt.optim.Shampoo([w], lr=0.01, precondition_frequency=2)
        >>> before = float(w.detach().square().sum())
        >>> for _ in range(3):
        ...     opt.zero_grad()
        ...     w.square().sum().backward()
        ...     opt.step()
        >>> float(w.detach().square().sum()) < before
        True
    """

    def __init__(self, params: Iterable[Any], lr: float = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), epsilon: float = 1e-12,
                 weight_decay: float = 0.0, max_preconditioner_dim: int = 1024,
                 precondition_frequency: int = 10, adam_eps: float = 1e-8) -> None:
        for name, v in (("lr", lr), ("epsilon", epsilon), ("weight_decay", weight_decay),
                        ("adam_eps", adam_eps)):
            _check_nonneg("Shampoo", name, v)
        if not (isinstance(betas, (tuple, list)) and len(betas) == 2
                and all(_is_real(b) and 0.0 <= b < 1.0 for b in betas)):
            raise InvalidArgument(f"[torch.optim.Shampoo] betas must be two numbers in [0, 1), "
                                  f"got {betas!r}")
        for name, v in (("max_preconditioner_dim", max_preconditioner_dim),
                        ("precondition_frequency", precondition_frequency)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise InvalidArgument(f"[torch.optim.Shampoo] {name} must be a positive int, "
                                      f"got {v!r}")
        defaults = {"lr": lr, "betas": tuple(betas), "epsilon": epsilon,
                    "weight_decay": weight_decay, "max_preconditioner_dim": max_preconditioner_dim,
                    "precondition_frequency": precondition_frequency, "adam_eps": adam_eps}
        super().__init__(params, defaults)
        self._lock = threading.Lock()

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self._lock = threading.Lock()

    @torch.no_grad()
    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        loss = _loss_of(closure)
        # One step at a time: a step's state (moments, blocks, roots due) is built over several
        # statements, which a step from another thread must not see half made.
        with self._lock:
            self._step()
        return loss

    def _step(self) -> None:
        pending: list[tuple[dict, str, float]] = []  # (block, "L" or "R", epsilon): roots due
        moves: list[tuple[torch.Tensor, dict, dict]] = []
        for group in self.param_groups:
            b1, b2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                _check_dense_real("Shampoo", p)
                g, state = p.grad, self.state[p]
                if not state:
                    state["step"] = 0
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                    if p.ndim == 2:
                        blocks = _blocks(p.shape, group["max_preconditioner_dim"])
                        state["blocks"] = [
                            {"rows": r, "cols": c,
                             "L": g.new_zeros((r.stop - r.start,) * 2),
                             "R": g.new_zeros((c.stop - c.start,) * 2)} for r, c in blocks]
                state["step"] += 1
                state["exp_avg"].lerp_(g, 1 - b1)
                state["exp_avg_sq"].mul_(b2).addcmul_(g, g, value=1 - b2)
                if p.ndim == 2:
                    refresh = (state["step"] - 1) % group["precondition_frequency"] == 0
                    for blk in state["blocks"]:
                        gb = g[blk["rows"], blk["cols"]]
                        blk["L"].mul_(b2).addmm_(gb, gb.t(), alpha=1 - b2)
                        blk["R"].mul_(b2).addmm_(gb.t(), gb, alpha=1 - b2)
                        if refresh:
                            for side in ("L", "R"):
                                pending.append((blk, side, group["epsilon"]))
                moves.append((p, state, group))
        self._refresh(pending)
        for p, state, group in moves:
            b1, b2 = group["betas"]
            t = state["step"]
            m_hat = state["exp_avg"] / (1 - b1 ** t)
            adam = m_hat / ((state["exp_avg_sq"] / (1 - b2 ** t)).sqrt() + group["adam_eps"])
            direction = adam
            if p.ndim == 2:
                direction = torch.empty_like(adam)
                for blk in state["blocks"]:
                    rc = (blk["rows"], blk["cols"])
                    d = blk["PL"] @ m_hat[rc] @ blk["PR"]
                    scale = adam[rc].norm() / d.norm().clamp_min(torch.finfo(d.dtype).tiny)
                    direction[rc] = d * scale
            p.add_(direction + group["weight_decay"] * p, alpha=-group["lr"])

    @staticmethod
    def _refresh(pending: list) -> None:
        """Every due preconditioner root of every block in one grouped inv_root call. A block whose
        statistics hold NaN or Inf (from such a gradient) gets a NaN root, as torch.optim's
        arithmetic would give, and leaves the other blocks' roots alone."""
        if not pending:
            return
        finite = torch.stack([torch.isfinite(blk[side]).all() for blk, side, _ in pending])
        by_eps: dict[float, list] = {}
        for (blk, side, eps), ok in zip(pending, finite.tolist()):
            if not ok:
                blk["P" + side] = torch.full_like(blk[side], math.nan)
                continue
            by_eps.setdefault(eps, []).append((blk, side))
        for eps, items in by_eps.items():
            roots = _gl.inv_root([blk[side] for blk, side in items], 4, eps, clip=True)
            for (blk, side), r in zip(items, roots):
                blk["P" + side] = r


__all__ = ["Muon", "Shampoo"]
