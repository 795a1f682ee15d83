"""gpula.linalg.eig / eigvals: general (non-symmetric) eigendecomposition (see gpula.linalg
for the common conventions and keyword arguments)."""

from __future__ import annotations

from typing import Any

from .. import _gpula
from ._operands import Call, operands_of, with_info
from ._results import EigResult


def eig(
    a: Any,
    *,
    check_finite: bool = True,
    check_info: bool = True,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
) -> Any:
    """Eigenvalues and right eigenvectors of general square ``a`` (batched), as
    numpy.linalg.eig: ``EigResult(eigenvalues, eigenvectors)``, ``(w, v)`` below.

    ``w`` (shape ``(..., n)``) and ``v`` (shape ``(..., n, n)``) are always complex, as
    numpy.linalg.eig returns them from NumPy 2.5 on, and as torch.linalg.eig and the array API
    do: complex64 for float32/complex64 ``a``, complex128 for float64/complex128, whatever the
    values (NumPy before 2.5 cast an all-real spectrum to a real dtype; ``w.real`` gives that).
    Column ``v[..., :, j]`` is a unit (2-norm) right eigenvector of ``w[..., j]``, so
    ``a @ v == v * w[..., None, :]``.
    Eigenvalues are not sorted; order and phases are LAPACK's (?geev on the CPU,
    cusolverDnXgeev on a GPU): for real ``a``, complex eigenvalues come in exactly conjugate
    pairs (positive imaginary part first), as do their eigenvectors. A solver that does not
    converge raises gl.LinAlgError unless ``check_info=False``, which returns
    ``((w, v), info)``. With ``check_finite=False``, NaN or Inf in a matrix gives NaN ``w`` and
    ``v`` for it, never a crash.

    Example:
        >>> import numpy as np, gpula as gl
        >>> w, v = gl.linalg.eig(np.array([[0.0, -1.0], [1.0, 0.0]]))
        >>> w
        array([0.+1.j, 0.-1.j])
    """
    (a,) = operands_of("eig", check_finite, a=a)
    call = Call("eig", a, check_info, device, fallback, stream)
    w, v, info = _gpula.linalg_eig(call.pkg.export(a), False, **call.kwargs)
    return with_info(call, EigResult(w, v), info)


def eigvals(
    a: Any,
    *,
    check_finite: bool = True,
    check_info: bool = True,
    device: str | None = None,
    fallback: str | None = None,
    stream: Any = None,
) -> Any:
    """Eigenvalues (shape ``(..., n)``, LAPACK's order) of general square ``a``, as
    numpy.linalg.eigvals; :func:`eig` without the eigenvectors, complex as there.

    Example:
        >>> import numpy as np, gpula as gl
        >>> gl.linalg.eigvals(np.array([[2.0, 1.0], [0.0, 3.0]]))
        array([2.+0.j, 3.+0.j])
    """
    (a,) = operands_of("eigvals", check_finite, a=a)
    call = Call("eigvals", a, check_info, device, fallback, stream)
    w, _, info = _gpula.linalg_eig(call.pkg.export(a), True, **call.kwargs)
    return with_info(call, w, info)


__all__ = ["eig", "eigvals"]
