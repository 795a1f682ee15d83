"""Sparse direct solvers: ``DirectSolver`` (plan once, refactorize many times) and ``spsolve``.

The matrix is read as CSR (scipy/cupyx/torch sparse, gpula's ``csr_matrix`` or a
``(data, indices, indptr)`` tuple with ``shape=``). CPU backend: SuiteSparse, CHOLMOD
supernodal Cholesky for ``assume_a="pos"`` (real SPD or complex Hermitian positive definite;
only the entries on and below the diagonal are read; not positive definite raises
``gl.errors.NotPositiveDefinite``) and UMFPACK LU for "gen", "sym", "her"; float32/complex64
are solved in double precision and rounded back. CUDA backend: cuDSS (``NotCompiled("cudss")``
in a build without it).
"""

from __future__ import annotations

import re
from typing import Any, Optional

import numpy as np

from .. import _gpula
from .._log import logger, sync_level
from ..errors import Error, InvalidArgument
from ._matrix import _cast, _device, _dtype_name, as_csr, csr_matrix, is_sparse, result_dtype

_ASSUME = ("gen", "sym", "pos", "her")
_TRIANGLES = ("full", "lower", "upper")
_ORDERINGS = ("auto", "library", "level_set")


def _csr_arrays(a: Any, op: str = "sparse.DirectSolver"):
    """(rows, cols, data, indices, indptr) of a sparse matrix (anything as_csr takes), in its
    package: validated and canonical (csr_matrix)."""
    m = as_csr(a, op)
    return m.shape[0], m.shape[1], m.data, m.indices, m.indptr


def _package(x: Any) -> str:
    root = type(x).__module__.split(".")[0]
    return root if root in ("cupy", "torch") else "numpy"


def _contiguous(x: Any) -> Any:
    """x as a C-contiguous array of its own package (CuPy and PyTorch arrays stay on device)."""
    pkg = _package(x)
    if pkg == "torch":
        return x.contiguous()
    if pkg == "cupy":
        import cupy

        return cupy.ascontiguousarray(x)
    return np.ascontiguousarray(x)


def _dtype_of(x: Any) -> str:
    return str(x.dtype).replace("torch.", "")


class DirectSolver:
    """Solves ``A x = b`` for a sparse square ``A`` in phases.

    ``plan()`` (reordering and symbolic analysis), ``factorize()``, ``solve() -> x``;
    options: ``assume_a`` ('gen', 'sym', 'pos', 'her'), ``ordering``: 'auto' (default: on the
    GPU, gpula's parallel level-set nested dissection for n >= 131072 when its separators pass
    a quality check, else cuDSS's own; on the CPU, SuiteSparse's), 'library' (always the
    library's own) or 'level_set' (gpula's at any size; GPU only). ``ordering`` (after
    ``plan()``) names the one used: 'level_set', 'cudss', 'cholmod' or 'umfpack'.
    ``reset_operands(a=..., b=...)`` swaps in new values of the same pattern (the next
    ``factorize()`` reuses the plan; a different pattern raises ValueError naming what changed).
    Usable as a context manager (``free()`` on exit).

    Example:
        >>> import numpy as np, scipy.sparse as sp, gpula as gl
        >>> a = sp.csr_matrix(np.array([[4.0, 1.0], [1.0, 3.0]]))
        >>> with gl.sparse.DirectSolver(a, np.array([1.0, 2.0])) as s:
        ...     s.plan(); s.factorize(); x = s.solve()
        >>> np.allclose(a @ x, [1.0, 2.0])
        True
    """

    def __init__(self, a: Any, b: Any, options: Optional[dict] = None) -> None:
        opts = dict(options or {})
        assume = opts.pop("assume_a", opts.pop("matrix_type", "gen"))
        triangle = opts.pop("triangle", "full")
        ordering = opts.pop("ordering", "auto")
        if opts:
            raise ValueError(f"[sparse.DirectSolver] unknown options {sorted(opts)}")
        if assume not in _ASSUME:
            raise ValueError(f"[sparse.DirectSolver] assume_a must be one of {_ASSUME}, got {assume!r}")
        if triangle not in _TRIANGLES:
            raise ValueError(
                f"[sparse.DirectSolver] triangle must be one of {_TRIANGLES}, got {triangle!r}"
            )
        if ordering not in _ORDERINGS:
            raise ValueError(
                f"[sparse.DirectSolver] ordering must be one of {_ORDERINGS}, got {ordering!r}"
            )
        rows, cols, data, indices, indptr = _csr_arrays(a)
        self._shape = (rows, cols)
        self._dtype = _dtype_of(data)
        self._keep = (_contiguous(data), _contiguous(indices), _contiguous(indptr))
        self._impl = _gpula.SparseDirectSolver(
            rows, cols, self._keep[2], self._keep[1], self._keep[0], assume, triangle, ordering
        )
        self._b = self._check_b(b)

    def _check_b(self, b: Any) -> np.ndarray:
        if _package(b) == "numpy":
            b = np.asarray(b)
        if _dtype_of(b) != self._dtype:
            raise TypeError(f"[sparse.DirectSolver] b must have A's dtype {self._dtype}, got {b.dtype}")
        if b.ndim not in (1, 2) or b.shape[0] != self._shape[0]:
            raise ValueError(
                f"[sparse.DirectSolver] b must be ({self._shape[0]},) or ({self._shape[0]}, k), "
                f"got shape {b.shape}"
            )
        return _contiguous(b)

    def plan(self) -> None:
        """Reordering and symbolic analysis; the ordering chosen is logged at level INFO."""
        sync_level()
        self._impl.plan()

    @property
    def ordering(self) -> str:
        """The ordering the last ``plan()`` used ('' before): 'level_set', 'cudss', 'cholmod',
        'umfpack'."""
        return self._impl.ordering

    def factorize(self) -> None:
        self._impl.factorize()

    def solve(self) -> Any:
        """x in b's package and device (NumPy, CuPy or PyTorch)."""
        pkg = _package(self._b)
        if pkg == "torch":
            import torch

            x = torch.empty_like(self._b)
        elif pkg == "cupy":
            import cupy

            x = cupy.empty_like(self._b)
        else:
            x = np.empty_like(self._b)
        self._impl.solve(self._b, x)
        return x

    def reset_operands(self, a: Any = None, b: Any = None) -> None:
        if a is not None:
            rows, cols, data, indices, indptr = _csr_arrays(a)
            if _dtype_of(data) != self._dtype:
                raise TypeError(
                    f"[sparse.DirectSolver] a must keep dtype {self._dtype}, got {data.dtype}"
                )
            keep = (_contiguous(data), _contiguous(indices), _contiguous(indptr))
            self._impl.reset_matrix(rows, cols, keep[2], keep[1], keep[0])
        if b is not None:
            self._b = self._check_b(b)

    def free(self) -> None:
        self._impl.free()

    def __enter__(self) -> "DirectSolver":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.free()


DENSE_THRESHOLD = 0.05


def _renamed(e: Error, op: str) -> Error:
    """e (same type and attributes) with its message naming `op`, the call the user made,
    instead of the solver that op ran."""
    e.args = tuple(re.sub(r"^\[[^\]]*\]", f"[{op}]", a, count=1) if isinstance(a, str) else a for a in e.args)
    return e


def _sparse_like(x: Any, A: Any, b: Any) -> Any:
    """x (dense) as the sparse matrix scipy.sparse.linalg.spsolve returns for a sparse b: of A's
    class where A is scipy's, else of b's kind (gl.sparse.csr_matrix, scipy, cupyx, torch)."""
    if type(A).__module__.startswith("scipy.sparse"):
        return type(A)(x)
    if isinstance(b, csr_matrix):
        return csr_matrix(x)
    mod = type(b).__module__
    if mod.startswith("scipy.sparse"):
        import scipy.sparse as sp

        return sp.csr_matrix(x)
    if mod.startswith("cupyx"):
        import cupyx.scipy.sparse as csp

        return csp.csr_matrix(x)
    return x.to_sparse_csr()


def spsolve(A: Any, b: Any, assume_a: str = "gen") -> Any:
    """Solves ``A x = b`` once for a sparse square ``A``, as scipy.sparse.linalg.spsolve.

    ``b`` is (n,) or (n, k), dense or sparse; dtypes are promoted as scipy does (float32 with
    float64 -> float64, integers -> float64). A vector b ((n,) or (n, 1), dense or sparse)
    gives an (n,) x; a sparse b with k > 1 columns a sparse x (of A's class where A is a
    scipy matrix, else of b's kind). Above 5% density (NumPy A) it solves densely with
    gl.linalg.solve and logs that choice at INFO on gpula's logger; else a DirectSolver
    (SuiteSparse / cuDSS) with ``assume_a``. Errors name "sparse.spsolve".

    Example:
        >>> import numpy as np, scipy.sparse as sp, gpula as gl
        >>> A = sp.diags([4.0, 5.0, 6.0]).tocsr()
        >>> gl.sparse.spsolve(A, np.array([4.0, 10.0, 18.0], np.float32)).tolist()
        [1.0, 2.0, 3.0]
    """
    op = "sparse.spsolve"
    if assume_a not in _ASSUME:
        raise InvalidArgument(f"[{op}] assume_a must be one of {_ASSUME}, got {assume_a!r}")
    M = as_csr(A, op)
    n = M.shape[0]
    if M.shape[0] != M.shape[1]:
        raise InvalidArgument(f"[{op}] A must be square, got shape {M.shape}")
    sparse_b = is_sparse(b)
    bd = as_csr(b, op).to_dense() if sparse_b else (np.asarray(b) if _package(b) == "numpy" else b)
    package = _package(bd)
    if package != M.package or _device(bd, package) != M.device:
        raise InvalidArgument(
            f"[{op}] b must be a {M.package} array on {M.device} like A, got {package} on "
            f"{_device(bd, package)}"
        )
    if bd.ndim not in (1, 2) or bd.shape[0] != n:
        raise InvalidArgument(f"[{op}] b must have shape ({n},) or ({n}, k), got {tuple(bd.shape)}")
    dt = result_dtype(op, M.dtype, _dtype_name(bd))
    M = M.astype(dt, copy=False)
    bd = _contiguous(bd if _dtype_name(bd) == dt else _cast(bd, dt, package))
    vector = bd.ndim == 1 or bd.shape[1] == 1
    try:
        if n == 0:
            x = bd.copy() if package != "torch" else bd.clone()
        elif M.nnz / (n * n) > DENSE_THRESHOLD and package == "numpy":
            from .. import linalg

            logger.info("[%s] density %.3f > %.2f: dense path (gl.linalg.solve)", op, M.nnz / (n * n), DENSE_THRESHOLD)
            x = np.asarray(linalg.solve(M.to_dense(), bd))
        else:
            with DirectSolver(M, bd, {"assume_a": assume_a}) as s:
                s.plan()
                s.factorize()
                x = s.solve()
    except Error as e:
        raise _renamed(e, op) from None
    if vector:
        return x.reshape(n)
    return _sparse_like(x, A, b) if sparse_b else x
