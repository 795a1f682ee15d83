"""gpula.linalg.expm / matrix_power / multi_dot: matrix functions composed of gpula's matmul and
solve, where the data lives (see gpula.linalg for the common conventions).

expm is the scaling and squaring method of Al-Mohy and Higham (SIAM J. Matrix Anal. Appl. 31,
2009), as scipy.linalg.expm: a Pade approximant r_m of degree m in {3, 5, 7, 9, 13} chosen from
the 1-norms of A's powers, evaluated with a few GEMMs and one solve, on A / 2^s, then squared s
times. Each matrix of a batch gets its own s (the squarings of those that need fewer are masked
off); the degree is the largest any matrix needs. The norms come to the host as one small
vector per power (the only synchronizations).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import _interop
from .._gpula import InvalidArgument, OutOfMemory
from ._operands import (
    array_module,
    as_array,
    contig,
    like,
    mm,
    np_dtype,
    operands_of,
    promoted,
    real_np_dtype,
)
from ._solve import inv, solve

# Pade coefficients b_0..b_m of r_m (Higham 2005, Table 2.3 of Al-Mohy and Higham 2009).
_PADE = {
    3: (120.0, 60.0, 12.0, 1.0),
    5: (30240.0, 15120.0, 3360.0, 420.0, 30.0, 1.0),
    7: (17297280.0, 8648640.0, 1995840.0, 277200.0, 25200.0, 1512.0, 56.0, 1.0),
    9: (17643225600.0, 8821612800.0, 2075673600.0, 302702400.0, 30270240.0, 2162160.0,
        110880.0, 3960.0, 90.0, 1.0),
    13: (64764752532480000.0, 32382376266240000.0, 7771770303897600.0, 1187353796428800.0,
         129060195264000.0, 10559470521600.0, 670442572800.0, 33522128640.0, 1323241920.0,
         40840800.0, 960960.0, 16380.0, 182.0, 1.0),
}
# theta_m: the largest ||A|| for which r_m is accurate to double precision (2009, Table 3.1).
_THETA = {3: 1.495585217958292e-2, 5: 2.539398330063230e-1, 7: 9.504178996162932e-1,
          9: 2.097847961257068e0, 13: 4.25e0}
# 1 / |c_{2m+1}|: the leading coefficient of r_m's backward error series (2009, eq. (5.1)).
_ELL_C = {3: 100800.0, 5: 10059033600.0, 7: 4487938430976000.0, 9: 5914384781877411840000.0,
          13: 113250775606021113483283660800000000.0}
_FLOAT = ("float32", "float64", "complex64", "complex128")


def _onenorm(x: Any) -> np.ndarray:
    """The 1-norm (largest column sum) of each matrix of x, on the host (batch shape)."""
    return np.asarray(_to_host(abs(x).sum(-2)), dtype=np.float64).max(-1, initial=0.0)


def _to_host(x: Any) -> np.ndarray:
    return x if isinstance(x, np.ndarray) else _interop.package_of(x).to_numpy(x)


def _per_matrix(a: Any, x: np.ndarray) -> Any:
    """Host values of batch shape as a (..., 1, 1) array of a's real dtype where a lives."""
    return like(a, np.ascontiguousarray(np.asarray(x, dtype=real_np_dtype(a))[..., None, None]))


def _ell(a: Any, m: int) -> np.ndarray:
    """Al-Mohy and Higham's extra squarings ell(A, m) per matrix: where the backward error bound
    |c_{2m+1}| || |A|^{2m+1} || / ||A|| exceeds the unit roundoff. || |A|^p ||_1 of the
    non-negative |A|^p is the largest entry of 1^T |A|^p, so p vector-matrix products give it."""
    absa = abs(a)
    v = absa.sum(-2, keepdims=True)  # 1^T |A|
    for _ in range(2 * m):
        v = mm(v, absa)
    num = np.asarray(_to_host(v), dtype=np.float64).max(-1, initial=0.0)[..., 0]
    den = _onenorm(a) * _ELL_C[m]
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)
        val = np.ceil(np.log2(np.where(alpha > 0, alpha, 1.0) / 2.0**-53) / (2 * m))
    return np.where(alpha > 0, np.maximum(val, 0), 0).astype(np.int64)


def _pade(a: Any, powers: dict[int, Any], m: int, eye: Any) -> Any:
    """r_m(A) = (V - U)^-1 (V + U) from A's even powers A^2, A^4, A^6 (in `powers`)."""
    b = _PADE[m]
    if m == 13:
        a2, a4, a6 = powers[2], powers[4], powers[6]
        u = mm(a, mm(a6, b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4
               + b[3] * a2 + b[1] * eye)
        v = mm(a6, b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 \
            + b[0] * eye
    else:
        u_sum = b[1] * eye
        v = b[0] * eye
        for k in range(2, m + 1, 2):
            u_sum = u_sum + b[k + 1] * powers[k]
            v = v + b[k] * powers[k]
        u = mm(a, u_sum)
    return solve(v - u, v + u, check_finite=False)


def _renamed(op: str, f: Callable[[], Any]) -> Any:
    """f(), with an OutOfMemory of a gpula call inside (a matmul's) naming linalg.<op> and a."""
    try:
        return f()
    except OutOfMemory as e:
        if str(e).startswith(f"[linalg.{op}]"):
            raise
        raise OutOfMemory(f"[linalg.{op}] a: out of memory: {e}") from None


def expm(a: Any, *, check_finite: bool = True) -> Any:
    """The matrix exponential of each square matrix of ``a`` (batched), as scipy.linalg.expm:
    scaling and squaring with a Pade approximant of degree 3 to 13 (Al-Mohy and Higham 2009),
    GEMM-bound, where the data lives. Same shape as ``a``; float32/float64/complex input keeps
    its dtype, bool and integers give float64 and float16 float32 (numpy.linalg's promotion).
    ``check_finite`` as in the other functions.

    Example:
        >>> import numpy as np, gpula as gl
        >>> gl.linalg.expm(np.array([[0.0, 1.0], [0.0, 0.0]]))
        array([[1., 1.],
               [0., 1.]])
    """
    (a,) = operands_of("expm", check_finite, a=a)
    return _renamed("expm", lambda: _expm(a))


def _expm(a: Any) -> Any:
    shape = tuple(a.shape)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise InvalidArgument(f"[linalg.expm] a: expected (..., n, n), got shape {shape}")
    n = shape[-1]
    pkg = _interop.package_of(a)
    if math.prod(shape) == 0:
        return pkg.copy(a)
    if n == 1:
        return contig(array_module(a).exp(a))
    eye = pkg.eye(n, np_dtype(a).name, pkg.device_of(a))
    powers = {2: mm(a, a)}
    powers[4] = mm(powers[2], powers[2])
    powers[6] = mm(powers[4], powers[2])
    d4 = _onenorm(powers[4]) ** 0.25
    d6 = _onenorm(powers[6]) ** (1 / 6)
    eta = np.maximum(d4, d6)
    for m in (3, 5):
        if np.all(eta <= _THETA[m]) and not np.any(_ell(a, m)):
            return contig(_pade(a, powers, m, eye))
    powers[8] = mm(powers[4], powers[4])
    d8 = _onenorm(powers[8]) ** 0.125
    eta = np.maximum(d6, d8)
    for m in (7, 9):
        if np.all(eta <= _THETA[m]) and not np.any(_ell(a, m)):
            return contig(_pade(a, powers, m, eye))
    d10 = _onenorm(mm(powers[4], powers[6])) ** 0.1
    eta = np.minimum(eta, np.maximum(d8, d10))
    with np.errstate(divide="ignore"):
        s = np.maximum(np.ceil(np.log2(np.where(eta > 0, eta, 1.0) / _THETA[13])), 0)
    s = s.astype(np.int64)
    del powers[8]  # r_13 is built from A^2, A^4, A^6
    if np.any(s):
        a = a * _per_matrix(a, 2.0 ** -s)
        powers = {k: p * _per_matrix(a, 2.0 ** (-s * k)) for k, p in powers.items()}
    ell = _ell(a, 13)
    if np.any(ell):
        a = a * _per_matrix(a, 2.0 ** -ell)
        powers = {2: mm(a, a)}
        powers[4] = mm(powers[2], powers[2])
        powers[6] = mm(powers[4], powers[2])
        s = s + ell
    x = _pade(a, powers, 13, eye)
    top = int(s.max(initial=0))
    uniform = bool(np.all(s == top))
    xp = array_module(x)
    for j in range(top):
        sq = mm(x, x)
        x = sq if uniform else xp.where(like(x, np.ascontiguousarray((s > j)[..., None, None])),
                                        sq, x)
    return contig(x)


def _mul(a: Any, b: Any) -> Any:
    """a @ b: gpula's matmul for the float types linalg computes in, else the package's own
    (integer and bool matrices, as NumPy multiplies them)."""
    name = _dtype_name(a)
    if name in _FLOAT and name == _dtype_name(b):
        return mm(a, b)
    return a @ b


def _dtype_name(x: Any) -> str:
    return str(x.dtype).replace("torch.", "")


def matrix_power(a: Any, n: int) -> Any:
    """``a`` (a batch of square matrices) raised to the integer power ``n``, as
    numpy.linalg.matrix_power: the identity for ``n == 0``, ``inv(a)`` raised to ``-n`` for
    ``n < 0``, otherwise binary powering (about 2 log2(n) matmuls). Integer and bool matrices
    are multiplied as NumPy does, by the array package itself (negative powers go through inv,
    giving float64). Always a new array.

    Example:
        >>> import numpy as np, gpula as gl
        >>> gl.linalg.matrix_power(np.array([[1.0, 1.0], [0.0, 1.0]]), 3)
        array([[1., 3.],
               [0., 1.]])
    """
    a = as_array(a, "linalg.matrix_power", "a")
    shape = tuple(a.shape)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise InvalidArgument(f"[linalg.matrix_power] a: expected (..., n, n), got shape {shape}")
    if isinstance(n, (bool, np.bool_)) or not hasattr(n, "__index__"):
        raise TypeError("exponent must be an integer")
    n = int(n.__index__())
    pkg = _interop.package_of(a)
    if n == 0:
        eye = pkg.eye(shape[-1], np_dtype(a).name, pkg.device_of(a))
        return contig(eye * array_module(a).ones_like(a))
    if n < 0:
        a = inv(a)
        n = -n
    elif n == 1:
        return pkg.copy(a)
    z = result = None
    while n > 0:
        z = a if z is None else _mul(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else _mul(result, z)
    return contig(result)


def _chain_order(dims: list[int]) -> list[list[int]]:
    """The split points of the cheapest parenthesization of a chain of matrices whose shapes
    are (dims[i], dims[i + 1]): the standard O(n^3) dynamic program (Cormen et al. 15.2)."""
    n = len(dims) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = -1
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] < 0 or c < cost[i][j]:
                    cost[i][j] = c
                    split[i][j] = k
    return split


def _chain(arrays: list[Any], split: list[list[int]], i: int, j: int) -> Any:
    if i == j:
        return arrays[i]
    k = split[i][j]
    return _mul(_chain(arrays, split, i, k), _chain(arrays, split, k + 1, j))


def multi_dot(arrays: Any, *, out: Any = None) -> Any:
    """The product of two or more matrices in the cheapest order, as numpy.linalg.multi_dot:
    the parenthesization that needs the fewest scalar multiplications (dynamic programming over
    the chain), each product by gpula's matmul. A 1-D first array is a row vector and a 1-D last
    one a column vector, and those dimensions are dropped from the result (both 1-D: a 0-d
    result); every other array must be 2-D. Operands are promoted to their common type
    (float types as numpy.linalg; integers are multiplied by the array package). ``out``, when
    given, receives the result and is returned.

    Example:
        >>> import numpy as np, gpula as gl
        >>> a, b, c = np.ones((10, 100)), np.ones((100, 5)), np.ones((5, 50))
        >>> gl.linalg.multi_dot([a, b, c]).shape
        (10, 50)
    """
    arrays = [as_array(x, "linalg.multi_dot", f"arrays[{i}]") for i, x in enumerate(arrays)]
    if len(arrays) < 2:
        raise InvalidArgument("[linalg.multi_dot] expecting at least two arrays")
    first, last = arrays[0].ndim, arrays[-1].ndim
    if first == 1:
        arrays[0] = arrays[0].reshape(1, -1)
    if last == 1:
        arrays[-1] = arrays[-1].reshape(-1, 1)
    for i, x in enumerate(arrays):
        if x.ndim != 2:
            raise InvalidArgument(
                f"[linalg.multi_dot] arrays[{i}]: {x.ndim}-dimensional array given; "
                "array must be two-dimensional"
            )
    for i in range(len(arrays) - 1):
        if arrays[i].shape[1] != arrays[i + 1].shape[0]:
            raise InvalidArgument(
                f"[linalg.multi_dot] shapes {tuple(arrays[i].shape)} (arrays[{i}]) and "
                f"{tuple(arrays[i + 1].shape)} (arrays[{i + 1}]) do not align"
            )
    named = {f"arrays[{i}]": x for i, x in enumerate(arrays)}
    promoted("linalg.multi_dot", list(named.items()))  # a DTypeError for what is not numbers
    if len({_interop.package_of(x).name for x in arrays}) > 1 or all(
        _dtype_name(x) in _FLOAT for x in arrays
    ):
        arrays = operands_of("multi_dot", False, **named)
    dims = [int(arrays[0].shape[0])] + [int(x.shape[1]) for x in arrays]
    r = _chain(arrays, _chain_order(dims), 0, len(arrays) - 1)
    if first == 1 and last == 1:
        r = r.reshape(())
        if out is None and isinstance(r, np.ndarray):
            return r[()]  # NumPy's scalar
    elif first == 1 or last == 1:
        r = r.reshape(-1)
    r = contig(r)
    if out is None:
        return r
    out[...] = r
    return out


__all__ = ["expm", "matrix_power", "multi_dot"]
