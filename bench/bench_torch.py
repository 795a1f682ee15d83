#!/usr/bin/env python3
"""gpula.torch on the GPU beside torch (issue 19), one run, peers side by side.

  python3 bench/bench_torch.py [--quick] [--overhead-only] [--json PATH] [--summary PATH]

1. Transformer FFN block, forward + backward, bf16, GELU(tanh): gpula.torch.nn.FusedMLP against
   nn.Sequential(nn.Linear, nn.GELU(approximate="tanh"), nn.Linear) eager and under
   torch.compile (inductor), and the step's six GEMMs alone (torch.matmul, the fusion's floor:
   x W1^T, h W2^T forward; gY W2, gY^T h, gH W1, gH^T x backward). FLOPs 12 T d h a step.
   Shapes (T, d, h): (16384, 4096, 16384) and (65536, 1024, 4096).
2. Gaussian-process marginal likelihood step, forward + backward, a batch of 8 models of n = 4096
   (float64 and float32): cholesky, cho_solve and the factor's log-diagonal through
   gpula.torch.linalg against torch.linalg.cholesky / torch.cholesky_solve.
3. Per-call host overhead of a 64 x 64 gpula.torch.nn.Linear (forward without and with grad,
   forward + backward) and a 64-64-64 FusedMLP forward + backward against torch.nn (float32;
   microseconds per call over a loop of calls, then one synchronize; best of 5 loops).
   --overhead-only runs just this case, on the CPU where there is no CUDA device.

Timing: CUDA events around single steps after warm-up, medians of --repeats; --quick shrinks
every size (a smoke test, marked). Times are reported, never asserted.
"""

from __future__ import annotations

import argparse
import statistics
import time

import torch
from common import append_summary, device_time, gpula_description, log, save_json

import gpula.torch as gt

BF16 = torch.bfloat16


def ffn_case(t: int, d: int, h: int, repeats: int, compile_: bool) -> dict:
    """Times (ms) of one forward + backward step: gpula, torch eager, torch compiled, GEMMs."""
    dev = "cuda"
    torch.manual_seed(0)
    fused = gt.nn.FusedMLP([d, h, d], activation="gelu", device=dev, dtype=BF16)
    ref = torch.nn.Sequential(torch.nn.Linear(d, h), torch.nn.GELU(approximate="tanh"),
                              torch.nn.Linear(h, d)).to(dev, BF16)
    ref[0].load_state_dict(fused.layers[0].state_dict())
    ref[2].load_state_dict(fused.layers[1].state_dict())
    x = torch.randn(t, d, device=dev, dtype=BF16, requires_grad=True)
    gy = torch.randn(t, d, device=dev, dtype=BF16)

    def step(model):
        def run():
            x.grad = None
            for p in model.parameters():
                p.grad = None
            model(x).backward(gy)
        return run

    w1, w2 = fused.layers[0].weight.detach(), fused.layers[1].weight.detach()
    hid = torch.randn(t, h, device=dev, dtype=BF16)
    xd = x.detach()

    def gemms():
        torch.matmul(xd, w1.t())          # forward, layer 1
        torch.matmul(hid, w2.t())         # forward, layer 2
        g = torch.matmul(gy, w2)          # backward: gradient of the hidden layer
        torch.matmul(gy.t(), hid)         # backward: dW2
        torch.matmul(g, w1)               # backward: dX
        torch.matmul(g.t(), xd)           # backward: dW1

    out = {"flops": 12.0 * t * d * h}
    out["gpula"] = device_time(step(fused), repeats, warmup=3).ms
    out["torch eager"] = device_time(step(ref), repeats, warmup=3).ms
    if compile_:
        try:
            comp = torch.compile(ref)
            out["torch compiled"] = device_time(step(comp), repeats, warmup=3).ms
        except Exception as exc:  # noqa: BLE001 (reported as n/a)
            log(f"torch.compile failed: {type(exc).__name__}: {str(exc)[:300]}")
    out["GEMMs alone"] = device_time(gemms, repeats, warmup=3).ms
    with torch.no_grad():
        y1, y2 = fused(xd), ref(xd)
        out["max |y gpula - y torch| / max |y|"] = float((y1 - y2).abs().max() / y2.abs().max())
    return out


def gp_case(n: int, batch: int, dtype: torch.dtype, repeats: int) -> dict:
    dev = "cuda"
    g = torch.Generator(device=dev).manual_seed(0)
    x = torch.rand(batch, n, 2, device=dev, dtype=dtype, generator=g)
    y = torch.randn(batch, n, 1, device=dev, dtype=dtype, generator=g)
    log_l = torch.zeros(batch, device=dev, dtype=dtype, requires_grad=True)
    dist2 = torch.cdist(x, x).square()
    eye = torch.eye(n, device=dev, dtype=dtype)

    def step(lib):
        def run():
            log_l.grad = None
            k = torch.exp(-0.5 * dist2 / (2 * log_l).exp()[:, None, None]) + 0.1 * eye
            if lib == "gpula":
                c = gt.linalg.cholesky(k)
                alpha = gt.linalg.cho_solve((c, True), y)
            else:
                c = torch.linalg.cholesky(k)
                alpha = torch.cholesky_solve(y, c)
            loss = 0.5 * (y * alpha).sum() + c.diagonal(dim1=-2, dim2=-1).log().sum()
            loss.backward()
            return loss.detach()
        return run

    out = {}
    for lib in ("gpula", "torch"):
        out[lib] = device_time(step(lib), repeats, warmup=2).ms
    lg, lt = step("gpula")(), step("torch")()
    out["loss rel. difference"] = float(((lg - lt).abs() / lt.abs()).item())
    return out


def overhead_case(calls: int, dev: str = "cuda") -> dict:
    """Host microseconds per call of 64-wide layers, gpula.torch.nn against torch.nn: a Linear
    forward without grad, with grad, forward + backward, and a 64-64-64 FusedMLP (GELU) forward +
    backward. Each is the best of 5 loops of `calls` calls, each loop ended by a synchronize (the
    host cost is what the loop measures once the device keeps up)."""
    torch.manual_seed(0)
    x = torch.randn(64, 64, device=dev)
    xg = x.clone().requires_grad_()
    layers = {"gpula": (gt.nn.Linear(64, 64, device=dev),
                        gt.nn.FusedMLP([64, 64, 64], activation="gelu", device=dev)),
              "torch": (torch.nn.Linear(64, 64, device=dev),
                        torch.nn.Sequential(torch.nn.Linear(64, 64),
                                            torch.nn.GELU(approximate="tanh"),
                                            torch.nn.Linear(64, 64)).to(dev))}
    sync = torch.cuda.synchronize if dev.startswith("cuda") else (lambda: None)

    def per_call(fn, n):
        for _ in range(max(n // 10, 5)):
            fn()
        sync()
        samples = []
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            sync()
            samples.append((time.perf_counter() - t0) / n * 1e6)
        return min(samples)

    def no_grad(f):
        def run():
            with torch.no_grad():
                f(x)
        return run

    out = {}
    for name, (linear, mlp) in layers.items():
        out[f"{name} Linear fwd"] = per_call(no_grad(linear), calls)
        out[f"{name} Linear fwd (grad)"] = per_call(lambda: linear(xg), calls)
        out[f"{name} Linear fwd+bwd"] = per_call(lambda: linear(xg).sum().backward(), calls // 2)
        out[f"{name} MLP fwd+bwd"] = per_call(lambda: mlp(xg).sum().backward(), calls // 2)
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--no-compile", action="store_true", help="skip torch.compile (inductor)")
    p.add_argument("--overhead-only", action="store_true",
                   help="only the per-call host overhead (case 3); on the CPU without CUDA")
    p.add_argument("--json")
    p.add_argument("--summary")
    args = p.parse_args(argv)
    if args.overhead_only:
        dev = "cuda" if torch.cuda.is_available() else "cpu"
        r = overhead_case(200 if args.quick else 2000, dev)
        line = (f"gpula.torch 64-wide layers on {dev}, host us per call (best of 5 loops): "
                + ", ".join(f"{k} {v:.1f}" for k, v in r.items()))
        log(line)
        append_summary(args.summary, [line])
        save_json(args.json, {"device": dev, "overhead_us": r})
        return 0
    if not torch.cuda.is_available():
        log("bench_torch.py: no CUDA device")
        append_summary(args.summary, ["gpula.torch: n/a (no CUDA device)"])
        return 0
    device = torch.cuda.get_device_name()
    log(f"gpula.torch benchmark, {device}, torch {torch.__version__}")
    log(gpula_description())
    shapes = [(2048, 1024, 4096)] if args.quick else [(16384, 4096, 16384), (65536, 1024, 4096)]
    gp_n = 512 if args.quick else 4096
    results = {"device": device, "quick": args.quick, "ffn": {}, "gp": {}, "overhead_us": {}}

    def emit(line):  # each line reaches the summary as soon as it is measured (a timeout keeps it)
        log(line)
        append_summary(args.summary, [line])

    emit(f"gpula.torch ({device}, torch {torch.__version__}{', QUICK sizes' if args.quick else ''}; "
         "ms per forward+backward step, medians; ratio = peer / gpula):")
    for dtype in (torch.float64, torch.float32):
        r = gp_case(gp_n, 8, dtype, args.repeats)
        results["gp"][str(dtype)] = r
        emit(f"  GP step 8 x n={gp_n} {str(dtype)[6:]}: gpula.torch.linalg {r['gpula']:.2f} ms, "
             f"torch.linalg {r['torch']:.2f} ms, ratio {r['torch'] / r['gpula']:.2f} "
             f"(losses differ by {r['loss rel. difference']:.1e})")
    r = overhead_case(200 if args.quick else 2000)
    results["overhead_us"] = r
    emit("  64-wide layers, host us per call (best of 5 loops): "
         + ", ".join(f"{k} {v:.1f}" for k, v in r.items()))
    for t, d, h in shapes:
        log(f"FFN {t}x{d}x{h} ...")
        r = ffn_case(t, d, h, args.repeats, not args.no_compile)
        results["ffn"][f"{t}x{d}x{h}"] = r
        floor = r["GEMMs alone"]
        parts = []
        for name in ("gpula", "torch eager", "torch compiled", "GEMMs alone"):
            if name in r:
                parts.append(f"{name} {r[name]:.2f} ({r['flops'] / r[name] / 1e9:.0f} TFLOP/s)")
            else:
                parts.append(f"{name} n/a")
        emit(f"  FFN bf16 T={t} {d}->{h}->{d}: " + ", ".join(parts))
        comp = r.get("torch compiled")
        emit(f"    gpula / GEMM floor {r['gpula'] / floor:.3f} (goal <= 1.03), eager torch / "
             f"gpula {r['torch eager'] / r['gpula']:.2f}, compiled torch / gpula "
             + (f"{comp / r['gpula']:.2f}" if comp else "n/a")
             + f"; outputs differ by {r['max |y gpula - y torch| / max |y|']:.1e} (max, rel.)")
    save_json(args.json, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
