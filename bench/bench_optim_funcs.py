#!/usr/bin/env python3
"""Matrix functions for second-order optimizers (issue 20): gpula.linalg beside torch, one run,
peers side by side, on torch CUDA tensors (on the CPU where there is no CUDA device: a smoke test
with --quick).

  python3 bench/bench_optim_funcs.py [--quick] [--json PATH] [--summary PATH]

Cases (--quick sizes in brackets):
1. orthogonalize, 5 steps in bf16, one 4096 x 11008 matrix [256 x 704]: gpula.linalg.orthogonalize
   vs a torch Newton-Schulz written here (Muon's quintic: Frobenius normalisation, the wide side,
   A = X X^T, X = a X + (b A + c A A) X, bf16 matmuls). TFLOP/s counts the reference's FLOPs:
   per step 2 m m n (X X^T) + 2 m^3 (A A) + 2 m m n (B X), m <= n.
2. orthogonalize of a stack [64, 3072, 3072] bf16 [4, 256, 256]: gpula in one batched call vs the
   torch reference batched vs a Python loop of it over the matrices.
3. polar of 4096^2 fp32 [256^2]: gpula.linalg.polar vs torch's SVD route (u, s, vh = svd(a),
   U = u vh, P = vh^T diag(s) vh).
4. inv_root p=4, eps=1e-6 of 200 PSD blocks 1024^2 fp32 [8 blocks 128^2], A = X X^T / (2n) with X
   n x 2n normal (eigenvalues in about [0.09, 2.9]): gpula inv_root on the batch (method "eigh")
   vs a loop of torch.linalg.eigh and vs torch's batched eigh, V diag((w + eps)^(-1/p)) V^T.
5. grouped eigh of 100 symmetric blocks each of 256, 512 and 1024 fp32 [4 each of 32, 64, 128],
   the sizes interleaved in one Python list: gpula.linalg.eigh on gl.linalg.group(list) (its
   grouped form, one batched call per size) and on one stack per size vs a loop of torch.linalg.eigh and vs torch's batched eigh
   on one stack per size.
6. optimizer step on a 12-layer 1024-wide MLP without biases, fp32 [3 layers, 128 wide], the
   gradients of one forward + backward already in place: gpula.torch.optim.Muon vs
   torch.optim.Muon (n/a where torch has none), gpula.torch.optim.Shampoo with its roots every
   step (precondition_frequency=1) and with the default frequency 10 (mean over 10 steps).

Accuracy, in float64: 'orth' = ||U U^T - I||_F / sqrt(m) on the small side m (of the first 4
matrices of a stack, the largest); 'diff' = ||U - U_ref||_F / ||U_ref||_F against the torch
reference; 'resid' = ||U P - A||_F / ||A||_F; inv_root 'rel' = the largest ||R - R64||_F /
||R64||_F over the first 4 blocks against torch's float64 eigh; eigh 'resid' = the largest
||A V - V diag(w)||_F / ||A||_F over the blocks. Muon's coefficients do not converge to an exact
orthogonal factor (singular values about 0.7 to 1.2), so 'orth' is far from rounding by design.
Timing: CUDA events around single calls after a warm-up, medians (one timed call where the
warm-up took over 1 s); host clock on the CPU. Each case and each library runs in its own try:
a failure reads n/a with its error. Times are reported, never asserted; CPU times (--quick on a
host without CUDA, torch on one thread: its OpenMP threads and gpula's OpenBLAS threads would
contend) only show that the script runs.
"""

from __future__ import annotations

import copy
import math
import sys
from typing import Any, Callable

import torch
from common import (
    append_summary,
    arg_parser,
    attempt,
    device_time,
    error_text,
    fmt,
    free_memory,
    gpula_description,
    host_time,
    log,
    md_table,
    save_json,
    today,
    warn,
)

import gpula as gl
import gpula.torch as gt

MUON = (3.4445, -4.7750, 2.0315)
DEV = "cuda" if torch.cuda.is_available() else "cpu"
F64 = torch.float64


# ---------------------------------------------------------------------------------------------
# timing, rows and accuracy helpers


def timed(fn: Callable[[], Any], repeats: int, slow_s: float = 1.0):
    """fn() timed on the device (CUDA events) or, without one, on the host clock."""
    if DEV == "cuda":
        return device_time(fn, repeats, once_over_s=slow_s)
    return host_time(fn, repeats)


def release() -> None:
    if DEV == "cuda":
        free_memory()


def measure(rows: list, case: str, impl: str, size: str, fn: Callable[[], Any], repeats: int,
            flops: float | None = None) -> tuple[dict, Any]:
    """Times fn and adds its row; returns (row, fn's last result) or (row, None) on failure."""
    row: dict[str, Any] = {"case": case, "impl": impl, "size": size, "acc": {}}
    rows.append(row)
    try:
        t = timed(fn, repeats)
    except Exception as exc:  # noqa: BLE001 - reported as n/a
        row["error"] = warn(f"{case} / {impl}", exc)
        return row, None
    row.update(ms=t.ms, spread=t.spread)
    if flops:
        row["tflops"] = flops / (t.ms * 1e-3) / 1e12
    log(f"  {case} / {impl} ({size}): {t.ms:.3f} ms")
    return row, t.out


def check(row: dict, name: str, fn: Callable[[], float]) -> None:
    """row["acc"][name] = fn(); a failing check reads n/a (and is logged)."""
    if "error" in row:
        return
    try:
        row["acc"][name] = float(fn())
    except Exception as exc:  # noqa: BLE001
        row["acc"][name] = None
        warn(f"{row['case']} / {row['impl']} accuracy {name}", exc)


def fro(x: torch.Tensor) -> torch.Tensor:
    return torch.linalg.matrix_norm(x)  # Frobenius over the last two axes


def orth_err(u: torch.Tensor) -> float:
    """The largest ||U U^T - I||_F / sqrt(m) over the matrices of u, m its small side."""
    x = u.to(F64)
    if x.shape[-2] > x.shape[-1]:
        x = x.mT
    m = x.shape[-2]
    gram = x @ x.mT
    gram.diagonal(dim1=-2, dim2=-1).sub_(1.0)
    return float((fro(gram) / math.sqrt(m)).max())


def rel_diff(x: torch.Tensor, ref: torch.Tensor) -> float:
    """The largest ||x - ref||_F / ||ref||_F over the matrices, in float64."""
    r = ref.to(F64)
    return float((fro(x.to(F64) - r) / fro(r)).max())


def randn(shape: tuple, gen: torch.Generator, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.randn(shape, device=DEV, dtype=torch.float32, generator=gen).to(dtype)


def ns_reference(g: torch.Tensor, steps: int = 5, coefficients: tuple = MUON,
                 eps: float = 1e-7) -> torch.Tensor:
    """Muon's Newton-Schulz iteration in plain torch, bf16 matmuls, batched over leading axes."""
    a, b, c = coefficients
    x = g.to(torch.bfloat16)
    tall = x.shape[-2] > x.shape[-1]
    if tall:
        x = x.mT
    x = x / (fro(x.float()).to(x.dtype)[..., None, None] + eps)
    for _ in range(steps):
        s = x @ x.mT
        x = a * x + (b * s + c * (s @ s)) @ x
    if tall:
        x = x.mT
    return x.to(g.dtype)


def ns_flops(m: int, n: int, steps: int = 5, batch: int = 1) -> float:
    m, n = min(m, n), max(m, n)
    return float(batch * steps * (2 * m * m * n + 2 * m ** 3 + 2 * m * m * n))


# ---------------------------------------------------------------------------------------------
# the cases


def gpula_orthogonalize_rows(rows: list, case: str, size: str, g: torch.Tensor, repeats: int,
                             flops: float, label: str) -> list[tuple[dict, Any]]:
    """gpula's rows of an orthogonalize case: the default (symmetric products where it takes
    them) and symmetric_products=False, in one run: [(row, result), ...]."""
    out = []
    for name, sym in ((label, None), ("gpula orthogonalize, symmetric_products=False", False)):
        out.append(measure(rows, case, name, size,
                           lambda sym=sym: gl.linalg.orthogonalize(
                               g, steps=5, coefficients=MUON, dtype="bfloat16",
                               symmetric_products=sym), repeats, flops))
    return out


def case_orthogonalize(rows: list, quick: bool, repeats: int) -> None:
    m, n = (256, 704) if quick else (4096, 11008)
    case, size = "orthogonalize 5 steps bf16", f"{m}x{n}"
    gen = torch.Generator(device=DEV).manual_seed(0)
    g = randn((m, n), gen, torch.bfloat16)
    flops = ns_flops(m, n)
    r_ref, ref = measure(rows, case, "torch reference NS", size, lambda: ns_reference(g),
                         repeats, flops)
    gpula_rows = gpula_orthogonalize_rows(rows, case, size, g, repeats, flops,
                                          "gpula orthogonalize")
    for r, u in ((r_ref, ref), *gpula_rows):
        if u is not None:
            check(r, "orth", lambda u=u: orth_err(u))
            if ref is not None and r is not r_ref:
                check(r, "diff", lambda u=u: rel_diff(u, ref))


def case_orthogonalize_stack(rows: list, quick: bool, repeats: int) -> None:
    b, n = (4, 256) if quick else (64, 3072)
    case, size = "orthogonalize stack bf16", f"[{b},{n},{n}]"
    gen = torch.Generator(device=DEV).manual_seed(1)
    g = randn((b, n, n), gen, torch.bfloat16)
    flops = ns_flops(n, n, batch=b)
    r_ref, ref = measure(rows, case, "torch reference NS, batched", size,
                         lambda: ns_reference(g), repeats, flops)
    r_loop, loop = measure(rows, case, "torch reference NS, loop", size,
                           lambda: [ns_reference(g[i]) for i in range(b)], repeats, flops)
    gpula_rows = gpula_orthogonalize_rows(rows, case, size, g, repeats, flops,
                                          "gpula orthogonalize (one call)")
    k = min(b, 4)  # the accuracy of the first k matrices
    loop_k = torch.stack(loop[:k]) if loop is not None else None
    for r, u in ((r_ref, ref), (r_loop, loop_k), *gpula_rows):
        if u is None:
            continue
        check(r, "orth", lambda u=u: orth_err(u[:k]))
        if ref is not None and r is not r_ref:
            check(r, "diff", lambda u=u: rel_diff(u[:k], ref[:k]))


def case_polar(rows: list, quick: bool, repeats: int) -> None:
    n = 256 if quick else 4096
    case, size = "polar fp32", f"{n}^2"
    gen = torch.Generator(device=DEV).manual_seed(2)
    a = randn((n, n), gen)

    def torch_polar() -> tuple[torch.Tensor, torch.Tensor]:
        u, s, vh = torch.linalg.svd(a, full_matrices=False)
        return u @ vh, vh.mT @ (s[:, None] * vh)

    r_t, res_t = measure(rows, case, "torch svd route", size, torch_polar, repeats)
    r_g, res_g = measure(rows, case, "gpula polar", size, lambda: gl.linalg.polar(a), repeats)
    a64 = a.to(F64)
    for r, res in ((r_t, res_t), (r_g, res_g)):
        if res is None:
            continue
        u, p = res
        check(r, "orth", lambda u=u: orth_err(u))
        check(r, "resid", lambda u=u, p=p: float(fro(u.to(F64) @ p.to(F64) - a64) / fro(a64)))
    if res_t is not None and res_g is not None:
        check(r_g, "diff", lambda: rel_diff(res_g[0], res_t[0]))


def case_inv_root(rows: list, quick: bool, repeats: int) -> None:
    b, n = (8, 128) if quick else (200, 1024)
    p, eps = 4, 1e-6
    case, size = "inv_root p=4 fp32", f"{b} x {n}^2"
    gen = torch.Generator(device=DEV).manual_seed(3)
    a = torch.empty((b, n, n), device=DEV)
    for i in range(0, b, 25):  # X X^T / (2n) in chunks: the X's stay small
        x = randn((min(25, b - i), n, 2 * n), gen)
        torch.matmul(x, x.mT, out=a[i:i + x.shape[0]])
        a[i:i + x.shape[0]] /= 2 * n
    del x
    a = (a + a.mT) / 2

    def root_of(w: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        return (v * (w + eps).pow(-1.0 / p).unsqueeze(-2)) @ v.mT

    def torch_loop() -> torch.Tensor:
        return torch.stack([root_of(*torch.linalg.eigh(a[i])) for i in range(b)])

    r_g, out_g = measure(rows, case, "gpula inv_root (eigh, batch)", size,
                         lambda: gl.linalg.inv_root(a, p, eps=eps, method="eigh"), repeats)
    r_l, out_l = measure(rows, case, "torch eigh loop", size, torch_loop, repeats)
    r_b, out_b = measure(rows, case, "torch eigh batched", size,
                         lambda: root_of(*torch.linalg.eigh(a)), repeats)
    k = min(b, 4)
    w64, v64 = torch.linalg.eigh(a[:k].to(F64))
    ref = (v64 * (w64 + eps).pow(-1.0 / p).unsqueeze(-2)) @ v64.mT
    for r, out in ((r_g, out_g), (r_l, out_l), (r_b, out_b)):
        check(r, "rel", lambda out=out: rel_diff(out[:k], ref))


def case_grouped_eigh(rows: list, quick: bool, repeats: int) -> None:
    each, sizes = (4, (32, 64, 128)) if quick else (100, (256, 512, 1024))
    case, size = "grouped eigh fp32", f"{each} each of {'/'.join(map(str, sizes))}"
    gen = torch.Generator(device=DEV).manual_seed(4)
    stacks = {}
    for n in sizes:
        x = randn((each, n, n), gen)
        stacks[n] = (x + x.mT) / 2
    blocks = [stacks[n][i] for i in range(each) for n in sizes]  # sizes interleaved

    def by_size(eigh: Callable[[torch.Tensor], Any]) -> list:
        return [eigh(stacks[n]) for n in sizes]

    r_g, out_g = measure(rows, case, "gpula eigh (list)", size,
                         lambda: gl.linalg.eigh(gl.linalg.group(blocks)), repeats)
    r_gb, out_gb = measure(rows, case, "gpula eigh batched per size", size,
                           lambda: by_size(gl.linalg.eigh), repeats)
    r_l, out_l = measure(rows, case, "torch eigh loop", size,
                         lambda: [torch.linalg.eigh(x) for x in blocks], repeats)
    r_b, out_b = measure(rows, case, "torch eigh batched per size", size,
                         lambda: by_size(torch.linalg.eigh), repeats)

    def resid(pairs: list) -> float:
        """The largest ||A V - V diag(w)||_F / ||A||_F over (A, (w, V)) pairs, batched or not."""
        worst = 0.0
        for blk, (w, v) in pairs:
            a64, w64, v64 = blk.to(F64), w.to(F64), v.to(F64)
            worst = max(worst, float((fro(a64 @ v64 - v64 * w64[..., None, :]) / fro(a64)).max()))
        return worst

    for r, out in ((r_g, out_g), (r_l, out_l)):
        if out is not None:
            check(r, "resid", lambda out=out: resid(list(zip(blocks, out))))
    for r, out in ((r_gb, out_gb), (r_b, out_b)):  # one (w, V) per size's stack
        if out is not None:
            check(r, "resid", lambda out=out: resid([(stacks[n], tuple(out[j]))
                                                     for j, n in enumerate(sizes)]))


def case_optimizer(rows: list, quick: bool, repeats: int) -> None:
    layers, width, tokens = (3, 128, 64) if quick else (12, 1024, 4096)
    case, size = "optimizer step fp32 MLP", f"{layers} x {width}^2"
    torch.manual_seed(5)
    mlp = torch.nn.Sequential(*[m for _ in range(layers) for m in
                                (torch.nn.Linear(width, width, bias=False), torch.nn.GELU())])
    mlp = mlp.to(DEV)
    x = torch.randn(tokens, width, device=DEV)
    mlp(x).square().mean().backward()

    def model_copy() -> torch.nn.Module:
        c = copy.deepcopy(mlp)
        for src, dst in zip(mlp.parameters(), c.parameters()):
            dst.grad = src.grad.clone()
        return c

    def step_of(opt: torch.optim.Optimizer, n: int = 1) -> Callable[[], None]:
        def run() -> None:
            for _ in range(n):
                opt.step()
        return run

    measure(rows, case, "gpula Muon", size,
            step_of(gt.optim.Muon(model_copy().parameters(), lr=0.02)), repeats)
    if hasattr(torch.optim, "Muon"):
        measure(rows, case, "torch.optim.Muon", size,
                step_of(torch.optim.Muon(model_copy().parameters(), lr=0.02)), repeats)
    else:
        rows.append({"case": case, "impl": "torch.optim.Muon", "size": size, "acc": {},
                     "error": f"torch {torch.__version__} has no torch.optim.Muon"})
    measure(rows, case, "gpula Shampoo (roots every step)", size,
            step_of(gt.optim.Shampoo(model_copy().parameters(), lr=1e-3,
                                     precondition_frequency=1)), repeats)
    r, _ = measure(rows, case, "gpula Shampoo (roots every 10 steps)", size,
                   step_of(gt.optim.Shampoo(model_copy().parameters(), lr=1e-3,
                                            precondition_frequency=10), 10), repeats)
    if "ms" in r:
        r["ms"] /= 10  # mean per step over 10 steps, one of them computing the roots
        r["note"] = "mean over 10 steps"


CASES = [
    ("orthogonalize 5 steps bf16", case_orthogonalize),
    ("orthogonalize stack bf16", case_orthogonalize_stack),
    ("polar fp32", case_polar),
    ("inv_root p=4 fp32", case_inv_root),
    ("grouped eigh fp32", case_grouped_eigh),
    ("optimizer step fp32 MLP", case_optimizer),
]

# The row each case's speed-ups are relative to (rows of NO_PEER have none).
REFERENCE = {
    "orthogonalize 5 steps bf16": "torch reference NS",
    "orthogonalize stack bf16": "torch reference NS, batched",
    "polar fp32": "torch svd route",
    "inv_root p=4 fp32": "torch eigh loop",
    "grouped eigh fp32": "torch eigh loop",
    "optimizer step fp32 MLP": "torch.optim.Muon",
}
NO_PEER = ("gpula Shampoo",)


# ---------------------------------------------------------------------------------------------
# report


def ms_text(ms: float | None) -> str:
    if ms is None:
        return fmt(None)
    return fmt(ms, ".0f" if ms >= 100 else ".1f" if ms >= 10 else ".3f")


def acc_text(acc: dict) -> str:
    return ", ".join(f"{k} {fmt(v, '.1e')}" for k, v in acc.items())


def speedup(rows: list, r: dict) -> float | None:
    ref = next((x for x in rows if x["case"] == r["case"]
                and x["impl"] == REFERENCE.get(r["case"])), None)
    if ref is None or not ref.get("ms") or not r.get("ms") or r["impl"].startswith(NO_PEER):
        return None
    return ref["ms"] / r["ms"]


def summary_line(rows: list, r: dict) -> str:
    line = f"  {r['case']} {r['size']} {r['impl']}: "
    if r.get("ms") is None:
        return line + f"n/a ({r.get('error', '')[:120]})"
    line += f"{ms_text(r['ms'])} ms"
    x = speedup(rows, r)
    if x is not None and r["impl"] != REFERENCE.get(r["case"]):
        line += f" (x{x:.2f} vs {REFERENCE[r['case']]})"
    return line + (f", {acc_text(r['acc'])}" if r["acc"] else "")


def main(argv: list[str] | None = None) -> int:
    p = arg_parser(__doc__)
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args(argv)
    repeats = 2 if args.quick else args.repeats
    if DEV == "cpu":  # torch's OpenMP threads and gpula's OpenBLAS threads would contend
        torch.set_num_threads(1)
    log(gpula_description())
    log(f"device: {torch.cuda.get_device_name() if DEV == 'cuda' else 'cpu (no CUDA device)'}, "
        f"torch {torch.__version__}")
    rows: list[dict] = []
    head = "optimizer matrix functions (issue 20; gpula beside torch"
    append_summary(args.summary, [f"{head}, {DEV}{', quick sizes' if args.quick else ''}):"])
    for name, fn in CASES:
        log(f"{name}:")
        before = len(rows)

        def failed(exc: BaseException, name: str = name) -> None:
            rows.append({"case": name, "impl": "(case)", "size": "", "acc": {},
                         "error": error_text(exc, 200).splitlines()[0]})
            log(f"  [{name}] n/a: {rows[-1]['error']}")

        attempt(lambda fn=fn: fn(rows, args.quick, repeats), failed)
        attempt(release, lambda exc: None)
        append_summary(args.summary, [summary_line(rows, r) for r in rows[before:]])
    date = today()
    where = torch.cuda.get_device_name() if DEV == "cuda" else "cpu"
    title = f"## Optimizer matrix functions on {where}, {date}"
    title += " (quick sizes)" if args.quick else ""
    table = [[r["case"], r["impl"], r["size"], ms_text(r.get("ms")), fmt(r.get("tflops"), ".1f"),
              fmt(speedup(rows, r), ".2f"), acc_text(r["acc"]),
              r.get("error", r.get("note", ""))[:160]] for r in rows]
    lines = [title, ""] + md_table(["case", "implementation", "size", "ms (median)", "TFLOP/s",
                                    "x torch ref", "accuracy", "note"], table)
    print("\n".join(lines), flush=True)
    save_json(args.json, {"date": date, "device": DEV, "quick": args.quick, "rows": rows,
                          "table": lines})
    return 0


if __name__ == "__main__":
    sys.exit(main())
