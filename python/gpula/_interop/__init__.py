"""Array packages: how operands are handed to C++ and how results are made in the caller's package.

One adapter per package (numpy.py, torch.py, cupy.py, dlpack.py for any other DLPack producer)
behind one interface (base.Package). Operands go to C++ without copies: NumPy and other
producers through DLPack (or the buffer protocol), NumPy arrays of ml_dtypes' bfloat16/float8 as
a same-size unsigned-integer view plus the dtype's name, torch and CuPy arrays as (owner,
address, dtype, shape, strides, device) read from their attributes. Results are allocated by the
caller's own package (numpy.empty / cupy.empty / torch.empty) on the data's device, and filled
by C++ through execute_into. Nothing else in gpula imports torch or CuPy: what the rest needs
of them (conversions, casts, random starts, sparse objects) is a method of the adapter.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from .._gpula import DTypeError
from .base import DEFAULT_ARG, DEFAULT_OP, FRAMEWORK, Package, dtype_name, named, stream_handle
from .cupy import CupyPackage
from .dlpack import DLPackPackage
from .numpy import NUMPY, NumpyPackage
from .torch import TorchPackage

_by_type: dict[type, Package] = {np.ndarray: NUMPY}
_CLASSES: dict[str, type[Package]] = {
    "numpy": NumpyPackage,
    "torch": TorchPackage,
    "cupy": CupyPackage,
    "dlpack": DLPackPackage,
}


def package_named(name: str) -> Package:
    """The adapter of the package called name ("numpy", "torch", "cupy", "dlpack")."""
    return NUMPY if name == "numpy" else named(_CLASSES[name])


def package_of(x: Any, op: str = DEFAULT_OP, arg: str = DEFAULT_ARG) -> Package:
    """The package of array x (cached per type); DTypeError naming op and arg for a non-array."""
    t = type(x)
    p = _by_type.get(t)
    if p is not None:
        return p
    root = t.__module__.split(".", 1)[0]
    if root == "torch" and "torch" in sys.modules and isinstance(x, sys.modules["torch"].Tensor):
        p = named(TorchPackage)
    elif root == "cupy":
        p = named(CupyPackage)
    elif isinstance(x, np.ndarray):
        p = NUMPY
    elif hasattr(t, "__dlpack__"):
        p = named(DLPackPackage)
    else:
        name = t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"
        raise DTypeError(
            f"[{op}] {arg} must be an array (NumPy, CuPy, PyTorch or another DLPack producer), "
            f"got {name}"
        )
    _by_type[t] = p
    return p


def known_package(x: Any) -> Package | None:
    """The package of x where package_of has seen x's type before, else None (never raises):
    for fast paths that leave every other case to package_of."""
    return _by_type.get(type(x))


def is_gpu_array(x: Any) -> bool:
    """Whether x is a CuPy array or a CUDA torch tensor (anything else: False)."""
    mod = type(x).__module__
    if mod.startswith("cupy"):
        return True
    if mod.startswith("torch"):
        return bool(getattr(x, "is_cuda", False))
    return False


def export(x: Any, op: str = DEFAULT_OP, arg: str = DEFAULT_ARG) -> Any:
    """Operand x as C++ takes it (no copy); DTypeError naming op and arg for a non-array."""
    return package_of(x, op, arg).export(x)


def copies(exported: Any, original: Any) -> list[Any]:
    """The arrays an export made rather than read in place (a torch lazy negative/conjugate
    view's materialized copy): the first item of an exported tuple that is not the original
    operand. Lists of operands (exported item by item) pairwise."""
    if isinstance(exported, list):
        return [c for e, x in zip(exported, original) for c in copies(e, x)]
    if type(exported) is tuple and len(exported) == 7 and exported[0] is not original:
        return [exported[0]]
    return []


__all__ = [
    "FRAMEWORK",
    "Package",
    "copies",
    "dtype_name",
    "export",
    "is_gpu_array",
    "package_named",
    "package_of",
    "stream_handle",
]
