"""Optimizers built on gpula's matrix functions for second-order training.

``Muon``: torch.optim.Muon's update (same hyperparameters, defaults and state), with the
Newton-Schulz orthogonalization of every parameter of one shape, dtype and device done in one
batched gpula call (gl.linalg.orthogonalize over the stack) instead of one call per parameter.

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
from collections.abc import Callable, Iterable
from typing import Any, Optional

import torch

from .. import linalg as _gl
from ..errors import InvalidArgument, NotSupported

MUON_COEFFICIENTS = (3.4445, -4.7750, 2.0315)


def _adjusted_lr(lr: float, adjust_lr_fn: Optional[str], shape: torch.Size) -> float:
    """torch.optim.Muon's rule: "original" (Keller Jordan's) scales by sqrt(max(1, A / B)),
    "match_rms_adamw" (Moonshot's) by 0.2 sqrt(max(A, B)), for a parameter of shape (A, B)."""
    a, b = shape[:2]
    if adjust_lr_fn in (None, "original"):
        return lr * math.sqrt(max(1.0, a / b))
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
        if isinstance(lr, torch.Tensor) and lr.numel() != 1:
            raise InvalidArgument("[torch.optim.Muon] Tensor lr must be 1-element")
        for name, v in (("lr", lr), ("momentum", momentum), ("weight_decay", weight_decay)):
            if not 0.0 <= v:
                raise InvalidArgument(f"[torch.optim.Muon] {name} must be >= 0, got {v}")
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
                    raise InvalidArgument(f"[torch.optim.Muon] Muon takes 2-D parameters only; got "
                                          f"one of shape {tuple(p.shape)}")

    @torch.no_grad()
    def step(self, closure: Optional[Callable[[], Any]] = None) -> Any:
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr = float(group["lr"])
            momentum, wd = group["momentum"], group["weight_decay"]
            buckets: dict[tuple, list[tuple[torch.Tensor, torch.Tensor]]] = {}
            for p in group["params"]:
                if p.grad is None:
                    continue
                if torch.is_complex(p) or p.grad.is_sparse:
                    raise NotSupported("[torch.optim.Muon] complex parameters and sparse "
                                       "gradients are not supported (as torch.optim.Muon)")
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


__all__ = ["Muon"]
