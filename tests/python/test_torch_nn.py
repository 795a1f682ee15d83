"""gpula.torch: the fused layers and their custom ops against torch.nn in float64 (gradcheck),
torch.library.opcheck (schema, fake tensors, autograd registration, AOT tracing),
torch.compile(fullgraph=True), drop-in use in a training loop, and typed errors."""

from __future__ import annotations

import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import gpula as gl  # noqa: E402
import gpula.torch as gt  # noqa: E402
import gpula.torch.functional as GF  # noqa: E402

ACTS = [None, "relu", "gelu"]
F64 = torch.float64


def reference(x, w, b, act):
    y = torch.nn.functional.linear(x, w, b)
    if act == "relu":
        return torch.relu(y)
    if act == "gelu":
        return torch.nn.functional.gelu(y, approximate="tanh")
    return y


def reference_mlp(x, ws, bs, act):
    h = x
    for i, w in enumerate(ws):
        h = reference(h, w, bs[i] if bs else None, act if i < len(ws) - 1 else None)
    return h


def params(rng_seed, sizes, dtype=F64, bias=True):
    g = torch.Generator().manual_seed(rng_seed)
    ws = [torch.randn(o, i, generator=g, dtype=dtype, requires_grad=True)
          for i, o in zip(sizes[:-1], sizes[1:])]
    bs = [torch.randn(o, generator=g, dtype=dtype, requires_grad=True) for o in sizes[1:]]
    return ws, (bs if bias else [])


@pytest.mark.parametrize("act", ACTS)
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("shape", [(5, 7), (2, 3, 7), (0, 7)])
def test_linear_matches_torch_and_gradcheck(rng, act, bias, shape):
    x = torch.from_numpy(rng.standard_normal(shape)).requires_grad_()
    (w,), bs = params(int(rng.integers(1 << 30)), [7, 13], bias=bias)
    b = bs[0] if bias else None
    y = GF.linear(x, w, b, act)
    torch.testing.assert_close(y, reference(x, w, b, act), rtol=1e-12, atol=1e-12)
    inputs = (x, w, b) if bias else (x, w)
    if x.numel() == 0:  # gradcheck takes no empty inputs: the gradients are zeros of the shapes
        grads = torch.autograd.grad(y.sum(), inputs)
        assert all(g.shape == i.shape and not g.any() for g, i in zip(grads, inputs))
        return
    assert torch.autograd.gradcheck(lambda *t: GF.linear(t[0], t[1], t[2] if bias else None, act),
                                    inputs)


@pytest.mark.parametrize("act", ["relu", "gelu"])
@pytest.mark.parametrize("bias", [True, False])
def test_mlp_matches_torch_and_gradcheck(rng, act, bias):
    x = torch.from_numpy(rng.standard_normal((6, 4))).requires_grad_()
    ws, bs = params(int(rng.integers(1 << 30)), [4, 9, 5, 3], bias=bias)
    torch.testing.assert_close(GF.mlp(x, ws, bs or None, act), reference_mlp(x, ws, bs, act),
                               rtol=1e-12, atol=1e-12)
    n = len(ws)
    assert torch.autograd.gradcheck(
        lambda x, *p: GF.mlp(x, p[:n], p[n:] or None, act), (x, *ws, *bs))


def test_mlp_gradients_equal_torch_in_float32(rng):
    x = torch.from_numpy(rng.standard_normal((64, 32)).astype("float32")).requires_grad_()
    ws, bs = params(int(rng.integers(1 << 30)), [32, 48, 16], dtype=torch.float32)
    y = GF.mlp(x, ws, bs, "gelu")
    grads = torch.autograd.grad(y.square().sum(), (x, *ws, *bs))
    ref = torch.autograd.grad(reference_mlp(x, ws, bs, "gelu").square().sum(), (x, *ws, *bs))
    for g, r in zip(grads, ref):  # float32 sums in another order: compare as whole tensors
        assert (g - r).norm() <= 1e-5 * r.norm()


@pytest.mark.parametrize("act", ["none", "relu", "gelu"])
def test_linear_op_passes_opcheck(act):
    g = torch.Generator().manual_seed(1)
    x = torch.randn(6, 4, dtype=F64, generator=g, requires_grad=True)
    w = torch.randn(5, 4, dtype=F64, generator=g, requires_grad=True)
    b = torch.randn(5, dtype=F64, generator=g, requires_grad=True)
    torch.library.opcheck(torch.ops.gpula.linear.default, (x, w, b, act))
    torch.library.opcheck(torch.ops.gpula.linear.default, (x, w, None, act))


@pytest.mark.parametrize("act", ["relu", "gelu"])
def test_mlp_op_passes_opcheck(act):
    g = torch.Generator().manual_seed(2)
    x = torch.randn(6, 4, dtype=F64, generator=g, requires_grad=True)
    ws, bs = params(3, [4, 5, 3])
    torch.library.opcheck(torch.ops.gpula.mlp.default, (x, ws, bs, act))
    torch.library.opcheck(torch.ops.gpula.mlp.default, (x, ws, [], act))


def test_compile_fullgraph_forward_and_backward_match_eager():
    torch.manual_seed(0)
    model = torch.nn.Sequential(gt.nn.Linear(8, 16, activation="relu", dtype=F64),
                                gt.nn.FusedMLP([16, 32, 4], activation="gelu", dtype=F64))
    x = torch.randn(5, 8, dtype=F64)
    compiled = torch.compile(model, fullgraph=True, backend="aot_eager")  # a graph break raises
    y_eager = model(x)
    g_eager = torch.autograd.grad(y_eager.sum(), list(model.parameters()))
    y_comp = compiled(x)
    g_comp = torch.autograd.grad(y_comp.sum(), list(model.parameters()))
    torch.testing.assert_close(y_comp, y_eager)
    for a, b in zip(g_comp, g_eager):
        torch.testing.assert_close(a, b)


def test_compile_with_a_graph_break_matches_eager():
    """Without fullgraph, a graph break between two gpula ops: the graphs on either side call
    them as operators and the gradients are eager's."""
    ws, bs = params(11, [6, 5, 3])

    def f(x):
        h = GF.linear(x, ws[0], bs[0], "gelu")
        torch._dynamo.graph_break()
        return GF.mlp(h, [ws[1]], [bs[1]], "relu").sum()

    x = torch.randn(4, 6, dtype=F64)
    compiled = torch.compile(f, backend="aot_eager")
    g_comp = torch.autograd.grad(compiled(x), ws + bs)
    g_eager = torch.autograd.grad(f(x), ws + bs)
    for a, b in zip(g_comp, g_eager):
        torch.testing.assert_close(a, b)


def test_ops_called_through_torch_ops_differentiate_their_list_arguments():
    """torch.ops.gpula.mlp takes lists of tensors: each weight and bias in them gets its
    gradient; the hidden and aux outputs are not differentiable."""
    g = torch.Generator().manual_seed(5)
    x = torch.randn(3, 4, dtype=F64, generator=g, requires_grad=True)
    ws, bs = params(6, [4, 5, 2])
    y, hidden, auxes = torch.ops.gpula.mlp(x, ws, bs, "gelu")
    assert y.requires_grad and not any(t.requires_grad for t in (*hidden, *auxes))
    grads = torch.autograd.grad(y.sum(), [x, *ws, *bs])
    ref = torch.autograd.grad(reference_mlp(x, ws, bs, "gelu").sum(), [x, *ws, *bs])
    for a, b in zip(grads, ref):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)
    y, aux = torch.ops.gpula.linear(x, ws[0], bs[0], "gelu")
    assert y.requires_grad and not aux.requires_grad


class _Recorder(torch.utils._python_dispatch.TorchDispatchMode):
    """Runs every op as it is and records its name: with it on, every call goes through the
    dispatcher."""

    def __init__(self):
        super().__init__()
        self.ops = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.ops.append(str(func))
        return func(*args, **(kwargs or {}))


def _layer_calls(x, ws, bs):
    """Outputs and gradients of a Linear per activation and of an MLP (float64)."""
    out = []
    for act in ACTS:
        y = GF.linear(x, ws[0], bs[0], act)
        out += [y, *torch.autograd.grad(y.square().sum(), (x, ws[0], bs[0]))]
    y = GF.mlp(x, ws, bs, "gelu")
    out += [y, *torch.autograd.grad(y.square().sum(), (x, *ws, *bs))]
    with torch.no_grad():
        out += [GF.linear(x, ws[0], None, "relu"), GF.mlp(x, ws, None, "relu")]
    return out


@pytest.mark.parametrize("view", ["contiguous", "transposed", "3-D", "negative"])
def test_eager_calls_without_the_dispatcher_equal_calls_through_it(view):
    """Eager calls run the layers' kernels without the dispatcher where it could only have run
    them; under a TorchDispatchMode every call goes through it: the same bits, forward and
    backward."""
    ws, bs = params(13, [6, 5, 3])
    g = torch.Generator().manual_seed(14)
    base = torch.randn(2, 4, 6, dtype=F64, generator=g)
    x = {"contiguous": base[0], "transposed": base.reshape(6, 8).T[:4],
         "3-D": base, "negative": torch._neg_view(base[1])}[view]
    x = x.detach().requires_grad_()  # (detach keeps the negative bit)
    direct = _layer_calls(x, ws, bs)
    with _Recorder() as rec:
        dispatched = _layer_calls(x, ws, bs)
    for op in ("linear", "linear_backward", "mlp", "mlp_backward"):
        assert f"gpula.{op}.default" in rec.ops
    assert len(direct) == len(dispatched)
    for a, b in zip(direct, dispatched):
        assert torch.equal(a, b)


@pytest.mark.filterwarnings("ignore::UserWarning")  # the profiler's, on a host without CUDA
def test_modes_profiler_meta_and_fake_tensors_still_get_the_operator():
    x, w, b = torch.randn(3, 4), torch.randn(5, 4), torch.randn(5)
    with torch.profiler.profile() as prof:
        GF.linear(x, w, b, "relu")
    assert "gpula::linear" in [e.name for e in prof.events()]
    meta = GF.linear(x.to("meta"), w.to("meta"), b.to("meta"), "gelu")  # the fake kernel's
    assert meta.device.type == "meta" and meta.shape == (3, 5)
    from torch._subclasses import FakeTensorMode
    with FakeTensorMode():
        y = GF.mlp(torch.empty(3, 4), [torch.empty(5, 4), torch.empty(2, 5)], None, "relu")
    assert type(y).__name__ == "FakeTensor" and y.shape == (3, 2)
    xs = torch.randn(2, 3, 4)
    torch.testing.assert_close(torch.vmap(lambda r: GF.linear(r, w, b))(xs),
                               reference(xs, w, b, None))


@pytest.mark.filterwarnings("ignore::UserWarning")  # the profiler's; nested tensors' prototype
def test_dispatch_free_refuses_what_the_dispatcher_handles():
    """The condition for calling a kernel directly: plain CPU/CUDA tensors (Parameters too, None
    for an optional one), no mode, transform or profiler."""
    from gpula.torch._library import _dispatch_free

    plain = torch.randn(2, 2)
    assert _dispatch_free((plain, None, "x"), 3, (0, 1), ())
    assert _dispatch_free((torch.nn.Parameter(plain), [plain, plain]), 2, (0,), (1,))
    assert not _dispatch_free((plain,), 2, (0,), ())  # too few arguments: left to the dispatcher

    class Sub(torch.Tensor):
        pass

    odd = [plain.to("meta"), plain.as_subclass(Sub), torch._efficientzerotensor((2, 2)),
           torch.nested.nested_tensor([plain, plain])]
    for t in odd:
        assert not _dispatch_free((t,), 1, (0,), ())
        assert not _dispatch_free(([plain, t],), 1, (), (0,))
    with _Recorder():
        assert not _dispatch_free((plain,), 1, (0,), ())
    with torch.profiler.profile():
        assert not _dispatch_free((plain,), 1, (0,), ())
    seen = []
    torch.vmap(lambda r: seen.append(_dispatch_free((plain,), 1, (0,), ())) or r)(plain)
    assert seen == [False]
    assert _dispatch_free((plain,), 1, (0,), ())


def test_no_grad_calls_record_no_graph_and_grad_calls_one_node():
    w = torch.randn(3, 4, dtype=F64, requires_grad=True)
    x = torch.randn(2, 4, dtype=F64)
    with torch.no_grad():
        assert GF.linear(x, w).grad_fn is None
    assert GF.linear(x, w.detach()).grad_fn is None
    y = GF.linear(x, w, None, "relu")
    assert y.grad_fn is not None and y.grad_fn.next_functions[1][0].variable is w


@pytest.mark.parametrize("layer", ["linear", "mlp"])
def test_second_derivative_of_a_layer_raises_not_supported(layer):
    ws, bs = params(7, [4, 5, 2])
    x = torch.randn(3, 4, dtype=F64, requires_grad=True)
    y = GF.linear(x, ws[0], bs[0], "gelu") if layer == "linear" else GF.mlp(x, ws, bs, "gelu")
    (gx,) = torch.autograd.grad(y.sum(), x, create_graph=True)  # the first derivative works
    torch.testing.assert_close(
        gx, torch.autograd.grad(
            (reference(x, ws[0], bs[0], "gelu") if layer == "linear"
             else reference_mlp(x, ws, bs, "gelu")).sum(), x)[0])
    with pytest.raises(gl.NotSupported, match=r"double backward"):
        gx.sum().backward()


def test_linear_is_a_drop_in_for_torch_nn_linear():
    torch.manual_seed(0)
    ref = torch.nn.Linear(6, 4, dtype=F64)
    ours = gt.nn.Linear(6, 4, dtype=F64)
    ours.load_state_dict(ref.state_dict())
    assert isinstance(ours, torch.nn.Linear)
    assert set(ours.state_dict()) == {"weight", "bias"}
    x = torch.randn(3, 6, dtype=F64)
    torch.testing.assert_close(ours(x), ref(x), rtol=1e-13, atol=1e-13)
    assert "activation=gelu" in repr(gt.nn.Linear(2, 2, activation="gelu"))


def test_training_steps_follow_torch_nn_step_by_step():
    torch.manual_seed(0)
    x = torch.randn(32, 8, dtype=F64)
    target = torch.randn(32, 2, dtype=F64)
    ours = gt.nn.FusedMLP([8, 16, 16, 2], activation="gelu", dtype=F64)
    ref = torch.nn.Sequential(torch.nn.Linear(8, 16, dtype=F64), torch.nn.GELU("tanh"),
                              torch.nn.Linear(16, 16, dtype=F64), torch.nn.GELU("tanh"),
                              torch.nn.Linear(16, 2, dtype=F64))
    with torch.no_grad():
        for mine, theirs in zip(ours.layers, [ref[0], ref[2], ref[4]]):
            theirs.weight.copy_(mine.weight)
            theirs.bias.copy_(mine.bias)
    opt_a = torch.optim.Adam(ours.parameters(), lr=1e-2)
    opt_b = torch.optim.Adam(ref.parameters(), lr=1e-2)
    losses = []
    for _ in range(20):
        for model, opt in ((ours, opt_a), (ref, opt_b)):
            opt.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), target)
            loss.backward()
            opt.step()
            losses.append(loss.item())
    ours_l, ref_l = losses[0::2], losses[1::2]
    assert ours_l == pytest.approx(ref_l, rel=1e-9)
    assert ours_l[-1] < 0.7 * ours_l[0]


def test_requires_grad_propagates_and_no_grad_inputs_get_none():
    w = torch.randn(3, 4, dtype=F64, requires_grad=True)
    x = torch.randn(2, 4, dtype=F64)
    y = GF.linear(x, w, None, "relu")
    assert y.requires_grad
    (gw,) = torch.autograd.grad(y.sum(), (w,))
    assert gw.shape == w.shape
    with torch.no_grad():
        assert not GF.linear(x, w, None).requires_grad


def _bad_calls():
    x = torch.randn(2, 4)
    w = torch.randn(3, 4)
    return [
        ("int input", lambda: GF.linear(x.to(torch.int32), w.to(torch.int32)), gl.DTypeError,
         "dtype"),
        ("mixed dtypes", lambda: GF.linear(x.double(), w), gl.DTypeError, "weight"),
        ("shape", lambda: GF.linear(torch.randn(2, 5), w), gl.InvalidArgument, "in_features"),
        ("bias shape", lambda: GF.linear(x, w, torch.randn(4)), gl.InvalidArgument, "bias"),
        ("1-D weight", lambda: GF.linear(x, torch.randn(4)), gl.InvalidArgument, "weight"),
        ("activation", lambda: GF.linear(x, w, None, "tanh"), gl.InvalidArgument, "activation"),
        ("not a tensor", lambda: GF.linear(x, w.numpy()), gl.DTypeError, "weight"),
        ("mlp empty", lambda: GF.mlp(x, []), gl.InvalidArgument, "weights"),
        ("mlp activation", lambda: GF.mlp(x, [w], activation=None), gl.InvalidArgument,
         "activation"),
        ("mlp biases", lambda: GF.mlp(x, [w], [torch.randn(3), torch.randn(3)]),
         gl.InvalidArgument, "biases"),
        ("mlp chain", lambda: GF.mlp(x, [w, torch.randn(2, 5)]), gl.InvalidArgument,
         "in_features"),
        ("layer activation", lambda: gt.nn.Linear(2, 2, activation="tanh"), gl.InvalidArgument,
         "activation"),
        ("mlp sizes", lambda: gt.nn.FusedMLP([3]), gl.InvalidArgument, "sizes"),
    ]


@pytest.mark.parametrize("case", _bad_calls(), ids=lambda c: c[0])
def test_bad_calls_raise_typed_errors_naming_the_op(case):
    _, call, err, word = case
    with pytest.raises(err, match=word) as info:
        call()
    assert str(info.value).startswith("[gpula.torch.")


def test_inputs_are_left_unchanged():
    x = torch.randn(4, 6, dtype=F64, requires_grad=True)
    ws, bs = params(5, [6, 7, 2])
    before = [t.detach().clone() for t in (x, *ws, *bs)]
    GF.mlp(x, ws, bs, "gelu").sum().backward()
    for t, b in zip((x, *ws, *bs), before):
        assert torch.equal(t.detach(), b)


def test_import_gpula_does_not_import_torch():
    code = "import sys, gpula; assert 'torch' not in sys.modules, 'torch was imported'"
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_cuda_layers_match_the_cpu(dtype):
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device")
    torch.manual_seed(0)
    cpu = gt.nn.FusedMLP([64, 128, 32], activation="gelu", dtype=torch.float32)
    gpu = gt.nn.FusedMLP([64, 128, 32], activation="gelu", device="cuda", dtype=dtype)
    gpu.load_state_dict({k: v.to("cuda", dtype) for k, v in cpu.state_dict().items()})
    x = torch.randn(16, 64)
    y_cpu = cpu(x)
    y_gpu = gpu(x.to("cuda", dtype))
    tol = 2e-4 if dtype == torch.float32 else 5e-2
    torch.testing.assert_close(y_gpu.float().cpu(), y_cpu, rtol=tol, atol=tol)
    y_gpu.float().sum().backward()
    y_cpu.sum().backward()
    for a, b in zip(gpu.parameters(), cpu.parameters()):
        torch.testing.assert_close(a.grad.float().cpu(), b.grad, rtol=10 * tol, atol=10 * tol)


@pytest.mark.gpu
def test_cuda_float32_follows_torchs_matmul_precision():
    """TF32 under set_float32_matmul_precision("high"), full float32 under "highest"."""
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA device")
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(256, 1024, device="cuda", generator=g)
    w = torch.randn(512, 1024, device="cuda", generator=g)
    ref = (x.double() @ w.double().t()).float()
    before = torch.get_float32_matmul_precision()
    try:
        errs = {}
        for mode in ("highest", "high"):
            torch.set_float32_matmul_precision(mode)
            errs[mode] = ((GF.linear(x, w, None, None) - ref).abs().max() / ref.abs().max()).item()
    finally:
        torch.set_float32_matmul_precision(before)
    assert errs["highest"] < 1e-5  # float32 rounding
    assert 1e-5 < errs["high"] < 5e-3  # TF32's 10-bit mantissa
