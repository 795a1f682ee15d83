"""The custom ops behind gpula.torch: one fused cuBLASLt (or CPU) call per layer forward, and
backward passes whose GEMMs carry the bias gradient (BGRADA) and the previous layer's activation
derivative (DRELU / DGELU) in their epilogues.

Each op has a fake (meta) implementation, so torch.compile traces it, and registered autograd.
GELU is the tanh approximation (torch's ``approximate="tanh"``), as cuBLASLt computes it.
"""

from __future__ import annotations

import math
from typing import Any, Optional

import torch

from .. import _gpula
from .._matmul import matmul as _matmul
from .._options import MatmulOptions
from ..errors import DTypeError, InvalidArgument
from ._library import op

Epilog = _gpula.Epilog
ACTIVATIONS = ("none", "relu", "gelu")
_FORWARD = {
    ("none", False): Epilog.DEFAULT, ("none", True): Epilog.BIAS,
    ("relu", False): Epilog.RELU_AUX, ("relu", True): Epilog.RELU_AUX_BIAS,
    ("gelu", False): Epilog.GELU_AUX, ("gelu", True): Epilog.GELU_AUX_BIAS,
}
_AUX = {"relu": "relu_aux", "gelu": "gelu_aux"}
# A FusedMLP backward applies the derivative of the layer below's activation in the epilogue of
# the input-gradient GEMM (DGELU / DRELU) and takes that layer's bias gradient on its
# weight-gradient GEMM (BGRADA). Measured on an H100 (cuBLAS 13.1, bench/probes/probe_ffn.py,
# bf16 T=65536 1024->4096->1024, kernel time per step, 2026-12-07): 4.82 ms this way; 6.70 ms with
# DGELU_BGRAD on the input-gradient GEMM (cuBLASLt runs that as a separate 2.27 ms epilogue
# kernel); 12.69 ms with torch's elementwise derivative; torch eager 5.31 ms.
_DACT = {"relu": Epilog.DRELU, "gelu": Epilog.DGELU}
_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)
_TF32 = MatmulOptions(compute_type=_gpula.ComputeType.COMPUTE_32F_FAST_TF32)
_precision = torch.get_float32_matmul_precision


def matmul(a: torch.Tensor, b: torch.Tensor, epilog: Any = None, epilog_inputs: Any = None):
    """gpula's matmul under torch's float32 matmul precision, as torch.nn.Linear: float32 CUDA
    tensors use TF32 tensor cores unless torch.get_float32_matmul_precision() is "highest" (its
    default); the CPU has no TF32 and computes in full float32."""
    tf32 = a.is_cuda and a.dtype == torch.float32 and _precision() != "highest"
    return _matmul(a, b, epilog=epilog, epilog_inputs=epilog_inputs,
                   options=_TF32 if tf32 else None)


def type_name(x: Any) -> str:
    """What a non-tensor argument is, for an error message: its type (with its module outside
    the builtins) and its dtype where it has one ("numpy.ndarray of dtype float64")."""
    t = type(x)
    name = t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"
    dtype = getattr(x, "dtype", None)
    return name if dtype is None else f"{name} of dtype {dtype}"


def _2d(t: torch.Tensor) -> torch.Tensor:
    """t as the matrix of its rows along the last dimension (reshape(-1, n) is ambiguous for an
    empty t with n = 0); a 2-D t as it is."""
    return t if t.dim() == 2 else t.reshape(math.prod(t.shape[:-1]), t.shape[-1])


def check_tensor(op: str, name: str, t: Any, x: torch.Tensor) -> None:
    """t (a layer's weight or bias) is a tensor of the checked input x's dtype."""
    if not isinstance(t, torch.Tensor):
        raise DTypeError(f"[{op}] {name} must be a torch.Tensor, got {type_name(t)}")
    if t.dtype != x.dtype:
        raise DTypeError(f"[{op}] {name} has dtype {t.dtype}, input has {x.dtype}")


def check_input(op: str, x: Any) -> None:
    """x is a tensor of a dtype gpula.torch's layers take, with at least one dimension."""
    if not isinstance(x, torch.Tensor):
        raise DTypeError(f"[{op}] input must be a torch.Tensor, got {type_name(x)}")
    if x.dtype not in _DTYPES:
        raise DTypeError(f"[{op}] input has dtype {x.dtype}; gpula.torch takes float16, "
                         "bfloat16, float32 and float64")


def check_layer(op: str, x: torch.Tensor, in_shape: tuple, weight: torch.Tensor,
                bias: Optional[torch.Tensor], weight_name: str = "weight",
                bias_name: str = "bias") -> int:
    """The devices of a layer's weight and bias (checked tensors) against the input x's, their
    shapes against the layer's input shape in_shape; returns out_features."""
    device = x.device
    for name, t in ((weight_name, weight), (bias_name, bias)):
        if t is not None and t.device != device:
            raise InvalidArgument(f"[{op}] {name} is on {t.device}, input on {device}")
    if weight.dim() != 2:
        raise InvalidArgument(f"[{op}] {weight_name} must be 2-D (out_features, in_features), "
                              f"got shape {tuple(weight.shape)}")
    if len(in_shape) < 1 or in_shape[-1] != weight.shape[1]:
        raise InvalidArgument(f"[{op}] input's last dimension must be in_features = "
                              f"{weight.shape[1]} ({weight_name}), got shape {tuple(in_shape)}")
    out = weight.shape[0]
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != out):
        raise InvalidArgument(f"[{op}] {bias_name} must have shape ({out},), got "
                              f"{tuple(bias.shape)}")
    return out


def check_linear(op: str, x: Any, weight: Any, bias: Any, activation: str) -> None:
    """Typed errors naming op and the argument, before anything runs: types and dtypes first
    (gl.DTypeError), then devices and shapes (gl.InvalidArgument)."""
    if activation not in ACTIVATIONS:
        raise InvalidArgument(f"[{op}] activation must be None, 'relu' or 'gelu', got {activation!r}")
    check_input(op, x)
    check_tensor(op, "weight", weight, x)
    if bias is not None:
        check_tensor(op, "bias", bias, x)
    check_layer(op, x, x.shape, weight, bias)


def _round_up(v: int, m: int) -> int:
    return (v + m - 1) // m * m


def _aux_like(x2: torch.Tensor, n: int, activation: str) -> torch.Tensor:
    """An empty aux output of the shape gpula's epilogue writes (src/matmul/matmul.cpp)."""
    m = x2.shape[0]
    if activation == "relu":  # bit mask, rows of round_up(n, 128) bits
        return x2.new_empty((m, _round_up(n, 128) // 8), dtype=torch.uint8)
    if activation == "gelu":  # pre-activation, rows of round_up(n, 8) elements
        return x2.new_empty((m, _round_up(n, 8)))
    return x2.new_empty(0)  # (an int size: 0.7 us less than a tuple's in eager calls)


def _forward(x2: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor],
             activation: str) -> tuple[torch.Tensor, torch.Tensor]:
    """act(x2 @ weight^T + bias) and the aux output the backward reads, in one gpula call."""
    epilog = _FORWARD[(activation, bias is not None)]
    inputs = None if bias is None else {"bias": bias}
    if x2.shape[0] == 0:
        y = x2.new_empty((0, weight.shape[0]))
        return y, _aux_like(x2, weight.shape[0], activation)
    r = matmul(x2, weight.t(), epilog=epilog, epilog_inputs=inputs)
    if activation == "none":
        return r, x2.new_empty(0)  # no aux output (_aux_like's)
    y, aux = r
    aux = aux[_AUX[activation]]
    if activation == "gelu" and aux.shape[1] > y.shape[1]:
        aux[:, y.shape[1] :].zero_()  # row padding: never written by the epilogue, never read
    return y, aux


def _weight_grad(g: torch.Tensor, h: torch.Tensor, with_bias: bool):
    """(g^T @ h, g's column sums or None): the bias gradient rides on the GEMM (BGRADA)."""
    if g.shape[0] == 0:
        return g.new_zeros((g.shape[1], h.shape[1])), (g.new_zeros(g.shape[1]) if with_bias else None)
    if not with_bias:
        return matmul(g.t(), h), None
    dw, aux = matmul(g.t(), h, epilog=Epilog.BGRADA)
    return dw, aux["bgrada"]


def _input_grad(g: torch.Tensor, weight: torch.Tensor, aux: Optional[torch.Tensor],
                activation: str) -> torch.Tensor:
    """(g @ weight) * act'(pre) of the layer below, its pre-activation read from aux, the
    derivative applied in the GEMM's epilogue (DRELU / DGELU); g @ weight without an
    activation."""
    if g.shape[0] == 0:
        return g.new_zeros((0, weight.shape[1]))
    if activation == "none":
        return matmul(g, weight)
    return matmul(g, weight, epilog=_DACT[activation], epilog_inputs={_AUX[activation]: aux})


def _act_grad(grad_y: torch.Tensor, y: torch.Tensor, aux: torch.Tensor,
              activation: str) -> torch.Tensor:
    """grad_y * act'(pre) for a layer whose output gradient comes from outside gpula."""
    if activation == "none":
        return grad_y
    if activation == "relu":
        return grad_y * (y > 0).to(grad_y.dtype)
    pre = aux[:, : y.shape[1]]
    c = 0.7978845608028654  # sqrt(2 / pi)
    t = torch.tanh(c * (pre + 0.044715 * pre * pre * pre))
    d = 0.5 * (1 + t) + 0.5 * pre * (1 - t * t) * c * (1 + 3 * 0.044715 * pre * pre)
    return grad_y * d


# ---- gpula::linear ----------------------------------------------------------------------------

@op("linear", direct=True)
def linear_op(x: torch.Tensor, weight: torch.Tensor, bias: Optional[torch.Tensor],
              activation: str) -> tuple[torch.Tensor, torch.Tensor]:
    y, aux = _forward(_2d(x), weight, bias, activation)
    return (y if x.dim() == 2 else y.reshape(*x.shape[:-1], weight.shape[0])), aux


@linear_op.register_fake
def _(x, weight, bias, activation):
    x2 = _2d(x)
    return x.new_empty((*x.shape[:-1], weight.shape[0])), _aux_like(x2, weight.shape[0], activation)


@op("linear_backward", direct=True)
def linear_backward_op(grad_y: torch.Tensor, x: torch.Tensor, weight: torch.Tensor,
                       y: torch.Tensor, aux: torch.Tensor, activation: str, has_bias: bool,
                       needs_input_grad: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    g = _act_grad(_2d(grad_y).contiguous(), _2d(y), aux, activation)
    dw, db = _weight_grad(g, _2d(x), has_bias)
    if not needs_input_grad:
        dx = x.new_empty(0)
    else:
        dx = matmul(g, weight) if g.shape[0] else g.new_zeros((0, weight.shape[1]))
        dx = dx if x.dim() == 2 else dx.reshape(x.shape)
    return dx, dw, (db if db is not None else weight.new_empty(0))


@linear_backward_op.register_fake
def _(grad_y, x, weight, y, aux, activation, has_bias, needs_input_grad):
    dx = x.new_empty(x.shape) if needs_input_grad else x.new_empty(0)
    db = weight.new_empty((weight.shape[0],)) if has_bias else weight.new_empty(0)
    return dx, weight.new_empty(weight.shape), db


def _linear_setup(ctx, inputs, output):
    """aux is an internal output, not differentiable: no zeros are made for its gradient."""
    x, weight, bias, activation = inputs
    y, aux = output
    ctx.mark_non_differentiable(aux)
    ctx.set_materialize_grads(False)
    ctx.save_for_backward(x, weight, y, aux)
    ctx.activation = activation
    ctx.has_bias = bias is not None


def _linear_backward(ctx, grad_y, grad_aux):
    if grad_y is None:
        return None, None, None, None
    x, weight, y, aux = ctx.saved_tensors
    dx, dw, db = linear_backward_op(grad_y, x, weight, y, aux, ctx.activation, ctx.has_bias,
                                    ctx.needs_input_grad[0])
    return (dx if ctx.needs_input_grad[0] else None, dw if ctx.needs_input_grad[1] else None,
            db if ctx.has_bias and ctx.needs_input_grad[2] else None, None)


linear_op.register_autograd(_linear_backward, setup_context=_linear_setup)


# ---- gpula::mlp ------------------------------------------------------------------------------

@op("mlp", direct=True)
def mlp_op(x: torch.Tensor, weights: list[torch.Tensor], biases: list[torch.Tensor],
           activation: str) -> tuple[torch.Tensor, list[torch.Tensor], list[torch.Tensor]]:
    """Layers act(h @ W_i^T + b_i), no activation after the last; returns y, the hidden layers'
    outputs (the inputs of layers 2...; x itself is not returned: an op's outputs may not alias
    its inputs) and each hidden layer's aux output. biases: one per layer, or empty."""
    h = _2d(x)
    hidden, auxes = [], []
    for i, w in enumerate(weights):
        last = i == len(weights) - 1
        if i > 0:
            hidden.append(h)
        h, aux = _forward(h, w, biases[i] if biases else None, "none" if last else activation)
        if not last:
            auxes.append(aux)
    return (h if x.dim() == 2 else h.reshape(*x.shape[:-1], weights[-1].shape[0])), hidden, auxes


@mlp_op.register_fake
def _(x, weights, biases, activation):
    h = _2d(x)
    hidden, auxes = [], []
    for w in weights[:-1]:
        auxes.append(_aux_like(h, w.shape[0], activation))
        h = h.new_empty((h.shape[0], w.shape[0]))
        hidden.append(h)
    return x.new_empty((*x.shape[:-1], weights[-1].shape[0])), hidden, auxes


@op("mlp_backward", direct=True)
def mlp_backward_op(grad_y: torch.Tensor, inputs: list[torch.Tensor], weights: list[torch.Tensor],
                    auxes: list[torch.Tensor], activation: str, has_bias: bool,
                    needs_input_grad: bool) -> tuple[torch.Tensor, list[torch.Tensor],
                                                     list[torch.Tensor]]:
    """The chain of mlp_op backwards: layer i's GEMM for the gradient of its input applies layer
    i-1's activation derivative in its epilogue (DGELU / DRELU); each layer's bias gradient
    rides on its weight-gradient GEMM (BGRADA)."""
    layers = len(weights)
    g = _2d(grad_y).contiguous()
    dws: list[torch.Tensor] = [None] * layers  # type: ignore[list-item]
    dbs: list[torch.Tensor] = [None] * layers  # type: ignore[list-item]
    dw, db = _weight_grad(g, inputs[-1], has_bias)
    dws[-1], dbs[-1] = dw, db
    for i in range(layers - 1, 0, -1):
        g = _input_grad(g, weights[i], auxes[i - 1], activation)
        dws[i - 1], dbs[i - 1] = _weight_grad(g, inputs[i - 1], has_bias)
    dx = _input_grad(g, weights[0], None, "none") if needs_input_grad else inputs[0].new_empty(0)
    if not has_bias:
        dbs = []
    return dx, dws, dbs


@mlp_backward_op.register_fake
def _(grad_y, inputs, weights, auxes, activation, has_bias, needs_input_grad):
    dx = inputs[0].new_empty(inputs[0].shape) if needs_input_grad else inputs[0].new_empty(0)
    dws = [w.new_empty(w.shape) for w in weights]
    dbs = [w.new_empty((w.shape[0],)) for w in weights] if has_bias else []
    return dx, dws, dbs


def _mlp_setup(ctx, inputs, output):
    """hidden and auxes are internal outputs, not differentiable: no zeros are made for their
    gradients (on the GPU: two memsets of tokens x hidden elements a step)."""
    x, weights, biases, activation = inputs
    _, hidden, auxes = output
    ctx.mark_non_differentiable(*hidden, *auxes)
    ctx.set_materialize_grads(False)
    ctx.save_for_backward(_2d(x), *hidden, *weights, *auxes)
    ctx.layers = len(weights)
    ctx.activation = activation
    ctx.has_bias = bool(biases)
    ctx.x_shape = x.shape


def _mlp_backward(ctx, grad_y, grad_hidden, grad_auxes):
    if grad_y is None:
        return None, None, None, None
    saved = ctx.saved_tensors
    n = ctx.layers
    layer_inputs, weights, auxes = saved[:n], saved[n : 2 * n], saved[2 * n :]
    dx, dws, dbs = mlp_backward_op(grad_y, list(layer_inputs), list(weights), list(auxes),
                                   ctx.activation, ctx.has_bias, ctx.needs_input_grad[0])
    if not ctx.needs_input_grad[0]:
        dx = None
    elif len(ctx.x_shape) != 2:
        dx = dx.reshape(ctx.x_shape)
    return dx, dws, dbs, None


mlp_op.register_autograd(_mlp_backward, setup_context=_mlp_setup)
