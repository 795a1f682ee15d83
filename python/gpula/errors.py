"""gpula's exception classes.

Every class is raised by the C++ core and translated one to one::

    Error (RuntimeError)
    ├── NotSupported ── NotCompiled
    ├── OutOfMemory (also MemoryError)
    ├── CudaError, CublasError, CusolverError, CusparseError, CudssError  (.status, .status_name)
    └── LinAlgError (also numpy.linalg.LinAlgError)
        ├── NotPositiveDefinite  (.order, .batch_index)
        └── SingularMatrix       (.index, .batch_index)
    InvalidArgument (ValueError)
    └── DTypeError (also TypeError)

Example:
    >>> import numpy as np, gpula as gl
    >>> try:
    ...     gl.matmul(np.ones((2, 3)), np.ones((4, 2)))
    ... except gl.InvalidArgument as e:
    ...     print("bad shapes")
    bad shapes
"""

from ._gpula import (
    CublasError,
    CudaError,
    CudssError,
    CusolverError,
    CusparseError,
    DTypeError,
    Error,
    InvalidArgument,
    LinAlgError,
    NotCompiled,
    NotPositiveDefinite,
    NotSupported,
    OutOfMemory,
    SingularMatrix,
)

__all__ = [
    "Error",
    "InvalidArgument",
    "DTypeError",
    "NotSupported",
    "NotCompiled",
    "OutOfMemory",
    "CudaError",
    "CublasError",
    "CusolverError",
    "CusparseError",
    "CudssError",
    "LinAlgError",
    "NotPositiveDefinite",
    "SingularMatrix",
]
