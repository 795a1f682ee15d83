"""How gpula.torch registers its operators with PyTorch: ``torch.library.Library("gpula",
"FRAGMENT")`` with ``define`` + ``impl`` and ``register_fake``, and a lean Autograd-key kernel,
which costs a fraction of ``torch.library.custom_op``'s eager dispatch (that one wraps every call
in dynamo's disable context, checks aliasing and rebuilds its arguments; bench/bench_torch.py).

``@op("name")`` over a Python function with type annotations defines ``gpula::name`` (the schema
inferred from them, as custom_op does) and returns an :class:`Op`. Calling the Op in eager mode
goes straight to the kernel when no gradient is needed (one dispatcher pass below autograd) and
through one ``torch.autograd.Function`` when one is; under torch.compile it calls the operator,
which AOTAutograd traces with the fake implementation and differentiates through the same
Autograd kernel. ``torch.ops.gpula.name`` behaves the same (one more Python frame).
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


def _is_list(t: Any) -> bool:
    return isinstance(t, torch.ListType)


class Op:
    """An operator ``gpula::<name>``: one Python kernel for every device (gpula's own errors for
    devices it lacks), a fake implementation (:meth:`register_fake`) and autograd
    (:meth:`register_autograd`; without one, differentiating through it raises gl.NotSupported).
    """

    def __init__(self, name: str, kernel: Callable) -> None:
        self.name = name
        LIB.define(name + torch.library.infer_schema(kernel, mutates_args=()),
                   tags=(_C.Tag.pt2_compliant_tag,))
        LIB.impl(name, kernel, "CompositeExplicitAutograd")
        self.overload = getattr(torch.ops.gpula, name).default
        schema = self.overload._schema
        self._lists_in = tuple(_is_list(a.type) for a in schema.arguments)
        self._lists_out = tuple(_is_list(r.type) for r in schema.returns)
        self._apply = self._function(None, None)
        LIB.impl(name, self._autograd_kernel, "Autograd")
        self.__doc__ = kernel.__doc__

    def __call__(self, *args: Any) -> Any:
        if _compiling():
            return self.overload(*args)
        if _grad_enabled() and _any_requires_grad(*args):
            return self._apply(*args)
        with _below_autograd():
            return self.overload(*args)

    def _autograd_kernel(self, *args: Any) -> Any:
        if _grad_enabled() and _any_requires_grad(*args):
            return self._apply(*args)
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
        op, name = self.overload, self.name

        def run_backward(ctx: Any, *grads: Any) -> Any:
            if backward is None:
                raise NotSupported(f"[gpula::{name}] is not differentiable: double backward "
                                   "(create_graph=True) through gpula.torch's layers is not "
                                   "implemented")
            return backward(ctx, *grads)

        if not any(self._lists_in) and not any(self._lists_out):

            def forward(ctx: Any, *args: Any) -> Any:
                with _below_autograd():
                    out = op(*args)
                if setup is not None:
                    setup(ctx, args, out)
                return out

            fn = type(f"gpula_{name}", (torch.autograd.Function,),
                      {"forward": staticmethod(forward), "backward": staticmethod(run_backward)})
            return fn.apply

        lists_in, lists_out = self._lists_in, self._lists_out

        def forward_flat(ctx: Any, sizes: tuple[int, ...], nest: list, *flat: Any) -> Any:
            args = _nested(flat, sizes, lists_in)
            with _below_autograd():
                out = op(*args)
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


def op(name: str) -> Callable[[Callable], Op]:
    """``@op("name")`` over a kernel: defines ``gpula::name`` (see the module's docstring)."""
    return lambda kernel: Op(name, kernel)
