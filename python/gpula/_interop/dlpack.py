"""Any other DLPack producer: operands through DLPack, results in NumPy on the host, else in
CuPy or torch (whichever is installed) on the GPU."""

from __future__ import annotations

from typing import Any

from .._gpula import NotSupported
from .base import DEFAULT_OP, Package, named
from .cupy import CupyPackage
from .numpy import NUMPY
from .torch import TorchPackage


class DLPackPackage(Package):
    name = "dlpack"

    def device_of(self, x: Any) -> Any:
        kind, idx = x.__dlpack_device__()
        return None if int(kind) in (1, 3) else int(idx)

    def gpu(self, op: str = DEFAULT_OP) -> Package:
        """The package that holds GPU results: CuPy, else torch."""
        for cls in (CupyPackage, TorchPackage):
            try:
                return named(cls)
            except ImportError:
                continue
        raise NotSupported(f"[{op}] GPU results of this array type need CuPy or PyTorch")

    def allocator(self, shape, dtype, device, op=DEFAULT_OP):
        if device is None:
            return NUMPY.allocator(shape, dtype, None, op)
        gpu = self.gpu(op)
        return gpu.allocator(shape, dtype, gpu.device_from_name(f"cuda:{device}"), op)

    def address_for(self, device, op=DEFAULT_OP):
        return None if device is None else self.gpu(op).address
