"""gpula.grouped_matmul and gpula.GroupedMatmul: many products of different sizes in one call,
in the layout mixture-of-experts layers use (tokens sorted by expert, per-expert offsets) or as
lists of independent pairs."""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from . import _gpula, _interop, _log, _options
from ._gpula import DTypeError, Epilog, InvalidArgument
from ._matmul import _scales, epilog_of
from .linalg._grouped import named_errors
from .linalg._operands import out_of_memory

_OP = "grouped_matmul"
_ALGOS = ("auto", "grouped_gemm", "per_group")


def _epilog(e: Any) -> Epilog:
    return epilog_of(e, _OP)


def _algo(a: Any) -> str:
    if not isinstance(a, str):
        raise DTypeError(f"[{_OP}] grouped_algo must be a str, got {type(a).__name__}")
    if a not in _ALGOS:
        raise InvalidArgument(f"[{_OP}] grouped_algo must be one of {', '.join(_ALGOS)}; got {a!r}")
    return a


def _is_list(x: Any) -> bool:
    return isinstance(x, (list, tuple))


def _export_offsets(offsets: Any) -> Any:
    """Offsets as C++ takes them: an array of any package (host or device), or a list of ints."""
    if offsets is None:
        return None
    if _is_list(offsets):
        arr = np.asarray(offsets) if len(offsets) else np.zeros(0, np.int64)
        if arr.dtype == object:
            raise DTypeError(f"[{_OP}] offsets must be integers, got {offsets!r}")
        offsets = arr
    return _interop.export(offsets, _OP, "offsets")


def _bias(epilog_inputs: Any, list_form: bool) -> Any:
    if epilog_inputs is None:
        return None
    if not isinstance(epilog_inputs, dict):
        raise DTypeError(f"[{_OP}] epilog_inputs must be a dict, got {type(epilog_inputs).__name__}")
    for k in epilog_inputs:
        if k != "bias":
            raise InvalidArgument(f"[{_OP}] unknown epilog input {k!r}; grouped_matmul takes 'bias'")
    bias = epilog_inputs.get("bias")
    if bias is None:
        return None
    if list_form != _is_list(bias):
        want = "a list of (N_i,) arrays" if list_form else "one (E, N) array"
        raise InvalidArgument(f"[{_OP}] epilog_inputs['bias'] must be {want}")
    if list_form:
        return [_interop.export(x, _OP, f"bias[{i}]") for i, x in enumerate(bias)]
    return _interop.export(bias, _OP, "bias")


def _given_bias(epilog_inputs: Any) -> Any:
    """The caller's bias (after _bias has checked epilog_inputs)."""
    return epilog_inputs.get("bias") if isinstance(epilog_inputs, dict) else None


def grouped_matmul(
    a: Any,
    b: Any,
    offsets: Any = None,
    *,
    epilog: Epilog | str | None = None,
    epilog_inputs: dict[str, Any] | None = None,
    options: Any = None,
    grouped_algo: str = "auto",
    stream: Any = None,
    quantization_scales: Any = None,
) -> Any:
    """Grouped matrix products: the mixture-of-experts layout, or lists of pairs.

    MoE form: ``a`` is (T, K) with its rows sorted by group, ``b`` is (E, K, N), and
    ``offsets`` (E,) holds cumulative end rows as in torch's ``F.grouped_mm(offs=...)``: group
    ``g`` is rows ``offsets[g-1]:offsets[g]`` of ``a`` (from 0 for g = 0) times ``b[g]``. The
    result is (T, N), in the package and on the device of ``a``; its rows past ``offsets[-1]``
    are zero. Offsets are int32 or int64 (a list of ints, or an array on the host or where
    ``a`` lives), non-decreasing, within [0, T]; empty groups are allowed. Offsets on a GPU are
    read on the host before the work is queued: one small device-to-host copy and a wait on the
    stream for it (the host needs each group's size to launch the products).

    List form: ``a`` and ``b`` are lists of 2-D arrays of one dtype and device, any sizes;
    returns the list of ``a[i] @ b[i]``.

    Epilogues, applied per group: DEFAULT, RELU, GELU, BIAS, RELU_BIAS, GELU_BIAS, with
    ``epilog_inputs={"bias": ...}`` of shape (E, N) (MoE form) or a list of (N_i,) arrays (list
    form); other epilogues raise gl.NotSupported. Types follow gl.matmul: float16, bfloat16,
    float32, float64 and complex (DEFAULT only) share one dtype, nothing is promoted (mixed
    dtypes raise gl.DTypeError), the result has the dtype of ``a`` unless
    ``options.result_type`` says otherwise; float8 with per-tensor ``quantization_scales`` on a
    GPU only.

    On a GPU, ``grouped_algo`` picks the path: ``"grouped_gemm"`` (one cuBLAS grouped GEMM
    call; DEFAULT epilogue, bfloat16/float16/float32), ``"per_group"`` (one cuBLASLt product per
    non-empty group, spread over a few streams, with fused epilogues and float8), or ``"auto"``
    (where grouped_gemm applies, chosen per call: grouped_gemm for groups of fewer than 256 rows
    on average, per_group for larger ones). The CPU runs BLAS per group. The planned form, :class:`GroupedMatmul`, keeps
    per-group plans across calls.

    Example:
        >>> import numpy as np, gpula as gl
        >>> tokens = np.arange(12, dtype=np.float32).reshape(6, 2)   # T = 6, K = 2
        >>> experts = np.stack([np.eye(2, dtype=np.float32), 2 * np.eye(2, dtype=np.float32)])
        >>> gl.grouped_matmul(tokens, experts, [2, 5])   # rows 0-1 by expert 0, 2-4 by expert 1
        array([[ 0.,  1.],
               [ 2.,  3.],
               [ 8., 10.],
               [12., 14.],
               [16., 18.],
               [ 0.,  0.]], dtype=float32)
        >>> [r.shape for r in gl.grouped_matmul([np.ones((3, 4)), np.ones((1, 2))],
        ...                                     [np.ones((4, 5)), np.ones((2, 7))])]
        [(3, 5), (1, 7)]
    """
    if _is_list(a) and not a:
        if not _is_list(b) or b:
            raise InvalidArgument(f"[{_OP}] a is an empty list; b must be one too")
        return []
    with GroupedMatmul(
        a,
        b,
        offsets,
        options=options,
        grouped_algo=grouped_algo,
        stream=stream,
        quantization_scales=quantization_scales,
    ) as g:
        g.plan(epilog, epilog_inputs)
        return g.execute(stream=stream)


class GroupedMatmul:
    """A planned grouped matmul: plan once, execute with new offsets every step.

    ``GroupedMatmul(a, b, offsets=None)`` checks the operands (the forms of
    :func:`grouped_matmul`); :meth:`plan` fixes the epilogue and its bias; :meth:`execute` runs
    it, with the offsets given here or new ones (MoE routing changes every step), and returns
    new results in the caller's package. Per-group GPU plans are made on first use of a group
    shape and kept. :meth:`reset_operands` swaps in arrays of the same layout. Use it as a
    context manager, or call :meth:`free`.

    Example:
        >>> import numpy as np, gpula as gl
        >>> x = np.random.rand(10, 4)
        >>> w = np.random.rand(3, 4, 5)
        >>> with gl.GroupedMatmul(x, w) as g:
        ...     g.plan(epilog="RELU_BIAS", epilog_inputs={"bias": np.zeros((3, 5))})
        ...     y1 = g.execute(offsets=[3, 3, 10])
        ...     y2 = g.execute(offsets=[5, 9, 10])
        >>> bool(np.allclose(y2[5:9], x[5:9] @ w[1]))
        True
    """

    __slots__ = ("_copies", "_device", "_g", "_list", "_lock", "_pkg", "_planned", "_refs",
                 "_stream")

    def __init__(
        self,
        a: Any,
        b: Any,
        offsets: Any = None,
        *,
        options: Any = None,
        grouped_algo: str = "auto",
        stream: Any = None,
        quantization_scales: Any = None,
    ) -> None:
        self._lock = threading.Lock()
        self._planned = False
        self._list = _is_list(a)
        if self._list != _is_list(b):
            which = "a is a list, b is not" if self._list else "b is a list, a is not"
            raise InvalidArgument(f"[{_OP}] a and b must both be arrays or both be lists: {which}")
        if self._list and offsets is not None:
            raise InvalidArgument(f"[{_OP}] offsets apply to the (T, K) x (E, K, N) form, not to lists")
        if self._list and not a:
            raise InvalidArgument(f"[{_OP}] a and b are empty lists: nothing to plan")
        first = a[0] if self._list else a
        pkg = _interop.package_of(first, _OP, "a[0]" if self._list else "a")
        if self._list:
            ea = [_interop.export(x, _OP, f"a[{i}]") for i, x in enumerate(a)]
            eb = [_interop.export(x, _OP, f"b[{i}]") for i, x in enumerate(b)]
        else:
            ea, eb = pkg.export(a), _interop.export(b, _OP, "b")
        eo = _export_offsets(offsets)
        if stream is not None:
            _interop.stream_handle(stream, _OP)  # checked now rather than at the first execute
        _log.sync_level()
        with named_errors(_OP, "options"):
            native = _options.native(options)
        self._g = _gpula.GroupedMatmul(
            ea,
            eb,
            eo,
            native,
            _algo(grouped_algo),
            _scales(quantization_scales),
        )
        self._pkg = pkg
        self._device = pkg.device_of(first)
        self._stream = stream
        # The C++ plan reads these arrays' memory: keep them (as exported) alive.
        self._refs: dict[str, Any] = {"a": ea, "b": eb, "offsets": eo, "bias": None}
        # gpula's own copies among them (materialized lazy views), ordered before work on
        # another stream (see execute).
        self._copies = {"a": _interop.copies(ea, a), "b": _interop.copies(eb, b), "bias": []}

    def _check(self, what: str) -> None:
        if self._g is None:
            raise InvalidArgument(f"[{_OP}] {what}() called after free()")

    def plan(self, epilog: Epilog | str | None = None, epilog_inputs: dict[str, Any] | None = None) -> None:
        """Fixes the epilogue (DEFAULT, RELU, GELU, BIAS, RELU_BIAS, GELU_BIAS) and its bias."""
        self._check("plan")
        _log.sync_level()
        e, bias = _epilog(epilog), _bias(epilog_inputs, self._list)
        with self._lock:
            self._check("plan")
            self._g.plan(e, bias)
            self._refs["bias"] = bias
            self._copies["bias"] = _interop.copies(bias, _given_bias(epilog_inputs))
            self._planned = True

    def execute(self, offsets: Any = None, stream: Any = None) -> Any:
        """Runs the plan; returns the (T, N) result (MoE form) or the list of results.

        ``offsets`` (MoE form) apply to this call only: a later call without them uses the
        constructor's (gpula keeps no reference to them). Device results are produced
        asynchronously on ``stream`` (default: the constructor's, else the package's current
        stream), except that offsets on a GPU are waited for (see :func:`grouped_matmul`).
        """
        self._check("execute")
        if not self._planned:
            raise InvalidArgument(f"[{_OP}] execute() called before plan()")
        if offsets is not None and self._list:
            raise InvalidArgument(f"[{_OP}] offsets apply to the (T, K) x (E, K, N) form, not to lists")
        eo = _export_offsets(offsets)
        s = self._stream if stream is None else stream
        handle = self._pkg.current_stream(self._device) if s is None else _interop.stream_handle(s, _OP)
        specs = self.output_specs()
        try:
            outs = [self._pkg.empty(shape, dtype, self._device, _OP) for _, shape, dtype in specs]
        except (MemoryError, RuntimeError) as e:
            oom = out_of_memory(_OP, "result", e)
            if oom is None:
                raise
            raise oom from e
        with self._lock:
            self._check("execute")
            made = [m for ms in self._copies.values() for m in ms]
            if made and s is not None:  # copies made on the current stream, read on s
                self._pkg.hand_over(made, handle, self._device)
            self._g.execute_into([self._pkg.export(o) for o in outs], eo, handle)
        return outs if self._list else outs[0]

    def reset_operands(self, a: Any = None, b: Any = None, epilog_inputs: dict[str, Any] | None = None) -> None:
        """Swaps in operands of the same layout (shape, strides, dtype, device); no re-planning."""
        self._check("reset_operands")
        op = "grouped_matmul.reset_operands"

        def exp(x: Any, name: str) -> Any:
            if x is None:
                return None
            if _is_list(x):
                return [_interop.export(v, op, f"{name}[{i}]") for i, v in enumerate(x)]
            return _interop.export(x, op, name)

        ea, eb = exp(a, "a"), exp(b, "b")
        bias = _bias(epilog_inputs, self._list)
        with self._lock:
            self._check("reset_operands")
            self._g.reset_operands(ea, eb, bias)
            for k, v, x in (("a", ea, a), ("b", eb, b), ("bias", bias, _given_bias(epilog_inputs))):
                if v is not None:
                    self._refs[k] = v
                    self._copies[k] = _interop.copies(v, x)

    def output_specs(self) -> list[tuple[str, tuple[int, ...], str]]:
        """``[(name, shape, dtype name)]`` of what :meth:`execute` returns."""
        self._check("output_specs")
        if not self._planned:
            raise InvalidArgument(f"[{_OP}] output_specs() called before plan()")
        return self._g.output_specs()

    @property
    def device(self) -> str:
        """Where the work runs: ``"cpu"`` or ``"cuda:N"``."""
        self._check("device")
        return self._g.device

    @property
    def algorithm(self) -> str:
        """The path the latest execute() took: ``"grouped_gemm"`` or ``"per_group"`` (``"auto"``
        before the first execute of an auto plan on a GPU, which chooses per call)."""
        self._check("algorithm")
        return self._g.algorithm

    def free(self) -> None:
        """Releases the plan's resources; the object cannot execute afterwards."""
        with self._lock:
            if self._g is not None:
                self._g.free()
                self._g = None
            self._refs = {}
            self._copies = {}

    def __enter__(self) -> GroupedMatmul:
        return self

    def __exit__(self, *exc: object) -> None:
        self.free()

    def __repr__(self) -> str:
        if self._g is None:
            return "<gpula.GroupedMatmul, freed>"
        state = "planned" if self._planned else "not planned"
        return f"<gpula.GroupedMatmul on {self._g.device}, {state}>"
