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

import datetime
import os
import signal
import sys
import time

os.environ.pop("CUPY_TF32", None)  # fp32 must mean full fp32 for cupy; tf32 is set per case

import torch  # noqa: E402
from bench_matmul_mlp import (  # noqa: E402
    MLP_READINGS,
    MLP_SHAPES,
    autotune_section,
    mlp_case,
    mlp_describe,
    mlp_distinct,
)
from common import (
    NA,
    Stopped,
    arg_parser,  # noqa: E402
    first,
    free_memory,
    free_plans,
    group_rows,
    host_overhead,
    log,
    nvidia_smi,
    randn,
    rel_err,
    save_json,
    stop_on_sigterm,
    time_group,
    try_import,
    versions,
    warn,
)

gl, GL_ERR = try_import("gpula")
cp, CP_ERR = try_import("cupy")
nvm, NVM_ERR = try_import("nvmath", "nvmath.linalg.advanced")


# ---------------------------------------------------------------------------------------------
# helpers


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
                    options={"result_type": nvm.CudaDataType.CUDA_R_16BF}, stream=torch.cuda.current_stream())
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
                mm = nvm.linalg.advanced.Matmul(a, b, options=opts or None, stream=torch.cuda.current_stream())
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
    free_plans(cleanup)

    flops = 2.0 * M * N * K
    base = times.get("torch", {}).get("ms")
    rows = group_rows(["gpula", "torch", "torch_fast_accum", "cupy", "nvmath"], times, notes,
                      {"dtype": dt, "m": M, "n": N, "k": K}, flops,
                      lambda lib, ms: {"vs_torch": (base / ms) if base else None,
                                       "rel_err": outs.get(lib)})
    for row in rows:
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
                    nmm = nvm.linalg.advanced.Matmul(A[0], B[0], stream=torch.cuda.current_stream())
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
            free_plans([nmm])
        free_memory()


# ---------------------------------------------------------------------------------------------


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
    save_json(args[0].json, res)


def main(argv=None):
    p = arg_parser(__doc__, summary=False, quick="small sizes and few repeats (smoke test)")
    p.add_argument("--sections", default="ceil,gemm,mlp,overhead,autotune")
    p.add_argument("--dtypes", default=",".join(GEMM_DTYPES))
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
        save_json(args.json, res)
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
    stop_on_sigterm()
    save_json(args.json, res)

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
        save_json(args.json, res)
        if "stopped" not in meta:
            meta["nvidia_smi_after"] = nvidia_smi()
            save_json(args.json, res)
        log(f"done in {meta['seconds']:.0f} s; nvidia-smi after: {meta.get('nvidia_smi_after')}")
    return 143 if "stopped" in meta else 0


if __name__ == "__main__":
    sys.exit(main())
