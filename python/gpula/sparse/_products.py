"""Sparse products: ``spmm`` (sparse @ dense 2-D), ``sddmm`` (sampled dense-dense) and ``spgemm``
(sparse @ sparse), over ``csr_matrix`` and the caller's arrays. Results are in the caller's
package and on its device: dense results are allocated by that package, sparse results are
``csr_matrix`` objects over arrays of that package.

CPU: gpula's OpenMP kernels. GPU: cuSPARSE (cusparseSpMM, cusparseSDDMM, cusparseSpGEMM).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._matrix import (
    _current_stream,
    _device,
    _dtype_name,
    _from_numpy,
    _package,
    _to_numpy,
    as_csr,
    csr_matrix,
)

_FRAMEWORK = {"numpy": 0, "torch": 1, "cupy": 2}


def _is_sparse(x: Any) -> bool:
    if isinstance(x, csr_matrix):
        return True
    mod = type(x).__module__
    if mod.startswith(("scipy.sparse", "cupyx.scipy.sparse")):
        return True
    if mod.startswith("torch"):
        import torch

        return isinstance(x, torch.Tensor) and x.layout in (torch.sparse_csr, torch.sparse_coo)
    return False


def _empty(shape: tuple[int, ...], dtype: str, package: str, device: str) -> Any:
    if package == "numpy":
        return np.empty(shape, dtype=dtype)
    if package == "cupy":
        import cupy

        with cupy.cuda.Device(int(device.split(":")[1])):
            return cupy.empty(shape, dtype=dtype)
    import torch

    return torch.empty(shape, dtype=getattr(torch, dtype), device=device)


def _dense_operand(A: csr_matrix, x: Any, arg: str, name: str) -> str:
    """Checks a dense operand's package, device, rank and dtype; returns its package."""
    try:
        package = _package(x)
    except TypeError as e:
        raise TypeError(f"[{name}] {arg}: {e}") from None
    if package != A.package or _device(x, package) != A.device:
        raise ValueError(
            f"[{name}] {arg} must be a {A.package} array on {A.device} like A, got {package} on "
            f"{_device(x, package)}"
        )
    if x.ndim != 2:
        raise ValueError(f"[{name}] {arg} must be 2-D, got shape {tuple(x.shape)}")
    if _dtype_name(x, package) != A.dtype:
        raise TypeError(
            f"[{name}] {arg} must have A's dtype {A.dtype}, got {_dtype_name(x, package)}"
        )
    if package == "torch" and x.requires_grad:
        raise ValueError(
            f"[{name}] {arg} requires grad; gpula.sparse products are not differentiable "
            "(use .detach())"
        )
    return package


def spmm(A: Any, B: Any, op: str = "N") -> Any:
    """``op(A) @ B`` for a sparse ``A`` (csr_matrix or anything ``as_csr`` takes) and a dense 2-D
    ``B`` of A's dtype, package and device (any strides). ``op``: "N" (A), "T" (A^T), "H" (A^H).
    Returns a new row-major 2-D array of that package.

        >>> import numpy as np, scipy.sparse as sp, gpula as gl
        >>> A = gl.sparse.as_csr(sp.eye(3, format="csr") * 2.0, "example")
        >>> gl.sparse.spmm(A, np.ones((3, 2))).tolist()
        [[2.0, 2.0], [2.0, 2.0], [2.0, 2.0]]
    """
    from .._interop import export

    name = "sparse.spmm"
    if op not in ("N", "T", "H"):
        raise ValueError(f"[{name}] op must be 'N', 'T' or 'H', got {op!r}")
    A = as_csr(A, name)
    package = _dense_operand(A, B, "b", name)
    rows = A.shape[0] if op == "N" else A.shape[1]
    C = _empty((rows, int(B.shape[1])), A.dtype, package, A.device)
    A._plan("spmm", "NTH".index(op)).execute(export(B), export(C), stream=_current_stream(B))
    return C


def sddmm(mask: Any, a: Any, b: Any) -> csr_matrix:
    """The sampled dense-dense product: a csr_matrix with ``mask``'s pattern (shared, no copy)
    and values ``(a @ b)[i, j]`` at its stored positions (mask's values are not read). ``a`` is
    (m, k), ``b`` (k, n), dense of mask's dtype, package and device (any strides).

        >>> import numpy as np, scipy.sparse as sp, gpula as gl
        >>> M = gl.sparse.as_csr(sp.eye(2, format="csr"), "example")
        >>> gl.sparse.sddmm(M, np.array([[1.0, 2.0], [3.0, 4.0]]), np.eye(2)).data.tolist()
        [1.0, 4.0]
    """
    from .. import _gpula
    from .._interop import export

    name = "sparse.sddmm"
    mask = as_csr(mask, name)
    package = _dense_operand(mask, a, "a", name)
    _dense_operand(mask, b, "b", name)
    values = _empty((mask.nnz,), mask.dtype, package, mask.device)
    _gpula.sparse_sddmm(
        export(mask.indptr),
        export(mask.indices),
        export(values),
        mask.shape[0],
        mask.shape[1],
        export(a),
        export(b),
        stream=_current_stream(a),
    )
    return csr_matrix._trusted(values, mask.indices, mask.indptr, mask.shape, package, mask.device)


def _as_index(x: Any, package: str, device: str, dtype: str) -> Any:
    if _dtype_name(x, package) == dtype:
        return x
    return _from_numpy(_to_numpy(x, package).astype(dtype), package, device)


def spgemm(A: Any, B: Any) -> csr_matrix:
    """``A @ B`` for two sparse matrices (csr_matrix or anything ``as_csr`` takes) of one dtype,
    package and device: a new canonical csr_matrix of that package. Index dtypes: int32 when both
    are int32, else int64.

        >>> import scipy.sparse as sp, gpula as gl
        >>> A = gl.sparse.as_csr(sp.eye(3, format="csr") * 2.0, "example")
        >>> gl.sparse.spgemm(A, A).to_dense().tolist()
        [[4.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 4.0]]
    """
    from .. import _gpula
    from .._interop import export

    name = "sparse.spgemm"
    A = as_csr(A, name)
    B = as_csr(B, name)
    if B.package != A.package or B.device != A.device:
        raise ValueError(
            f"[{name}] B must be a {A.package} matrix on {A.device} like A, got {B.package} on "
            f"{B.device}"
        )
    if B.dtype != A.dtype:
        raise TypeError(f"[{name}] B must have A's dtype {A.dtype}, got {B.dtype}")
    if A.shape[1] != B.shape[0]:
        raise ValueError(
            f"[{name}] B must have {A.shape[1]} rows (A is {A.shape}), got shape {B.shape}"
        )
    idx = "int32" if A.index_dtype == B.index_dtype == "int32" else "int64"
    a_p, a_i = (_as_index(x, A.package, A.device, idx) for x in (A.indptr, A.indices))
    b_p, b_i = (_as_index(x, B.package, B.device, idx) for x in (B.indptr, B.indices))
    data, indices, indptr = _gpula.sparse_spgemm(
        export(a_p),
        export(a_i),
        export(A.data),
        A.shape[0],
        A.shape[1],
        export(b_p),
        export(b_i),
        export(B.data),
        B.shape[0],
        B.shape[1],
        _FRAMEWORK[A.package],
        stream=_current_stream(A.data),
    )
    return csr_matrix._trusted(data, indices, indptr, (A.shape[0], B.shape[1]), A.package, A.device)
