#!/usr/bin/env python3
"""FP8 e4m3 GEMM with per-tensor, row-wise and 128-block scales (issue 21), one run, peers side by
side: gpula (planned Matmul) per-tensor, row-wise (a (M,), b (N,)) and DeepSeek-style blocks
(a 1x128, b 128x128) against torch._scaled_mm per-tensor and row-wise, and against bf16 gpula.

  python3 bench/bench_fp8.py [--quick] [--json PATH] [--summary PATH]

Operands: x (M, K) and a weight w (N, K), fresh random normals, quantized with gl.quantize_fp8
(B = w.T, column-major, as cuBLASLt's fp8 kernels want); result bf16. Timing: CUDA events around
a loop of calls sized to ~50 ms per round, libraries interleaved, medians over --repeats rounds
(bench/common.py's time_group). rel_err: ||out - ref||_F / ||ref||_F against float64 of the
unquantized x @ w.T (quantization error included) on the leading 1024 x 1024 block of the result
(the full K). Times are reported, never asserted.
"""

from __future__ import annotations

import torch
from common import (
    append_summary,
    arg_parser,
    fmt,
    gpula_description,
    group_rows,
    log,
    md_table,
    save_json,
    time_group,
)

import gpula as gl


def sliced_err(out, ref_rows):
    """rel_err on the leading block of the result (ref_rows: float64 reference of that block)."""
    if isinstance(out, tuple):
        out = out[0]
    r, c = ref_rows.shape
    d = out[:r, :c].to(torch.float64)
    return float(torch.linalg.vector_norm(d - ref_rows) / torch.linalg.vector_norm(ref_rows))


def case(n, repeats):
    m = k = n
    g = torch.Generator(device="cuda").manual_seed(0)
    x = torch.randn(m, k, device="cuda", generator=g)
    w = torch.randn(n, k, device="cuda", generator=g) * 0.05
    sl = min(1024, m)
    ref = x[:sl].double() @ w[:sl].double().T
    xb, wb = x.bfloat16(), w.bfloat16()
    outs, plans, fns, notes = {}, [], {}, {}

    def planned(name, a, b, inputs=None):
        mm = gl.Matmul(a, b, options={"result_type": "bfloat16"})
        mm.plan(epilog_inputs=inputs)
        plans.append(mm)
        outs[name] = mm.execute()
        fns[name] = lambda i, mm=mm: mm.execute()

    # gpula: bf16, fp8 per-tensor, row-wise, 1x128 x 128x128
    planned("gpula bf16", xb, wb.T)
    for name, blocks in (("gpula fp8 tensor", (None, None)), ("gpula fp8 row", ("row", "row")),
                         ("gpula fp8 block 1x128 x 128x128", (128, (128, 128)))):
        try:
            qa, sa = gl.quantize_fp8(x, "e4m3", blocks[0])
            qw, sw = gl.quantize_fp8(w, "e4m3", blocks[1])
            planned(name, qa, qw.T, {"a_scale": sa, "b_scale": sw.T if sw.dim() == 2 else sw})
        except Exception as exc:  # noqa: BLE001
            notes[name] = f"{type(exc).__name__}: {exc}"
    # torch._scaled_mm per-tensor and row-wise (scales are dequantization factors, as gpula's)
    try:
        qa, sa = gl.quantize_fp8(x, "e4m3")
        qw, sw = gl.quantize_fp8(w, "e4m3")
        outs["torch _scaled_mm tensor"] = torch._scaled_mm(qa, qw.T, sa, sw, out_dtype=torch.bfloat16)
        fns["torch _scaled_mm tensor"] = lambda i: torch._scaled_mm(
            qa, qw.T, sa, sw, out_dtype=torch.bfloat16)
        ra, rsa = gl.quantize_fp8(x, "e4m3", "row")
        rw, rsw = gl.quantize_fp8(w, "e4m3", "row")
        sa2, sw2 = rsa[:, None].contiguous(), rsw[None, :].contiguous()
        outs["torch _scaled_mm row"] = torch._scaled_mm(ra, rw.T, sa2, sw2, out_dtype=torch.bfloat16)
        fns["torch _scaled_mm row"] = lambda i: torch._scaled_mm(
            ra, rw.T, sa2, sw2, out_dtype=torch.bfloat16)
    except Exception as exc:  # noqa: BLE001
        notes["torch _scaled_mm"] = f"{type(exc).__name__}: {exc}"
    times = time_group(fns, target_ms=50.0, repeats=repeats)
    errs = {name: sliced_err(o, ref) for name, o in outs.items()}
    libs = list(fns) + [n for n in notes if n not in fns]
    rows = group_rows(libs, times, notes, {"n": n}, 2.0 * m * n * k,
                      lambda lib, ms: {"rel_err": errs.get(lib)})
    for mm in plans:
        mm.free()
    return rows


def main(argv=None):
    p = arg_parser(__doc__)
    p.add_argument("--repeats", type=int, default=7)
    args = p.parse_args(argv)
    log(gpula_description())
    log(f"GPU: {torch.cuda.get_device_name()}")
    sizes = [2048] if args.quick else [8192]
    rows = []
    for n in sizes:
        rows += case(n, 3 if args.quick else args.repeats)
    bf16 = {r["n"]: r.get("ms") for r in rows if r["lib"] == "gpula bf16"}
    table = []
    for r in rows:
        speedup = bf16.get(r["n"]) / r["ms"] if r.get("ms") and bf16.get(r["n"]) else None
        table.append([f"e4m3 {r['n']}^3", r["lib"], fmt(r.get("ms")), fmt(r.get("tflops"), ".0f"),
                      fmt(speedup, ".2f"), fmt(r.get("rel_err"), ".2e"),
                      r.get("error", r.get("note", ""))])
    lines = md_table(["case", "lib", "ms", "TFLOP/s", "x bf16 gpula", "rel_err", "note"], table)
    print("\n".join(lines))
    save_json(args.json, {"rows": rows, "quick": args.quick})
    append_summary(args.summary, ["## fp8", *lines])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
