"""Sparse products: ``spmm`` (sparse @ dense 2-D), ``sddmm`` (sampled dense-dense) and ``spgemm``
(sparse @ sparse), over ``csr_matrix`` and the caller's arrays. Results are in the caller's
package and on its device: dense results are allocated by that package, sparse results are
``csr_matrix`` objects over arrays of that package.

CPU: gpula's OpenMP kernels. GPU: cuSPARSE (cusparseSpMM, cusparseSDDMM, cusparseSpGEMM).
"""

from __future__ import annotations

from typing import Any

from ._matrix import (
    _FRAMEWORK,
    _cast,
    _current_stream,
    _dtype_name,
    _empty_like_package,
    as_csr,
    csr_matrix,
    operand,
    result_dtype,
)
from ..errors import InvalidArgument


def _dense(A: csr_matrix, x: Any, arg: str, name: str) -> tuple[Any, str]:
    """A dense 2-D operand checked against A (package, device, rank; torch: not requiring
    grad) and the dtype the product computes in."""
    package, dt = operand(A, x, arg, name)
    if x.ndim != 2:
        raise InvalidArgument(f"[{name}] {arg} must be 2-D, got shape {tuple(x.shape)}")
    if package == "torch" and x.requires_grad:
        raise InvalidArgument(
            f"[{name}] {arg} requires grad; gpula.sparse products are not differentiable "
            "(use .detach())"
        )
    return package, dt


def _in(x: Any, dt: str, package: str) -> Any:
    return x if _dtype_name(x) == dt else _cast(x, dt, package)


def spmm(A: Any, B: Any, op: str = "N") -> Any:
    """``op(A) @ B`` for a sparse ``A`` (csr_matrix or anything ``as_csr`` takes) and a dense 2-D
    ``B`` of A's package and device (any strides; dtypes promoted as NumPy does). ``op``: "N"
    (A), "T" (A^T), "H" (A^H). Returns a new row-major 2-D array of that package.

        >>> import numpy as np, scipy.sparse as sp, gpula as gl
        >>> A = gl.sparse.csr_matrix(sp.eye(3, format="csr") * 2.0)
        >>> gl.sparse.spmm(A, np.ones((3, 2))).tolist()
        [[2.0, 2.0], [2.0, 2.0], [2.0, 2.0]]
    """
    from .._interop import export

    name = "sparse.spmm"
    if op not in ("N", "T", "H"):
        raise InvalidArgument(f"[{name}] op must be 'N', 'T' or 'H', got {op!r}")
    A = as_csr(A, name)
    package, dt = _dense(A, B, "B", name)
    A, B = A.astype(dt, copy=False), _in(B, dt, package)
    rows = A.shape[0] if op == "N" else A.shape[1]
    C = _empty_like_package((rows, int(B.shape[1])), dt, package, A.device, name, "op(A) @ B")
    A._plan("spmm", "NTH".index(op)).execute(export(B), export(C), stream=_current_stream(B))
    return C


def sddmm(mask: Any, a: Any, b: Any) -> csr_matrix:
    """The sampled dense-dense product: a csr_matrix with ``mask``'s pattern (shared, no copy)
    and values ``(a @ b)[i, j]`` at its stored positions (mask's values are not read). ``a`` is
    (m, k), ``b`` (k, n), dense, of mask's package and device (any strides; dtypes promoted as
    NumPy does).

        >>> import numpy as np, scipy.sparse as sp, gpula as gl
        >>> M = gl.sparse.csr_matrix(sp.eye(2, format="csr"))
        >>> gl.sparse.sddmm(M, np.array([[1.0, 2.0], [3.0, 4.0]]), np.eye(2)).data.tolist()
        [1.0, 4.0]
    """
    from .. import _gpula
    from .._interop import export

    name = "sparse.sddmm"
    mask = as_csr(mask, name)
    package, dt_a = _dense(mask, a, "a", name)
    _, dt_b = _dense(mask, b, "b", name)
    dt = result_dtype(name, dt_a, dt_b, args=("a", "b"))
    mask, a, b = mask.astype(dt, copy=False), _in(a, dt, package), _in(b, dt, package)
    m, values = _gpula.sparse_sddmm(
        mask._m, export(a), export(b), _FRAMEWORK[package], stream=_current_stream(a)
    )
    return csr_matrix._wrap(m, values, mask.indices, mask.indptr, package, mask.device)


def spgemm(A: Any, B: Any) -> csr_matrix:
    """``A @ B`` for two sparse matrices (csr_matrix or anything ``as_csr`` takes) of one
    package and device (dtypes promoted as NumPy does): a new canonical csr_matrix of that
    package. Index dtypes: int32 when both are int32, else int64.

        >>> import scipy.sparse as sp, gpula as gl
        >>> A = gl.sparse.csr_matrix(sp.eye(3, format="csr") * 2.0)
        >>> gl.sparse.spgemm(A, A).to_dense().tolist()
        [[4.0, 0.0, 0.0], [0.0, 4.0, 0.0], [0.0, 0.0, 4.0]]
    """
    from .. import _gpula

    name = "sparse.spgemm"
    A = as_csr(A, name)
    B = as_csr(B, name)
    if B.package != A.package or B.device != A.device:
        raise InvalidArgument(
            f"[{name}] B must be a {A.package} matrix on {A.device} like A, got {B.package} on "
            f"{B.device}"
        )
    if A.shape[1] != B.shape[0]:
        raise InvalidArgument(
            f"[{name}] B must have {A.shape[1]} rows (A is {A.shape}), got shape {B.shape}"
        )
    dt = result_dtype(name, A.dtype, B.dtype, args=("A", "B"))
    A, B = A.astype(dt, copy=False), B.astype(dt, copy=False)
    if A.index_dtype != B.index_dtype:  # int64 for both (a widened pattern, checked again)
        A, B = (_wide(M) for M in (A, B))
    m = _gpula.sparse_spgemm(A._m, B._m, stream=_current_stream(A.data))
    d, i, p = m.arrays(_FRAMEWORK[A.package])
    return csr_matrix._wrap(m, d, i, p, A.package, A.device)


def _wide(M: csr_matrix) -> csr_matrix:
    if M.index_dtype == "int64":
        return M
    p = M.package
    return csr_matrix((M.data, _cast(M.indices, "int64", p), _cast(M.indptr, "int64", p)), shape=M.shape)

