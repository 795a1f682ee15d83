"""PyTorch tensors (CPU and CUDA): operands as (owner, address, dtype, shape, strides, device)
read from their attributes (several microseconds cheaper than their __dlpack__, and free of its
stream handshake), results from torch.empty on the data's device and torch's current stream.
torch is imported when the first tensor arrives, never by ``import gpula``."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from .._gpula import DTypeError
from .base import DEFAULT_OP, Package, zero


class TorchPackage(Package):
    name = "torch"

    def __init__(self) -> None:
        import torch

        self.torch = torch
        names = ["float16", "bfloat16", "float32", "float64", "complex64", "complex128"]
        names += ["float8_e4m3fn", "float8_e5m2", "int32", "int64", "uint8"]
        self.names = {getattr(torch, n): n for n in names if hasattr(torch, n)}
        self.address = torch.Tensor.data_ptr
        # The fast way to the current cudaStream_t (an int), where this torch has it.
        self._raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        self._layouts = {torch.sparse_csr: "csr", torch.sparse_coo: "coo"}
        self._strided = torch.strided

    def export(self, x: Any) -> Any:
        """(x, address, dtype, shape, strides, device type, id): no DLPack round trip, which in
        torch costs microseconds and may order streams; float8 and requires_grad need no
        special case. DLPack (and its errors) for dtypes and devices gpula does not take."""
        name = self.names.get(x.dtype)
        if x.is_cuda:
            kind, idx = 2, x.get_device()
        elif name is not None and x.device.type == "cpu":
            kind, idx = 1, 0
        else:
            name = None
        if name is None:
            return x.detach() if x.requires_grad else x
        if x.is_conj():  # lazy conjugate / negative views: materialize (one copy)
            x = x.resolve_conj()
        if x.is_neg():
            x = x.resolve_neg()
        return (x, x.data_ptr(), name, x.shape, x.stride(), kind, idx)

    def fast_key(self, x: Any) -> tuple[Any, int] | None:
        if x.layout is not self._strided:
            return None
        p = x.data_ptr()
        if not p or x.is_conj() or x.is_neg() or not (x.is_cuda or x.is_cpu):
            return None
        # The pointer's alignment as the plan records it (lowest set bit, at most 256; a CPU
        # plan records none, as src/matmul/cache.cpp).
        align = min(p & -p, 256) if x.is_cuda else 0
        return (x.dtype, x.shape, x.stride(), x.get_device(), align), p

    def device_of(self, x: Any) -> Any:
        return x.device

    def device_name(self, x: Any) -> str:
        return "cpu" if x.device.type == "cpu" else f"cuda:{x.device.index or 0}"

    def device_from_name(self, name: str) -> Any:
        return self.torch.device(name)

    def allocator(self, shape, dtype, device, op=DEFAULT_OP):
        torch = self.torch
        dt = getattr(torch, dtype, None)
        if dt is None:
            raise DTypeError(f"[{op}] this torch has no {dtype}")
        return functools.partial(torch.empty, shape, dtype=dt, device=device)

    def empty(self, shape, dtype, device, op=DEFAULT_OP):
        dt = getattr(self.torch, dtype, None)
        if dt is None:
            return self.allocator(shape, dtype, device, op)()
        return self.torch.empty(shape, dtype=dt, device=device)

    def current_stream(self, device):
        if device.type != "cuda":
            return 0
        idx = device.index if device.index is not None else self.torch.cuda.current_device()
        if self._raw_stream is not None:
            return self._raw_stream(idx)
        return self.torch.cuda.current_stream(idx).cuda_stream

    def hand_over(self, copies, stream, device):
        if not copies or device.type != "cuda":
            return
        cuda = self.torch.cuda
        current = cuda.current_stream(device)
        if current.cuda_stream == stream:
            return  # one stream: ordered, and the caching allocator reuses in stream order
        other = cuda.ExternalStream(stream, device=device)
        other.wait_stream(current)  # the copies are written on the current stream
        for c in copies:
            c.record_stream(other)  # not reused before `other`'s queued work is done

    def stream_getter(self, device):
        if device.type != "cuda":
            return zero
        idx = device.index if device.index is not None else self.torch.cuda.current_device()
        raw = self._raw_stream
        if raw is not None:
            return functools.partial(raw, idx)
        cur = self.torch.cuda.current_stream
        return lambda: cur(idx).cuda_stream

    def to_numpy(self, x):
        return x.detach().resolve_conj().resolve_neg().cpu().numpy()

    def from_numpy(self, a, device):
        return self.torch.from_numpy(a if a.flags.c_contiguous else np.ascontiguousarray(a)).to(device)

    def from_dlpack(self, x):
        return self.torch.from_dlpack(x)

    def detach(self, x):
        return x.detach()

    def copy(self, x):
        return x.clone()

    def contiguous(self, x):
        return x.contiguous()

    def astype(self, x, dtype):
        return x.detach().to(getattr(self.torch, dtype), copy=True)

    def eye(self, n, dtype, device):
        return self.torch.eye(n, dtype=getattr(self.torch, dtype), device=device)

    def randn(self, shape, dtype, device, seed):
        torch = self.torch
        g = torch.Generator(device=device).manual_seed(seed)
        real = torch.float64 if dtype in ("float64", "complex128") else torch.float32
        x = torch.randn(shape, generator=g, dtype=real, device=device)
        if dtype.startswith("complex"):
            x = torch.complex(x, torch.randn(shape, generator=g, dtype=real, device=device))
        return x

    def sparse_format(self, x):
        if not isinstance(x, self.torch.Tensor) or x.layout == self.torch.strided:
            return None
        return self._layouts.get(x.layout, "other")

    def sparse_parts(self, x: Any) -> tuple[str, Any, Any, Any]:
        """("csr", values, col_indices, crow_indices) or ("coo", values, row, col) of a sparse
        tensor; the other sparse layouts (CSC, BSR, BSC) through COO."""
        if self.sparse_format(x) == "csr":
            return "csr", x.values(), x.col_indices(), x.crow_indices()
        if self.sparse_format(x) != "coo":
            x = x.to_sparse_coo()
        idx = x._indices()
        return "coo", x._values(), idx[0], idx[1]

    def sparse_csr(self, arg, shape=None):
        if not isinstance(arg, tuple):
            return arg.to_sparse_csr()
        d, i, p = arg
        # gpula validated the pattern when it built it: torch need not check it again.
        return self.torch.sparse_csr_tensor(p, i, d, size=shape, check_invariants=False)
