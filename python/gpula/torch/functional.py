"""Functional forms of gpula.torch's layers (as torch.nn.functional is to torch.nn).

Example:
    >>> import torch
    >>> import gpula.torch.functional as GF
    >>> x, w, b = torch.ones(2, 3), torch.ones(4, 3), torch.zeros(4)
    >>> GF.linear(x, w, b, activation="relu")
    tensor([[3., 3., 3., 3.],
            [3., 3., 3., 3.]])
"""

from __future__ import annotations

from typing import Optional, Sequence

import torch

from . import _ops

__all__ = ["linear", "mlp"]


def linear(input: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor] = None,
           activation: Optional[str] = None) -> torch.Tensor:
    """``act(input @ weight.T + bias)`` in one fused gpula call, as ``torch.nn.functional.linear``
    followed by ReLU or tanh-approximated GELU; differentiable, torch.compile-traceable.

    activation: None, "relu" or "gelu" (torch's ``gelu(approximate="tanh")``).

    Example:
        >>> import torch
        >>> from gpula.torch.functional import linear
        >>> linear(torch.ones(1, 2), torch.ones(3, 2), torch.ones(3)).tolist()
        [[3.0, 3.0, 3.0]]
    """
    act = "none" if activation is None else activation
    _ops.check_linear("gpula.torch.linear", input, weight, bias, act)
    return _ops.linear_op(input, weight, bias, act)[0]


def mlp(input: torch.Tensor, weights: Sequence[torch.Tensor],
        biases: Optional[Sequence[torch.Tensor]] = None, activation: str = "gelu") -> torch.Tensor:
    """Layers ``act(h @ W_i.T + b_i)``, no activation after the last, with the fused backward of
    ``gpula.torch.nn.FusedMLP`` (each layer's input-gradient GEMM applies the activation
    derivative and bias gradient of the layer below in its epilogue).

    Example:
        >>> import torch
        >>> from gpula.torch.functional import mlp
        >>> w = [torch.ones(3, 2), torch.ones(1, 3)]
        >>> mlp(torch.ones(1, 2), w, activation="relu").tolist()
        [[6.0]]
    """
    op = "gpula.torch.mlp"
    weights = list(weights)
    biases = [] if biases is None else list(biases)
    if activation not in ("relu", "gelu"):  # without one, a stack is a chain of products
        raise _ops.InvalidArgument(f"[{op}] activation must be 'relu' or 'gelu', got "
                                   f"{activation!r}")
    if not weights:
        raise _ops.InvalidArgument(f"[{op}] weights must hold at least one matrix")
    if biases and len(biases) != len(weights):
        raise _ops.InvalidArgument(f"[{op}] biases must hold one vector per weight "
                                   f"({len(weights)}), got {len(biases)}")
    _ops.check_input(op, input)
    for i, w in enumerate(weights):
        _ops.check_tensor(op, f"weights[{i}]", w, input)
    for i, b in enumerate(biases):
        _ops.check_tensor(op, f"biases[{i}]", b, input)
    shape = input.shape
    for i, w in enumerate(weights):
        b = biases[i] if biases else None
        out = _ops.check_layer(op, input, shape, w, b, f"weights[{i}]", f"biases[{i}]")
        shape = (*shape[:-1], out)
    return _ops.mlp_op(input, weights, biases, activation)[0]
