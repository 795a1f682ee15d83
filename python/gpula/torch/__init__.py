"""gpula inside PyTorch: gpula's fused matmuls as ``torch.library`` custom ops with autograd,
which ``torch.compile(fullgraph=True)`` traces without a graph break, and the layers built on them.

``import gpula`` never imports torch; ``import gpula.torch`` needs it. CUDA tensors run on
torch's current stream, CPU tensors on gpula's CPU backend; results are torch tensors.

Example:
    >>> import torch
    >>> import gpula.torch as gt
    >>> layer = gt.nn.Linear(4, 3, activation="relu", dtype=torch.float64)
    >>> y = layer(torch.ones(2, 4, dtype=torch.float64))
    >>> y.shape, y.requires_grad
    (torch.Size([2, 3]), True)
"""

from . import functional, linalg, nn, optim

__all__ = ["functional", "linalg", "nn", "optim"]
