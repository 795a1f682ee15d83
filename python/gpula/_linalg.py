"""gpula.linalg: dense factorizations and solvers (cuSOLVER on a GPU, LAPACK on the CPU).

Every function takes a batch ``(..., n, n)`` of float32, float64, complex64 or complex128
matrices (NumPy, CuPy, PyTorch or any DLPack array, read in place whatever its strides) and
follows NumPy/SciPy's conventions. Inputs are never written. Results are new contiguous arrays
in the package and on the device of the first operand (zero-copy from gpula's own memory),
produced on the package's current stream (or ``stream=``).

Right-hand sides follow numpy.linalg.solve (NumPy 2): a 1-D ``b`` of shape ``(n,)`` gives
``x`` of shape ``(..., n)``; otherwise ``b`` is ``(..., n, k)`` and its batch dimensions
broadcast against ``a``'s.

Common keyword arguments:
    check_info: True (default) raises gl.NotPositiveDefinite / gl.SingularMatrix (subclasses
        of numpy.linalg.LinAlgError) when a factorization fails, which waits for the device
        work; False does not wait and returns ``(result, info)`` instead, with ``info`` the int32
        LAPACK-style status of each matrix (batch shape; 0: success).
    device: None (where the data lives), "cpu", "cuda" or "cuda:N".
    fallback: None, or "cpu" to retry on the CPU when the GPU runs out of memory.
    stream: a torch.cuda.Stream, cupy.cuda.Stream or int handle (default: the package's
        current stream).

Example:
    >>> import numpy as np, gpula as gl
    >>> a = np.array([[4.0, 2.0], [2.0, 3.0]])
    >>> c = gl.linalg.cholesky(a)
    >>> c
    array([[2.        , 0.        ],
           [1.        , 1.41421356]])
    >>> gl.linalg.cho_solve(c, np.array([2.0, 1.0]))
    array([0.5, 0. ])
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _gpula, _interop, _log
from ._gpula import InvalidArgument

_package_of = _interop.package_of
_export = _interop.export
_stream_handle = _interop.stream_handle
_sync_log = _log.sync_level

# Package name -> the framework code linalg.cpp converts results to (3: generic DLPack).
_FRAMEWORK = {"numpy": 0, "torch": 1, "cupy": 2}
_ASSUME = ("gen", "pos", "sym")
_REFINE = {
    None: "none",
    "auto": "auto",
    "rbt": "rbt",
    "f32": "f32",
    "tf32": "tf32",
    "f16": "f16",
    "bf16": "bf16",
}


def _device(op: str, v: Any) -> str | None:
    if v is None:
        return None
    if isinstance(v, str) and (v in ("cpu", "cuda") or (v.startswith("cuda:") and v[5:].isdigit())):
        return v
    raise InvalidArgument(
        f"[linalg.{op}] device must be None, 'cpu', 'cuda' or 'cuda:N', got {v!r}"
    )


def _fallback(op: str, v: Any) -> bool:
    if v is None or v == "none":
        return False
    if v == "cpu":
        return True
    raise InvalidArgument(f"[linalg.{op}] fallback must be None or 'cpu', got {v!r}")


def _bool(op: str, name: str, v: Any) -> bool:
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    raise InvalidArgument(f"[linalg.{op}] {name} must be True or False, got {v!r}")


class _Call:
    """The package of the first operand, and what every native call takes besides operands."""

    __slots__ = ("dev", "kwargs", "pkg")

    def __init__(self, op: str, a: Any, check_info: Any, device: Any, fallback: Any, stream: Any):
        self.pkg = _package_of(a)
        self.dev = self.pkg.device_of(a)
        _sync_log()
        self.kwargs = {
            "check_info": _bool(op, "check_info", check_info),
            "device": _device(op, device),
            "fallback_cpu": _fallback(op, fallback),
            "framework": _FRAMEWORK.get(self.pkg.name, 3),
            "stream": self.pkg.current_stream(self.dev)
            if stream is None
            else _stream_handle(stream),
        }

    def out(self, r: Any) -> Any:
        """A native result in the caller's package (already so, except for generic DLPack)."""
        if r is None or self.kwargs["framework"] != 3:
            return r
        if self.dev is None:
            return np.from_dlpack(r)
        gpu = self.pkg._gpu()  # DLPackPackage: CuPy or torch on the GPU
        if gpu.name == "torch":
            return gpu.torch.from_dlpack(r)
        return gpu.cupy.from_dlpack(r)


def _with_info(call: _Call, value: Any, info: Any) -> Any:
    return value if call.kwargs["check_info"] else (value, call.out(info))


def cholesky(
    a: Any,
    lower: bool = True,
    *,
    check_info: bool = True,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
) -> Any:
    """Cholesky factor of Hermitian positive definite ``a`` (batched), as scipy.linalg.cholesky.

    ``lower=True``: L with ``a = L L^H``; else U with ``a = U^H U``. Only that triangle of ``a``
    is read; the other triangle of the result is zero. Raises gl.NotPositiveDefinite (``.order``:
    the failing leading minor, 1-based; ``.batch_index``) unless ``check_info=False``, which
    returns ``(factor, info)``.

    Example:
        >>> import numpy as np, gpula as gl
        >>> gl.linalg.cholesky(np.array([[4.0, 2.0], [2.0, 3.0]]), lower=False)
        array([[2.        , 1.        ],
               [0.        , 1.41421356]])
    """
    call = _Call("cholesky", a, check_info, device, fallback, stream)
    c, info = _gpula.linalg_cholesky(
        call.pkg.export(a), _bool("cholesky", "lower", lower), **call.kwargs
    )
    return _with_info(call, call.out(c), info)


def cho_solve(
    c: Any,
    b: Any,
    lower: bool = True,
    *,
    check_info: bool = True,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
) -> Any:
    """x with ``a x = b`` from the Cholesky factor ``c`` of ``a`` (as :func:`cholesky` returns it).

    Unlike scipy.linalg.cho_solve, ``c`` is the array itself (not a ``(c, lower)`` tuple; a tuple
    is accepted too). ``b`` is ``(n,)`` or ``(..., n, k)``.

    Example:
        >>> import numpy as np, gpula as gl
        >>> a = np.array([[4.0, 2.0], [2.0, 3.0]])
        >>> gl.linalg.cho_solve(gl.linalg.cholesky(a), np.array([[2.0], [1.0]]))
        array([[0.5],
               [0. ]])
    """
    if isinstance(c, tuple) and len(c) == 2 and isinstance(c[1], (bool, np.bool_)):
        c, lower = c
    call = _Call("cho_solve", c, check_info, device, fallback, stream)
    x = _gpula.linalg_cho_solve(
        call.pkg.export(c), _export(b), _bool("cho_solve", "lower", lower), **call.kwargs
    )
    return call.out(x)


def lu_factor(
    a: Any,
    *,
    check_info: bool = True,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
) -> Any:
    """LU with partial pivoting, as scipy.linalg.lu_factor: ``(lu, piv)``.

    ``lu`` packs unit-lower L below the diagonal and U on and above it, column-major per
    matrix as SciPy returns it (Fortran order for one matrix; no copy back from LAPACK's or
    cuSOLVER's layout; C order where it is copied from another device: ``device=``,
    ``fallback=``); ``piv`` holds 0-based int32 pivots (row i was interchanged with row
    piv[i]), shape ``(..., n)``. An exactly
    singular matrix raises gl.SingularMatrix (``.index``: the zero pivot U[i, i]) unless
    ``check_info=False``, which returns ``((lu, piv), info)``.

    Example:
        >>> import numpy as np, gpula as gl
        >>> lu, piv = gl.linalg.lu_factor(np.array([[1.0, 2.0], [3.0, 4.0]]))
        >>> piv
        array([1, 1], dtype=int32)
    """
    call = _Call("lu_factor", a, check_info, device, fallback, stream)
    lu, piv, info = _gpula.linalg_lu_factor(call.pkg.export(a), **call.kwargs)
    return _with_info(call, (call.out(lu), call.out(piv)), info)


def lu_solve(
    lu_piv: Any,
    b: Any,
    *,
    check_info: bool = True,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
) -> Any:
    """x with ``a x = b`` from :func:`lu_factor`'s ``(lu, piv)`` (scipy's too).

    Example:
        >>> import numpy as np, gpula as gl
        >>> a = np.array([[1.0, 2.0], [3.0, 4.0]])
        >>> gl.linalg.lu_solve(gl.linalg.lu_factor(a), np.array([5.0, 11.0]))
        array([1., 2.])
    """
    if not isinstance(lu_piv, (tuple, list)) or len(lu_piv) != 2:
        raise InvalidArgument(
            "[linalg.lu_solve] lu_piv must be the (lu, piv) pair lu_factor returns, got "
            f"{type(lu_piv).__name__}"
        )
    lu, piv = lu_piv
    call = _Call("lu_solve", lu, check_info, device, fallback, stream)
    x = _gpula.linalg_lu_solve(call.pkg.export(lu), _export(piv), _export(b), **call.kwargs)
    return call.out(x)


def solve(
    a: Any,
    b: Any,
    *,
    assume_a: str = "gen",
    lower: bool = False,
    refine: str | None = None,
    check_info: bool = True,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
) -> Any:
    """x with ``a x = b``, batched, with numpy.linalg.solve's shape rules.

    Args:
        assume_a: "gen" (LU with partial pivoting), "pos" (Cholesky; ``a`` Hermitian positive
            definite) or "sym" (symmetric indefinite; complex symmetric for complex types).
        lower: for "pos" and "sym", read ``a``'s lower triangle (else the upper), as scipy.
        refine: iterative refinement on a GPU for assume_a="gen": None (off); "rbt" (random
            butterfly transformation, LU without pivoting, refinement in working precision
            until ``||b - a x||_1 <= sqrt(n) eps ||a||_1 ||x||_1``; falls back to pivoted LU
            where that fails, e.g. for singular ``a``; synchronizes once per refinement step,
            also with ``check_info=False``); "auto" (the fastest that reaches
            working precision: "rbt" for n >= 512 on a GPU, else the plain solve); or a lower
            inner precision through cuSOLVER IRS: "f32", "tf32", "f16", "bf16". The CPU
            accepts every value and solves in working precision.

    Raises gl.SingularMatrix (gen, sym) or gl.NotPositiveDefinite (pos) unless
    ``check_info=False``, which returns ``(x, info)``.

    Example:
        >>> import numpy as np, gpula as gl
        >>> a = np.array([[3.0, 1.0], [1.0, 2.0]])
        >>> gl.linalg.solve(a, np.array([9.0, 8.0]))
        array([2., 3.])
        >>> gl.linalg.solve(a, np.array([9.0, 8.0]), assume_a="pos")
        array([2., 3.])
    """
    if assume_a not in _ASSUME:
        raise InvalidArgument(
            f"[linalg.solve] assume_a must be 'gen', 'pos' or 'sym', got {assume_a!r}"
        )
    if not (refine is None or isinstance(refine, str)) or refine not in _REFINE:
        raise InvalidArgument(
            "[linalg.solve] refine must be None, 'auto', 'rbt', 'f32', 'tf32', 'f16' or 'bf16', "
            "got "
            f"{refine!r}"
        )
    call = _Call("solve", a, check_info, device, fallback, stream)
    x, info = _gpula.linalg_solve(
        call.pkg.export(a),
        _export(b),
        assume_a,
        _REFINE[refine],
        _bool("solve", "lower", lower),
        **call.kwargs,
    )
    return _with_info(call, call.out(x), info)


def inv(
    a: Any,
    *,
    check_info: bool = True,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
) -> Any:
    """Inverse of each matrix. Raises gl.SingularMatrix unless ``check_info=False``, which
    returns ``(inverse, info)``.

    Example:
        >>> import numpy as np, gpula as gl
        >>> gl.linalg.inv(np.array([[2.0, 1.0], [1.0, 1.0]]))
        array([[ 1., -1.],
               [-1.,  2.]])
    """
    call = _Call("inv", a, check_info, device, fallback, stream)
    x, info = _gpula.linalg_inv(call.pkg.export(a), **call.kwargs)
    return _with_info(call, call.out(x), info)


def det(
    a: Any,
    *,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
) -> Any:
    """Determinant of each matrix (same dtype as ``a``; shape ``a.shape[:-2]``; 1 for n = 0).

    Singular matrices give 0, never an error.

    Example:
        >>> import numpy as np, gpula as gl
        >>> float(gl.linalg.det(np.array([[1.0, 2.0], [3.0, 4.0]])))
        -2.0
    """
    call = _Call("det", a, True, device, fallback, stream)
    return call.out(_gpula.linalg_det(call.pkg.export(a), **call.kwargs))


def slogdet(
    a: Any,
    *,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
) -> tuple[Any, Any]:
    """``(sign, logabsdet)`` of each matrix, as numpy.linalg.slogdet.

    ``sign`` has ``a``'s dtype (+-1, a unit complex number for complex ``a``, 0 when singular);
    ``logabsdet`` the real dtype (-inf when singular).

    Example:
        >>> import numpy as np, gpula as gl
        >>> sign, logabsdet = gl.linalg.slogdet(np.array([[1.0, 2.0], [3.0, 4.0]]))
        >>> float(sign), round(float(logabsdet), 6)
        (-1.0, 0.693147)
    """
    call = _Call("slogdet", a, True, device, fallback, stream)
    sign, logabsdet = _gpula.linalg_slogdet(call.pkg.export(a), **call.kwargs)
    return call.out(sign), call.out(logabsdet)


__all__ = ["cholesky", "cho_solve", "lu_factor", "lu_solve", "solve", "inv", "det", "slogdet"]
