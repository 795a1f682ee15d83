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

from typing import Any, Optional

import numpy as np

from .. import _gpula
from .._log import logger, sync_level

_ASSUME = ("gen", "sym", "pos", "her")
_TRIANGLES = ("full", "lower", "upper")
_ORDERINGS = ("auto", "library", "level_set")


def _csr_arrays(a: Any, shape: Optional[tuple] = None):
    """(rows, cols, data, indices, indptr) of a CSR-convertible matrix, as NumPy arrays."""
    try:  # gpula's own container (sparse-core), when present
        from ._matrix import as_csr  # type: ignore[import-not-found]

        m = as_csr(a, "sparse.DirectSolver") if shape is None else None
    except ImportError:
        m = None
    if m is None:
        if isinstance(a, tuple):
            if shape is None:
                raise ValueError("[sparse.DirectSolver] a (data, indices, indptr) tuple needs shape=")
            data, indices, indptr = (np.asarray(x) for x in a)
            return int(shape[0]), int(shape[1]), data, indices, indptr
        import scipy.sparse as sp

        if not sp.issparse(a) and all(hasattr(a, k) for k in ("data", "indices", "indptr", "shape")):
            if hasattr(a, "tocsr"):  # cupyx.scipy.sparse: any format to CSR on its device
                a = a.tocsr()
            return int(a.shape[0]), int(a.shape[1]), a.data, a.indices, a.indptr
        if not sp.issparse(a):
            raise TypeError(f"[sparse.DirectSolver] a must be a sparse matrix, got {type(a).__name__}")
        m = a.tocsr()
        if not m.has_canonical_format:
            m = m.copy()
            m.sum_duplicates()
    return int(m.shape[0]), int(m.shape[1]), m.data, m.indices, m.indptr


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


def spsolve(a: Any, b: Any, assume_a: str = "gen") -> np.ndarray:
    """One-off sparse solve ``A x = b``; above 5% density it solves densely (gl.linalg.solve)."""
    rows, cols, data, indices, indptr = _csr_arrays(a)
    density = data.size / max(rows * cols, 1)
    if density > DENSE_THRESHOLD and _package(data) == "numpy":
        from .. import linalg

        logger.info("[sparse.spsolve] density %.3f > %.2f: dense path", density, DENSE_THRESHOLD)
        import scipy.sparse as sp

        dense = sp.csr_matrix((data, indices, indptr), shape=(rows, cols)).toarray()
        return np.asarray(linalg.solve(dense, np.asarray(b)))
    with DirectSolver(a, b, {"assume_a": assume_a}) as s:
        s.plan()
        s.factorize()
        return s.solve()
