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
from .._interop import export, package_named
from .._log import logger, sync_level
from ..linalg._operands import all_finite
from ..errors import DTypeError, Error, InvalidArgument
from ._matrix import (
    _cast,
    _device,
    _dtype_name,
    as_csr,
    csr_matrix,
    is_sparse,
    renamed,
    result_dtype,
)

_ASSUME = ("gen", "sym", "pos", "her")
_TRIANGLES = ("full", "lower", "upper")
_ORDERINGS = ("auto", "library", "level_set")


_OP = "sparse.DirectSolver"


def _finite_matrix(m: csr_matrix, arg: str) -> csr_matrix:
    """m, after one scan of its values: gl.InvalidArgument naming `arg` where one is NaN or Inf
    (the factorizations would report a misleading singular matrix, or propagate them)."""
    if not all_finite(m.data):
        raise InvalidArgument(
            f"[{_OP}] {arg} must not contain infs or NaNs (its values hold NaN or Inf)"
        )
    return m


def _exported(m: csr_matrix) -> tuple[Any, Any, Any]:
    """m's (data, indices, indptr), contiguous, as the native solver takes them."""
    return tuple(export(_contiguous(x)) for x in (m.data, m.indices, m.indptr))  # type: ignore[return-value]


def _options(options: Any) -> tuple[str, str, str]:
    """(assume_a, triangle, ordering) of the options dict, checked."""
    if options is None:
        options = {}
    if not isinstance(options, dict):
        raise DTypeError(f"[{_OP}] options must be a dict or None, got {type(options).__name__}")
    opts = dict(options)
    assume = opts.pop("assume_a", opts.pop("matrix_type", "gen"))
    triangle = opts.pop("triangle", "full")
    ordering = opts.pop("ordering", "auto")
    if opts:
        raise InvalidArgument(
            f"[{_OP}] options: unknown keys {sorted(map(str, opts))} (known: assume_a, "
            "triangle, ordering)"
        )
    for name, value, allowed in (
        ("assume_a", assume, _ASSUME),
        ("triangle", triangle, _TRIANGLES),
        ("ordering", ordering, _ORDERINGS),
    ):
        if not isinstance(value, str) or value not in allowed:
            raise InvalidArgument(
                f"[{_OP}] options: {name} must be one of {allowed}, got {value!r}"
            )
    return assume, triangle, ordering


def _package(x: Any) -> str:
    root = type(x).__module__.split(".")[0]
    return root if root in ("cupy", "torch") else "numpy"


def _contiguous(x: Any) -> Any:
    """x as a C-contiguous array of its own package (CuPy and PyTorch arrays stay on device)."""
    return package_named(_package(x)).contiguous(x)


def _dtype_of(x: Any) -> str:
    return str(x.dtype).replace("torch.", "")


def _array(b: Any) -> Any:
    """b as an array: CuPy and PyTorch arrays as they are, anything else through NumPy."""
    return b if _package(b) != "numpy" else np.asarray(b)


def _safe_cast(src: str, dst: str) -> bool:
    try:
        return bool(np.can_cast(np.dtype(src), np.dtype(dst), "safe"))
    except TypeError:  # a dtype NumPy does not know (bfloat16)
        return False


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

    dtypes: A and b are promoted as scipy's spsolve does (integers and bool to float64, float16
    to float32, float32 with float64 to float64, real with complex to complex); that is the
    solver's dtype, and x's. A later b (``reset_operands(b=...)``) is converted to it where NumPy
    casts safely, else gl.DTypeError. A holding NaN or Inf raises gl.InvalidArgument; an A with
    no stored entries is singular (gl.SingularMatrix at ``plan()``).

    Example:
        >>> import numpy as np, scipy.sparse as sp, gpula as gl
        >>> a = sp.csr_matrix(np.array([[4.0, 1.0], [1.0, 3.0]]))
        >>> with gl.sparse.DirectSolver(a, np.array([1.0, 2.0])) as s:
        ...     s.plan(); s.factorize(); x = s.solve()
        >>> np.allclose(a @ x, [1.0, 2.0])
        True
    """

    def __init__(self, a: Any, b: Any, options: Optional[dict] = None) -> None:
        assume, triangle, ordering = _options(options)
        m = as_csr(a, _OP)
        bd = _array(b)
        dt = result_dtype(_OP, m.dtype, _dtype_of(bd), args=("A", "b"))  # as scipy's spsolve
        m = _finite_matrix(m.astype(dt, copy=False), "A")
        rows, cols = m.shape
        self._shape = (rows, cols)
        self._dtype = dt
        # Exported (a torch lazy view's values materialized: the raw tensor would be read without
        # its negative bit); the solver copies them at construction.
        keep = _exported(m)
        self._impl = _gpula.SparseDirectSolver(
            rows, cols, keep[2], keep[1], keep[0], assume, triangle, ordering
        )
        self._b = self._check_b(bd)

    def _check_b(self, b: Any) -> Any:
        """b as a contiguous array of the solver's dtype: converted where NumPy casts its dtype
        to that one safely (integers, bool, float16, byte order), else gl.DTypeError."""
        b = _array(b)
        got = _dtype_of(b)
        if got != self._dtype:
            if not _safe_cast(got, self._dtype):
                raise DTypeError(
                    f"[{_OP}] b must have the solver's dtype {self._dtype} (or one that converts "
                    f"to it safely), got {got}"
                )
            b = _cast(b, self._dtype, _package(b))
        if b.ndim not in (1, 2) or b.shape[0] != self._shape[0]:
            raise InvalidArgument(
                f"[{_OP}] b must have shape ({self._shape[0]},) or ({self._shape[0]}, k), "
                f"got {tuple(b.shape)}"
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
        pkg = package_named(_package(self._b))
        x = pkg.empty(tuple(self._b.shape), self._dtype, pkg.device_of(self._b), _OP)
        self._impl.solve(export(self._b), export(x))
        return x

    def reset_operands(self, a: Any = None, b: Any = None) -> None:
        """New values of A (same pattern, same dtype) and / or a new b (converted to the
        solver's dtype where that is safe); the next factorize() reuses the plan."""
        if a is not None:
            m = as_csr(a, _OP)
            if m.dtype != self._dtype:
                raise DTypeError(
                    f"[{_OP}] a must keep the solver's dtype {self._dtype}, got {m.dtype}"
                )
            m = _finite_matrix(m, "a")
            keep = _exported(m)
            self._impl.reset_matrix(m.shape[0], m.shape[1], keep[2], keep[1], keep[0])
        if b is not None:
            self._b = self._check_b(b)

    def free(self) -> None:
        self._impl.free()

    def __enter__(self) -> "DirectSolver":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.free()


DENSE_THRESHOLD = 0.05


def _sparse_like(x: Any, A: Any, b: Any) -> Any:
    """x (dense) as the sparse matrix scipy.sparse.linalg.spsolve returns for a sparse b: of A's
    class where A is scipy's, else of b's kind (gl.sparse.csr_matrix, scipy, cupyx, torch)."""
    if type(A).__module__.startswith("scipy.sparse"):
        return type(A)(x)
    if isinstance(b, csr_matrix):
        return csr_matrix(x)
    return package_named(_package(x)).sparse_csr(x)  # x is of b's package (A's, checked)


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
    dt = result_dtype(op, M.dtype, _dtype_name(bd), args=("A", "b"))
    M = M.astype(dt, copy=False)
    bd = _contiguous(bd if _dtype_name(bd) == dt else _cast(bd, dt, package))
    vector = bd.ndim == 1 or bd.shape[1] == 1
    try:
        if n == 0:
            x = package_named(package).copy(bd)
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
        raise renamed(e, op) from None
    if vector:
        return x.reshape(n)
    return _sparse_like(x, A, b) if sparse_b else x
