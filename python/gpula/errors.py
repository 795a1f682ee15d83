"""gpula's exception classes.

Every class is raised by the C++ core (or the Python layer) and translated one to one. One base,
``Error``, catches them all; each class also derives from the builtin a caller would catch::

    Error (Exception)
    ├── InvalidArgument (also ValueError)
    │   └── DTypeError (also TypeError)
    ├── NotSupported (also RuntimeError)
    │   └── NotCompiled
    ├── OutOfMemory (also MemoryError)
    ├── VendorError (also RuntimeError; .status, .status_name)
    │   └── CudaError, CublasError, CusolverError, CusparseError, CudssError, NcclError,
    │       CublasMpError
    └── LinAlgError (also numpy.linalg.LinAlgError)
        ├── NotPositiveDefinite  (.order, .batch_index)
        └── SingularMatrix       (.index, .batch_index)

Example:
    >>> import numpy as np, gpula as gl
    >>> try:
    ...     gl.matmul(np.ones((2, 3)), np.ones((4, 2)))
    ... except gl.Error as e:
    ...     print(type(e).__name__, isinstance(e, ValueError))
    InvalidArgument True
"""

from ._gpula import (
    CublasError,
    CublasMpError,
    CudaError,
    CudssError,
    CusolverError,
    CusparseError,
    DTypeError,
    Error,
    InvalidArgument,
    LinAlgError,
    NcclError,
    NotCompiled,
    NotPositiveDefinite,
    NotSupported,
    OutOfMemory,
    SingularMatrix,
    VendorError,
)

__all__ = [
    "Error",
    "InvalidArgument",
    "DTypeError",
    "NotSupported",
    "NotCompiled",
    "OutOfMemory",
    "VendorError",
    "CudaError",
    "CublasError",
    "CusolverError",
    "CusparseError",
    "CudssError",
    "NcclError",
    "CublasMpError",
    "LinAlgError",
    "NotPositiveDefinite",
    "SingularMatrix",
]
