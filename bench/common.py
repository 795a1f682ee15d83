"""What every gpula benchmark shares: timing (device events, host clock, medians), the
environment and device description, the peer libraries, test matrices, and the writers of
tables, JSON and summary lines.

The measurement method (the architecture's "Performance method"): warm-up first, then
device events around the calls (host clock for CPU work), the median over repeats with its
spread = (max - min) / median. Benchmarks report; they never assert times.
torch, cupy and gpula are imported where a helper needs them, so that CPU-only benchmarks
run without a GPU package.
"""
from __future__ import annotations

import argparse
import datetime
import importlib
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time
import traceback
from typing import Any, NamedTuple

NA = "n/a"


# ---------------------------------------------------------------------------------------------
# logging and failures


def log(*args):
    print(*args, flush=True)


def error_text(exc, limit=None):
    """'TypeName: message', the message cut at `limit` characters."""
    msg = str(exc)
    return f"{type(exc).__name__}: {msg if limit is None else msg[:limit]}"


def warn(where, exc):
    """A failed case: one line on stdout, the traceback on stderr (the full log keeps both)."""
    msg = error_text(exc).splitlines()[0][:200]
    log(f"  [{where}] n/a: {msg}")
    traceback.print_exc(file=sys.stderr)
    return msg


def attempt(fn, on_error):
    """Runs one measurement; a failure calls on_error(exception) (which adds an n/a row) and
    prints the traceback on stderr, so that one failing case never stops the run."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - report and go on
        traceback.print_exc(file=sys.stderr)
        return on_error(exc)


class Stopped(BaseException):
    """SIGTERM (e.g. from `timeout`): stop the benchmark in flight, keep what was measured."""


def _on_sigterm(signum, frame):
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # `timeout` signals the process group too
    raise Stopped()


def stop_on_sigterm():
    """From now on SIGTERM raises Stopped (once) in the main thread."""
    signal.signal(signal.SIGTERM, _on_sigterm)


# ---------------------------------------------------------------------------------------------
# peers: the libraries a user would pick instead


def try_import(name, *submodules):
    """(module, None), or (None, why) when it cannot be imported: its rows then read n/a."""
    try:
        mod = importlib.import_module(name)
        for sub in submodules:
            importlib.import_module(sub)
        return mod, None
    except Exception as e:  # noqa: BLE001 - any import failure means "not available"
        return None, error_text(e)


def cuda_torch(report=True):
    """torch where it has a CUDA device, else None (why on stderr when `report`)."""
    torch, why = try_import("torch")
    if torch is not None and not torch.cuda.is_available():
        torch, why = None, "no CUDA device"
    if torch is None and report:
        print(f"torch peer skipped: {why}", file=sys.stderr)
    return torch


def gpu_cupy(report=True):
    """cupy where it sees a GPU, else None (why on stderr when `report`)."""
    cp, why = try_import("cupy")
    if cp is not None:
        try:
            if cp.cuda.runtime.getDeviceCount() == 0:
                cp, why = None, "no GPU"
        except Exception as e:  # noqa: BLE001 - no driver, no device
            cp, why = None, error_text(e)
    if cp is None and report:
        print(f"cupy peer skipped: {why}", file=sys.stderr)
    return cp


# ---------------------------------------------------------------------------------------------
# timing


class Timing(NamedTuple):
    ms: float  # median over the repeats
    spread: float  # (max - min) / median
    out: Any  # what the last call returned


def host_busy(seconds=1.0):
    """(share of all cores' time busy on the whole host over `seconds`, 1-min load average):
    /proc/stat, so other processes' work shows, not only this one's."""

    def sample():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:]]
        return sum(v), v[3] + v[4]  # total, idle + iowait

    t0, i0 = sample()
    time.sleep(seconds)
    t1, i1 = sample()
    return 1.0 - (i1 - i0) / max(t1 - t0, 1), os.getloadavg()[0]


def summarize(times_ms, out=None):
    med = statistics.median(times_ms)
    return Timing(med, (max(times_ms) - min(times_ms)) / med if med else 0.0, out)


class Events:
    """A start and a stop CUDA event of torch or cupy: the package whose stream runs the work."""

    def __init__(self, lib="torch"):
        self.lib = lib
        if lib == "cupy":
            import cupy

            self.start, self.end = cupy.cuda.Event(), cupy.cuda.Event()
        else:
            import torch

            self.start = torch.cuda.Event(enable_timing=True)
            self.end = torch.cuda.Event(enable_timing=True)

    def record(self):
        self.start.record()

    def stop(self):
        """Records the stop event, waits for it, and returns the milliseconds since record()."""
        self.end.record()
        self.end.synchronize()
        return self.elapsed_ms()

    def elapsed_ms(self):
        if self.lib == "cupy":
            import cupy

            return cupy.cuda.get_elapsed_time(self.start, self.end)
        return self.start.elapsed_time(self.end)


def sync(lib="torch"):
    """Waits for all the device's work (torch or cupy)."""
    if lib == "cupy":
        import cupy

        cupy.cuda.Device().synchronize()
    else:
        import torch

        torch.cuda.synchronize()


def device_time(fn, repeats, *, warmup=1, lib="torch", once_over_s=None):
    """fn() between device events of `lib`, after `warmup` calls: Timing in ms.

    Where the warm-up took longer than `once_over_s` seconds, one timed call is enough.
    """
    t0 = time.perf_counter()
    for _ in range(warmup):
        fn()
    sync(lib)
    if once_over_s is not None and time.perf_counter() - t0 > once_over_s:
        repeats = 1
    ev, times, out = Events(lib), [], None
    for _ in range(repeats):
        ev.record()
        out = fn()
        times.append(ev.stop())
    return summarize(times, out)


def host_time(fn, repeats, *, warmup=1):
    """fn() on the host clock (perf_counter), after `warmup` calls: Timing in ms."""
    out = None
    for _ in range(warmup):
        out = fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return summarize(times, out)


def first_call_s(fn, lib="torch"):
    """Seconds of one call from a synchronized device to its end (plan creation included)."""
    sync(lib)
    t0 = time.perf_counter()
    fn()
    sync(lib)
    return time.perf_counter() - t0


def time_group(fns, *, target_ms, repeats, warmup_ms=60.0):
    """fns: {name: callable(i)}. Times each in interleaved rounds (so clock drift hits all
    alike) with torch CUDA events around a loop of calls sized to about target_ms.

    Returns {name: {"ms": median, "spread": (max-min)/median, "iters": n}} or an "error" entry.
    """
    ev, iters, out = {}, {}, {}
    for name, fn in list(fns.items()):
        try:
            e = Events()
            fn(0)
            sync()
            e.record()
            for i in range(3):
                fn(i)
            est = max(e.stop() / 3, 1e-3)
            for i in range(int(min(max(warmup_ms / est, 1), 2000))):
                fn(i)
            sync()
            ev[name] = e
            iters[name] = int(min(max(target_ms / est, 3), 5000))
        except Exception as exc:  # noqa: BLE001
            out[name] = {"error": warn(name, exc)}
    samples = {name: [] for name in ev}
    for _ in range(repeats):
        for name in list(samples):
            fn, e, n = fns[name], ev[name], iters[name]
            try:
                e.record()
                for i in range(n):
                    fn(i)
                samples[name].append(e.stop() / n)
            except Exception as exc:  # noqa: BLE001
                out[name] = {"error": warn(name, exc)}
                del samples[name]
    for name, v in samples.items():
        t = summarize(v)
        out[name] = {"ms": t.ms, "spread": t.spread, "iters": iters[name]}
    return out


def group_rows(libs, times, notes, head, flops, extra):
    """time_group's result as table rows, one per library of `libs` in that order: `head`, the
    library and its note, then ms, spread, TFLOP/s (flops / time) and extra(lib, ms) where it was
    timed, else its error or the note why it did not run; a library neither timed nor noted has
    no row."""
    rows = []
    for lib in libs:
        t = times.get(lib, {})
        row = {**head, "lib": lib, "note": notes.get(lib, "")}
        if "ms" in t:
            row.update(ms=t["ms"], spread=t["spread"], tflops=flops / (t["ms"] * 1e-3) / 1e12,
                       **extra(lib, t["ms"]))
        elif lib in notes or lib in t:
            row["error"] = t.get("error") or notes.get(lib) or NA
        else:
            continue
        rows.append(row)
    return rows


def kernel_times(fn, n=5):
    """[(us per call, launches per call, kernel name)] of every GPU kernel, memset and copy that
    n calls of fn launch (torch.profiler over CUPTI: gpula's, cuBLAS's and cuSPARSE's kernels
    too), slowest first."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
    rows = []
    for ev in prof.key_averages():
        if ev.device_type.name != "CUDA":
            continue
        total = getattr(ev, "device_time_total", None) or getattr(ev, "cuda_time_total", 0)
        rows.append((total / n, ev.count / n, ev.key))
    return sorted(rows, reverse=True)


def host_overhead(call, *, n_calls, repeats, burst=256, bursts=40):
    """Per-call cost of `call(i)` in microseconds, median over repeats:
    us_per_call: host clock over n_calls plus one final synchronize, / n_calls;
    host_enqueue_us: host clock over bursts of `burst` calls (under the launch queue's depth),
      the synchronize left out: the host-side cost alone;
    device_us_per_call: torch CUDA events around the n_calls, / n_calls."""
    t0 = time.perf_counter()
    for i in range(200):
        call(i)
    sync()
    per_call = (time.perf_counter() - t0) / 200
    # Slow calls (tens of microseconds) get fewer calls, so that a repeat stays near 0.3 s.
    n_calls = int(min(n_calls, max(1000, 0.3 / per_call)))
    bursts = int(min(bursts, max(8, 0.2 / (burst * per_call))))
    ev = Events()
    wall, dev, enq = [], [], []
    for _ in range(repeats):
        sync()
        ev.record()
        t0 = time.perf_counter()
        for i in range(n_calls):
            call(i)
        ev.end.record()
        sync()
        t1 = time.perf_counter()
        wall.append((t1 - t0) / n_calls * 1e6)
        dev.append(ev.elapsed_ms() * 1e3 / n_calls)
        tot = 0.0
        for _b in range(bursts):
            sync()
            t0 = time.perf_counter()
            for i in range(burst):
                call(i)
            tot += time.perf_counter() - t0
        sync()
        enq.append(tot / (bursts * burst) * 1e6)
    return {
        "calls": n_calls,
        "us_per_call": statistics.median(wall),
        "host_enqueue_us": statistics.median(enq),
        "device_us_per_call": statistics.median(dev),
    }


# ---------------------------------------------------------------------------------------------
# GPU inputs and checks (torch)


def randn(shape, dtype, gen):
    """Fresh random normals on the GPU (never zeros), drawn in float32 and cast to dtype."""
    import torch

    return torch.randn(shape, device="cuda", dtype=torch.float32, generator=gen).to(dtype)


def first(r):
    """gpula returns (result, aux) when an epilogue writes aux outputs; keep the result."""
    return r[0] if isinstance(r, tuple) else r


def rel_err(out, ref):
    """||out - ref||_F / ||ref||_F against a float64 torch reference; inf for a non-finite
    output, NaN for a wrong shape or a failure."""
    import torch

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


def free_memory():
    """Gives the cached blocks of the cases before back to the device."""
    import torch

    sync()
    torch.cuda.empty_cache()


def free_plans(plans):
    """Frees peers' plans (nvmath Matmul ...); a failing free() is no reason to stop."""
    for plan in plans:
        try:
            plan.free()
        except Exception:  # noqa: BLE001
            pass


# ---------------------------------------------------------------------------------------------
# environment and device


def today():
    return datetime.date.today().isoformat()


def gpula_description():
    """gl.devices()'s description (backends, GPUs, the OpenBLAS core), or why not."""
    try:
        import gpula as gl

        return gl.devices()["description"]
    except Exception as exc:  # noqa: BLE001
        return f"n/a ({exc})"


def versions():
    """The versions of Python, torch and its CUDA runtime, gpula, cupy, nvmath-python and the
    CUDA Python packages nvmath-python needs; a package that is absent says why."""
    torch, why = try_import("torch")
    v = {"python": sys.version.split()[0],
         "torch": torch.__version__ if torch is not None else f"n/a ({why})",
         "cuda_runtime (torch)": torch.version.cuda if torch is not None else NA}
    for key, name, subs in (("gpula", "gpula", ()), ("cupy", "cupy", ()),
                            ("nvmath-python", "nvmath", ("nvmath.linalg.advanced",))):
        mod, why = try_import(name, *subs)
        v[key] = getattr(mod, "__version__", "?") if mod is not None else f"n/a ({why})"
    from importlib import metadata

    for dist in ("cuda-core", "cuda-bindings", "cuda-pathfinder"):  # what nvmath-python needs
        try:
            v[dist] = metadata.version(dist)
        except Exception:  # noqa: BLE001
            v[dist] = "not installed"
    if "gpula" in sys.modules:  # imported above: its devices too
        v["gpula devices"] = gpula_description()
    return v


def nvidia_smi():
    """One CSV line per GPU: name, clocks, temperature, power (the state before and after)."""
    try:
        q = "name,clocks.sm,clocks.mem,temperature.gpu,power.draw,power.limit"
        return subprocess.run(
            ["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader"],
            capture_output=True, text=True, timeout=20,
        ).stdout.strip()
    except Exception as exc:  # noqa: BLE001
        return f"n/a ({exc})"


def device_slug(name):
    """'h100', 'h200', ... for a results file name; 'gpu' when no GPU name is known."""
    if not name:
        return "gpu"
    m = re.search(r"(H200|H100|A100|B200|GH200|L40S|L4)", name)
    return (m.group(1) if m else re.sub(r"[^A-Za-z0-9]+", "-", name).strip("-")).lower()


# ---------------------------------------------------------------------------------------------
# test matrices


def poisson2d(g):
    """The 2-D Poisson 5-point matrix on a g x g grid (n = g^2), CSR float64, sorted indices."""
    import scipy.sparse as sps

    t = sps.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(g, g))
    i = sps.identity(g)
    a = (sps.kron(i, t) + sps.kron(t, i)).tocsr()
    a.sort_indices()
    return a


def poisson3d(g):
    """The 3-D Poisson 7-point matrix on a g^3 grid, CSR float64, sorted indices."""
    import scipy.sparse as sps

    t = sps.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(g, g))
    i = sps.identity(g)
    a = (sps.kron(sps.kron(i, i), t) + sps.kron(sps.kron(i, t), i)
         + sps.kron(sps.kron(t, i), i)).tocsr()
    a.sort_indices()
    return a


# ---------------------------------------------------------------------------------------------
# options, tables and files


def arg_parser(doc, *, summary=True, quick="small sizes (a smoke test)"):
    """The options the benchmarks share: --json PATH, --summary PATH (lines run_all.py collects)
    and --quick; the module docstring is the help text."""
    p = argparse.ArgumentParser(description=doc,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--json", help="write the results here")
    if summary:
        p.add_argument("--summary", help="append the summary lines here")
    p.add_argument("--quick", action="store_true", help=quick)
    return p


def fmt(x, spec=".3f", na=NA):
    """format(x, spec), or `na` for None and NaN."""
    if x is None or (isinstance(x, float) and x != x):
        return na
    return format(x, spec)


def md_table(header, rows):
    """Markdown table lines: the header, its rule, one line per row."""
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return out


def save_json(path, obj):
    """Writes obj to path (no-op for None) through a temporary file: a reader never sees half."""
    if path:
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(obj, f, indent=1, default=str)
        os.replace(tmp, path)


def append_summary(path, lines):
    """Appends the summary lines to path (no-op for None); run_all.py collects them."""
    if path:
        with open(path, "a") as fh:
            fh.write("\n".join(lines) + "\n")


def write_result(folder, name, text):
    """bench/results-style dated table: folder/name, the folder made if needed; returns the path."""
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, name)
    with open(path, "w") as fh:
        fh.write(text)
    return path
