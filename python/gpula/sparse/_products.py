"""Sparse products: ``spmm`` (sparse @ dense 2-D), ``sddmm`` (sampled dense-dense) and ``spgemm``
(sparse @ sparse), over ``csr_matrix`` and the caller's arrays. Results are in the caller's
package and on its device: dense results are allocated by that package, sparse results are
``csr_matrix`` objects over arrays of that package. spmm's and spgemm's work is in _matrix.py
(``A @ x`` runs it too); here their operands are read as CSR.

CPU: gpula's OpenMP kernels. GPU: cuSPARSE (cusparseSpMM, cusparseSDDMM, cusparseSpGEMM).
"""

from __future__ import annotations

from typing import Any

from .. import _gpula
from .._interop import FRAMEWORK, export
from ..errors import InvalidArgument
from ._matrix import (
    _current_stream,
    as_csr,
    csr_matrix,
    dense_operand,
    in_dtype,
    result_dtype,
    spgemm_csr,
    spmm_csr,
)


def spmm(A: Any, B: Any, op: str = "N") -> Any:
    """``op(A) @ B`` for a sparse ``A`` (csr_matrix or anything ``as_csr`` takes) and a dense 2-D
    ``B`` of A's package and device (any strides; dtypes promoted as NumPy does). ``op``: "N"
    (A), "T" (A^T), "H" (A^H). Returns a new row-major 2-D array of that package.

        >>> import numpy as np, scipy.sparse as sp, gpula as gl
        >>> A = gl.sparse.csr_matrix(sp.eye(3, format="csr") * 2.0)
        >>> gl.sparse.spmm(A, np.ones((3, 2))).tolist()
        [[2.0, 2.0], [2.0, 2.0], [2.0, 2.0]]
    """
    name = "sparse.spmm"
    if op not in ("N", "T", "H"):
        raise InvalidArgument(f"[{name}] op must be 'N', 'T' or 'H', got {op!r}")
    return spmm_csr(as_csr(A, name), B, op, name)


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
    name = "sparse.sddmm"
    mask = as_csr(mask, name)
    package, dt_a = dense_operand(mask, a, "a", name)
    _, dt_b = dense_operand(mask, b, "b", name)
    dt = result_dtype(name, dt_a, dt_b, args=("a", "b"))
    mask, a, b = mask.astype(dt, copy=False), in_dtype(a, dt, package), in_dtype(b, dt, package)
    m, values = _gpula.sparse_sddmm(
        mask._m, export(a), export(b), FRAMEWORK[package], stream=_current_stream(a)
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
    name = "sparse.spgemm"
    return spgemm_csr(as_csr(A, name), as_csr(B, name), name)
