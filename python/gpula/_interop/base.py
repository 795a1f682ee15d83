"""The interface every array-package adapter implements, and what they share: dtype names,
stream handles, the neutral names of messages, the one cached adapter of each package.

Every function that can raise takes the operation (``op``, "matmul", "linalg.cholesky", ...) and
where it helps the argument (``arg``) to name in its message. Both are optional for older call
sites, which get the neutral "[gpula] the operand ..."; new code passes them.

Devices come in two forms: the package's own (``device_of``: None for the host, a torch.device,
a CuPy device id), which allocation and conversion take, and a name ("cpu", "cuda:N"),
which messages and gl.sparse's ``device`` attribute show (``device_name``, ``device_from_name``).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .._gpula import DTypeError, InvalidArgument

# ml_dtypes' types by gpula dtype name, and the uint view that carries each through DLPack.
# ml_dtypes itself is imported only when a result of one of these types is made in NumPy
# (numpy_dtype): importing it costs about 0.5 s, most of `import gpula` otherwise. An operand
# of such a type needs no import: its producer has loaded ml_dtypes already.
ML_NAMES = ("bfloat16", "float8_e4m3fn", "float8_e5m2")
UINT_VIEW = {16: np.uint16, 8: np.uint8}

# The NumPy dtypes every NumPy has, by gpula dtype name.
NUMPY_DTYPES: dict[str, Any] = {
    n: np.dtype(n)
    for n in ("float16", "float32", "float64", "complex64", "complex128", "uint8", "int32", "int64")
}


def numpy_dtype(name: str) -> Any:
    """The NumPy dtype of gpula dtype `name` (ml_dtypes' for bfloat16/float8, imported here on
    first use), or None where NumPy has none (ml_dtypes missing, or an unknown name)."""
    dt = NUMPY_DTYPES.get(name)
    if dt is None and name in ML_NAMES:
        try:
            import ml_dtypes
        except ImportError:  # optional: bfloat16/float8 arrays in NumPy need it
            return None
        dt = NUMPY_DTYPES[name] = np.dtype(getattr(ml_dtypes, name))
    return dt


# For callers that do not pass `op`/`arg` (older call sites): a neutral name, never another
# operation's ("[matmul]" in a cholesky message misled).
DEFAULT_OP = "gpula"
DEFAULT_ARG = "the operand"
# Package name -> the code the native bindings take to hand results to that package
# (python/src/linalg_common.h: numpy 0, torch 1, cupy 2).
FRAMEWORK = {"numpy": 0, "torch": 1, "cupy": 2}


def zero() -> int:
    return 0


def stream_handle(stream: Any, op: str = DEFAULT_OP) -> int:
    """A cudaStream_t as an int from an int, a torch.cuda.Stream or a cupy.cuda.Stream."""
    h: Any
    if type(stream) is int:
        h = stream
    else:
        h = getattr(stream, "cuda_stream", None)  # torch
        if h is None:
            h = getattr(stream, "ptr", None)  # cupy
        if h is None or isinstance(stream, bool):
            raise DTypeError(
                f"[{op}] stream must be an int handle, a torch.cuda.Stream or a cupy.cuda.Stream, "
                f"got {type(stream).__name__}"
            )
        h = int(h)
    if not 0 <= h < 2**64:
        raise InvalidArgument(f"[{op}] stream handle must be a cudaStream_t address, got {h}")
    return h


def dtype_name(dt: Any, op: str = DEFAULT_OP, arg: str = "dtype") -> str:
    """gpula's name of a dtype given as a name, a NumPy/ml_dtypes type or a torch dtype."""
    if isinstance(dt, str):
        return dt
    mod = type(dt).__module__
    if mod.startswith("torch"):
        return str(dt).rsplit(".", 1)[-1]
    try:
        return np.dtype(dt).name
    except TypeError:
        raise DTypeError(f"[{op}] {arg} is not a dtype: {dt!r}") from None


class Package:
    """One array package: export of operands, allocation of results, streams, and the few
    array operations gpula's Python code needs in the caller's package (conversion to and from
    NumPy, casts, contiguous copies, random and identity matrices, sparse CSR objects)."""

    name = "?"

    def export(self, x: Any) -> Any:
        """What C++ receives for operand x: x, or (uint view, dtype name)."""
        return x

    def device_of(self, x: Any) -> Any:
        """The data device of x, in the form allocator() takes."""
        raise NotImplementedError

    def device_name(self, x: Any) -> str:
        """x's device as "cpu" or "cuda:N"."""
        raise NotImplementedError

    def device_from_name(self, name: str) -> Any:
        """The device named "cpu" or "cuda:N", in the form device_of() returns."""
        raise NotImplementedError

    def allocator(
        self, shape: tuple[int, ...], dtype: str, device: Any, op: str = DEFAULT_OP
    ) -> Callable[[], Any]:
        """A no-argument callable returning a fresh contiguous array."""
        raise NotImplementedError

    # Maps a result array to what execute_into takes (an int address); None: the array itself
    # (buffer protocol, cheaper than any Python-level pointer lookup).
    address: Callable[[Any], int] | None = None

    def address_for(self, device: Any, op: str = DEFAULT_OP) -> Callable[[Any], int] | None:
        """address for results on device."""
        return self.address

    def fast_key(self, x: Any) -> tuple[Any, int] | None:
        """(layout key, data address) of an operand for gpula.matmul's per-thread fast path:
        the key holds everything the plan depends on (dtype, shape, strides, device, pointer
        alignment on a GPU); None where this package has no fast path or x needs the full
        export (conjugate views, empty or unusual tensors)."""
        return None

    def hand_over(self, copies: list[Any], stream: int, device: Any) -> None:
        """Before work queued on ``stream`` reads ``copies`` (gpula's own copies of operands,
        see _interop.copies, made on the package's current stream): that stream waits for
        them, and their memory is not reused before its work is done, even once gpula drops
        them. Nothing where the package has no streams (or stream is the current one)."""
        return None

    def stream_getter(self, device: Any) -> Callable[[], int]:
        """A no-argument callable returning the package's current stream on device."""
        return zero

    # One-off forms of allocator() and stream_getter(), for the function form.
    def empty(
        self, shape: tuple[int, ...], dtype: str, device: Any, op: str = DEFAULT_OP
    ) -> Any:
        return self.allocator(shape, dtype, device, op)()

    def current_stream(self, device: Any) -> int:
        return self.stream_getter(device)()

    # ---- array operations in the package (NumPy, CuPy and torch implement them) ----

    def to_numpy(self, x: Any) -> np.ndarray:
        """x on the host as a NumPy array (a copy for device arrays)."""
        raise NotImplementedError

    def from_numpy(self, a: np.ndarray, device: Any) -> Any:
        """A contiguous array of this package on device with a's values (a itself where it
        already is one)."""
        raise NotImplementedError

    def from_dlpack(self, x: Any) -> Any:
        """An array of this package over x's memory (zero-copy, through DLPack)."""
        raise NotImplementedError

    def detach(self, x: Any) -> Any:
        """x without autograd history (torch); x itself elsewhere."""
        return x

    def copy(self, x: Any) -> Any:
        """A new array with x's values, on x's device."""
        return x.copy()

    def contiguous(self, x: Any) -> Any:
        """x as a C-contiguous array (x itself where it is one)."""
        raise NotImplementedError

    def astype(self, x: Any, dtype: str) -> Any:
        """A new array with x's values as dtype (a name; native byte order), on x's device."""
        raise NotImplementedError

    def eye(self, n: int, dtype: str, device: Any) -> Any:
        """The n x n identity on device."""
        raise NotImplementedError

    def randn(self, shape: tuple[int, ...], dtype: str, device: Any, seed: int) -> Any:
        """Seeded standard normal values (complex dtypes: real and imaginary parts) drawn on
        device by the package's own generator: deterministic for a given seed and package."""
        raise NotImplementedError

    def sparse_format(self, x: Any) -> str | None:
        """"csr", "coo" or "other" for a sparse array of this package's own sparse type (torch
        sparse tensors), None for anything else."""
        return None

    def sparse_csr(self, arg: Any, shape: tuple[int, int] | None = None) -> Any:
        """The package's sparse CSR matrix (scipy.sparse, cupyx.scipy.sparse, torch sparse CSR)
        from (data, indices, indptr) arrays of this package and shape, or from a dense 2-D
        array."""
        raise NotImplementedError


_by_name: dict[str, Package] = {}


def named(cls: type[Package]) -> Package:
    """The one adapter of cls's package, made on first use (which imports the package)."""
    p = _by_name.get(cls.name)
    if p is None:
        p = _by_name[cls.name] = cls()
    return p
