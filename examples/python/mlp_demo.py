"""A two-layer MLP, forward and backward, with gpula's fused matmul epilogues.

    forward:   h, aux = GELU_AUX_BIAS(x @ W1 + b1)        aux["gelu_aux"] keeps the pre-activation
               y      = BIAS(h @ W2 + b2)
    loss:      L = 0.5 * ||y - t||^2                      dY = y - t
    backward:  dH, g  = DGELU_BGRAD(dY @ W2^T, gelu_aux)  g["dgelu_bgrad"] = db1
               dW1    = x^T @ dH
               dW2, g = BGRADB(h^T @ dY)                   g["bgradb"] = db2

Runs on the GPU with PyTorch (or CuPy) when one is usable, else with NumPy on the CPU. Every
output is checked against a NumPy float64 reference; the script exits non-zero when an error is
past its tolerance. Usage: python mlp_demo.py [--dtype float32|float16|bfloat16] [--cpu]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np

import gpula as gl


def pick_backend(force_cpu: bool):
    """(name, to_package(np_array, dtype), to_numpy64(x), synchronize, transpose)."""
    if not force_cpu and gl.devices()["cuda_device_count"] > 0:
        try:
            import torch

            if torch.cuda.is_available():
                return (
                    "torch-cuda",
                    lambda a, dt: torch.from_numpy(a).to("cuda", getattr(torch, dt)),
                    lambda x: x.detach().float().cpu().numpy().astype(np.float64),
                    torch.cuda.synchronize,
                    lambda x: x.T,
                )
        except ImportError:
            pass
        try:
            import cupy

            return (
                "cupy",
                lambda a, dt: cupy.asarray(a.astype(dt)),
                lambda x: cupy.asnumpy(x).astype(np.float64),
                lambda: cupy.cuda.get_current_stream().synchronize(),
                lambda x: x.T,
            )
        except ImportError:
            pass

    def to_np(a, dt):
        if dt == "bfloat16":
            import ml_dtypes

            return a.astype(ml_dtypes.bfloat16)
        return a.astype(dt)

    return (
        "numpy-cpu",
        to_np,
        lambda x: np.asarray(x).astype(np.float32).astype(np.float64),
        lambda: None,
        lambda x: x.T,
    )


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


def gelu_grad(x):
    u = np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)
    t = np.tanh(u)
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * np.sqrt(2 / np.pi) * (1 + 3 * 0.044715 * x * x)


def step(x, w1, b1, w2, b2, target, T):
    """One forward and backward pass; returns every output by name."""
    h, aux = gl.matmul(x, w1, epilog=gl.Epilog.GELU_AUX_BIAS, epilog_inputs={"bias": b1})
    y = gl.matmul(h, w2, epilog=gl.Epilog.BIAS, epilog_inputs={"bias": b2})
    dy = y - target
    dh, g1 = gl.matmul(
        dy, T(w2), epilog=gl.Epilog.DGELU_BGRAD, epilog_inputs={"gelu_aux": aux["gelu_aux"]}
    )
    dw1 = gl.matmul(T(x), dh)
    dw2, g2 = gl.matmul(T(h), dy, epilog=gl.Epilog.BGRADB)
    return {
        "h": h,
        "y": y,
        "dH": dh,
        "db1": g1["dgelu_bgrad"],
        "dW1": dw1,
        "dW2": dw2,
        "db2": g2["bgradb"],
    }


def reference(x, w1, b1, w2, b2, target):
    pre = x @ w1 + b1
    h = gelu(pre)
    y = h @ w2 + b2
    dy = y - target
    dh = (dy @ w2.T) * gelu_grad(pre)
    return {
        "h": h,
        "y": y,
        "dH": dh,
        "db1": dh.sum(0),
        "dW1": x.T @ dh,
        "dW2": h.T @ dy,
        "db2": dy.sum(0),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dtype", default="float32", choices=["float32", "float16", "bfloat16"])
    p.add_argument("--cpu", action="store_true", help="NumPy on the CPU even with a GPU")
    p.add_argument("--repeats", type=int, default=20)
    args = p.parse_args()

    name, to_pkg, to_np64, sync, T = pick_backend(args.cpu)
    gpu = name != "numpy-cpu"
    batch, d_in, hidden, d_out = (512, 1024, 4096, 1024) if gpu else (128, 256, 512, 128)
    rng = np.random.default_rng(0)
    host = {
        "x": rng.standard_normal((batch, d_in)),
        "w1": rng.standard_normal((d_in, hidden)) / np.sqrt(d_in),
        "b1": 0.1 * rng.standard_normal(hidden),
        "w2": rng.standard_normal((hidden, d_out)) / np.sqrt(hidden),
        "b2": 0.1 * rng.standard_normal(d_out),
        "target": rng.standard_normal((batch, d_out)),
    }
    dev = {k: to_pkg(v, args.dtype) for k, v in host.items()}
    # The reference sees exactly the rounded inputs.
    ref = reference(*(to_np64(dev[k]) for k in ("x", "w1", "b1", "w2", "b2", "target")))

    print(
        f"gpula {gl.__version__} on {name}, {args.dtype}: batch {batch}, "
        f"{d_in} -> {hidden} -> {d_out}"
    )
    out = step(*(dev[k] for k in ("x", "w1", "b1", "w2", "b2", "target")), T)
    sync()
    tol = 1e-4 if args.dtype == "float32" else 3e-2
    failed = False
    for k, r in ref.items():
        got = to_np64(out[k])
        err = float(np.abs(got - r).max() / max(np.abs(r).max(), 1e-30))
        bad = not err <= tol
        failed |= bad
        print(f"  {k:4s} {tuple(got.shape)!s:14s} max rel err {err:.2e}{'  FAIL' if bad else ''}")

    # Timings: whole step, and the two largest matmuls alone (plans come from the cache).
    def median_ms(fn):
        times = []
        for _ in range(args.repeats):
            sync()
            t0 = time.perf_counter()
            fn()
            sync()
            times.append((time.perf_counter() - t0) * 1e3)
        return statistics.median(times)

    args_ = [dev[k] for k in ("x", "w1", "b1", "w2", "b2", "target")]
    t_step = median_ms(lambda: step(*args_, T))
    flops = 2 * batch * hidden * (d_in + d_out) * 3  # forward + two backward products per layer
    print(f"step (fwd+bwd, 5 matmuls): median {t_step:.3f} ms, {flops / t_step / 1e6:.1f} GFLOP/s")
    with gl.Matmul(dev["x"], dev["w1"]) as mm:
        mm.plan(epilog=gl.Epilog.GELU_AUX_BIAS, epilog_inputs={"bias": dev["b1"]})
        mm.autotune(iterations=3)
        t_fwd = median_ms(mm.execute)
    print(f"planned, autotuned GELU_AUX_BIAS forward: median {t_fwd:.3f} ms")
    print("FAILED" if failed else "all outputs within tolerance")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
