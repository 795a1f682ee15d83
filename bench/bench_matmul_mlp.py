"""The MLP-layer family of bench_matmul.py: y = act(x @ W + b) in bf16 with a fused bias+ReLU or
bias+GELU epilogue beside torch._addmm_activation, unfused torch and nvmath-python, and the
autotune section (autotuned plan vs the heuristic's first choice, on 8192^3 and these layers).

bench_matmul.py imports and runs these sections in its process (one JSON, one set of ceilings:
the MLP floor needs the copy bandwidth and the bf16 rate it measured); see its docstring.
"""
from __future__ import annotations

import math
import time

import torch
import torch.nn.functional as F
from common import (
    NA,
    first,
    free_memory,
    free_plans,
    group_rows,
    log,
    randn,
    rel_err,
    time_group,
    try_import,
    warn,
)

gl, GL_ERR = try_import("gpula")
nvm, _ = try_import("nvmath", "nvmath.linalg.advanced")

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
            mm = nvm.linalg.advanced.Matmul(w.T, x.T, stream=torch.cuda.current_stream())
            cleanup.append(mm)
            mm.plan(epilog=E.GELU_BIAS if use_gelu else E.RELU_BIAS, epilog_inputs={"bias": bias})
            fns["nvmath"] = lambda i: mm.execute()
            transposed.add("nvmath")
            notes["nvmath"] = "Matmul(W.T, x.T) planned once, epilog *_BIAS; result is y.T"
        except Exception as exc:  # noqa: BLE001
            notes["nvmath"] = warn("nvmath mlp", exc)
    keep = []  # outputs stay alive until all are checked (see bench_matmul.gemm_case)
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
    free_plans(cleanup)

    flops = 2.0 * M * N * K
    nbytes = 2.0 * (M * K + K * N + N + M * N)
    peak = res["ceilings"].get("bf16_tflops_torch")
    bw = res["ceilings"].get("copy_tb_s")
    floor_ms = max(flops / (peak * 1e12), nbytes / (bw * 1e12)) * 1e3 if peak and bw else None
    t_g = times.get("gpula", {}).get("ms")
    head = {"shape": "x".join(map(str, shape)), "reading": reading, "m": M, "n": N, "k": K,
            "act": act}
    for row in group_rows(["gpula", "addmm_act", "unfused", "nvmath"], times, notes, head, flops,
                          lambda lib, ms: {"rel_err": errs.get(lib),
                                           "gpula_speedup": (ms / t_g) if t_g else None,
                                           "of_floor": (floor_ms / ms) if floor_ms else None}):
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
