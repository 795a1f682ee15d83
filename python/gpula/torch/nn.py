"""Drop-in layers for torch.nn whose forward is one fused gpula call and whose backward uses
cuBLASLt's backward epilogues (on the CPU: gpula's fused CPU epilogues).

Example:
    >>> import torch
    >>> import gpula.torch as gt
    >>> mlp = gt.nn.FusedMLP([4, 8, 2], activation="gelu", dtype=torch.float64)
    >>> mlp(torch.ones(3, 4, dtype=torch.float64)).shape
    torch.Size([3, 2])
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import torch

from . import functional as GF

__all__ = ["Linear", "FusedMLP"]


class Linear(torch.nn.Linear):
    """``torch.nn.Linear`` (same parameters, initialisation and state_dict) followed by an
    optional ReLU or tanh-approximated GELU, computed in one fused call. float32 CUDA layers
    use TF32 tensor cores when torch.set_float32_matmul_precision("high") (or "medium") is set,
    as torch.nn.Linear does; float64 runs on the CPU backend only.

    Example:
        >>> import torch
        >>> from gpula.torch.nn import Linear
        >>> layer = Linear(2, 3, activation="gelu")
        >>> layer.weight.shape, layer.activation
        (torch.Size([3, 2]), 'gelu')
    """

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 activation: Optional[str] = None, device: Any = None, dtype: Any = None) -> None:
        if activation not in (None, "relu", "gelu"):
            raise GF._ops.InvalidArgument(
                f"[gpula.torch.nn.Linear] activation must be None, 'relu' or 'gelu', got "
                f"{activation!r}")
        super().__init__(in_features, out_features, bias=bias, device=device, dtype=dtype)
        self.activation = activation

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        return GF.linear(input, self.weight, self.bias, self.activation)

    def extra_repr(self) -> str:
        return super().extra_repr() + f", activation={self.activation}"


class FusedMLP(torch.nn.Module):
    """Linear layers of the given sizes with an activation between them (none after the last):
    ``FusedMLP([d_in, h1, ..., d_out])``. The forward is one fused call per layer; in the
    backward, each layer's input-gradient GEMM also applies the activation derivative of the
    layer below (DGELU / DRELU epilogues) and each weight-gradient GEMM the bias gradient
    (BGRADA), so no elementwise kernel runs. ``layers`` holds ordinary ``gpula.torch.nn.Linear`` modules (their parameters).

    Example:
        >>> import torch
        >>> from gpula.torch.nn import FusedMLP
        >>> m = FusedMLP([3, 5, 1], activation="relu")
        >>> [tuple(p.shape) for p in m.parameters()]
        [(5, 3), (5,), (1, 5), (1,)]
    """

    def __init__(self, sizes: Sequence[int], activation: str = "gelu", bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        sizes = list(sizes)
        if len(sizes) < 2:
            raise GF._ops.InvalidArgument(
                f"[gpula.torch.nn.FusedMLP] sizes must name at least an input and an output "
                f"size, got {sizes}")
        if activation not in ("relu", "gelu"):
            raise GF._ops.InvalidArgument(
                f"[gpula.torch.nn.FusedMLP] activation must be 'relu' or 'gelu', got "
                f"{activation!r}")
        self.activation = activation
        self.layers = torch.nn.ModuleList(
            Linear(i, o, bias=bias, activation=None if k == len(sizes) - 2 else activation,
                   device=device, dtype=dtype)
            for k, (i, o) in enumerate(zip(sizes[:-1], sizes[1:])))

    def forward(self, input: torch.Tensor) -> torch.Tensor:
        # One pass over the layers: each Module attribute lookup (ModuleList indexing, a
        # parameter) is a Python __getattr__ of about half a microsecond.
        weights, biases = [], []
        for layer in self.layers:
            weights.append(layer.weight)
            biases.append(layer.bias)
        return GF.mlp(input, weights, None if biases[0] is None else biases, self.activation)
