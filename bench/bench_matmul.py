#!/usr/bin/env python3
"""gpula matmul side by side with torch, cupy and nvmath-python, in one process on one GPU.

Sections (all on by default; --sections picks some):
  ceil      ceilings: device-to-device copy bandwidth (bytes read + written)
  gemm      8192^3 in bf16, fp16, tf32, fp32, fp64, fp8 (e4m3 x e4m3 -> bf16, B = W.T)
  mlp       y = act(x @ W + b) in bf16 at 8192x4096x4096, 32768x1024x4096, 65536x512x2048, each
            shape a x b x c read two ways: M x N x K (x: a x c, W: c x b; issue 2's table) and
            M x K x N, the up-projection d_in = b -> d_out = c (x: a x b, W: b x c); a shape
            with b == c is the same product both ways and runs once
  overhead  Python per-call cost of a planned 64^3 execute vs torch.matmul and gl.matmul
  autotune  autotuned plan vs the heuristic's first choice (8192^3 bf16 and the MLP cases,
            read as M x N x K)

Timing: CUDA events around a loop of calls, after warm-up; the libraries of one case are timed
in interleaved rounds (so clock drift hits all alike); each number is the median over rounds,
and `spread` is (max - min) / median over those rounds. Small cases (64^3) use a host clock over
many calls with one synchronize at the end. Inputs are fresh random normals (never zeros).
Each result is checked once against a float64 reference: rel_err = ||out - ref||_F / ||ref||_F.
Benchmarks report; they never assert times.

  python3 bench/bench_matmul.py --json out.json [--quick] [--sections gemm,mlp]
"""
from __future__ import annotations

import argparse
import datetime
import importlib
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import time
import traceback

os.environ.pop("CUPY_TF32", None)  # fp32 must mean full fp32 for cupy; tf32 is set per case

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

NA = "n/a"


def _try_import(name, *submodules):
    """(module, None), or (None, why) when it cannot be imported: its rows then read n/a."""
    try:
        mod = importlib.import_module(name)
        for sub in submodules:
            importlib.import_module(sub)
        return mod, None
    except Exception as e:  # noqa: BLE001 - any import failure means "not available"
        return None, f"{type(e).__name__}: {e}"


gl, GL_ERR = _try_import("gpula")
cp, CP_ERR = _try_import("cupy")
nvm, NVM_ERR = _try_import("nvmath", "nvmath.linalg.advanced")


def log(*args):
    print(*args, flush=True)


def warn(where, exc):
    """A failed case: one line on stdout, the traceback on stderr (the full log keeps both)."""
    msg = f"{type(exc).__name__}: {exc}".splitlines()[0][:200]
    log(f"  [{where}] n/a: {msg}")
    traceback.print_exc(file=sys.stderr)
    return msg


# ---------------------------------------------------------------------------------------------
# timing


def _sync():
    torch.cuda.synchronize()


def time_group(fns, *, target_ms, repeats, warmup_ms=60.0):
    """fns: {name: callable(i)}. Times each in interleaved rounds with CUDA events.

    Returns {name: {"ms": median, "spread": (max-min)/median, "iters": n}} or an "error" entry.
    """
    ev = {}
    iters = {}
    out = {}
    for name, fn in list(fns.items()):
        try:
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            fn(0)
            _sync()
            s.record()
            for i in range(3):
                fn(i)
            e.record()
            e.synchronize()
            est = max(s.elapsed_time(e) / 3, 1e-3)
            for i in range(int(min(max(warmup_ms / est, 1), 2000))):
                fn(i)
            _sync()
            ev[name] = (s, e)
            iters[name] = int(min(max(target_ms / est, 3), 5000))
        except Exception as exc:  # noqa: BLE001
            out[name] = {"error": warn(name, exc)}
    samples = {name: [] for name in ev}
    for _ in range(repeats):
        for name in list(samples):
            fn, (s, e), n = fns[name], ev[name], iters[name]
            try:
                s.record()
                for i in range(n):
                    fn(i)
                e.record()
                e.synchronize()
                samples[name].append(s.elapsed_time(e) / n)
            except Exception as exc:  # noqa: BLE001
                out[name] = {"error": warn(name, exc)}
                del samples[name]
    for name, v in samples.items():
        med = statistics.median(v)
        out[name] = {"ms": med, "spread": (max(v) - min(v)) / med, "iters": iters[name]}
    return out


def host_overhead(call, *, n_calls, repeats, burst=256, bursts=40):
    """Per-call cost of `call(i)` in microseconds, median over repeats:
    us_per_call: host clock over n_calls plus one final synchronize, / n_calls;
    host_enqueue_us: host clock over bursts of `burst` calls (under the launch queue's depth),
      the synchronize left out: the host-side cost alone;
    device_us_per_call: CUDA events around the n_calls, / n_calls."""
    t0 = time.perf_counter()
    for i in range(200):
        call(i)
    _sync()
    per_call = (time.perf_counter() - t0) / 200
    # Slow calls (tens of microseconds) get fewer calls, so that a repeat stays near 0.3 s.
    n_calls = int(min(n_calls, max(1000, 0.3 / per_call)))
    bursts = int(min(bursts, max(8, 0.2 / (burst * per_call))))
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    wall, dev, enq = [], [], []
    for _ in range(repeats):
        _sync()
        s.record()
        t0 = time.perf_counter()
        for i in range(n_calls):
            call(i)
        e.record()
        _sync()
        t1 = time.perf_counter()
        wall.append((t1 - t0) / n_calls * 1e6)
        dev.append(s.elapsed_time(e) * 1e3 / n_calls)
        tot = 0.0
        for _b in range(bursts):
            _sync()
            t0 = time.perf_counter()
            for i in range(burst):
                call(i)
            tot += time.perf_counter() - t0
        _sync()
        enq.append(tot / (bursts * burst) * 1e6)
    return {
        "calls": n_calls,
        "us_per_call": statistics.median(wall),
        "host_enqueue_us": statistics.median(enq),
        "device_us_per_call": statistics.median(dev),
    }


# ---------------------------------------------------------------------------------------------
# helpers


def rel_err(out, ref):
    try:
        if isinstance(out, tuple):
            out = out[0]
        if not isinstance(out, torch.Tensor):
            out = torch.from_dlpack(out)
        d = out.to(torch.float64)
        if d.shape != ref.shape:
            return float("nan")
        if not torch.isfinite(d).all():
            return float("inf")
        return float(torch.linalg.vector_norm(d - ref) / torch.linalg.vector_norm(ref))
    except Exception as exc:  # noqa: BLE001
        warn("rel_err", exc)
        return float("nan")


def first(r):
    """gpula returns (result, aux) when an epilogue writes aux outputs; keep the result."""
    return r[0] if isinstance(r, tuple) else r


def randn(shape, dtype, gen):
    return torch.randn(shape, device="cuda", dtype=torch.float32, generator=gen).to(dtype)


def free_memory():
    _sync()
    torch.cuda.empty_cache()


def nvidia_smi():
    try:
        q = "name,clocks.sm,clocks.mem,temperature.gpu,power.draw,power.limit"
        return subprocess.run(
            ["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=20,
        ).stdout.strip()
    except Exception as exc:  # noqa: BLE001
        return f"n/a ({exc})"


class CupyTF32:
    """Switches cupy's float32 matmul to TF32 tensor cores for the duration (restored after)."""

    def __enter__(self):
        import cupy._core._routines_linalg as rl
        import numpy as np

        self.prev = rl.get_compute_type(np.float32)
        rl.set_compute_type(np.float32, rl.COMPUTE_TYPE_TF32)
        return self

    def __exit__(self, *a):
        import cupy._core._routines_linalg as rl
        import numpy as np

        rl.set_compute_type(np.float32, self.prev)


def torch_precision(mode):
    """'high' lets torch use TF32 for float32 matmuls (= allow_tf32=True); 'highest' is full fp32."""
    torch.set_float32_matmul_precision(mode)


def to_cupy(t):
    return cp.from_dlpack(t)


def nvm_stream():
    return torch.cuda.current_stream()


# ---------------------------------------------------------------------------------------------
# sections


def measure_ceilings(res, args):
    log("== ceilings")
    nbytes = (256 << 20) if args.quick else (2 << 30)
    gen = torch.Generator(device="cuda").manual_seed(1)
    src = torch.randint(0, 256, (nbytes,), dtype=torch.uint8, device="cuda", generator=gen)
    dst = torch.empty_like(src)
    t = time_group({"copy": lambda i: dst.copy_(src)}, target_ms=40, repeats=args.repeats)["copy"]
    bw = 2 * nbytes / (t["ms"] * 1e-3) / 1e12
    res["ceilings"]["copy_tb_s"] = bw
    res["ceilings"]["copy_bytes"] = nbytes
    log(f"  device-to-device copy: {bw:.2f} TB/s (read + write, {nbytes >> 20} MiB buffer)")


GEMM_DTYPES = ["bf16", "fp16", "tf32", "fp32", "fp64", "fp8"]


def _gl_fp8_options(gen):
    """MatmulOptions with a bf16 result, in whichever spelling gpula's Python API takes."""
    a = randn((64, 64), torch.float32, gen).to(torch.float8_e4m3fn)
    w = randn((64, 64), torch.float32, gen).to(torch.float8_e4m3fn)
    cands = []
    if hasattr(gl, "DType"):
        cands += [getattr(gl.DType, n) for n in ("bf16", "bfloat16") if hasattr(gl.DType, n)]
    cands += [torch.bfloat16, "bfloat16"]
    last = None
    for c in cands:
        try:
            opts = gl.MatmulOptions(result_type=c)
            r = first(gl.matmul(a, w.T, options=opts))
            if r.dtype == torch.bfloat16:
                return opts
        except Exception as exc:  # noqa: BLE001
            last = exc
    raise RuntimeError(f"no spelling of result_type=bfloat16 worked (last: {last})")


def gemm_case(res, args, dt):
    free_memory()  # the previous case's tensors went with its frame
    M = N = K = args.gemm_size
    gen = torch.Generator(device="cuda").manual_seed(100 + GEMM_DTYPES.index(dt))
    tdt = {"bf16": torch.bfloat16, "fp16": torch.float16, "tf32": torch.float32,
           "fp32": torch.float32, "fp64": torch.float64}.get(dt)
    fns, notes, outs = {}, {}, {}
    cleanup = []
    if dt == "fp8":
        a = randn((M, K), torch.float32, gen).to(torch.float8_e4m3fn)
        w = randn((N, K), torch.float32, gen).to(torch.float8_e4m3fn)  # row-major (N, K)
        b = w.T  # (K, N), column-major: the layout fp8 kernels read
        ref = a.to(torch.float32).to(torch.float64) @ b.to(torch.float32).to(torch.float64)
        one = torch.ones((), device="cuda", dtype=torch.float32)
        fns["torch"] = lambda i: torch._scaled_mm(a, b, one, one, out_dtype=torch.bfloat16)
        notes["torch"] = "torch._scaled_mm, scales 1, out bf16"
        fns["torch_fast_accum"] = lambda i: torch._scaled_mm(
            a, b, one, one, out_dtype=torch.bfloat16, use_fast_accum=True)
        notes["torch_fast_accum"] = "torch._scaled_mm use_fast_accum=True (informative)"
        if gl is not None:
            try:
                opts = _gl_fp8_options(gen)
                fns["gpula"] = lambda i: gl.matmul(a, b, options=opts)
                notes["gpula"] = "gl.matmul, result_type bf16"
            except Exception as exc:  # noqa: BLE001
                notes["gpula"] = warn("gpula fp8", exc)
        notes["cupy"] = "no fp8 matmul"
        if nvm is not None:
            try:
                mm = nvm.linalg.advanced.Matmul(
                    a, b, quantization_scales={"a": 1.0, "b": 1.0},
                    options={"result_type": nvm.CudaDataType.CUDA_R_16BF}, stream=nvm_stream())
                cleanup.append(mm)
                mm.plan()
                fns["nvmath"] = lambda i: mm.execute()
                notes["nvmath"] = "Matmul planned once, scales 1, result bf16"
            except Exception as exc:  # noqa: BLE001
                notes["nvmath"] = warn("nvmath fp8", exc)
    else:
        a = randn((M, K), tdt, gen)
        b = randn((K, N), tdt, gen)
        ref = a.to(torch.float64) @ b.to(torch.float64)
        fns["torch"] = lambda i: torch.matmul(a, b)
        notes["torch"] = "torch.matmul" + (
            " (set_float32_matmul_precision('high') = allow_tf32)" if dt == "tf32" else "")
        gl_opts = None
        if gl is not None:
            try:
                if dt == "tf32":
                    gl_opts = gl.MatmulOptions(compute_type=gl.ComputeType.COMPUTE_32F_FAST_TF32)
                gl_kw = {"options": gl_opts} if gl_opts is not None else {}
                fns["gpula"] = lambda i: gl.matmul(a, b, **gl_kw)
                notes["gpula"] = "gl.matmul" + (" COMPUTE_32F_FAST_TF32" if dt == "tf32" else "")
            except Exception as exc:  # noqa: BLE001
                notes["gpula"] = warn("gpula", exc)
        if cp is not None:
            try:
                ca, cb = to_cupy(a), to_cupy(b)
                fns["cupy"] = lambda i: cp.matmul(ca, cb)
                notes["cupy"] = "cupy.matmul" + (" (compute type TF32)" if dt == "tf32" else "")
            except Exception as exc:  # noqa: BLE001
                notes["cupy"] = warn("cupy", exc)
        if nvm is not None:
            try:
                opts = {}
                if dt == "tf32":
                    opts["compute_type"] = nvm.linalg.ComputeType.COMPUTE_32F_FAST_TF32
                mm = nvm.linalg.advanced.Matmul(a, b, options=opts or None, stream=nvm_stream())
                cleanup.append(mm)
                mm.plan()
                fns["nvmath"] = lambda i: mm.execute()
                notes["nvmath"] = "Matmul planned once" + (" COMPUTE_32F_FAST_TF32" if dt == "tf32" else "")
            except Exception as exc:  # noqa: BLE001
                notes["nvmath"] = warn("nvmath", exc)

    torch_precision("high" if dt == "tf32" else "highest")
    tf32_cupy = None
    try:
        if dt == "tf32" and "cupy" in fns:
            try:
                tf32_cupy = CupyTF32().__enter__()
            except Exception as exc:  # noqa: BLE001
                notes["cupy"] = warn("cupy TF32 compute type", exc)
                del fns["cupy"]
        # Correctness once per library. Outputs stay alive until all are checked, so that no
        # library gets a buffer that still holds another's correct result.
        keep = []
        for name, fn in list(fns.items()):
            try:
                keep.append(fn(0))
                outs[name] = rel_err(keep[-1], ref)
            except Exception as exc:  # noqa: BLE001
                notes[name] = warn(f"{dt} {name}", exc)
                del fns[name]
        del keep
        target = args.target_ms * (2 if dt in ("fp32", "fp64") else 1)
        times = time_group(fns, target_ms=target, repeats=args.repeats)
    finally:
        if tf32_cupy:
            tf32_cupy.__exit__()
        torch_precision("highest")
    for mm in cleanup:
        try:
            mm.free()
        except Exception:  # noqa: BLE001
            pass

    flops = 2.0 * M * N * K
    base = times.get("torch", {}).get("ms")
    order = ["gpula", "torch", "torch_fast_accum", "cupy", "nvmath"]
    for lib in order:
        t = times.get(lib, {})
        row = {"dtype": dt, "m": M, "n": N, "k": K, "lib": lib, "note": notes.get(lib, "")}
        if "ms" in t:
            row.update(ms=t["ms"], spread=t["spread"], tflops=flops / (t["ms"] * 1e-3) / 1e12,
                       vs_torch=(base / t["ms"]) if base else None, rel_err=outs.get(lib))
        elif lib in notes or lib in t:
            row["error"] = t.get("error") or notes.get(lib) or NA
        else:
            continue
        res["gemm"].append(row)
        log("  " + fmt_gemm_row(row))
    if dt == "bf16" and base:
        res["ceilings"]["bf16_tflops_torch"] = flops / (base * 1e-3) / 1e12


def fmt_gemm_row(r):
    if "ms" not in r:
        return f"{r['dtype']:5s} {r['lib']:17s} n/a ({r.get('error', '')})"
    vs = f"{r['vs_torch']:.3f}x" if r.get("vs_torch") else NA
    return (f"{r['dtype']:5s} {r['lib']:17s} {r['ms']:9.4f} ms {r['tflops']:8.1f} TFLOP/s "
            f"vs torch {vs:>7s}  rel_err {r['rel_err']:.2e}  spread {100 * r['spread']:.1f}%")


MLP_SHAPES = [(8192, 4096, 4096), (32768, 1024, 4096), (65536, 512, 2048)]
# Two readings of a shape "a x b x c" for y = act(x @ W + b), x: (M, K), W: (K, N), bias: (N,).
# "MxNxK" is issue 2's table: 65536x512x2048 is N = 512 outputs from K = 2048 inputs. "MxKxN"
# is the usual MLP reading tokens x d_in x d_out: 65536x512x2048 is the up-projection 512 -> 2048.
MLP_READINGS = {
    "MxNxK": "M x N x K",
    "MxKxN": "M x K x N (up-projection: d_in=K -> d_out=N)",
}


def mlp_dims(shape, reading):
    """(M, N, K) of the product for one reading of shape (a, b, c); see MLP_READINGS."""
    a, b, c = shape
    if reading == "MxNxK":
        return a, b, c
    if reading == "MxKxN":
        return a, c, b
    raise ValueError(f"unknown MLP reading {reading!r} (known: {', '.join(MLP_READINGS)})")


def mlp_describe(shape, reading):
    """'65536x512x2048: x 65536x512, W 512x2048' for the reading MxKxN."""
    M, N, K = mlp_dims(shape, reading)
    return f"{'x'.join(map(str, shape))}: x {M}x{K}, W {K}x{N}"


def mlp_distinct(shape, reading):
    """False where `reading` gives the same product as M x N x K (a x b x b): not run twice."""
    return reading == "MxNxK" or mlp_dims(shape, reading) != mlp_dims(shape, "MxNxK")


def mlp_inputs(M, N, K, seed):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    x = randn((M, K), torch.bfloat16, gen)
    w = randn((K, N), torch.bfloat16, gen) * (1.0 / math.sqrt(K))  # keep activations O(1)
    bias = randn((N,), torch.bfloat16, gen)
    return x, w, bias


def mlp_ref(x, w, bias, act):
    y = x.to(torch.float64) @ w.to(torch.float64) + bias.to(torch.float64)
    return torch.relu(y) if act == "relu" else F.gelu(y, approximate="tanh")


def mlp_case(res, args, shape, reading, act):
    """Times y = act(x @ W + b) for `shape` read as `reading` (MLP_READINGS); the rows keep the
    shape as given ("shape", "reading") and the product's own dimensions ("m", "n", "k")."""
    free_memory()
    M, N, K = mlp_dims(shape, reading)
    x, w, bias = mlp_inputs(M, N, K, seed=M + N + K + (0 if act == "relu" else 1))
    ref = mlp_ref(x, w, bias, act)
    use_gelu = act == "gelu"
    fns, notes, errs, transposed = {}, {}, {}, set()
    cleanup = []
    if gl is not None:
        try:
            ep = gl.Epilog.GELU_BIAS if use_gelu else gl.Epilog.RELU_BIAS
            fns["gpula"] = lambda i: gl.matmul(x, w, epilog=ep, epilog_inputs={"bias": bias})
            notes["gpula"] = f"gl.matmul epilog={'GELU_BIAS' if use_gelu else 'RELU_BIAS'}"
        except Exception as exc:  # noqa: BLE001
            notes["gpula"] = warn("gpula mlp", exc)
    fns["addmm_act"] = lambda i: torch._addmm_activation(bias, x, w, use_gelu=use_gelu)
    notes["addmm_act"] = "torch._addmm_activation (cuBLASLt epilogue; GELU = tanh approx.)"
    if use_gelu:
        fns["unfused"] = lambda i: F.gelu(torch.matmul(x, w) + bias, approximate="tanh")
        notes["unfused"] = "gelu(matmul(x, w) + b, approximate='tanh')"
    else:
        fns["unfused"] = lambda i: torch.relu(torch.matmul(x, w) + bias)
        notes["unfused"] = "relu(matmul(x, w) + b)"
    if nvm is not None:
        try:
            E = nvm.linalg.advanced.MatmulEpilog
            # nvmath's bias runs along the result's rows (length M), so compute y^T = W^T x^T.
            mm = nvm.linalg.advanced.Matmul(w.T, x.T, stream=nvm_stream())
            cleanup.append(mm)
            mm.plan(epilog=E.GELU_BIAS if use_gelu else E.RELU_BIAS, epilog_inputs={"bias": bias})
            fns["nvmath"] = lambda i: mm.execute()
            transposed.add("nvmath")
            notes["nvmath"] = "Matmul(W.T, x.T) planned once, epilog *_BIAS; result is y.T"
        except Exception as exc:  # noqa: BLE001
            notes["nvmath"] = warn("nvmath mlp", exc)
    keep = []  # outputs stay alive until all are checked (see gemm_case)
    for name, fn in list(fns.items()):
        try:
            out = first(fn(0))
            keep.append(out)
            errs[name] = rel_err(out.T if name in transposed else out, ref)
        except Exception as exc:  # noqa: BLE001
            notes[name] = warn(f"mlp {name}", exc)
            del fns[name]
    del keep
    times = time_group(fns, target_ms=args.target_ms, repeats=args.repeats)
    for mm in cleanup:
        try:
            mm.free()
        except Exception:  # noqa: BLE001
            pass

    flops = 2.0 * M * N * K
    nbytes = 2.0 * (M * K + K * N + N + M * N)
    peak = res["ceilings"].get("bf16_tflops_torch")
    bw = res["ceilings"].get("copy_tb_s")
    floor_ms = max(flops / (peak * 1e12), nbytes / (bw * 1e12)) * 1e3 if peak and bw else None
    t_g = times.get("gpula", {}).get("ms")
    for lib in ["gpula", "addmm_act", "unfused", "nvmath"]:
        t = times.get(lib, {})
        row = {"shape": "x".join(map(str, shape)), "reading": reading, "m": M, "n": N, "k": K,
               "act": act, "lib": lib, "note": notes.get(lib, "")}
        if "ms" in t:
            row.update(ms=t["ms"], spread=t["spread"], tflops=flops / (t["ms"] * 1e-3) / 1e12,
                       rel_err=errs.get(lib),
                       gpula_speedup=(t["ms"] / t_g) if t_g else None,
                       of_floor=(floor_ms / t["ms"]) if floor_ms else None)
        elif lib in notes or lib in t:
            row["error"] = t.get("error") or notes.get(lib) or NA
        else:
            continue
        res["mlp"].append(row)
        log("  " + fmt_mlp_row(row))
    res["mlp_floor_ms"][f"{M}x{N}x{K}"] = floor_ms  # keyed by the product's own M x N x K


def fmt_mlp_row(r):
    head = f"{r['shape']:>17s} {r.get('reading', 'MxNxK')} {r['act']:4s} {r['lib']:9s}"
    if "ms" not in r:
        return f"{head} n/a ({r.get('error', '')})"
    sp = f"{r['gpula_speedup']:.3f}x" if r.get("gpula_speedup") else NA
    fl = f"{100 * r['of_floor']:.0f}%" if r.get("of_floor") else NA
    return (f"{head} {r['ms']:8.4f} ms {r['tflops']:7.1f} TFLOP/s gpula speedup {sp:>7s} "
            f"of floor {fl:>4s} rel_err {r['rel_err']:.2e} spread {100 * r['spread']:.1f}%")


def overhead_section(res, args):
    n = 64
    n_sets = 16  # rotated input sets for the function forms
    n_calls = args.overhead_calls
    for dt_name, tdt in (("f32", torch.float32), ("bf16", torch.bfloat16)):
        gen = torch.Generator(device="cuda").manual_seed(7 if dt_name == "f32" else 8)
        A = [randn((n, n), tdt, gen) for _ in range(n_sets)]
        B = [randn((n, n), tdt, gen) for _ in range(n_sets)]
        ref0 = A[0].to(torch.float64) @ B[0].to(torch.float64)
        cases = {}
        if gl is not None:
            try:
                mm = gl.Matmul(A[0], B[0])
                mm.plan()
                cases["gpula_planned_execute"] = (lambda i: mm.execute(),
                                                  "gl.Matmul planned once; execute() (bound operands)")
                cases["gpula_function"] = (lambda i: gl.matmul(A[i % n_sets], B[i % n_sets]),
                                           f"gl.matmul, {n_sets} input sets rotated")
            except Exception as exc:  # noqa: BLE001
                res["overhead"].append({"case": f"gpula_{dt_name}", "dtype": dt_name,
                                        "error": warn("gpula overhead", exc)})
        cases["torch_matmul"] = (lambda i: torch.matmul(A[i % n_sets], B[i % n_sets]),
                                 f"torch.matmul, {n_sets} input sets rotated")
        if dt_name == "f32":
            if nvm is not None:
                try:
                    nmm = nvm.linalg.advanced.Matmul(A[0], B[0], stream=nvm_stream())
                    nmm.plan()
                    cases["nvmath_planned_execute"] = (lambda i: nmm.execute(),
                                                       "nvmath Matmul planned once; execute()")
                except Exception as exc:  # noqa: BLE001
                    warn("nvmath overhead", exc)
            if cp is not None:
                try:
                    CA = [to_cupy(t) for t in A]
                    CB = [to_cupy(t) for t in B]
                    cases["cupy_matmul"] = (lambda i: cp.matmul(CA[i % n_sets], CB[i % n_sets]),
                                            f"cupy.matmul, {n_sets} input sets rotated")
                except Exception as exc:  # noqa: BLE001
                    warn("cupy overhead", exc)
        # All checks before any timing: outputs stay alive until all are checked (see gemm_case).
        keep, rows = [], {}
        for name, (call, note) in cases.items():
            rows[name] = row = {"case": name, "dtype": dt_name, "note": note}
            try:
                keep.append(first(call(0)))
                row["rel_err"] = rel_err(keep[-1], ref0)
            except Exception as exc:  # noqa: BLE001
                row["error"] = warn(f"overhead {name}", exc)
        del keep
        for name, (call, note) in cases.items():
            row = rows[name]
            try:
                if "error" in row:
                    raise RuntimeError(row["error"])
                row.update(host_overhead(call, n_calls=n_calls, repeats=args.repeats_overhead))
                log(f"  {dt_name:4s} {name:24s} {row['us_per_call']:7.2f} us/call  host enqueue "
                    f"{row['host_enqueue_us']:6.2f} us  device {row['device_us_per_call']:6.2f} us"
                    f"  rel_err {row['rel_err']:.1e}")
            except Exception as exc:  # noqa: BLE001
                row["error"] = warn(f"overhead {name}", exc)
            res["overhead"].append(row)
        if dt_name == "f32" and nvm is not None and "nvmath_planned_execute" in cases:
            try:
                nmm.free()
            except Exception:  # noqa: BLE001
                pass
        free_memory()


def autotune_section(res, args):
    if gl is None:
        res["autotune"].append({"case": "all", "error": f"gpula not importable: {GL_ERR}"})
        return
    S = args.gemm_size
    cases = [("bf16 %d^3" % S, S, S, S, None)]
    for (M, N, K) in args.mlp_shapes:
        for act in ("relu", "gelu"):
            cases.append((f"{M}x{N}x{K} {act}", M, N, K, act))
    for label, M, N, K, act in cases:
        row = {"case": label}
        try:
            if act is None:
                gen = torch.Generator(device="cuda").manual_seed(300)
                x = randn((M, K), torch.bfloat16, gen)
                w = randn((K, N), torch.bfloat16, gen)
                plan_kw = {}
                ref = x.to(torch.float64) @ w.to(torch.float64)
            else:
                x, w, bias = mlp_inputs(M, N, K, seed=400 + M + (0 if act == "relu" else 1))
                ep = gl.Epilog.GELU_BIAS if act == "gelu" else gl.Epilog.RELU_BIAS
                plan_kw = {"epilog": ep, "epilog_inputs": {"bias": bias}}
                ref = mlp_ref(x, w, bias, act)
            with gl.Matmul(x, w) as heur, gl.Matmul(x, w) as tuned:
                heur.plan(**plan_kw)
                cands = tuned.plan(**plan_kw)
                t0 = time.perf_counter()
                chosen = tuned.autotune(iterations=args.autotune_iterations)
                row["autotune_s"] = time.perf_counter() - t0
                row["candidates"] = len(cands) if cands is not None else None
                row["chosen"] = _describe(chosen)
                out_h, out_t = first(heur.execute()), first(tuned.execute())
                row["rel_err_heuristic"] = rel_err(out_h, ref)
                row["rel_err_autotuned"] = rel_err(out_t, ref)
                del out_h, out_t
                t = time_group({"heuristic": lambda i: heur.execute(),
                                "autotuned": lambda i: tuned.execute()},
                               target_ms=args.target_ms, repeats=args.repeats)
            th, ta = t["heuristic"], t["autotuned"]
            row.update(heuristic_ms=th["ms"], autotuned_ms=ta["ms"],
                       spread=max(th["spread"], ta["spread"]),
                       speedup=th["ms"] / ta["ms"])
            log(f"  {label:24s} heuristic {th['ms']:8.4f} ms  autotuned {ta['ms']:8.4f} ms  "
                f"heuristic/autotuned {row['speedup']:.3f}  spread {100 * row['spread']:.1f}%  "
                f"({row['candidates']} candidates, {row['autotune_s']:.2f} s; {row['chosen']})")
            del x, w, ref
        except Exception as exc:  # noqa: BLE001
            row["error"] = warn(f"autotune {label}", exc)
        res["autotune"].append(row)
        free_memory()


def _describe(algo):
    if algo is None:
        return ""
    if isinstance(algo, dict):
        return str(algo.get("description") or algo)
    d = getattr(algo, "describe", None)
    try:
        return d() if callable(d) else str(algo)
    except Exception:  # noqa: BLE001
        return str(algo)


# ---------------------------------------------------------------------------------------------


def versions():
    v = {"python": sys.version.split()[0], "torch": torch.__version__,
         "cuda_runtime (torch)": torch.version.cuda}
    v["gpula"] = getattr(gl, "__version__", "?") if gl is not None else f"n/a ({GL_ERR})"
    v["cupy"] = cp.__version__ if cp is not None else f"n/a ({CP_ERR})"
    v["nvmath-python"] = nvm.__version__ if nvm is not None else f"n/a ({NVM_ERR})"
    from importlib import metadata

    for dist in ("cuda-core", "cuda-bindings", "cuda-pathfinder"):  # what nvmath-python needs
        try:
            v[dist] = metadata.version(dist)
        except Exception:  # noqa: BLE001
            v[dist] = "not installed"
    if gl is not None:
        try:
            v["gpula devices"] = gl.devices()["description"]
        except Exception as exc:  # noqa: BLE001
            v["gpula devices"] = f"n/a ({exc})"
    return v


def save(res, path):
    if path:
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(res, f, indent=1, default=str)
        os.replace(tmp, path)


def guarded(fn, res, *args):
    """One case failing (out of memory, an API mismatch) must not stop the others. The results
    so far are saved after each case, so that a run stopped midway still leaves its numbers."""
    try:
        fn(res, *args)
    except Exception as exc:  # noqa: BLE001
        res["errors"].append(f"{fn.__name__}{args[1:]}: {warn(fn.__name__, exc)}")
        try:
            free_memory()
        except Exception:  # noqa: BLE001
            pass
    save(res, args[0].json)


class Stopped(BaseException):
    """SIGTERM (e.g. from `timeout`): stop, keep what was measured."""


def _on_sigterm(signum, frame):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # `timeout` signals the process group too
    raise Stopped()


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", help="write all results here")
    p.add_argument("--sections", default="ceil,gemm,mlp,overhead,autotune")
    p.add_argument("--dtypes", default=",".join(GEMM_DTYPES))
    p.add_argument("--quick", action="store_true", help="small sizes and few repeats (smoke test)")
    p.add_argument("--repeats", type=int, default=7)
    p.add_argument("--target-ms", type=float, default=40.0, help="device time per timed block")
    p.add_argument("--overhead-calls", type=int, default=10000)
    p.add_argument("--repeats-overhead", type=int, default=5)
    p.add_argument("--autotune-iterations", type=int, default=5)
    p.add_argument("--gemm-size", type=int, help="square GEMM size (default 8192; 2048 with --quick)")
    p.add_argument("--mlp-shapes", help="MxNxK,... (default the three shapes of issue 2)")
    args = p.parse_args(argv)
    size, shapes = args.gemm_size, args.mlp_shapes
    args.gemm_size = 8192
    args.mlp_shapes = MLP_SHAPES
    if args.quick:
        args.gemm_size = 2048
        args.mlp_shapes = [(4096, 1024, 1024), (8192, 512, 1024)]
        args.repeats = min(args.repeats, 3)
        args.target_ms = min(args.target_ms, 10.0)
        args.overhead_calls = min(args.overhead_calls, 2000)
        args.repeats_overhead = min(args.repeats_overhead, 3)
    if size:
        args.gemm_size = size
    if shapes:
        args.mlp_shapes = [tuple(int(v) for v in sh.split("x")) for sh in shapes.split(",")]
    sections = set(args.sections.split(","))

    res = {"meta": {}, "ceilings": {}, "gemm": [], "mlp": [], "mlp_floor_ms": {}, "overhead": [],
           "autotune": [], "errors": []}
    meta = res["meta"]
    meta["date"] = datetime.date.today().isoformat()
    meta["versions"] = versions()
    meta["quick"] = args.quick
    meta["repeats"] = args.repeats
    meta["target_ms"] = args.target_ms
    if not torch.cuda.is_available():
        log("no CUDA device: nothing to benchmark")
        meta["skipped"] = "no CUDA device"
        if args.json:
            with open(args.json, "w") as f:
                json.dump(res, f, indent=1)
        return 0
    prop = torch.cuda.get_device_properties(0)
    meta["device"] = prop.name
    meta["sms"] = prop.multi_processor_count
    meta["nvidia_smi_before"] = nvidia_smi()
    log(f"device: {prop.name}, {prop.multi_processor_count} SMs, "
        f"{prop.total_memory / 2**30:.0f} GiB; torch default stream {torch.cuda.current_stream().cuda_stream}")
    for k, v in meta["versions"].items():
        log(f"  {k}: {v}")
    t_start = time.perf_counter()
    signal.signal(signal.SIGTERM, _on_sigterm)
    save(res, args.json)

    try:
        if "ceil" in sections:
            guarded(measure_ceilings, res, args)
        if "gemm" in sections:
            log(f"== gemm {args.gemm_size}^3 (TFLOP/s = 2MNK/t; vs torch = torch time / lib time)")
            for dt in args.dtypes.split(","):
                guarded(gemm_case, res, args, dt)
        if "mlp" in sections:
            log("== mlp y = act(x @ W + b), bf16, x: (M, K), W: (K, N), b: (N,) "
                "(gpula speedup = lib time / gpula time)")
            for reading, label in MLP_READINGS.items():
                log(f"-- shapes read as {label}: " + "; ".join(
                    mlp_describe(sh, reading) if mlp_distinct(sh, reading)
                    else "x".join(map(str, sh)) + " (same product as M x N x K, not rerun)"
                    for sh in args.mlp_shapes))
                for shape in args.mlp_shapes:
                    if mlp_distinct(shape, reading):
                        for act in ("relu", "gelu"):
                            guarded(mlp_case, res, args, shape, reading, act)
        if "overhead" in sections:
            log(f"== Python per-call overhead, 64^3, {args.overhead_calls} calls per repeat")
            guarded(overhead_section, res, args)
        if "autotune" in sections:
            log("== autotune vs the heuristic's first choice (heuristic/autotuned >= 1: autotune no slower)")
            guarded(autotune_section, res, args)
    except Stopped:
        meta["stopped"] = "SIGTERM: the run was stopped before its end; later cases are missing"
        log(meta["stopped"])
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        meta["seconds"] = time.perf_counter() - t_start
        save(res, args.json)
        if "stopped" not in meta:
            meta["nvidia_smi_after"] = nvidia_smi()
            save(res, args.json)
        log(f"done in {meta['seconds']:.0f} s; nvidia-smi after: {meta.get('nvidia_smi_after')}")
    return 143 if "stopped" in meta else 0


if __name__ == "__main__":
    sys.exit(main())
