"""gpula: GPU/CPU linear algebra for machine-learning pipelines.

Planned matrix multiplication with fused epilogues runs on cuBLASLt for CUDA arrays (CuPy,
PyTorch) and on BLAS for host arrays (NumPy, PyTorch CPU); results come back in the caller's
package and on the caller's device.

Example:
    >>> import numpy as np, gpula as gl
    >>> a = np.ones((2, 3), np.float32)
    >>> gl.matmul(a, a.T)
    array([[3., 3.],
           [3., 3.]], dtype=float32)
"""

from typing import Any

from . import _openblas_core

# The first import of the extension loads OpenBLAS, which reads OPENBLAS_CORETYPE only then.
with _openblas_core.core_for_import():
    from . import _gpula

from . import errors, linalg
from . import sparse
from . import distributed
from ._gpula import (
    ComputeType,
    Epilog,
    __version__,
    matmul_cache_size,
)
from ._log import set_log_level
from ._grouped_matmul import GroupedMatmul, grouped_matmul
from ._matmul import Matmul, matmul, matmul_cache_clear
from ._options import MatmulOptions
from ._quantize import quantize_fp8
from .errors import *  # noqa: F403  (the exception classes, also at the top level)


def devices() -> dict[str, Any]:
    """What gpula can run on here.

    Returns a dict: ``cuda_compiled`` (the CUDA backend is built in), ``cuda_device_count``
    (usable GPUs), ``devices`` (``["cpu", "cuda:0", ...]``) and ``description`` (one line per
    backend, with library versions and GPUs). The CPU line names OpenBLAS's kernel set
    ("core"), and says so when ``import gpula`` chose it from the CPU flags
    (``GPULA_OPENBLAS_CORETYPE``, see docs/architecture.md).

    Example:
        >>> import gpula as gl
        >>> "cpu" in gl.devices()["devices"]
        True
    """
    n = _gpula.cuda_device_count()
    names: list[str] = ["cpu"] + [f"cuda:{i}" for i in range(n)]
    return {
        "cuda_compiled": _gpula.cuda_compiled(),
        "cuda_device_count": n,
        "devices": names,
        "description": _openblas_core.describe(_gpula.describe_devices()),
    }


__all__ = [
    "GroupedMatmul",
    "grouped_matmul",
    "Matmul",
    "matmul",
    "MatmulOptions",
    "quantize_fp8",
    "Epilog",
    "ComputeType",
    "errors",
    "linalg",
    "sparse",
    "distributed",
    "devices",
    "set_log_level",
    "matmul_cache_size",
    "matmul_cache_clear",
    "__version__",
    *errors.__all__,
]
