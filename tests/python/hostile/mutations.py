"""What the suite does to an argument: each mutation takes the valid value and its Arg and returns
``(value for gpula, value for the reference)``; NotApplicable where it makes no sense.

Layout mutations keep the values (a negative-stride or strided view of the same numbers, the gaps
poisoned with NaN), so that a wrong read shows as a wrong answer.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import scipy.sparse as sp

from .core import HAS_TORCH, Arg, NotApplicable, torch_module

import gpula as gl

Mutation = Callable[[Any, Arg], tuple[Any, Any]]


def _same(v: Any) -> tuple[Any, Any]:
    return v, v


def _need(cond: bool) -> None:
    if not cond:
        raise NotApplicable


def _poke(v: np.ndarray, value: float) -> np.ndarray:
    _need(v.size > 0)
    w = v.copy()
    w.flat[0] = value
    return w


def _empty(v: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    shape = list(v.shape)
    for ax in axes:
        shape[ax] = 0
    return np.zeros(shape, v.dtype)


def _negstride(v: np.ndarray) -> np.ndarray:
    """The same values, read through negative strides on every axis."""
    idx = (slice(None, None, -1),) * v.ndim
    return v[idx].copy()[idx]


def _noncontig(v: np.ndarray) -> np.ndarray:
    """The same values, every other column of an array twice as wide (the gaps NaN)."""
    w = np.full(v.shape[:-1] + (2 * v.shape[-1],), np.nan, v.dtype)
    w[..., ::2] = v
    return w[..., ::2]


def _unaligned(v: np.ndarray) -> np.ndarray:
    """The same values at an odd address (NumPy's flags.aligned is False)."""
    _need(v.size > 0)
    buf = np.zeros(v.nbytes + 1, np.uint8)
    w = np.ndarray(v.shape, v.dtype, buffer=buf, offset=1)
    w[...] = v
    return w


def _giant(v: np.ndarray, a: Arg) -> np.ndarray:
    """The arg's huge view with its zero-stride axis 2**40 long: any copy or result is terabytes,
    so the call must refuse (a typed error: OutOfMemory or InvalidArgument) rather than try,
    crash or hang."""
    _need(a.huge is not None)
    h = a.huge(v)
    shape = [2**40 if st == 0 and n >= 10**5 else n for n, st in zip(h.shape, h.strides)]
    return np.lib.stride_tricks.as_strided(h, shape=shape, strides=h.strides, writeable=False)


def _readonly(v: np.ndarray) -> np.ndarray:
    w = v.copy()
    w.flags.writeable = False
    return w


def _ints(v: np.ndarray, dtype: Any) -> np.ndarray:
    return np.round(4 * v).astype(dtype)


def _torch() -> Any:
    if not HAS_TORCH:
        raise NotApplicable
    warnings.filterwarnings("ignore", "Sparse", UserWarning)  # torch's "beta" notes
    return torch_module()


def _tensor(v: np.ndarray) -> tuple[Any, Any]:
    return _torch().from_numpy(v.copy()), v


DENSE: dict[str, Callable[[np.ndarray, Arg], Any]] = {
    "nan": lambda v, a: _poke(v, np.nan),
    "inf": lambda v, a: _poke(v, np.inf),
    "empty": lambda v, a: _empty(v, (-2, -1) if a.kind == "mat" else (-1,)),
    "empty_rows": lambda v, a: (_need(a.kind == "mat"), _empty(v, (-2,)))[1],
    "empty_cols": lambda v, a: (_need(a.kind == "mat"), _empty(v, (-1,)))[1],
    "empty_batch": lambda v, a: (_need(a.batch), np.zeros((0, *v.shape), v.dtype))[1],
    "zero_stride": lambda v, a: np.broadcast_to(v[..., :1, :] if a.kind == "mat" else v[:1],
                                                v.shape),
    "bcast_batch": lambda v, a: (_need(a.batch), np.broadcast_to(v, (3, *v.shape)))[1],
    "huge": lambda v, a: (_need(a.huge is not None), a.huge(v))[1],
    "giant": _giant,
    "unaligned": lambda v, a: _unaligned(v),
    "negstride": lambda v, a: _negstride(v),
    "noncontig": lambda v, a: _noncontig(v),
    "fortran": lambda v, a: (_need(a.kind == "mat"), np.asfortranarray(v))[1],
    "readonly": lambda v, a: _readonly(v),
    "bigendian": lambda v, a: v.astype(v.dtype.newbyteorder(">")),
    "int32": lambda v, a: _ints(v, np.int32),
    "int64": lambda v, a: _ints(v, np.int64),
    "bool": lambda v, a: v > 0,
    "float16": lambda v, a: v.astype(np.float16),
    "zero_d": lambda v, a: (_need(v.size > 0), np.asarray(v.flat[0]))[1],
    "object": lambda v, a: v.astype(object),
    "list": lambda v, a: v.tolist(),
    "scalar": lambda v, a: 1.5,
    "none": lambda v, a: None,
    "str": lambda v, a: "abc",
    "dict": lambda v, a: {},
}

# ---------------------------------------------------------------------------------------------
# What a torch user sends: the same values through torch's lazy views and layouts (issue 17: a
# lazy conjugate view's materialized copy was freed before the plan that read it ran). Each
# gives (tensor for gpula, the materialized NumPy values for the reference); the suite applies
# them to every array argument at once (catalog.ALL), where the results must equal the
# reference's.


def _poison(dtype: Any) -> Any:
    return np.nan if np.dtype(dtype).kind in "fc" else 0


def _torch_neg(v: np.ndarray, a: Arg) -> tuple[Any, Any]:
    """A lazy negative view (torch's neg bit) of -v: the values of v, not yet negated."""
    _need(v.dtype.kind in "fc")
    return _torch()._neg_view(_torch().from_numpy(-v)), v


def _torch_conj(v: np.ndarray, a: Arg) -> tuple[Any, Any]:
    """A lazy conjugate view (torch's conj bit) of conj(v); complex arrays only."""
    _need(v.dtype.kind == "c")
    return _torch().from_numpy(v.conj().copy()).conj(), v


def _torch_conj_neg(v: np.ndarray, a: Arg) -> tuple[Any, Any]:
    """Both bits: the negative view of a conjugate view (complex arrays only)."""
    _need(v.dtype.kind == "c")
    torch = _torch()
    return torch._neg_view(torch.from_numpy(-v.conj()).conj()), v


def _torch_strided(v: np.ndarray, a: Arg) -> tuple[Any, Any]:
    """Every other element of the last axis of a twice-as-wide buffer that starts 3 elements
    into its storage (storage_offset 3); the gaps and the head poisoned."""
    torch = _torch()
    _need(v.ndim >= 1)
    shape = v.shape[:-1] + (2 * v.shape[-1],)
    buf = np.full(3 + int(np.prod(shape)), _poison(v.dtype), v.dtype)
    t = torch.from_numpy(buf)[3:].view(shape)[..., ::2]
    t.copy_(torch.from_numpy(v.copy()))
    return t, v


def _torch_t(v: np.ndarray, a: Arg) -> tuple[Any, Any]:
    """A matrix as the transposed view of its transpose (column-major strides); vectors as
    _torch_strided."""
    if a.kind != "mat" or v.ndim < 2:
        return _torch_strided(v, a)
    return _torch().from_numpy(np.swapaxes(v, -1, -2).copy()).transpose(-1, -2), v


def _torch_expand(v: np.ndarray, a: Arg) -> tuple[Any, Any]:
    """The first row (vectors: element) expanded over the others: zero strides."""
    src = v[..., :1, :] if a.kind == "mat" else v[..., :1]
    _need(src.size > 0)
    return _torch().from_numpy(src.copy()).expand(v.shape), np.broadcast_to(src, v.shape)


def _torch_param(v: np.ndarray, a: Arg) -> tuple[Any, Any]:
    """A torch.nn.Parameter (requires_grad, a Tensor subclass)."""
    _need(v.dtype.kind in "fc")
    return _torch().nn.Parameter(_torch().from_numpy(v.copy())), v


def _torch_grad(v: np.ndarray, a: Arg) -> tuple[Any, Any]:
    """A non-leaf tensor that requires grad (the output of an op on a Parameter)."""
    _need(v.dtype.kind in "fc")
    p = _torch().from_numpy(v.copy()).requires_grad_()
    return p * 1, v


def _bf16(v: np.ndarray, a: Arg) -> tuple[Any, Any]:
    """An ml_dtypes bfloat16 array; the reference gets its values as float32, the dtype gpula
    computes bfloat16 in (as numpy.linalg computes float16)."""
    _need(v.dtype.kind == "f")
    import ml_dtypes

    w = v.astype(ml_dtypes.bfloat16)
    return w, w.astype(np.float32)


TORCH_VIEWS: dict[str, Callable[[np.ndarray, Arg], tuple[Any, Any]]] = {
    "torch_neg": _torch_neg,
    "torch_conj": _torch_conj,
    "torch_conj_neg": _torch_conj_neg,
    "torch_strided": _torch_strided,
    "torch_t": _torch_t,
    "torch_expand": _torch_expand,
    "torch_param": _torch_param,
    "torch_grad": _torch_grad,
    "bf16": _bf16,
}

# Tensors that require grad: accepted (results without autograd history) or refused with a
# typed error (gpula.sparse's products are not differentiable).
AUTOGRAD = {"torch_param", "torch_grad"}

# Views an output cannot be written through: its memory does not hold the values as they read
# (lazy bits, zero strides), or a write would bypass autograd.
NOT_WRITABLE = {"torch_neg", "torch_conj", "torch_conj_neg", "torch_expand", "torch_param",
                "torch_grad"}

# Mutations that change a shape: the error may name the other argument of a mismatch.
SHAPE_CHANGES = {"empty", "empty_rows", "empty_cols", "empty_batch", "bcast_batch", "huge", "giant"}

# Inputs NumPy takes that every array-taking callable must take too (result equal to NumPy's).
LAYOUT_MUST = {"zero_stride", "bcast_batch", "negstride", "noncontig", "fortran", "readonly",
               "unaligned"}
# ... and that the NumPy-named callables (numpy_inputs=True) must take as NumPy does.
NUMPY_MUST = {"int32", "int64", "list"}


def dense(name: str) -> Mutation:
    if name == "torch":
        return lambda v, a: _tensor(np.asarray(v))
    if name in TORCH_VIEWS:
        return lambda v, a: TORCH_VIEWS[name](np.asarray(v), a)
    f = DENSE[name]
    return lambda v, a: _same(f(v, a))


# ---------------------------------------------------------------------------------------------
# Sparse matrices: the valid value is a canonical scipy CSR matrix.


def _arrays(S: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    return S.data.copy(), S.indices.copy(), S.indptr.copy()


def raw_csr(data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, shape: tuple) -> Any:
    """A scipy CSR matrix over exactly these arrays, with no checks (malformed ones too)."""
    m = sp.csr_matrix(shape)
    m.data, m.indices, m.indptr = data, indices, indptr
    return m


def _with(S: Any, edit: Callable[[np.ndarray, np.ndarray, np.ndarray], None]) -> Any:
    d, i, p = _arrays(S)
    edit(d, i, p)
    return raw_csr(d, i, p, S.shape)


def _set(a: np.ndarray, k: int, value: Any) -> None:
    a[k] = value


def _unsorted(S: Any) -> Any:
    d, i, p = _arrays(S)
    r = int(np.argmax(np.diff(p) >= 2))
    lo, hi = p[r], p[r + 1]
    d[lo:hi], i[lo:hi] = d[lo:hi][::-1].copy(), i[lo:hi][::-1].copy()
    return raw_csr(d, i, p, S.shape)


def _duplicates(S: Any) -> Any:
    """Row 0's first entry stored twice, half of its value in each."""
    d, i, p = _arrays(S)
    _need(p[1] > 0)
    d[0] /= 2
    d = np.insert(d, 1, d[0])
    i = np.insert(i, 1, i[0])
    p = p.copy()
    p[1:] += 1
    return raw_csr(d, i, p, S.shape)


def _nonmono(S: Any) -> Any:
    d, i, p = _arrays(S)
    p[1], p[2] = p[2], p[1]
    return raw_csr(d, i, p, S.shape)


class Duck:
    """A duck-typed CSR matrix: data, indices, indptr and shape, nothing else."""

    def __init__(self, S: Any):
        self.data, self.indices, self.indptr, self.shape = S.data, S.indices, S.indptr, S.shape


def _torch_csr(S: Any) -> Any:
    torch = _torch()
    return torch.sparse_csr_tensor(
        torch.from_numpy(S.indptr.astype(np.int64)), torch.from_numpy(S.indices.astype(np.int64)),
        torch.from_numpy(S.data.copy()), size=S.shape)


def _torch_coo(S: Any) -> Any:
    torch = _torch()
    c = S.tocoo()
    idx = torch.from_numpy(np.vstack([c.row, c.col]).astype(np.int64))
    return torch.sparse_coo_tensor(idx, torch.from_numpy(c.data.copy()), size=S.shape).coalesce()


def _readonly_csr(S: Any) -> Any:
    d, i, p = (_readonly(x) for x in _arrays(S))
    return raw_csr(d, i, p, S.shape)


SPARSE_BAD = {
    "idx_oob": lambda S: _with(S, lambda d, i, p: _set(i, 0, S.shape[1])),
    "idx_huge": lambda S: _with(S, lambda d, i, p: _set(i, 0, 10**8)),
    "idx_neg": lambda S: _with(S, lambda d, i, p: _set(i, 0, -1)),
    "indptr_past": lambda S: _with(S, lambda d, i, p: _set(p, 1, len(d) + 5)),
    "indptr_last": lambda S: _with(S, lambda d, i, p: _set(p, -1, len(d) + 3)),
    "indptr_nonmono": _nonmono,
    "indptr_first": lambda S: _with(S, lambda d, i, p: _set(p, 0, 1)),
    "duck_oob": lambda S: Duck(_with(S, lambda d, i, p: _set(i, 0, 10**8))),
}

SPARSE_VALID = {
    "nan": lambda S: _with(S, lambda d, i, p: _set(d, 0, np.nan)),
    "inf": lambda S: _with(S, lambda d, i, p: _set(d, 0, np.inf)),
    "unsorted": _unsorted,
    "duplicates": _duplicates,
    "empty": lambda S: sp.csr_matrix((0, 0)),
    "zero_nnz": lambda S: sp.csr_matrix(S.shape),
    "int_data": lambda S: raw_csr(_ints(S.data, np.int64), *_arrays(S)[1:], S.shape),
    "f16_data": lambda S: raw_csr(S.data.astype(np.float16), *_arrays(S)[1:], S.shape),
    "bigendian": lambda S: raw_csr(S.data.astype(">f8"), *_arrays(S)[1:], S.shape),
    "int64_index": lambda S: raw_csr(S.data.copy(), S.indices.astype(np.int64),
                                  S.indptr.astype(np.int64), S.shape),
    "readonly": _readonly_csr,
    "csc": lambda S: S.tocsc(),
    "coo": lambda S: S.tocoo(),
    "csr_array": lambda S: sp.csr_array(S.copy()),
    "dense": lambda S: S.toarray(),
}

# Other forms of the same valid matrix: (value for gpula, value for the reference).
SPARSE_FORMS = {
    "gl_csr": lambda S: (gl.sparse.csr_matrix((S.data.copy(), S.indices.copy(), S.indptr.copy()),
                                              shape=S.shape), S),
    "duck": lambda S: (Duck(S.copy()), S),
    "torch_csr": lambda S: (_torch_csr(S), S),
    "torch_coo": lambda S: (_torch_coo(S), S),
}

# torch_csr / torch_coo / duck alone are not here: a function may refuse to mix a torch (or
# duck-typed) matrix with NumPy operands, with a typed error; all:torch (all torch) must work.
SPARSE_MUST = {"unsorted", "duplicates", "int64_index", "readonly", "csc", "coo", "csr_array",
               "gl_csr"}


def sparse(name: str) -> Mutation:
    if name in SPARSE_FORMS:
        return lambda S, a: SPARSE_FORMS[name](S)
    if name in SPARSE_BAD:
        return lambda S, a: _same(SPARSE_BAD[name](S))
    if name in SPARSE_VALID:
        return lambda S, a: _same(SPARSE_VALID[name](S))
    f = DENSE[name]  # list, none, str, dict, scalar
    return lambda S, a: _same(f(S.toarray(), a))


SPARSE_NAMES = (*SPARSE_BAD, *SPARSE_VALID, *SPARSE_FORMS, "list", "scalar", "none", "str", "dict")

# ---------------------------------------------------------------------------------------------
# Integer arguments

INT = {
    "neg": lambda v: -1,
    "zero": lambda v: 0,
    "huge": lambda v: 2**62,
    "overflow": lambda v: 2**70,
    "float": lambda v: 1.5,
    "npint": lambda v: np.int64(v),
    "bool": lambda v: True,
    "none": lambda v: None,
    "str": lambda v: "3",
}


def integer(name: str) -> Mutation:
    return lambda v, a: _same(INT[name](v))


# ---------------------------------------------------------------------------------------------
# LAPACK pivots (int32, 0-based)


def _piv_set(p: np.ndarray, value: int) -> np.ndarray:
    w = p.copy()
    w[0] = value
    return w


PIV = {
    "oob": lambda p: _piv_set(p, len(p)),
    "neg": lambda p: _piv_set(p, -1),
    "huge": lambda p: _piv_set(p, 10**8),
    "float": lambda p: p.astype(np.float64),
    "int64": lambda p: p.astype(np.int64),
    "short": lambda p: p[:-1].copy(),
    "negstride": _negstride,
    "noncontig": lambda p: np.repeat(p, 2)[::2],
    "readonly": _readonly,
    "list": lambda p: p.tolist(),
    "none": lambda p: None,
}


def piv(name: str) -> Mutation:
    return lambda v, a: _same(PIV[name](v))


DENSE_NAMES = (*DENSE, "torch", "bf16")


def names_for(arg: Arg) -> tuple[str, ...]:
    return {"sparse": SPARSE_NAMES, "int": tuple(INT), "piv": tuple(PIV)}.get(arg.kind, DENSE_NAMES)


def get(arg: Arg, name: str) -> Mutation:
    return {"sparse": sparse, "int": integer, "piv": piv}.get(arg.kind, dense)(name)


def must_accept(arg: Arg, name: str, numpy_inputs: bool) -> bool:
    """Whether the contract says this mutated input is accepted wherever the reference takes it."""
    if arg.kind == "sparse":
        return name in SPARSE_MUST
    if arg.kind == "int":
        return name == "npint"
    if arg.kind == "piv":
        return name in ("int64", "negstride", "noncontig", "readonly", "list")
    return name in LAYOUT_MUST or (numpy_inputs and name in NUMPY_MUST)


def value_words(name: str) -> tuple[str, ...] | None:
    """What an error for this mutation should say about the value, besides the argument."""
    if name in ("nan", "inf"):
        return ("nan", "inf", "infs", "NaNs", "finite")
    if name == "bigendian":
        return ("big-endian", ">f8")
    if name in ("int32", "int64", "float16", "object", "bool"):
        return (name, "dtype")
    if name == "bf16":
        return ("bfloat16", "dtype")
    if name.startswith(("idx_", "indptr_", "duck_oob")):
        return ("indices", "indptr", "index", "range")
    return None
