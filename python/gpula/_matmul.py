"""gpula.matmul and gpula.Matmul: planned matrix multiplication with fused epilogues."""

from __future__ import annotations

from typing import Any, Callable, Union

from . import _gpula, _interop, _log, _options
from ._gpula import Epilog, InvalidArgument

_cached_matmul = _gpula.cached_matmul
_package_of = _interop.package_of
_export = _interop.export
_stream_handle = _interop.stream_handle
_sync_log = _log.sync_level
_native = _options.native
_EPILOGS = {e.name: e for e in Epilog}
_DEFAULT_SCALES = (1.0, 1.0, 1.0)

Result = Any  # an array, or (array, aux dict) with aux epilogues; not a Union: no narrowing


def _epilog(e: Any) -> Epilog:
    if e is None:
        return Epilog.DEFAULT
    if isinstance(e, Epilog):
        return e
    if isinstance(e, str) and e.upper() in _EPILOGS:
        return _EPILOGS[e.upper()]
    raise InvalidArgument(
        f"[matmul] epilog must be a gl.Epilog or one of {', '.join(_EPILOGS)}; got {e!r}"
    )


def _scales(q: Any) -> tuple[float, float, float]:
    if q is None:
        return _DEFAULT_SCALES
    if isinstance(q, dict):
        for k in q:
            if k not in ("a", "b", "d"):
                raise InvalidArgument(
                    f"[matmul] unknown quantization scale '{k}'; expected 'a', 'b', 'd'"
                )
        return (float(q.get("a", 1.0)), float(q.get("b", 1.0)), float(q.get("d", 1.0)))
    a, b, d = q  # a tuple (a, b, d)
    return (float(a), float(b), float(d))


def _inputs(epilog_inputs: Any) -> dict[str, Any] | None:
    if not epilog_inputs:
        return None
    if not isinstance(epilog_inputs, dict):
        raise TypeError(
            f"[matmul] epilog_inputs must be a dict, got {type(epilog_inputs).__name__}"
        )
    return {k: (None if v is None else _export(v)) for k, v in epilog_inputs.items()}


def _limit(preferences: Any) -> int:
    if preferences is None:
        return 8
    if isinstance(preferences, dict):
        for k in preferences:
            if k != "limit":
                raise InvalidArgument(f"[matmul] unknown plan preference '{k}'; expected 'limit'")
        return int(preferences.get("limit", 8))
    return int(preferences.limit)


def _package_results(specs: list[tuple], outs: list[Any]) -> Result:
    if len(outs) == 1:
        return outs[0]
    return outs[0], {specs[i][0]: outs[i] for i in range(1, len(outs))}


def matmul(
    a: Any,
    b: Any,
    c: Any = None,
    *,
    alpha: complex = 1.0,
    beta: complex = 0.0,
    epilog: Epilog | str | None = None,
    epilog_inputs: dict[str, Any] | None = None,
    options: Any = None,
    stream: Any = None,
    quantization_scales: Any = None,
) -> Result:
    """``epilog(alpha * (a @ b) + beta * c)``, with numpy.matmul's shape rules.

    Operands are NumPy, CuPy or PyTorch arrays (anything with DLPack), read in place whatever
    their strides. The result comes back in the package and on the device of ``a``, computed
    where the data lives (the CPU for NumPy, the GPU and current stream for CUDA arrays).
    Epilogues that write aux outputs (``*_AUX*``, ``*BGRAD*``) return ``(result, aux)`` with
    ``aux`` a dict: ``"relu_aux"`` (a uint8 bitmask, shape (..., M, ceil(N/128)*16)),
    ``"gelu_aux"`` (the pre-activation, shape (..., M, roundup(N, 8))), or the bias gradient
    (``"drelu_bgrad"``, ``"dgelu_bgrad"``, ``"bgrada"``, ``"bgradb"``). A plan is cached per
    thread, keyed by layouts and options, so repeated calls of one shape do not re-plan.

    Args:
        epilog_inputs: ``{"bias": ...}`` (length N) for the ``*BIAS`` epilogues,
            ``{"relu_aux": ...}`` / ``{"gelu_aux": ...}`` (a forward call's aux) for DRELU/DGELU.
        options: a gl.MatmulOptions, a dict of its fields, or None.
        stream: a torch.cuda.Stream, cupy.cuda.Stream or int handle (default: the package's
            current stream).
        quantization_scales: float8 per-tensor scales, ``{"a": ..., "b": ..., "d": ...}``.

    Example:
        >>> import numpy as np, gpula as gl
        >>> x = np.arange(6, dtype=np.float32).reshape(2, 3)
        >>> w = np.ones((3, 2), np.float32)
        >>> gl.matmul(x, w)
        array([[ 3.,  3.],
               [12., 12.]], dtype=float32)
        >>> y, aux = gl.matmul(x, w, epilog=gl.Epilog.RELU_AUX_BIAS,
        ...                    epilog_inputs={"bias": np.array([-5.0, 0.0], np.float32)})
        >>> y
        array([[ 0.,  3.],
               [ 7., 12.]], dtype=float32)
        >>> aux["relu_aux"].shape
        (2, 16)
    """
    pkg = _package_of(a)
    _sync_log()
    h = _cached_matmul(
        pkg.export(a),
        _export(b),
        None if c is None else _export(c),
        alpha,
        beta,
        _epilog(epilog),
        _inputs(epilog_inputs),
        _native(options),
        _DEFAULT_SCALES if quantization_scales is None else _scales(quantization_scales),
    )
    specs = h.output_specs()
    device = pkg.device_of(a)
    outs = [pkg.empty(shape, dtype, device) for _, shape, dtype in specs]
    address = pkg.address_for(device)
    h.execute_into(
        outs if address is None else [address(o) for o in outs],
        pkg.current_stream(device) if stream is None else _stream_handle(stream),
    )
    return _package_results(specs, outs)


def _make_executor(
    run: Callable, specs: list[tuple], pkg: Any, device: Any, default_stream: Any
) -> Callable[[Any], Result]:
    """A closure for Matmul.execute with everything but the stream decided in advance."""
    allocs = tuple(pkg.allocator(shape, dtype, device) for _, shape, dtype in specs)
    address = pkg.address_for(device)
    current = pkg.stream_getter(device)
    if default_stream is not None:
        fixed = _stream_handle(default_stream)

        def current() -> int:
            return fixed

    resolve = _stream_handle

    if len(allocs) == 1:
        alloc = allocs[0]
        if address is None:

            def execute(stream: Any) -> Any:
                r = alloc()
                run((r,), current() if stream is None else resolve(stream))
                return r

        else:

            def execute(stream: Any) -> Any:
                r = alloc()
                run((address(r),), current() if stream is None else resolve(stream))
                return r

        return execute

    names = tuple(name for name, _, _ in specs[1:])

    def execute_aux(stream: Any) -> Result:
        outs = [f() for f in allocs]
        run(
            outs if address is None else [address(o) for o in outs],
            current() if stream is None else resolve(stream),
        )
        return outs[0], dict(zip(names, outs[1:]))

    return execute_aux


class Matmul:
    """A planned matrix multiplication: plan once, execute many times.

    ``Matmul(a, b, c)`` checks the operands and fixes their layouts; :meth:`plan` picks the
    epilogue and the algorithm; :meth:`execute` runs it (cheaply: a few microseconds of
    overhead) and returns results in the caller's package; :meth:`reset_operands` swaps in new
    arrays of the same layout without planning again. Use it as a context manager, or call
    :meth:`free`, to release its resources.

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

    __slots__ = ("_device", "_exec", "_freed", "_inputs", "_mm", "_pkg", "_refs", "_stream")

    def __init__(
        self,
        a: Any,
        b: Any,
        c: Any = None,
        *,
        alpha: complex = 1.0,
        beta: complex = 0.0,
        options: Any = None,
        stream: Any = None,
        quantization_scales: Any = None,
    ) -> None:
        self._exec: Callable[[Any], Result] | None = None
        self._freed = False
        pkg = _package_of(a)
        ea, eb = pkg.export(a), _export(b)
        ec = None if c is None else _export(c)
        self._mm = _gpula.Matmul(
            ea,
            eb,
            ec,
            alpha,
            beta,
            _native(options),
            _scales(quantization_scales),
        )
        self._pkg = pkg
        self._device = pkg.device_of(a)
        self._stream = stream
        # The C++ plan reads these arrays' memory: keep them (as exported) alive.
        self._refs: dict[str, Any] = {"a": ea, "b": eb, "c": ec}
        self._inputs: dict[str, Any] = {}

    def _check(self, what: str) -> None:
        if self._freed:
            raise InvalidArgument(f"[matmul] {what}() called after free()")

    def plan(
        self,
        epilog: Epilog | str | None = None,
        epilog_inputs: dict[str, Any] | None = None,
        preferences: Any = None,
    ) -> list[dict[str, Any]]:
        """Fixes the epilogue; returns the candidate algorithms (dicts), best first.

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
        inputs = _inputs(epilog_inputs)
        algos = self._mm.plan(_epilog(epilog), inputs, _limit(preferences))
        self._inputs = inputs or {}
        self._exec = _make_executor(
            self._mm.execute_into, self._mm.output_specs(), self._pkg, self._device, self._stream
        )
        return algos

    def autotune(self, iterations: int = 3, stream: Any = None) -> dict[str, Any]:
        """Times every planned candidate ``iterations`` times and keeps the fastest.

        Synchronizes the stream. Returns the chosen algorithm (a dict as from :meth:`plan`,
        with ``time_ms``).
        """
        self._check("autotune")
        s = self._stream if stream is None else stream
        handle = self._pkg.stream_getter(self._device)() if s is None else _stream_handle(s)
        return self._mm.autotune(iterations, handle)

    def execute(self, stream: Any = None) -> Result:
        """Runs the plan; returns the result, or ``(result, aux)`` for epilogues with aux outputs.

        Device results are produced asynchronously on ``stream`` (default: the stream given to
        the constructor, else the package's current stream). Results are allocated by their
        package on its current stream: when you run on another stream, keep them alive until
        that stream's work is done (torch: ``record_stream``), as with any cross-stream use.
        """
        run = self._exec
        if run is None:
            self._check("execute")
            raise InvalidArgument("[matmul] execute() called before plan()")
        return run(stream)

    def reset_operands(
        self,
        a: Any = None,
        b: Any = None,
        c: Any = None,
        epilog_inputs: dict[str, Any] | None = None,
    ) -> None:
        """Swaps in operands of the same layout (shape, strides, dtype, device); no re-planning.

        Raises ValueError naming the operand whose layout differs.
        """
        self._check("reset_operands")
        new = {name: _export(x) for name, x in (("a", a), ("b", b), ("c", c)) if x is not None}
        inputs = _inputs(epilog_inputs)
        self._mm.reset_operands(new.get("a"), new.get("b"), new.get("c"), inputs)
        self._refs.update(new)
        if inputs:
            self._inputs.update({k: v for k, v in inputs.items() if v is not None})

    def output_specs(self) -> list[tuple[str, tuple[int, ...], str]]:
        """``[(name, shape, dtype name)]`` of what :meth:`execute` returns, result first."""
        return self._mm.output_specs()

    @property
    def device(self) -> str:
        """Where the work runs: ``"cpu"`` or ``"cuda:N"``."""
        return self._mm.device

    def free(self) -> None:
        """Releases the plan's resources; the object cannot execute afterwards."""
        if not self._freed:
            self._mm.free()
            self._freed = True
        self._exec = None
        self._refs = {}
        self._inputs = {}

    def __enter__(self) -> Matmul:
        return self

    def __exit__(self, *exc: object) -> None:
        self.free()

    def __repr__(self) -> str:
        state = "freed" if self._freed else ("planned" if self._exec else "not planned")
        return f"<gpula.Matmul on {self._mm.device}, {state}>"
