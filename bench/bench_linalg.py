#!/usr/bin/env python3
"""Dense linear algebra: gpula.linalg vs torch.linalg and cupy.linalg (GPU), NumPy/SciPy (CPU).

  python3 bench/bench_linalg.py [--json PATH] [--summary PATH] [--quick] [--cases a,b,...]
  (--cases defaults to $GPULA_BENCH_LINALG_CASES, else all)
                                [--results-dir DIR]

Cases (the targets of the dense linear-algebra issue; sizes shrink with --quick):
  cholesky  n=8192 and 4096 fp64             gpula / torch / cupy; factor error ||A - L L^T|| / ||A||
  solve     n=8192 fp64 nrhs=16              gpula refine="auto" (RBT) and plain LU / torch / cupy;
                                             order sweep n=512..2048: RBT vs LU vs torch;
            backward error ||b - A x|| / (||A|| ||x|| + ||b||), in float64
  svd       4096^2 fp32 thin                 gpula per method / torch / cupy; reconstruction
            ||A - U S V^H|| / ||A|| and orthogonality ||U^H U - I||, ||V^H V - I|| (max)
  svdk      k=64 of 4096^2 fp32              gpula svd(k=64) / torch.svd_lowrank(q=64) /
            exact top-64 from the full SVD; relative error of the 64 singular values
  eighk     k=64 largest of n=8192 fp64      gpula eigh(k=64) / gpula and torch full eigh
  beigh     batch 1000 x 128^2 fp32 eigh     gpula / torch / cupy
  bsvd      batch 1000 x 128^2 fp32 svd      gpula / torch / cupy (peers over 1 s run once)
  bchol     batch 10000 x 32^2 fp32 cholesky and solve (nrhs=1)  gpula / torch
  cpu       n=2048 fp64 on the host: cholesky, solve, qr, svd, eigh, eig, inv, det, slogdet,
            lstsq (nrhs=16), lu_factor, svdvals, eigvalsh
                                             gpula CPU / NumPy / SciPy, each library in its own process (their
            BLAS thread pools would compete otherwise); each row names the OpenBLAS core it ran
Test matrices: SPD A = G G^T / n + I; general A Gaussian (solve: plain Gaussian, cond ~1e4-1e5);
top-k matrices with a decaying spectrum sigma_i = 0.97^i (+1e-3), the kind PCA and low-rank
methods meet (Q random orthogonal, built with QR on the GPU); the table names each.
Timing: CUDA events on the current stream (torch's), median over repeats after a warm-up;
CPU wall clock. Times are reported, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np
from common import (
    append_summary,
    arg_parser,
    attempt,
    cuda_torch,
    device_slug,
    device_time,
    error_text,
    fmt,
    gpula_description,
    host_time,
    log,
    md_table,
    save_json,
    today,
    try_import,
    write_result,
)

ROWS: list[dict] = []


def add(case, impl, ms, **kw):
    r = {"case": case, "impl": impl, "ms": ms}
    r.update(kw)
    ROWS.append(r)
    extra = " ".join(f"{k}={v:.2e}" if isinstance(v, float) else f"{k}={v}" for k, v in kw.items())
    log(f"  {case:34s} {impl:34s} {'n/a' if ms is None else f'{ms:10.3f} ms'} {extra}")


def gpu_time(fn, repeats):
    """(median ms, last output) over device events; a peer whose warm-up took over 1 s runs once."""
    t = device_time(fn, repeats, once_over_s=1.0)
    return t.ms, t.out


def safe(case, impl, fn):
    """Runs one measurement; a failure becomes an n/a row with the error, never a crash."""
    attempt(fn, lambda e: add(case, impl, None, error=error_text(e, 160)))


# ------------------------------------------------------------------------------------------------
# GPU cases


def spd(torch, n, dtype, batch=()):
    g = torch.randn(*batch, n, n, dtype=dtype, device="cuda")
    return g @ g.mT / n + torch.eye(n, dtype=dtype, device="cuda")


def decaying(torch, n, dtype, sym):
    """Q diag(0.97^i + 1e-3) Q^T (sym) or U diag(...) V^T, random orthogonal factors."""
    s = (0.97 ** torch.arange(n, dtype=torch.float64, device="cuda") + 1e-3).to(dtype)
    q, _ = torch.linalg.qr(torch.randn(n, n, dtype=dtype, device="cuda"))
    if sym:
        a = (q * s) @ q.mT
        return (a + a.mT) / 2, s
    v, _ = torch.linalg.qr(torch.randn(n, n, dtype=dtype, device="cuda"))
    return (q * s) @ v.mT, s


def case_cholesky(gl, torch, cp, n, reps):
    a = spd(torch, n, torch.float64)
    name = f"cholesky n={n} fp64"

    def one(impl, fn):
        ms, l = gpu_time(fn, reps)
        l = l if isinstance(l, torch.Tensor) else torch.from_dlpack(l)
        err = float(torch.linalg.matrix_norm(a - l @ l.mT) / torch.linalg.matrix_norm(a))
        add(name, impl, ms, factor_error=err)

    safe(name, "gpula", lambda: one("gpula", lambda: gl.linalg.cholesky(a)))
    safe(name, "torch", lambda: one("torch", lambda: torch.linalg.cholesky(a)))
    if cp is not None:
        ac = cp.asarray(a)
        safe(name, "cupy", lambda: one("cupy", lambda: cp.linalg.cholesky(ac)))


def backward_error(torch, a, x, b):
    a, x, b = a.double(), x.double(), b.double()
    r = torch.linalg.matrix_norm(b - a @ x, ord=1)
    d = torch.linalg.matrix_norm(a, ord=1) * torch.linalg.matrix_norm(
        x, ord=1
    ) + torch.linalg.matrix_norm(b, ord=1)
    return float(r / d)


def case_solve(gl, torch, cp, n, reps):
    a = torch.randn(n, n, dtype=torch.float64, device="cuda")
    b = torch.randn(n, 16, dtype=torch.float64, device="cuda")
    name = f"solve n={n} fp64 nrhs=16"

    def one(impl, fn):
        ms, x = gpu_time(fn, reps)
        add(name, impl, ms, backward_error=backward_error(torch, a, x, b))

    # refine="auto" is the RBT solve at this order; IRS with tf32/f16/bf16 (230-300 ms, falling
    # back on this Gaussian matrix) was measured in the 2026-12-03 runs and is not rerun.
    for ref in ("auto", "f32"):
        impl = f"gpula refine={ref}"
        safe(name, impl, lambda impl=impl, ref=ref: one(impl, lambda: gl.linalg.solve(a, b, refine=ref)))
    safe(name, "gpula LU fp64", lambda: one("gpula LU fp64", lambda: gl.linalg.solve(a, b)))
    safe(name, "torch", lambda: one("torch", lambda: torch.linalg.solve(a, b)))
    if cp is not None:
        ac, bc = cp.asarray(a), cp.asarray(b)
        safe(
            name,
            "cupy",
            lambda: one("cupy", lambda: torch.as_tensor(cp.linalg.solve(ac, bc), device="cuda")),
        )
    # Where refine="auto" takes the RBT solve (n >= 512): RBT vs pivoted LU at and above it.
    for m in (512, 1024, 2048):
        am = torch.randn(m, m, dtype=torch.float64, device="cuda")
        bm = torch.randn(m, 16, dtype=torch.float64, device="cuda")
        nm = f"solve order sweep n={m} fp64 nrhs=16"

        def one_m(impl, fn, am=am, bm=bm, nm=nm):
            ms, x = gpu_time(fn, reps)
            add(nm, impl, ms, backward_error=backward_error(torch, am, x, bm))

        for impl, fn in (
            ("gpula refine=rbt", lambda am=am, bm=bm: gl.linalg.solve(am, bm, refine="rbt")),
            ("gpula LU fp64", lambda am=am, bm=bm: gl.linalg.solve(am, bm)),
            ("torch", lambda am=am, bm=bm: torch.linalg.solve(am, bm)),
        ):
            safe(nm, impl, lambda impl=impl, fn=fn: one_m(impl, fn))


def svd_errors(torch, a, u, s, vh):
    a64, u64, s64, vh64 = a.double(), u.double(), s.double(), vh.double()
    k = s.shape[-1]
    eye = torch.eye(k, dtype=torch.float64, device="cuda")
    rec = torch.linalg.matrix_norm(
        a64 - (u64 * s64[..., None, :]) @ vh64
    ) / torch.linalg.matrix_norm(a64)
    ou = torch.linalg.matrix_norm(u64.mT @ u64 - eye)
    ov = torch.linalg.matrix_norm(vh64 @ vh64.mT - eye)
    return {"reconstruction": float(rec.max()), "orthogonality": float(torch.maximum(ou, ov).max())}


def as_torch(torch, x):
    return x if isinstance(x, torch.Tensor) else torch.as_tensor(x, device="cuda")


def run_svd(name, impl, torch, a, fn, reps):
    ms, (u, s, vh) = gpu_time(fn, reps)
    u, s, vh = (as_torch(torch, t) for t in (u, s, vh))
    add(name, impl, ms, **svd_errors(torch, a, u, s, vh))


def svd_peers(name, gl, torch, cp, a, methods, reps):
    """gpula's svd by each method, then torch's and cupy's thin SVD, of the same a."""
    for m in methods:
        impl = f"gpula method={m}"
        safe(name, impl, lambda m=m, impl=impl: run_svd(
            name, impl, torch, a, lambda: gl.linalg.svd(a, method=m), reps))
    safe(name, "torch", lambda: run_svd(
        name, "torch", torch, a, lambda: torch.linalg.svd(a, full_matrices=False), reps))
    if cp is not None:
        ac = cp.asarray(a)
        safe(name, "cupy", lambda: run_svd(
            name, "cupy", torch, a, lambda: cp.linalg.svd(ac, full_matrices=False), reps))


def case_svd(gl, torch, cp, n, reps):
    a = torch.randn(n, n, dtype=torch.float32, device="cuda")
    svd_peers(f"svd {n}^2 fp32 thin", gl, torch, cp, a, ["auto", "gesvd", "gesvdj", "gesvdp"], reps)


def case_svdk(gl, torch, cp, n, k, reps):
    a, s_true = decaying(torch, n, torch.float32, sym=False)
    s_ref = s_true[:k].double()
    name = f"svd k={k} of {n}^2 fp32 (sigma_i=0.97^i)"

    def one(impl, fn):
        ms, (u, s, vh) = gpu_time(fn, reps)
        u, s, vh = (as_torch(torch, t) for t in (u, s, vh))
        err = float(((s.double()[:k] - s_ref).abs() / s_ref).max())
        rec = float(
            torch.linalg.matrix_norm(
                a.double() - (u.double()[:, :k] * s.double()[:k]) @ vh.double()[:k]
            )
            / torch.linalg.matrix_norm(a.double())
        )
        best = float(
            torch.linalg.vector_norm(s_true[k:].double())
            / torch.linalg.vector_norm(s_true.double())
        )
        add(name, impl, ms, sigma_rel_err=err, reconstruction=rec, optimal_reconstruction=best)

    safe(name, "gpula svd(k)", lambda: one("gpula svd(k)", lambda: gl.linalg.svd(a, k=k)))

    def lowrank():
        u, s, v = torch.svd_lowrank(a, q=k)
        return u, s, v.mT

    safe(name, "torch.svd_lowrank(q=k)", lambda: one("torch.svd_lowrank(q=k)", lowrank))


def case_eighk(gl, torch, cp, n, k, reps):
    a, s_true = decaying(torch, n, torch.float64, sym=True)
    w_ref = torch.sort(s_true).values[-k:]
    name = f"eigh k={k} largest of n={n} fp64 (0.97^i)"

    def one(impl, fn, topk):
        ms, (w, v) = gpu_time(fn, reps)
        w, v = as_torch(torch, w), as_torch(torch, v)
        if not topk:
            w, v = w[-k:], v[:, -k:]
        err = float(((w - w_ref).abs() / w_ref.abs()).max())
        res = float(torch.linalg.matrix_norm(a @ v - v * w) / torch.linalg.matrix_norm(a))
        add(name, impl, ms, eig_rel_err=err, residual=res)

    safe(name, "gpula eigh(k)", lambda: one("gpula eigh(k)", lambda: gl.linalg.eigh(a, k=k), True))
    safe(name, "gpula full eigh", lambda: one("gpula full eigh", lambda: gl.linalg.eigh(a), False))
    safe(
        name, "torch full eigh", lambda: one("torch full eigh", lambda: torch.linalg.eigh(a), False)
    )


def case_beigh(gl, torch, cp, batch, n, reps):
    g = torch.randn(batch, n, n, dtype=torch.float32, device="cuda")
    a = (g + g.mT) / 2
    name = f"batched eigh {batch}x{n}^2 fp32"

    def one(impl, fn):
        ms, (w, v) = gpu_time(fn, reps)
        w, v = as_torch(torch, w), as_torch(torch, v)
        res = torch.linalg.matrix_norm(
            a.double() @ v.double() - v.double() * w.double()[:, None, :]
        )
        add(name, impl, ms, residual=float((res / torch.linalg.matrix_norm(a.double())).max()))

    safe(name, "gpula", lambda: one("gpula", lambda: gl.linalg.eigh(a)))
    safe(name, "torch", lambda: one("torch", lambda: torch.linalg.eigh(a)))
    if cp is not None:
        ac = cp.asarray(a)
        safe(name, "cupy", lambda: one("cupy", lambda: cp.linalg.eigh(ac)))


def case_bsvd(gl, torch, cp, batch, n, reps):
    a = torch.randn(batch, n, n, dtype=torch.float32, device="cuda")
    svd_peers(f"batched svd {batch}x{n}^2 fp32", gl, torch, cp, a, ("auto", "gesvdj", "gesvda"), reps)


def case_bchol(gl, torch, cp, batch, n, reps):
    a = spd(torch, n, torch.float32, (batch,))
    b = torch.randn(batch, n, 1, dtype=torch.float32, device="cuda")
    name = f"batched cholesky {batch}x{n}^2 fp32"
    safe(
        name, "gpula", lambda: add(name, "gpula", gpu_time(lambda: gl.linalg.cholesky(a), reps)[0])
    )
    safe(
        name,
        "torch",
        lambda: add(name, "torch", gpu_time(lambda: torch.linalg.cholesky(a), reps)[0]),
    )
    name = f"batched solve {batch}x{n}^2 fp32 nrhs=1"

    def one(impl, fn):
        ms, x = gpu_time(fn, reps)
        x = as_torch(torch, x)
        r = torch.linalg.vector_norm((a.double() @ x.double() - b.double()).flatten(1), dim=1)
        add(
            name,
            impl,
            ms,
            rel_residual=float((r / torch.linalg.vector_norm(b.double().flatten(1), dim=1)).max()),
        )

    safe(name, "gpula", lambda: one("gpula", lambda: gl.linalg.solve(a, b)))
    safe(name, "torch", lambda: one("torch", lambda: torch.linalg.solve(a, b)))


# ------------------------------------------------------------------------------------------------
# CPU case


def cpu_ops(impl, n):
    """The CPU cases of one implementation: [(what, fn)]."""
    rng = np.random.default_rng(0)
    g = rng.standard_normal((n, n))
    a_spd = g @ g.T / n + np.eye(n)
    a = rng.standard_normal((n, n))
    b = rng.standard_normal((n, 16))
    sym = (a + a.T) / 2
    if impl == "gpula cpu":
        import gpula as gl

        la = gl.linalg
        return [("cholesky", lambda: la.cholesky(a_spd)), ("solve nrhs=16", lambda: la.solve(a, b)),
                ("qr reduced", lambda: la.qr(a)), ("svd thin", lambda: la.svd(a)),
                ("eigh", lambda: la.eigh(sym)), ("eig", lambda: la.eig(a)),
                ("inv", lambda: la.inv(a)),
                ("det", lambda: la.det(a)), ("slogdet", lambda: la.slogdet(a)),
                ("lstsq nrhs=16", lambda: la.lstsq(a, b)), ("lu_factor", lambda: la.lu_factor(a)),
                ("svdvals", lambda: la.svdvals(a)), ("eigvalsh", lambda: la.eigvalsh(sym))]
    if impl == "numpy":
        return [("cholesky", lambda: np.linalg.cholesky(a_spd)), ("solve nrhs=16", lambda: np.linalg.solve(a, b)),
                ("qr reduced", lambda: np.linalg.qr(a)), ("svd thin", lambda: np.linalg.svd(a, full_matrices=False)),
                ("eigh", lambda: np.linalg.eigh(sym)), ("eig", lambda: np.linalg.eig(a)),
                ("inv", lambda: np.linalg.inv(a)), ("det", lambda: np.linalg.det(a)),
                ("slogdet", lambda: np.linalg.slogdet(a)),
                ("lstsq nrhs=16", lambda: np.linalg.lstsq(a, b, rcond=None)),
                ("svdvals", lambda: np.linalg.svd(a, compute_uv=False)),
                ("eigvalsh", lambda: np.linalg.eigvalsh(sym))]
    import scipy.linalg as sla

    return [("cholesky", lambda: sla.cholesky(a_spd, lower=True)), ("solve nrhs=16", lambda: sla.solve(a, b)),
            ("qr reduced", lambda: sla.qr(a, mode="economic")), ("svd thin", lambda: sla.svd(a, full_matrices=False)),
            ("eigh", lambda: sla.eigh(sym)), ("eig", lambda: sla.eig(a)),
            ("inv", lambda: sla.inv(a)),
            ("det", lambda: sla.det(a)),
            ("lstsq nrhs=16", lambda: sla.lstsq(a, b)), ("lu_factor", lambda: sla.lu_factor(a)),
            ("svdvals", lambda: sla.svdvals(a)), ("eigvalsh", lambda: sla.eigvalsh(sym))]


def blas_core(impl):
    """The OpenBLAS kernel set ("core") the implementation runs, as its library reports it."""
    if impl == "gpula cpu":
        d = gpula_description()
        return d.split("(core ", 1)[1].split(",", 1)[0] if "(core " in d else "?"
    try:
        import threadpoolctl

        if impl == "scipy":
            import scipy.linalg  # noqa: F401  (loads scipy's own OpenBLAS)
        libs = "numpy.libs" if impl == "numpy" else "scipy.libs"
        cores = {i.get("architecture") for i in threadpoolctl.threadpool_info()
                 if libs in i.get("filepath", "")}
        return ",".join(sorted(c for c in cores if c)) or "?"
    except ImportError:
        return "?"


def cpu_child(impl, n, reps):
    """Runs in its own process, so that no other BLAS thread pool spins next to this one."""
    out = []
    core = blas_core(impl)
    for what, fn in cpu_ops(impl, n):
        try:
            out.append({"what": what, "ms": host_time(fn, reps).ms, "core": core})
        except Exception as e:  # noqa: BLE001
            out.append({"what": what, "ms": None, "error": error_text(e, 160)})
    print(json.dumps(out))


def case_cpu(gl, n, reps):
    import subprocess

    threads = os.environ.get("OMP_NUM_THREADS", str(os.cpu_count()))
    for impl in ("gpula cpu", "numpy", "scipy"):
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "--cpu-child", impl, "--cpu-n", str(n),
                            "--cpu-reps", str(reps)], capture_output=True, text=True, timeout=300)
        try:
            rows = json.loads(p.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            add(f"cpu n={n}", impl, None, error=(p.stderr or "no output")[-200:])
            continue
        for r in rows:
            name = f"cpu {r['what']} n={n} fp64 ({threads} threads)"
            extra = {"error": r["error"]} if "error" in r else {}
            if r.get("core"):
                extra["blas_core"] = r["core"]
            add(name, impl, r["ms"], **extra)


# ------------------------------------------------------------------------------------------------
# summary


def ms_of(case_prefix, impl):
    for r in ROWS:
        if r["case"].startswith(case_prefix) and r["impl"] == impl and r["ms"] is not None:
            return r
    return None


def cholesky_note():
    g, p = ms_of("cholesky n=", "gpula"), ms_of("cholesky n=", "torch")
    if g is None or p is None or "factor_error" not in g:
        return ""
    return f"factor error {g['factor_error']:.1e} vs {p['factor_error']:.1e}"


def summary_lines():
    L = [
        "dense linalg (ratio = peer time / gpula time; > 1: gpula faster; targets reported, not asserted):"
    ]

    def line(what, g, p, target, ok_fn, note=""):
        if g is None or p is None:
            L.append(f"  {what:58s} n/a {note}")
            return
        ratio = p["ms"] / g["ms"]
        ok = ok_fn(ratio, g, p)
        L.append(
            f"  {what:58s} {g['ms']:9.2f} {p['ms']:9.2f} {ratio:7.2f}x {target:>9s} "
            f"{'yes' if ok else 'NO'} {note}"
        )

    line(
        "cholesky n=8192 fp64 vs torch (ms)",
        ms_of("cholesky n=", "gpula"),
        ms_of("cholesky n=", "torch"),
        ">=1.00x",
        lambda r, g, p: r >= 1.0,
        note=cholesky_note(),
    )
    g4, p4 = ms_of("cholesky n=4096", "gpula"), ms_of("cholesky n=4096", "torch")
    if g4 is not None and p4 is not None:
        L.append(f"    cholesky n=4096: gpula {g4['ms']:.2f} ms, torch {p4['ms']:.2f} ms")
    g, p, lu = (
        ms_of("solve n=8192", "gpula refine=auto"),
        ms_of("solve n=8192", "torch"),
        ms_of("solve n=8192", "gpula LU fp64"),
    )
    berr = ""
    ok_b = True
    if g and lu and "backward_error" in g:
        ok_b = g["backward_error"] <= 10 * lu["backward_error"]
        berr = f"berr {g['backward_error']:.1e} vs LU {lu['backward_error']:.1e} ({'ok' if ok_b else 'NO'})"
    line(
        "solve n=8192 fp64 nrhs=16 refine=auto vs torch (ms)",
        g,
        p,
        ">=2.50x",
        lambda r, g, p: r >= 2.5 and ok_b,
        berr,
    )
    for m in (512, 1024, 2048):
        rows = {i: ms_of(f"solve order sweep n={m} ", i) for i in ("gpula refine=rbt", "gpula LU fp64", "torch")}
        if all(rows.values()):
            L.append(
                f"    solve n={m}: rbt {rows['gpula refine=rbt']['ms']:.2f} ms "
                f"(berr {rows['gpula refine=rbt']['backward_error']:.1e}), LU {rows['gpula LU fp64']['ms']:.2f}, "
                f"torch {rows['torch']['ms']:.2f}"
            )
    g, p = ms_of("svd 4096", "gpula method=auto"), ms_of("svd 4096", "torch")
    note = ""
    if g and p and "reconstruction" in g:
        note = f"rec {g['reconstruction']:.1e}/{p['reconstruction']:.1e} orth {g['orthogonality']:.1e}/{p['orthogonality']:.1e}"
    line("svd 4096^2 fp32 thin vs torch (ms)", g, p, ">=4.00x", lambda r, g, p: r >= 4.0, note)
    best = min(
        (
            r
            for r in ROWS
            if r["case"].startswith("svd 4096")
            and r["impl"].startswith("gpula")
            and r["ms"] is not None
        ),
        key=lambda r: r["ms"],
        default=None,
    )
    if best:
        L.append(
            f"    fastest gpula method: {best['impl']} {best['ms']:.1f} ms rec {best.get('reconstruction', 0):.1e}"
        )
    g, p = ms_of("svd k=", "gpula svd(k)"), ms_of("svd k=", "torch.svd_lowrank(q=k)")
    note = ""
    if g and p and "sigma_rel_err" in g:
        note = f"sigma err {g['sigma_rel_err']:.1e} vs {p['sigma_rel_err']:.1e}"
    line(
        "svd k=64 4096^2 vs torch.svd_lowrank (ms)",
        g,
        p,
        ">=1.00x",
        lambda r, g, p: r >= 1.0 and g.get("sigma_rel_err", 1) <= p.get("sigma_rel_err", 0),
        note,
    )
    line(
        "eigh k=64 n=8192 fp64 vs full eigh (gpula) (ms)",
        ms_of("eigh k=", "gpula eigh(k)"),
        ms_of("eigh k=", "gpula full eigh"),
        ">=5.00x",
        lambda r, g, p: r >= 5.0,
    )
    t = ms_of("eigh k=", "torch full eigh")
    if t:
        L.append(f"    torch full eigh {t['ms']:.1f} ms")
    for case, target_ms, peers in (
        ("batched eigh", 10.0, ("torch", "cupy")),
        ("batched svd", 50.0, ("torch", "cupy")),
    ):
        g = ms_of(case, "gpula") or ms_of(case, "gpula method=auto")
        if g is None:
            L.append(f"  {case} 1000x128^2 fp32: gpula n/a")
            continue
        peer_txt = ", ".join(f"{x} {ms_of(case, x)['ms']:.1f} ms" for x in peers if ms_of(case, x))
        L.append(
            f"  {case + ' 1000x128^2 fp32 (ms)':58s} {g['ms']:9.2f} target <={target_ms:.0f} ms "
            f"{'yes' if g['ms'] <= target_ms else 'NO'} ({peer_txt})"
        )
    line(
        "batched cholesky 10000x32^2 fp32 vs torch (ms)",
        ms_of("batched cholesky", "gpula"),
        ms_of("batched cholesky", "torch"),
        ">=1.00x",
        lambda r, g, p: r >= 1.0,
    )
    line(
        "batched solve 10000x32^2 fp32 vs torch (ms)",
        ms_of("batched solve", "gpula"),
        ms_of("batched solve", "torch"),
        ">=1.00x",
        lambda r, g, p: r >= 1.0,
    )
    cpu = [r for r in ROWS if r["case"].startswith("cpu ")]
    worst = []
    for case in dict.fromkeys(r["case"] for r in cpu):
        g = ms_of(case, "gpula cpu")
        peers = [ms_of(case, x) for x in ("numpy", "scipy")]
        peers = [x for x in peers if x]
        if g and peers:
            best_peer = min(x["ms"] for x in peers)
            worst.append((g["ms"] / best_peer, case.split(" n=")[0][4:]))
    if worst:
        txt = ", ".join(f"{w} {r:.2f}x" for r, w in worst)
        ok = max(r for r, _ in worst) <= 1.15
        L.append(
            f"  cpu n=2048 gpula time / best of numpy,scipy (<=1.15x: {'yes' if ok else 'NO'}): {txt}"
        )
    return L


def main(argv=None):
    p = arg_parser(__doc__)
    p.add_argument(
        "--cases",
        default=os.environ.get("GPULA_BENCH_LINALG_CASES", "cholesky,solve,svd,svdk,eighk,beigh,bsvd,bchol,cpu"),
    )
    p.add_argument("--cpu-child", help=argparse.SUPPRESS)
    p.add_argument("--cpu-n", type=int, default=2048, help=argparse.SUPPRESS)
    p.add_argument("--cpu-reps", type=int, default=5, help=argparse.SUPPRESS)
    p.add_argument(
        "--results-dir", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results")
    )
    args = p.parse_args(argv)
    if args.cpu_child:
        cpu_child(args.cpu_child, args.cpu_n, args.cpu_reps)
        return 0
    cases = set(args.cases.split(","))
    import gpula as gl

    q = args.quick
    reps = 2 if q else 5
    torch = cuda_torch(report=False)
    if torch is not None:
        cp = try_import("cupy")[0]
        torch.manual_seed(0)
        dev = torch.cuda.get_device_name()
        log(f"GPU: {dev}")
        gpu = [
            ("cholesky", lambda: [case_cholesky(gl, torch, cp, n, reps) for n in ((1024,) if q else (8192, 4096))]),
            ("solve", lambda: case_solve(gl, torch, cp, 1024 if q else 8192, reps)),
            ("svd", lambda: case_svd(gl, torch, cp, 512 if q else 4096, reps)),
            ("svdk", lambda: case_svdk(gl, torch, cp, 512 if q else 4096, 64, reps)),
            ("eighk", lambda: case_eighk(gl, torch, cp, 1024 if q else 8192, 64, reps)),
            ("beigh", lambda: case_beigh(gl, torch, cp, 100 if q else 1000, 128, reps)),
            ("bsvd", lambda: case_bsvd(gl, torch, cp, 100 if q else 1000, 128, reps)),
            ("bchol", lambda: case_bchol(gl, torch, cp, 1000 if q else 10000, 32, reps)),
        ]
        for key, fn in gpu:
            if key in cases:
                t0 = time.perf_counter()
                fn()
                log(f"    ({key}: {time.perf_counter() - t0:.1f} s)")
    else:
        dev = "cpu only"
        log("no CUDA torch: GPU cases skipped")
    if "cpu" in cases:
        case_cpu(gl, 512 if q else 2048, 3 if q else 5)
    date = today()
    table = [f"## Dense linear algebra, {date}, {dev}{' (quick sizes)' if q else ''}", ""]
    rows = []
    for r in ROWS:
        acc = ", ".join(
            f"{k} {v:.2e}" if isinstance(v, float) else f"{k} {v}"
            for k, v in r.items()
            if k not in ("case", "impl", "ms")
        )
        rows.append([r["case"], r["impl"], fmt(r["ms"], ".3f"), acc])
    table += md_table(["case", "implementation", "ms (median)", "accuracy"], rows)
    summary = summary_lines()
    log("\n".join(table))
    log("\n".join(summary))
    if not q and torch is not None:
        write_result(args.results_dir, f"{date}-{device_slug(dev)}-linalg.md",
                     "\n".join(table + ["", "```"] + summary + ["```", ""]))
    save_json(args.json, {"date": date, "device": dev, "rows": ROWS})
    append_summary(args.summary, summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
