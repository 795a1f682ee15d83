"""How gpula.torch registers its operators with PyTorch: ``torch.library.Library("gpula",
"FRAGMENT")`` with ``define`` + ``impl`` and ``register_fake``, and a lean Autograd-key kernel,
which costs a fraction of ``torch.library.custom_op``'s eager dispatch (that one wraps every call
in dynamo's disable context, checks aliasing and rebuilds its arguments; bench/bench_torch.py).

``@op("name")`` over a Python function with type annotations defines ``gpula::name`` (the schema
inferred from them, as custom_op does) and returns an :class:`Op`. Calling the Op in eager mode
runs the kernel when no gradient is needed and through one ``torch.autograd.Function`` when one
is; under torch.compile it calls the operator, which AOTAutograd traces with the fake
implementation and differentiates through the same Autograd kernel. ``torch.ops.gpula.name``
behaves the same (one more Python frame).

The kernel runs in one dispatcher pass below autograd, or, for ops made with
``@op("name", direct=True)``, as a plain Python call where that pass could only have reached the
same kernel (:func:`_dispatch_free`: no dispatch or function mode, functorch transform, JIT
tracer or profiler; dense CPU/CUDA tensors of class Tensor or Parameter). That pass (arguments
to IValues and back, twice) is a fifth of a small layer's host time: a 64x64 Linear forward
without grad went from 69 to 55 us, mostly by skipping it (float32 CPU tensors, 2-core host).
``direct`` is for ops whose callers pass every argument as the schema's type, which the
dispatcher would otherwise convert or refuse: gpula.torch's layers, which check their arguments
first, and the ops' own backwards.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import torch
from torch import _C

from ..errors import NotSupported

LIB = torch.library.Library("gpula", "FRAGMENT")

_below_autograd = _C._AutoDispatchBelowAutograd
_grad_enabled = _C.is_grad_enabled
_any_requires_grad = _C._any_requires_grad
_compiling = torch.compiler.is_compiling
# The dispatcher states _dispatch_free checks: private torch functions (present in torch 2.4 to
# 2.11); where one is missing, direct ops always take the dispatcher.
try:
    _dispatch_modes = _C._len_torch_dispatch_stack
    _function_modes = _C._is_torch_function_mode_enabled
    _functorch = _C._are_functorch_transforms_active
    _tracing = _C._is_tracing
    _profiling = _C._autograd._profiler_enabled
    _DIRECT_OK = True
except AttributeError:  # pragma: no cover - another torch
    _DIRECT_OK = False
_PLAIN_TYPES = (torch.Tensor, torch.nn.Parameter)


def _is_list(t: Any) -> bool:
    return isinstance(t, torch.ListType)


def _is_tensor(t: Any) -> bool:
    """Tensor or Tensor? in a schema."""
    if isinstance(t, torch.OptionalType):
        t = t.getElementType()
    return isinstance(t, torch.TensorType)


def _dispatch_free(args: tuple, nargs: int, tensors: tuple[int, ...],
                   lists: tuple[int, ...]) -> bool:
    """Whether the dispatcher, called below autograd with args (nargs of them: tensors at the
    indices `tensors`, None allowed; lists of tensors at `lists`), could only run the op's
    CompositeExplicitAutograd kernel on them as they are, so that calling the kernel is the same:
    no TorchDispatchMode (fake tensors, make_fx, export, FlopCounterMode), TorchFunctionMode,
    functorch transform (vmap, grad, functionalize), JIT tracer or profiler (which records the
    op) is active, and every tensor is a Tensor or Parameter (no subclass: DTensor, FakeTensor,
    ...) on the CPU or a CUDA device (not meta: the fake implementation runs there), neither
    nested nor an efficient zero tensor (which the dispatcher materializes). Conjugate and
    negative views need no check: gpula's matmul resolves them as the dispatcher would."""
    if not _DIRECT_OK or len(args) != nargs:
        return False
    if _dispatch_modes() or _function_modes() or _functorch() or _tracing() or _profiling():
        return False
    for i in tensors:
        t = args[i]
        if t is not None and not (type(t) in _PLAIN_TYPES and (t.is_cpu or t.is_cuda)
                                  and not t.is_nested and not t._is_zerotensor()):
            return False
    for i in lists:
        for t in args[i]:
            if not (type(t) in _PLAIN_TYPES and (t.is_cpu or t.is_cuda) and not t.is_nested
                    and not t._is_zerotensor()):
                return False
    return True


class Op:
    """An operator ``gpula::<name>``: one Python kernel for every device (gpula's own errors for
    devices it lacks), a fake implementation (:meth:`register_fake`) and autograd
    (:meth:`register_autograd`; without one, differentiating through it raises gl.NotSupported).
    """

    def __init__(self, name: str, kernel: Callable, direct: bool = False) -> None:
        self.name = name
        LIB.define(name + torch.library.infer_schema(kernel, mutates_args=()),
                   tags=(_C.Tag.pt2_compliant_tag,))
        LIB.impl(name, kernel, "CompositeExplicitAutograd")
        self.overload = getattr(torch.ops.gpula, name).default
        params = self.overload._schema.arguments
        self._lists_in = tuple(_is_list(a.type) for a in params)
        self._lists_out = tuple(_is_list(r.type) for r in self.overload._schema.returns)
        self._kernel, self._direct, self._nargs = kernel, direct, len(params)
        self._tensors = tuple(i for i, a in enumerate(params) if _is_tensor(a.type))
        self._tensor_lists = tuple(
            i for i, a in enumerate(params)
            if _is_list(a.type) and isinstance(a.type.getElementType(), torch.TensorType))
        self._apply = self._function(None, None)
        LIB.impl(name, self._autograd_kernel, "Autograd")
        self.__doc__ = kernel.__doc__

    def __call__(self, *args: Any) -> Any:
        if _compiling():
            return self.overload(*args)
        if _grad_enabled() and _any_requires_grad(*args):
            return self._apply(*args)
        # self._run(*args), inlined: an eager call is this one frame above the kernel.
        if self._direct and _dispatch_free(args, self._nargs, self._tensors, self._tensor_lists):
            return self._kernel(*args)
        with _below_autograd():
            return self.overload(*args)

    def _autograd_kernel(self, *args: Any) -> Any:
        if _grad_enabled() and _any_requires_grad(*args):
            return self._apply(*args)
        return self._run(*args)

    def _run(self, *args: Any) -> Any:
        """The op below autograd: one dispatcher pass, or for a direct op the kernel itself where
        the dispatcher could only have called it (_dispatch_free)."""
        if self._direct and _dispatch_free(args, self._nargs, self._tensors, self._tensor_lists):
            return self._kernel(*args)
        with _below_autograd():
            return self.overload(*args)

    def register_fake(self, fake: Callable) -> Callable:
        torch.library.register_fake(f"gpula::{self.name}", fake, lib=LIB)
        return fake

    def register_autograd(self, backward: Callable, setup_context: Callable) -> None:
        """backward(ctx, *output_grads) -> one gradient (or None) per argument, a list of them
        for a Tensor[] argument; setup_context(ctx, inputs, output) as torch.library's."""
        self._apply = self._function(backward, setup_context)

    def _function(self, backward: Optional[Callable], setup: Optional[Callable]) -> Callable:
        """The apply of a torch.autograd.Function around the operator (below autograd); ops with
        Tensor[] arguments or results go through it flattened, since a Function only tracks
        tensors passed to it directly."""
        run, name = self._run, self.name

        def run_backward(ctx: Any, *grads: Any) -> Any:
            if backward is None:
                raise NotSupported(f"[gpula::{name}] is not differentiable: double backward "
                                   "(create_graph=True) through gpula.torch's layers is not "
                                   "implemented")
            return backward(ctx, *grads)

        if not any(self._lists_in) and not any(self._lists_out):

            def forward(ctx: Any, *args: Any) -> Any:
                out = run(*args)
                if setup is not None:
                    setup(ctx, args, out)
                return out

            fn = type(f"gpula_{name}", (torch.autograd.Function,),
                      {"forward": staticmethod(forward), "backward": staticmethod(run_backward)})
            return fn.apply

        lists_in, lists_out = self._lists_in, self._lists_out

        def forward_flat(ctx: Any, sizes: tuple[int, ...], nest: list, *flat: Any) -> Any:
            args = _nested(flat, sizes, lists_in)
            out = run(*args)
            if setup is not None:
                setup(ctx, args, out)
            ctx.sizes = sizes
            out_flat, out_sizes = _flattened(out, lists_out)
            ctx.out_sizes = out_sizes
            nest.append(out_sizes)
            return tuple(out_flat)

        def backward_flat(ctx: Any, *grads: Any) -> Any:
            needs = ctx.needs_input_grad
            ctx.needs_input_grad = tuple(
                any(n) if isinstance(n, list) else n
                for n in _nested(needs[2:], ctx.sizes, lists_in))
            try:
                g = run_backward(ctx, *_nested(grads, ctx.out_sizes, lists_out))
            finally:
                ctx.needs_input_grad = needs
            flat: list[Any] = [None, None]
            for i, (gi, is_list) in enumerate(zip(g, lists_in)):
                if not is_list:
                    flat.append(gi)
                else:
                    flat.extend([None] * ctx.sizes[i] if gi is None else gi)
            return tuple(flat)

        fn = type(f"gpula_{name}", (torch.autograd.Function,),
                  {"forward": staticmethod(forward_flat),
                   "backward": staticmethod(backward_flat)})

        def apply(*args: Any) -> Any:
            flat, sizes = _flattened(args, lists_in)
            nest: list = []
            out = fn.apply(sizes, nest, *flat)
            return tuple(_nested(out, nest[0], lists_out))

        return apply


def _flattened(items: Any, lists: tuple[bool, ...]) -> tuple[list, tuple[int, ...]]:
    """items with their lists spliced in, and each item's length (0 where it is no list)."""
    flat: list[Any] = []
    sizes = []
    for x, is_list in zip(items, lists):
        if is_list:
            flat.extend(x)
            sizes.append(len(x))
        else:
            flat.append(x)
            sizes.append(0)
    return flat, tuple(sizes)


def _nested(flat: Any, sizes: tuple[int, ...], lists: tuple[bool, ...]) -> list[Any]:
    """The inverse of _flattened."""
    out: list[Any] = []
    i = 0
    for n, is_list in zip(sizes, lists):
        if is_list:
            out.append(list(flat[i : i + n]))
            i += n
        else:
            out.append(flat[i])
            i += 1
    return out


def op(name: str, direct: bool = False) -> Callable[[Callable], Op]:
    """``@op("name")`` over a kernel: defines ``gpula::name`` (see the module's docstring);
    direct=True: eager calls may run the kernel without the dispatcher (callers pass the
    schema's types)."""
    return lambda kernel: Op(name, kernel, direct)
