#!/usr/bin/env python3
"""Runs gpula's benchmarks and writes their tables.

  python3 bench/run_all.py --out DIR [--cpp-bin PATH] [--quick] [--skip-cpp] [--skip-python]
                           [--benches linalg,sparse_products,sparse_direct,sparse_iterative,eigsh]

1. the C++ per-call overhead binary (--cpp-bin, else build-gpu/bench/matmul_overhead, else the
   newest build*/bench/matmul_overhead);
2. bench/bench_matmul.py in this interpreter (torch, cupy, nvmath-python and gpula side by side;
   its MLP-layer and autotune sections live in bench_matmul_mlp.py and run in the same process,
   MATMUL_SCRIPTS below).

Writes bench/results/YYYY-MM-DD-<gpu>-matmul.md (dated table, in the repository) and the same file
in DIR, DIR/bench_full.log (everything printed), DIR/bench_matmul.json, and DIR/bench_summary.txt
(a short table of the numbers the "Done when" of issue 2 asks for), which it prints last.
3. then each of --benches (OTHER_BENCHES below: dense linalg, sparse products, sparse direct,
   sparse iterative, sparse eigensolvers, ...) in a child process with a timeout; their summary
   lines are appended.
--skip-cpp / --skip-python skip the matmul parts only.
The targets in the summary are reported, never asserted: the exit status is non-zero only when a
benchmark program failed to run.
"""
from __future__ import annotations

import argparse
import datetime
import glob
import json
import os
import signal
import subprocess
import sys
import threading
import time

from common import Stopped, device_slug, md_table, stop_on_sigterm, write_result
from common import fmt as f

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
# The matmul benchmark: the driver run below, then the case families it imports (one process,
# one JSON: the MLP floors use the ceilings the driver measured).
MATMUL_SCRIPTS = ("bench_matmul.py", "bench_matmul_mlp.py")


def find_cpp_bin(given):
    if given:
        return given if os.path.exists(given) else None
    cands = [os.path.join(ROOT, "build-gpu", "bench", "matmul_overhead")]
    cands += sorted(glob.glob(os.path.join(ROOT, "build*", "bench", "matmul_overhead")),
                    key=os.path.getmtime, reverse=True)
    return next((c for c in cands if os.path.isfile(c) and os.access(c, os.X_OK)), None)


class Log:
    """Prints and keeps every line for bench_full.log."""

    def __init__(self):
        self.lines = []

    def __call__(self, line=""):
        print(line, flush=True)
        self.lines.append(line)


def run_cpp(binary, out_dir, log, timeout):
    """Returns ({case: {metric: value}}, status)."""
    if not binary:
        log("C++ overhead benchmark: binary not found (build the target matmul_overhead)")
        return {}, "binary not found"
    log(f"$ {binary}")
    proc = subprocess.Popen([binary], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    p = None
    try:
        out, err = proc.communicate(timeout=timeout)
        p = subprocess.CompletedProcess([binary], proc.returncode, out, err)
        text = out
        status = "ok" if p.returncode == 0 else f"exit status {p.returncode}"
    except (subprocess.TimeoutExpired, Stopped) as e:
        proc.kill()
        out, _ = proc.communicate()
        text = out or ""
        status = "stopped (SIGTERM)" if isinstance(e, Stopped) else f"timed out after {timeout} s"
    for line in text.splitlines():
        log(line)
    if p is not None and p.stderr:
        for line in p.stderr.splitlines():
            log("[stderr] " + line)
    with open(os.path.join(out_dir, "cpp_overhead.log"), "w") as f:
        f.write(text)
        if p is not None:
            f.write(p.stderr)
    cases = {}
    for line in text.splitlines():
        parts = line.split("\t")
        if len(parts) == 4 and parts[0] == "cpp_overhead":
            try:
                cases.setdefault(parts[1], {})[parts[2]] = float(parts[3])
            except ValueError:
                pass
    return cases, status


def run_python(out_dir, log, args):
    js = os.path.join(out_dir, "bench_matmul.json")
    if os.path.exists(js):
        os.remove(js)
    cmd = [sys.executable, "-u", os.path.join(HERE, MATMUL_SCRIPTS[0]), "--json", js]
    if args.quick:
        cmd.append("--quick")
    if args.sections:
        cmd += ["--sections", args.sections]
    log("$ " + " ".join(cmd))
    err_path = os.path.join(out_dir, "bench_matmul.stderr.log")
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    with open(err_path, "w") as err:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, env=env)
        # Past the timeout, SIGTERM: bench_matmul.py then saves what it measured and exits.
        timer = threading.Timer(args.timeout, p.terminate)
        timer.start()
        try:
            for line in p.stdout:
                log(line.rstrip("\n"))
        except Stopped:
            log("run_all.py: SIGTERM; stopping bench_matmul.py, keeping what it measured")
            p.terminate()
            for line in p.stdout:
                log(line.rstrip("\n"))
        try:
            rc = p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            rc = p.wait()
        if not timer.is_alive() and rc != 0:
            log(f"bench_matmul.py stopped after {args.timeout} s")
        timer.cancel()
    with open(err_path) as f:
        stderr = f.read()
    if stderr.strip():
        log("---- bench_matmul.py stderr (tracebacks of the n/a cases) ----")
        for line in stderr.splitlines():
            log(line)
    status = "ok" if rc == 0 else f"exit status {rc}"
    return load_results(out_dir), status


def load_results(out_dir):
    js = os.path.join(out_dir, "bench_matmul.json")
    try:
        with open(js) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


# ---------------------------------------------------------------------------------------------
# formatting


def find(rows, **kw):
    for r in rows:
        if all(r.get(k) == v for k, v in kw.items()):
            return r
    return None


# bench_matmul.py reads each MLP shape a x b x c two ways (its MLP_READINGS): "MxNxK", x a x c
# times W c x b (issue 2's table), and "MxKxN", the up-projection b -> c, x a x b times W b x c.
MLP_READING_LABELS = {"MxNxK": "M x N x K", "MxKxN": "M x K x N (up)"}


def mlp_rows(res):
    """The MLP rows, each with its "reading" (rows from before the readings are M x N x K)."""
    return [dict(r, reading=r.get("reading", "MxNxK")) for r in res.get("mlp", [])]


def summary_lines(res, cpp, date, device):
    res = res or {}
    ceil = res.get("ceilings", {})
    gemm, mlp = res.get("gemm", []), mlp_rows(res)
    ov, at = res.get("overhead", []), res.get("autotune", [])
    L = [f"gpula matmul benchmark summary, {date}, {device}",
         f"ceilings: device copy {f(ceil.get('copy_tb_s'), '.2f')} TB/s; torch bf16 8192^3 "
         f"{f(ceil.get('bf16_tflops_torch'), '.1f')} TFLOP/s. ratio > 1: gpula faster. "
         "Targets are reported, not asserted.",
         f"{'what':68s} {'gpula':>10s} {'peer':>10s} {'ratio':>8s} {'target':>8s} meets"]

    def line(what, g, p, ratio, target, ok):
        meets = "n/a" if ok is None else ("yes" if ok else "NO")
        L.append(f"{what:68s} {g:>10s} {p:>10s} {ratio:>8s} {target:>8s} {meets}")

    g, t = find(gemm, dtype="bf16", lib="gpula"), find(gemm, dtype="bf16", lib="torch")
    r = g.get("vs_torch") if g and "ms" in g else None
    line("bf16 8192^3 TFLOP/s vs torch.matmul", f(g and g.get("tflops"), ".1f"),
         f(t and t.get("tflops"), ".1f"), f(r, ".3f") + "x" if r else "n/a", ">=0.97x",
         None if r is None else r >= 0.97)
    others = []
    for dt in ("fp16", "tf32", "fp32", "fp64", "fp8"):
        g = find(gemm, dtype=dt, lib="gpula")
        r = g.get("vs_torch") if g else None
        others.append(f"{dt} {f(r, '.2f')}x" if r else f"{dt} n/a")
    L.append("  other dtypes, gpula vs torch: " + ", ".join(others))

    # Issue 2's MLP target at 65536x512x2048 under both readings; "(d_in->d_out)" in each line.
    big = "65536x512x2048"
    a, b, c = big.split("x")
    for rd, io in (("MxNxK", f"({c}->{b})"), ("MxKxN", f"({b}->{c})")):
        for act, name in (("relu", "ReLU"), ("gelu", "GELU")):
            g = find(mlp, shape=big, reading=rd, act=act, lib="gpula")
            for peer, label, target in (("addmm_act", "_addmm_activation", 1.0),
                                        ("unfused", "unfused torch", 2.5)):
                p = find(mlp, shape=big, reading=rd, act=act, lib=peer)
                ratio = p.get("gpula_speedup") if p and g and "ms" in g else None
                line(f"bias+{name} {big} {rd} {io} vs {label} (ms)", f(g and g.get("ms"), ".4f"),
                     f(p and p.get("ms"), ".4f"), f(ratio, ".3f") + "x" if ratio else "n/a",
                     f">={target:.2f}x", None if ratio is None else ratio >= target)
    L.append(f"  {big} MxNxK: x {a}x{c} @ W {c}x{b} (issue 2's table); "
             f"MxKxN: the up-projection, x {a}x{b} @ W {b}x{c}")
    other_shapes = []
    for r in mlp:
        if r.get("lib") == "addmm_act" and r.get("shape") != big and r.get("gpula_speedup"):
            other_shapes.append(f"{r['shape']} {r['reading']} {r['act']} {r['gpula_speedup']:.2f}x")
    if other_shapes:
        L.append("  vs _addmm_activation, other shapes: " + ", ".join(other_shapes))

    cpp_pl = cpp.get("planned_execute_64", {})
    py_torch = find(ov, case="torch_matmul", dtype="f32") or {}
    torch_us = py_torch.get("us_per_call")
    c_us = cpp_pl.get("us_per_call")
    line("planned 64^3 f32 execute, C++ (us/call)", f(c_us, ".2f"), "", "", "<=5us",
         None if c_us is None else c_us <= 5.0)
    raw = cpp.get("raw_cublaslt_64", {})
    L.append(f"  C++: host enqueue {f(cpp_pl.get('host_enqueue_us'), '.2f')} us, device "
             f"{f(cpp_pl.get('device_us_per_call'), '.2f')} us/call; raw cuBLASLt "
             f"{f(raw.get('us_per_call'), '.2f')} us/call (enqueue {f(raw.get('host_enqueue_us'), '.2f')}); "
             f"gpula::matmul {f(cpp.get('function_form_64', {}).get('us_per_call'), '.2f')} us/call")
    py_pl = find(ov, case="gpula_planned_execute", dtype="f32") or {}
    p_us = py_pl.get("us_per_call")
    ratio = torch_us / p_us if torch_us and p_us else None
    line("planned 64^3 f32 execute, Python vs torch.matmul (us)", f(p_us, ".2f"), f(torch_us, ".2f"),
         f(ratio, ".2f") + "x" if ratio else "n/a", "<=10us", None if p_us is None else p_us <= 10.0)
    py_fn = find(ov, case="gpula_function", dtype="f32") or {}
    L.append(f"  Python: planned execute enqueue {f(py_pl.get('host_enqueue_us'), '.2f')} us; "
             f"gl.matmul {f(py_fn.get('us_per_call'), '.2f')} us/call; torch.matmul enqueue "
             f"{f(py_torch.get('host_enqueue_us'), '.2f')} us")

    L.append("autotune vs heuristic's first choice (heuristic time / autotuned time; target >= 1):")
    for r in at:
        if "speedup" in r:
            ok = "yes" if r["speedup"] >= 1.0 else ("NO" if r["speedup"] < 1.0 - r["spread"] else "noise")
            L.append(f"  {r['case']:28s} {r['speedup']:.3f}  (spread {100 * r['spread']:.1f}%) {ok}")
        else:
            L.append(f"  {r.get('case', '?'):28s} n/a ({r.get('error', '')[:80]})")
    return L


def markdown(res, cpp, cpp_status, py_status, summary, date, device):
    res = res or {}
    meta = res.get("meta", {})
    ceil = res.get("ceilings", {})
    L = [f"# gpula matmul benchmarks: {device}, {date}", ""]
    L += ["Produced by `python3 bench/run_all.py --out DIR` (bench/matmul_overhead.cpp, "
          "bench/bench_matmul.py). Timing: CUDA events around loops of calls after warm-up; the "
          "libraries of one case run in interleaved rounds and each time is the median over "
          f"{meta.get('repeats', '?')} rounds (spread = (max - min) / median). Inputs are fresh "
          "random normals. rel. error = ||out - ref||_F / ||ref||_F against a float64 reference "
          "of the same inputs. TFLOP/s = 2MNK / time.", ""]
    L += ["## Machine and versions", ""]
    for k, v in meta.get("versions", {}).items():
        L.append(f"- {k}: " + str(v).strip().replace("\n", "; "))
    L.append(f"- nvidia-smi before: {meta.get('nvidia_smi_before', 'n/a')}")
    L.append(f"- nvidia-smi after: {meta.get('nvidia_smi_after', 'n/a')}")
    L.append(f"- status: C++ {cpp_status}; Python {py_status}; Python run "
             f"{f(meta.get('seconds'), '.0f')} s" + ("; QUICK MODE (small sizes)" if meta.get("quick") else ""))
    L += ["", "## Ceilings", ""]
    L.append(f"- device-to-device copy: {f(ceil.get('copy_tb_s'), '.2f')} TB/s (bytes read + written)")
    L.append(f"- bf16 matrix rate, torch.matmul 8192^3: {f(ceil.get('bf16_tflops_torch'), '.1f')} TFLOP/s")

    L += ["", "## Square GEMM (8192^3)", "",
          "vs torch = torch time / library time (the torch peer for fp8 is torch._scaled_mm).", ""]
    rows = []
    for r in res.get("gemm", []):
        if "ms" in r:
            rows.append([r["dtype"], r["lib"], f(r["ms"], ".4f"), f(r["tflops"], ".1f"),
                         f(r.get("vs_torch"), ".3f"), f(r.get("rel_err"), ".2e"),
                         f(100 * r["spread"], ".1f") + "%", r.get("note", "")])
        else:
            rows.append([r["dtype"], r["lib"], "n/a", "", "", "", "", r.get("error", "")])
    L += md_table(["dtype", "library", "ms", "TFLOP/s", "vs torch", "rel. error", "spread", "note"], rows)

    L += ["", "## MLP layer y = act(x @ W + b), bf16", "",
          "Each shape a x b x c is read two ways: M x N x K (x: a x c, W: c x b, b outputs; issue "
          "2's table) and M x K x N, the up-projection d_in = b -> d_out = c (x: a x b, W: b x c); "
          "a shape with b = c is the same product both ways and is run once. "
          "gpula speedup = library time / gpula time. floor = max(2MNK / bf16 ceiling, "
          "bytes of x, W, b, y once / copy bandwidth).", ""]
    rows = []
    for r in mlp_rows(res):
        head = [r["shape"], MLP_READING_LABELS.get(r["reading"], r["reading"]),
                f"{r['m']}x{r['k']} @ {r['k']}x{r['n']}" if "m" in r else "", r["act"], r["lib"]]
        if "ms" in r:
            rows.append([*head, f(r["ms"], ".4f"), f(r["tflops"], ".1f"),
                         f(r.get("gpula_speedup"), ".3f"),
                         f(100 * r["of_floor"], ".0f") + "%" if r.get("of_floor") else "n/a",
                         f(r.get("rel_err"), ".2e"), f(100 * r["spread"], ".1f") + "%",
                         r.get("note", "")])
        else:
            rows.append([*head, "n/a", "", "", "", "", "", r.get("error", "")])
    L += md_table(["shape", "read as", "x @ W", "act", "library", "ms", "TFLOP/s", "gpula speedup",
                   "of floor", "rel. error", "spread", "note"], rows)

    L += ["", "## Per-call overhead, 64^3", "",
          "us/call: host clock over many back-to-back calls plus one final synchronize, / calls. "
          "host enqueue: host clock over bursts of 256 calls without the synchronize (the host-side "
          "cost alone). device: CUDA events around the calls, / calls.", "", "From C++:", ""]
    rows = [[case, f(m.get("us_per_call"), ".2f"), f(m.get("host_enqueue_us"), ".2f"),
             f(m.get("device_us_per_call"), ".2f"), f(m.get("rel_error"), ".1e")]
            for case, m in cpp.items()]
    L += md_table(["case", "us/call", "host enqueue us", "device us/call", "rel. error"], rows)
    L += ["", "From Python:", ""]
    rows = []
    for r in res.get("overhead", []):
        if "us_per_call" in r:
            rows.append([r["case"], r["dtype"], f(r["us_per_call"], ".2f"),
                         f(r["host_enqueue_us"], ".2f"), f(r["device_us_per_call"], ".2f"),
                         f(r.get("rel_err"), ".1e"), r.get("note", "")])
        else:
            rows.append([r.get("case"), r.get("dtype"), "n/a", "", "", "", r.get("error", "")])
    L += md_table(["case", "dtype", "us/call", "host enqueue us", "device us/call", "rel. error",
                   "note"], rows)

    L += ["", "## Autotune vs the heuristic's first choice", ""]
    rows = []
    for r in res.get("autotune", []):
        if "speedup" in r:
            rows.append([r["case"], f(r["heuristic_ms"], ".4f"), f(r["autotuned_ms"], ".4f"),
                         f(r["speedup"], ".3f"), f(100 * r["spread"], ".1f") + "%",
                         r.get("candidates"), f(r.get("autotune_s"), ".2f"),
                         f(r.get("rel_err_autotuned"), ".2e"), r.get("chosen", "")])
        else:
            rows.append([r.get("case"), "n/a", "", "", "", "", "", "", r.get("error", "")])
    L += md_table(["case", "heuristic ms", "autotuned ms", "heuristic/autotuned", "spread",
                   "candidates", "autotune s", "rel. error", "chosen"], rows)
    if res.get("errors"):
        L += ["", "## Cases that failed", ""] + [f"- {e}" for e in res["errors"]]
    L += ["", "## Summary", "", "```"] + summary + ["```", ""]
    return L


# Benchmarks run after matmul: script, extra arguments (normal, quick), timeout in seconds. Each
# script takes --summary PATH (appends its summary lines) and --json PATH, except sparse_direct,
# whose summary lines are the printed ones starting "sparse direct". The iterative solvers' full
# sizes run their GPU cases only (the CPU cases at n = 1e6 would take the whole budget).
OTHER_BENCHES = {
    "linalg": ("bench_linalg.py", [], ["--quick"], 300),
    "sparse_products": ("bench_sparse_products.py", [], ["--small"], 240),
    "sparse_direct": ("bench_sparse_direct.py", ["--m", "1000", "--no-umfpack"], ["--m", "300"], 240),
    "sparse_iterative": ("bench_sparse_iterative.py", ["--gpu-only"], ["--quick"], 200),
    "eigsh": ("bench_eigsh.py", [], ["--quick"], 300),
    "torch": ("bench_torch.py", [], ["--quick"], 300),
    "fp8": ("bench_fp8.py", [], ["--quick"], 300),
    "grouped": ("bench_grouped.py", [], ["--quick"], 300),
    "optim_funcs": ("bench_optim_funcs.py", [], ["--quick"], 300),
}


def run_other(bench, args, log):
    """Runs one of OTHER_BENCHES in a child process; returns its summary lines."""
    if bench not in OTHER_BENCHES:
        return [f"{bench}: unknown benchmark (known: {', '.join(OTHER_BENCHES)})"]
    script, normal, quick, timeout = OTHER_BENCHES[bench]
    path = os.path.join(HERE, script)
    if not os.path.exists(path):
        return [f"{bench}: {script} not found"]
    cmd = [sys.executable, "-u", path] + (quick if args.quick else normal)
    summary_path = os.path.join(args.out, f"bench_{bench}_summary.txt")
    if bench == "sparse_direct":
        cmd += ["--out", args.results_dir]
    else:
        if bench == "linalg":
            cmd += ["--results-dir", args.results_dir]
        cmd += ["--summary", summary_path, "--json", os.path.join(args.out, f"bench_{bench}.json")]
        if os.path.exists(summary_path):
            os.remove(summary_path)
    log("$ " + " ".join(cmd))
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        out, err, status = p.stdout, p.stderr, f"exit status {p.returncode}"
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        err = e.stderr.decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        status = f"timed out after {timeout} s"
    for ln in out.splitlines():
        log(ln)
    if err.strip():
        log(f"---- {script} stderr (last 3000 characters) ----")
        log(err[-3000:])
    log(f"{script}: {status}, {time.time() - t0:.0f} s")
    if bench == "sparse_direct":
        lines = [ln for ln in out.splitlines() if ln.startswith("sparse direct")]
    elif os.path.exists(summary_path):
        with open(summary_path) as fh:
            lines = fh.read().splitlines()
    else:
        lines = []
    return lines or [f"{bench}: no summary ({status})"]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True, help="folder for logs, json and copies of the tables")
    p.add_argument("--cpp-bin", help="path of the matmul_overhead binary")
    p.add_argument("--quick", action="store_true", help="small sizes (smoke test); tables marked")
    p.add_argument("--sections", help="passed to bench_matmul.py")
    p.add_argument("--skip-cpp", action="store_true")
    p.add_argument("--skip-python", action="store_true")
    p.add_argument("--timeout", type=int, default=420, help="seconds for bench_matmul.py")
    p.add_argument("--results-dir", default=os.path.join(HERE, "results"))
    p.add_argument("--benches", default=",".join(OTHER_BENCHES),
                   help=f"comma-separated others to run after matmul ({','.join(OTHER_BENCHES)}); '' for none")
    args = p.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    log = Log()
    t0 = time.time()
    stop_on_sigterm()
    cpp, cpp_status = ({}, "skipped") if args.skip_cpp else run_cpp(
        find_cpp_bin(args.cpp_bin), args.out, log, timeout=120)
    if cpp_status.startswith("stopped"):
        res, py_status = None, "not run (SIGTERM)"
    else:
        try:
            res, py_status = (None, "skipped") if args.skip_python else run_python(args.out, log, args)
        except Stopped:
            res, py_status = load_results(args.out), "stopped (SIGTERM)"
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # the tables get written, whatever comes now

    meta = (res or {}).get("meta", {})
    date = meta.get("date") or datetime.date.today().isoformat()
    device = meta.get("device", "unknown device")
    summary = summary_lines(res, cpp, date, device)
    md = "\n".join(markdown(res, cpp, cpp_status, py_status, summary, date, device))
    name = f"{date}-{device_slug(meta.get('device'))}-matmul{'-quick' if args.quick else ''}.md"
    for folder in (args.results_dir, args.out):
        write_result(folder, name, md)
    with open(os.path.join(args.out, "bench_summary.txt"), "w") as fh:
        fh.write("\n".join(summary) + "\n")
    # The other benchmark scripts (each ~90 s or less): their summary lines follow matmul's.
    for bench in args.benches.split(",") if args.benches else []:
        lines = run_other(bench, args, log)
        summary += lines
        with open(os.path.join(args.out, "bench_summary.txt"), "a") as fh:
            fh.write("\n".join(lines) + "\n")
    log(f"tables: {os.path.join(args.results_dir, name)} (copy in {args.out}); "
        f"{time.time() - t0:.0f} s in all; C++ {cpp_status}, Python {py_status}")
    with open(os.path.join(args.out, "bench_full.log"), "w") as fh:
        fh.write("\n".join(log.lines) + "\n")
    print("\n".join(summary), flush=True)
    return 0 if cpp_status in ("ok", "skipped") and py_status in ("ok", "skipped") else 1


if __name__ == "__main__":
    sys.exit(main())
