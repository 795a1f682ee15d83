"""gpula.matmul and gpula.Matmul: planned matrix multiplication with fused epilogues."""

from __future__ import annotations

import numbers
import threading
from typing import Any, Callable

from . import _gpula, _interop, _log, _options
from ._gpula import DTypeError, Epilog, InvalidArgument, OutOfMemory

_OP = "matmul"
_cached_matmul = _gpula.cached_matmul
_package_of = _interop.package_of
_known_package = _interop.known_package
_export = _interop.export
_stream_handle = _interop.stream_handle
_sync_log = _log.sync_level
_native = _options.native
_EPILOGS = {e.name: e for e in Epilog}
_DEFAULT_SCALES = (1.0, 1.0, 1.0)
_SCALAR_TYPES = (float, int, complex)  # taken as they are; anything else is checked

Result = Any  # an array, or (array, aux dict) with aux epilogues; not a Union: no narrowing


def epilog_of(e: Any, op: str = _OP) -> Epilog:
    """A gl.Epilog, its name (any case) or None (DEFAULT) as a gl.Epilog; typed errors naming
    op otherwise."""
    if e is None:
        return Epilog.DEFAULT
    if isinstance(e, Epilog):
        return e
    if isinstance(e, str) and e.upper() in _EPILOGS:
        return _EPILOGS[e.upper()]
    cls = InvalidArgument if isinstance(e, str) else DTypeError
    raise cls(f"[{op}] epilog must be a gl.Epilog or one of {', '.join(_EPILOGS)}; got {e!r}")


def _scalar(name: str, v: Any) -> Any:
    """alpha or beta as the binding takes it (beta=None stays None: beta not given)."""
    if type(v) in _SCALAR_TYPES or (v is None and name == "beta"):
        return v
    if isinstance(v, bool) or not isinstance(v, numbers.Complex):
        raise DTypeError(f"[matmul] {name} must be a number, got {type(v).__name__}")
    return float(v) if isinstance(v, numbers.Real) else complex(v)


def _scales(q: Any) -> tuple[float, float, float]:
    if q is None:
        return _DEFAULT_SCALES
    if isinstance(q, dict):
        for k in q:
            if k not in ("a", "b", "d"):
                raise InvalidArgument(
                    f"[matmul] unknown quantization scale '{k}'; expected 'a', 'b', 'd'"
                )
        q = (q.get("a", 1.0), q.get("b", 1.0), q.get("d", 1.0))
    if not isinstance(q, (tuple, list)) or len(q) != 3:
        raise InvalidArgument(
            f"[matmul] quantization_scales must be a dict of 'a', 'b', 'd' or a tuple (a, b, d), "
            f"got {q!r}"
        )
    for v in q:
        if not isinstance(v, numbers.Real) or isinstance(v, bool):
            raise DTypeError(f"[matmul] quantization scales must be real numbers, got {v!r}")
    return (float(q[0]), float(q[1]), float(q[2]))


def _inputs(epilog_inputs: Any) -> dict[str, Any] | None:
    if epilog_inputs is None:
        return None
    if not isinstance(epilog_inputs, dict):
        raise DTypeError(
            f"[matmul] epilog_inputs must be a dict, got {type(epilog_inputs).__name__}"
        )
    if not epilog_inputs:
        return None
    return {
        k: (None if v is None else _export(v, _OP, f"epilog_inputs[{k!r}]"))
        for k, v in epilog_inputs.items()
    }


_SCALE_MODES = ("automatic", "tensor", "row", "block128", "block128x128")


def _with_fp8(inputs: dict[str, Any] | None, scale_mode: Any, amax: Any) -> dict[str, Any] | None:
    """The exported epilog inputs plus the fp8 options the binding reads from them."""
    if scale_mode is None and amax is False:
        return inputs
    if not isinstance(amax, bool):
        raise DTypeError(f"[matmul] amax must be a bool, got {type(amax).__name__}")
    modes = scale_mode if isinstance(scale_mode, (tuple, list)) else (scale_mode, scale_mode)
    if len(modes) != 2 or not all(m is None or m in _SCALE_MODES for m in modes):
        raise InvalidArgument(
            f"[matmul] scale_mode must be None, one of {', '.join(_SCALE_MODES)}, or a pair "
            f"(a's, b's) of them; got {scale_mode!r}"
        )
    out = dict(inputs or {})
    out["scale_mode"] = tuple("automatic" if m is None else m for m in modes)
    if amax:
        out["amax"] = True
    return out


def _limit(preferences: Any) -> int:
    if preferences is None:
        return 8
    if isinstance(preferences, dict):
        for k in preferences:
            if k != "limit":
                raise InvalidArgument(f"[matmul] unknown plan preference '{k}'; expected 'limit'")
        limit = preferences.get("limit", 8)
    else:
        limit = getattr(preferences, "limit", None)
    if not isinstance(limit, int) or isinstance(limit, bool) or not 1 <= limit < 2**31:
        raise InvalidArgument(
            f"[matmul] preferences must be None or {{'limit': n}} with n >= 1, got {preferences!r}"
        )
    return limit


def _package_results(specs: list[tuple], outs: list[Any]) -> Result:
    if len(outs) == 1:
        return outs[0]
    return outs[0], {specs[i][0]: outs[i] for i in range(1, len(outs))}


def _out_of_memory(specs: list[tuple], e: BaseException) -> OutOfMemory:
    shapes = ", ".join(f"{name} {dtype} {shape}" for name, shape, dtype in specs)
    return OutOfMemory(f"[matmul] could not allocate the outputs ({shapes}): {e}")


class _FastPlans(threading.local):
    """This thread's executors of gl.matmul's fast path, keyed by the operands' layouts (the
    package's fast_key; the one epilogue input's with its name), alpha, the epilogue and the
    options: a repeated call of one layout skips the export of its operands, the binding's key
    and output specs, and goes straight to allocating its result and rebinding the cached plan's
    operand addresses (a 64^3 float32 NumPy product: 23 -> 15 us on a 2-core CPU host). Holds
    at most _FAST_CAPACITY plans (the C++ cache's size), emptied by gl.matmul_cache_clear()."""

    def __init__(self) -> None:
        self.plans: dict[Any, Callable] = {}


_fast = _FastPlans()
_FAST_CAPACITY = 64
_REAL_TYPES = (float, int)
_EPILOG_TYPES = (Epilog, str)
_OPTION_FIELDS = tuple(f for f in _options.FIELDS if f != "logger")
_HASHABLE_OPTION_TYPES = (type(None), str, int, float, bool, _gpula.ComputeType)
# The epilogue inputs the fast path rebinds, one per call: the bias of the *BIAS epilogues, the
# aux that DRELU / DRELU_BGRAD and DGELU / DGELU_BGRAD read (no epilogue takes two of them).
_FAST_INPUTS = ("bias", "relu_aux", "gelu_aux")


def _fast_key(
    pkg: Any, a: Any, b: Any, alpha: Any, epilog: Any, epilog_inputs: Any, options: Any
) -> tuple[Any, int, int, int] | None:
    """(key, address of a, of b, of the epilogue input or 0) for the fast path, or None: it
    takes operands of one package (tensor subclasses such as torch's Parameter too) that has a
    fast_key, at most one epilogue input among _FAST_INPUTS (keyed by its name and layout), and
    options that are None or a MatmulOptions without a logger (compared by value). The key
    starts with the package: operand keys of two packages never meet."""
    if _known_package(b) is not pkg or (epilog is not None and type(epilog) not in _EPILOG_TYPES):
        return None
    ka = pkg.fast_key(a)
    kb = None if ka is None else pkg.fast_key(b)
    if kb is None:
        return None
    kin, pin = None, 0
    if epilog_inputs is not None:
        if type(epilog_inputs) is not dict or len(epilog_inputs) != 1:
            return None
        ((name, x),) = epilog_inputs.items()
        if name not in _FAST_INPUTS or _known_package(x) is not pkg:
            return None
        fx = pkg.fast_key(x)
        if fx is None:
            return None
        kin, pin = (name, fx[0]), fx[1]
    okey = None
    if options is not None:
        if type(options) is not _options.MatmulOptions or options.logger is not None:
            return None
        okey = tuple(getattr(options, f) for f in _OPTION_FIELDS)
        if any(type(v) not in _HASHABLE_OPTION_TYPES for v in okey):
            return None
    return (pkg, ka[0], kb[0], kin, alpha, epilog, okey), ka[1], kb[1], pin



def matmul_cache_clear() -> None:
    """Empties the calling thread's matmul plan cache (the C++ cache and gl.matmul's fast path).

    Example:
        >>> import gpula as gl
        >>> gl.matmul_cache_clear()
        >>> gl.matmul_cache_size()
        0
    """
    _fast.plans.clear()
    _gpula.matmul_cache_clear()


def matmul(
    a: Any,
    b: Any,
    c: Any = None,
    *,
    alpha: complex = 1.0,
    beta: complex | None = None,
    epilog: Epilog | str | None = None,
    epilog_inputs: dict[str, Any] | None = None,
    options: Any = None,
    stream: Any = None,
    quantization_scales: Any = None,
    scale_mode: Any = None,
    amax: bool = False,
) -> Result:
    """``epilog(alpha * (a @ b) + beta * c)``, with numpy.matmul's shape rules.

    Operands are NumPy, CuPy or PyTorch arrays (anything with DLPack), read in place whatever
    their strides (read-only and negative-stride views too). The result comes back in the
    package and on the device of ``a``, computed where the data lives (the CPU for NumPy, the
    GPU and current stream for CUDA arrays); every call returns new arrays. ``beta`` is required
    when ``c`` is given (as in nvmath-python; ``c`` is never silently dropped). Epilogues that
    write aux outputs (``*_AUX*``, ``*BGRAD*``) return ``(result, aux)`` with ``aux`` a dict:
    ``"relu_aux"`` (a uint8 bitmask, shape (..., M, ceil(N/128)*16)), ``"gelu_aux"`` (the
    pre-activation, shape (..., M, roundup(N, 8))), or the bias gradient (``"drelu_bgrad"``,
    ``"dgelu_bgrad"``, ``"bgrada"``, ``"bgradb"``) or ``"amax"``. A plan is cached per thread,
    keyed by layouts and options, so repeated calls of one shape do not re-plan; threads never
    share it.

    Types: ``a`` and ``b`` share one dtype among float16, bfloat16, float32, float64, complex64,
    complex128 (float8 on a GPU). Unlike numpy.matmul, nothing is promoted: mixed dtypes, and
    integer or bool operands (whose NumPy product is exact integer arithmetic, which BLAS and
    cuBLASLt do not do), raise gl.DTypeError; convert first (``x.astype(np.float64)``).
    NaN and Inf propagate as in NumPy.

    Args:
        c: added as ``beta * c``; broadcasts to the result's shape. Needs ``beta``.
        epilog_inputs: ``{"bias": ...}`` (length N) for the ``*BIAS`` epilogues,
            ``{"relu_aux": ...}`` / ``{"gelu_aux": ...}`` (a forward call's aux) for DRELU/DGELU.
        options: a gl.MatmulOptions, a dict of its fields, or None.
        stream: a torch.cuda.Stream, cupy.cuda.Stream or int handle (default: the package's
            current stream).
        quantization_scales: float8 per-tensor scales, ``{"a": ..., "b": ..., "d": ...}``.
        scale_mode: how ``epilog_inputs["a_scale"]`` / ``["b_scale"]`` (float32 arrays on the
            operands' device; float8 only) apply: ``"tensor"`` (shape () or (1,)), ``"row"``
            (a: (M,), b: (N,)), ``"block128"`` (1x128 blocks along K; a: (M, ceil(K/128)) with
            strides (1, M), b: (ceil(K/128), N) contiguous), ``"block128x128"`` (a:
            (ceil(M/128), ceil(K/128)) contiguous, b: (ceil(K/128), ceil(N/128)) with strides
            (1, ceil(K/128))); a pair for (a, b), one name for both, or None (the default): from
            the shapes. These are gl.quantize_fp8's layouts (for b: of ``b.T``, transposed) and
            torch._scaled_mm's. cuBLASLt (12.9+, sm_90) pairs tensor with tensor, row with row,
            block128 with block128 or block128x128; row and block scales give float32,
            bfloat16 or float16 results (a float8 result takes tensor scales). ``"d_scale"``
            (shape ()) scales a float8 result. A wrong shape raises gl.InvalidArgument naming the shapes each mode expects;
            on the CPU, float8 raises gl.NotSupported.
        amax: also return ``aux["amax"]``, the float32 max ``|a_scale*a @ b_scale*b|`` (shape
            (), before ``d_scale``); float8 only. For a float8 result cuBLASLt computes it
            before rounding; for other results gpula reduces the result (within its rounding).

    Example:
        >>> import numpy as np, gpula as gl
        >>> x = np.arange(6, dtype=np.float32).reshape(2, 3)
        >>> w = np.ones((3, 2), np.float32)
        >>> gl.matmul(x, w)
        array([[ 3.,  3.],
               [12., 12.]], dtype=float32)
        >>> gl.matmul(x, w, np.ones((2, 2), np.float32), beta=0.5)
        array([[ 3.5,  3.5],
               [12.5, 12.5]], dtype=float32)
        >>> y, aux = gl.matmul(x, w, epilog=gl.Epilog.RELU_AUX_BIAS,
        ...                    epilog_inputs={"bias": np.array([-5.0, 0.0], np.float32)})
        >>> y
        array([[ 0.,  3.],
               [ 7., 12.]], dtype=float32)
        >>> aux["relu_aux"].shape
        (2, 16)
    """
    pkg = _package_of(a, _OP, "a")
    _sync_log()
    fast = None
    if (
        c is None and beta is None and stream is None and quantization_scales is None
        and scale_mode is None and amax is False and type(alpha) in _REAL_TYPES
    ):
        fast = _fast_key(pkg, a, b, alpha, epilog, epilog_inputs, options)
        if fast is not None:
            run = _fast.plans.get(fast[0])
            if run is not None:
                return run(None, fast[1], fast[2], fast[3])
    if type(alpha) not in _SCALAR_TYPES or beta is not None and type(beta) not in _SCALAR_TYPES:
        alpha, beta = _scalar("alpha", alpha), _scalar("beta", beta)
    # The exported operands (a torch conjugate view's resolved copy, for one) stay referenced
    # until the plan has run: the plan reads their memory.
    ea, eb = pkg.export(a), _export(b, _OP, "b")
    ec = None if c is None else _export(c, _OP, "c")
    inputs = _with_fp8(_inputs(epilog_inputs), scale_mode, amax)
    h, specs, generation = _cached_matmul(
        ea,
        eb,
        ec,
        alpha,
        beta,
        epilog_of(epilog),
        inputs,
        _native(options),
        _DEFAULT_SCALES if quantization_scales is None else _scales(quantization_scales),
    )
    device = pkg.device_of(a)
    if fast is not None:
        plans = _fast.plans
        if len(plans) >= _FAST_CAPACITY:
            plans.clear()
        run = plans[fast[0]] = _make_executor(
            h.execute_operands, specs, generation, pkg, device, None
        )
        return run(None, fast[1], fast[2], fast[3])
    try:
        outs = [pkg.empty(shape, dtype, device, _OP) for _, shape, dtype in specs]
    except MemoryError as e:
        raise _out_of_memory(specs, e) from e
    address = pkg.address_for(device, _OP)
    if stream is None:
        handle = pkg.current_stream(device)
    else:
        handle = _stream_handle(stream, _OP)
        made = _made_copies([(ea, a), (eb, b), (ec, c)], inputs, epilog_inputs)
        if made:  # materialized on the current stream, read on `stream`, dropped on return
            pkg.hand_over(made, handle, device)
    h.execute_into(outs if address is None else [address(o) for o in outs], handle, generation)
    return _package_results(specs, outs)


def _made_copies(pairs: list[tuple[Any, Any]], inputs: Any, originals: Any) -> list[Any]:
    """gpula's copies among exported operands: pairs (exported, original), and the exported
    epilogue inputs with the caller's dict of them."""
    pairs = [*pairs, *_input_pairs(inputs, originals).values()]
    return [m for e, x in pairs for m in _interop.copies(e, x)]


def _make_executor(
    run: Callable, specs: list[tuple], generation: int, pkg: Any, device: Any, default_stream: Any
) -> Callable[[Any], Result]:
    """A closure ``execute(stream, *pointers)`` with everything but the stream (and, for the
    function form's fast path, the operands' addresses: ``run(*pointers, outputs, stream,
    generation)``) decided in advance.

    Every call allocates fresh outputs: results belong to the caller, and concurrent calls from
    several threads each get their own.
    """
    allocs = tuple(pkg.allocator(shape, dtype, device, _OP) for _, shape, dtype in specs)
    address = pkg.address_for(device, _OP)
    current = pkg.stream_getter(device)
    if default_stream is not None:
        fixed = _stream_handle(default_stream, _OP)

        def current() -> int:
            return fixed

    def resolve(stream: Any) -> int:
        return _stream_handle(stream, _OP)

    if len(allocs) == 1:
        alloc = allocs[0]
        if address is None:

            def execute(stream: Any, *ptrs: int) -> Any:
                try:
                    r = alloc()
                except MemoryError as e:
                    raise _out_of_memory(specs, e) from e
                run(*ptrs, (r,), current() if stream is None else resolve(stream), generation)
                return r

        else:

            def execute(stream: Any, *ptrs: int) -> Any:
                try:
                    r = alloc()
                except MemoryError as e:
                    raise _out_of_memory(specs, e) from e
                handle = current() if stream is None else resolve(stream)
                run(*ptrs, (address(r),), handle, generation)
                return r

        return execute

    names = tuple(name for name, _, _ in specs[1:])

    def execute_aux(stream: Any, *ptrs: int) -> Result:
        try:
            outs = [f() for f in allocs]
        except MemoryError as e:
            raise _out_of_memory(specs, e) from e
        run(
            *ptrs,
            outs if address is None else [address(o) for o in outs],
            current() if stream is None else resolve(stream),
            generation,
        )
        return outs[0], dict(zip(names, outs[1:]))

    return execute_aux


def _input_pairs(inputs: Any, originals: Any) -> dict[str, tuple[Any, Any]]:
    """{"epilog_inputs[k]": (exported, original)} of the epilogue inputs given."""
    if not inputs or not isinstance(originals, dict):
        return {}
    return {f"epilog_inputs[{k}]": (inputs[k], x) for k, x in originals.items()
            if k in inputs and x is not None}


class Matmul:
    """A planned matrix multiplication: plan once, execute many times.

    ``Matmul(a, b, c, beta=...)`` checks the operands and fixes their layouts (``beta`` is
    required with ``c``); :meth:`plan` picks the epilogue and the algorithm; :meth:`execute`
    runs it (cheaply: a few microseconds of overhead) and returns new results in the caller's
    package; :meth:`reset_operands` swaps in new arrays of the same layout without planning
    again. Use it as a context manager, or call :meth:`free`, to release its resources.

    Threads: one Matmul may be used from several threads at once. Calls run one at a time (an
    execute never sees half of a reset_operands), and each execute returns its own arrays;
    threads that want to run in parallel use one Matmul each.

    Example:
        >>> import numpy as np, gpula as gl
        >>> a = np.random.rand(8, 4).astype(np.float32)
        >>> b = np.random.rand(4, 5).astype(np.float32)
        >>> bias = np.zeros(5, np.float32)
        >>> with gl.Matmul(a, b) as mm:
        ...     algorithms = mm.plan(epilog=gl.Epilog.RELU_BIAS, epilog_inputs={"bias": bias})
        ...     best = mm.autotune(iterations=3)
        ...     r = mm.execute()
        ...     mm.reset_operands(a=2 * a)
        ...     r2 = mm.execute()
        >>> bool(np.allclose(r2, 2 * r, rtol=1e-5))
        True
    """

    __slots__ = (
        "_copies",
        "_device",
        "_exec",
        "_freed",
        "_inputs",
        "_lock",
        "_mm",
        "_pkg",
        "_refs",
        "_stream",
    )

    def __init__(
        self,
        a: Any,
        b: Any,
        c: Any = None,
        *,
        alpha: complex = 1.0,
        beta: complex | None = None,
        options: Any = None,
        stream: Any = None,
        quantization_scales: Any = None,
    ) -> None:
        self._exec: Callable[[Any], Result] | None = None
        self._freed = False
        # Serializes plan, reset_operands and free with the Python references they keep, so that
        # the arrays kept alive are always those the C++ plan reads.
        self._lock = threading.Lock()
        pkg = _package_of(a, _OP, "a")
        ea, eb = pkg.export(a), _export(b, _OP, "b")
        ec = None if c is None else _export(c, _OP, "c")
        if stream is not None:
            _stream_handle(stream, _OP)  # checked now rather than at the first execute
        self._mm = _gpula.Matmul(
            ea,
            eb,
            ec,
            _scalar("alpha", alpha),
            _scalar("beta", beta),
            _native(options),
            _scales(quantization_scales),
        )
        self._pkg = pkg
        self._device = pkg.device_of(a)
        self._stream = stream
        # The C++ plan reads these arrays' memory: keep them (as exported) alive.
        self._refs: dict[str, Any] = {"a": ea, "b": eb, "c": ec}
        self._inputs: dict[str, Any] = {}
        # gpula's own copies among them (materialized lazy views), by operand: ordered before
        # work on another stream (hand_over).
        self._copies: dict[str, list[Any]] = {}
        self._note_copies({"a": (ea, a), "b": (eb, b), "c": (ec, c)})

    def _note_copies(self, pairs: dict[str, tuple[Any, Any]], new_inputs: bool = False) -> None:
        """Records the copies among newly exported operands (a new dict: execute reads it
        without the lock); new_inputs: the epilogue inputs are all new (plan)."""
        copies = {k: v for k, v in self._copies.items()
                  if not (new_inputs and k.startswith("epilog_inputs")) and k not in pairs}
        for name, (e, x) in pairs.items():
            made = _interop.copies(e, x)
            if made:
                copies[name] = made
        self._copies = copies

    def _check(self, what: str) -> None:
        if self._freed:
            raise InvalidArgument(f"[matmul] {what}() called after free()")

    def plan(
        self,
        epilog: Epilog | str | None = None,
        epilog_inputs: dict[str, Any] | None = None,
        preferences: Any = None,
        scale_mode: Any = None,
        amax: bool = False,
    ) -> list[dict[str, Any]]:
        """Fixes the epilogue; returns the candidate algorithms (dicts), best first.

        ``scale_mode`` and ``amax`` are :func:`gpula.matmul`'s (float8 scale tensors go in
        ``epilog_inputs``).

        Each dict has ``index``, ``algo_id`` (-1 on the CPU), ``tile``, ``stages``, ``split_k``,
        ``workspace_bytes``, ``waves_count``, ``time_ms`` and ``description``.
        ``preferences`` is None or ``{"limit": n}`` (how many candidates to ask for).

        Example:
            >>> import numpy as np, gpula as gl
            >>> mm = gl.Matmul(np.ones((4, 4)), np.ones((4, 4)))
            >>> len(mm.plan(epilog="RELU")) >= 1
            True
        """
        self._check("plan")
        _sync_log()
        e, inputs, limit = epilog_of(epilog), _inputs(epilog_inputs), _limit(preferences)
        inputs = _with_fp8(inputs, scale_mode, amax)
        with self._lock:
            self._check("plan")
            algos, specs, generation = self._mm.plan(e, inputs, limit)
            self._inputs = inputs or {}
            self._note_copies(_input_pairs(inputs, epilog_inputs), new_inputs=True)
            self._exec = _make_executor(
                self._mm.execute_into, specs, generation, self._pkg, self._device, self._stream
            )
        return algos

    def autotune(self, iterations: int = 3, stream: Any = None) -> dict[str, Any]:
        """Times every planned candidate ``iterations`` times and keeps the fastest.

        Synchronizes the stream. Returns the chosen algorithm (a dict as from :meth:`plan`,
        with ``time_ms``).
        """
        self._check("autotune")
        if not isinstance(iterations, int) or isinstance(iterations, bool):
            raise DTypeError(
                f"[matmul] autotune iterations must be an int, got {type(iterations).__name__}"
            )
        if not 1 <= iterations < 2**31:
            raise InvalidArgument(f"[matmul] autotune iterations must be >= 1, got {iterations}")
        s = self._stream if stream is None else stream
        handle = (
            self._pkg.stream_getter(self._device)() if s is None else _stream_handle(s, _OP)
        )
        return self._mm.autotune(iterations, handle)

    def execute(self, stream: Any = None) -> Result:
        """Runs the plan; returns the result, or ``(result, aux)`` for epilogues with aux outputs.

        Every call returns new arrays (a later call never overwrites an earlier result). Device
        results are produced asynchronously on ``stream`` (default: the stream given to the
        constructor, else the package's current stream). Results are allocated by their
        package on its current stream: when you run on another stream, keep them alive until
        that stream's work is done (torch: ``record_stream``), as with any cross-stream use.
        """
        run = self._exec
        if run is None:
            self._check("execute")
            raise InvalidArgument("[matmul] execute() called before plan()")
        if self._copies:
            self._hand_over(stream)
        return run(stream)

    def _hand_over(self, stream: Any) -> None:
        """Orders this plan's copies (materialized lazy views, made on the current stream)
        before work on an explicit other stream, and keeps their memory from reuse until it is
        done (reset_operands and free drop them)."""
        s = self._stream if stream is None else stream
        if s is not None:
            made = [m for ms in self._copies.values() for m in ms]
            self._pkg.hand_over(made, _stream_handle(s, _OP), self._device)

    def reset_operands(
        self,
        a: Any = None,
        b: Any = None,
        c: Any = None,
        epilog_inputs: dict[str, Any] | None = None,
    ) -> None:
        """Swaps in operands of the same layout (shape, strides, dtype, device); no re-planning.

        Raises gl.InvalidArgument (a ValueError) naming the operand whose layout differs.
        """
        self._check("reset_operands")
        new = {
            name: _export(x, "matmul.reset_operands", name)
            for name, x in (("a", a), ("b", b), ("c", c))
            if x is not None
        }
        inputs = _inputs(epilog_inputs)
        with self._lock:
            self._check("reset_operands")
            self._mm.reset_operands(new.get("a"), new.get("b"), new.get("c"), inputs)
            self._refs.update(new)
            given = {"a": a, "b": b, "c": c}
            self._note_copies({k: (e, given[k]) for k, e in new.items()})
            if inputs:
                self._inputs.update({k: v for k, v in inputs.items() if v is not None})
                self._note_copies(_input_pairs(inputs, epilog_inputs))

    def output_specs(self) -> list[tuple[str, tuple[int, ...], str]]:
        """``[(name, shape, dtype name)]`` of what :meth:`execute` returns, result first."""
        return self._mm.output_specs()

    @property
    def device(self) -> str:
        """Where the work runs: ``"cpu"`` or ``"cuda:N"``."""
        return self._mm.device

    def free(self) -> None:
        """Releases the plan's resources; the object cannot execute afterwards.

        Waits for calls running in other threads; their later calls raise gl.InvalidArgument.
        """
        with self._lock:
            if not self._freed:
                self._mm.free()
                self._freed = True
            self._exec = None
            self._refs = {}
            self._inputs = {}
            self._copies = {}

    def __enter__(self) -> Matmul:
        return self

    def __exit__(self, *exc: object) -> None:
        self.free()

    def __repr__(self) -> str:
        state = "freed" if self._freed else ("planned" if self._exec else "not planned")
        return f"<gpula.Matmul on {self._mm.device}, {state}>"
