"""Probe: where the function form gl.matmul spends its time on a small CUDA product (issue 21).

gl.matmul(a, b) on 64x64 float32 torch CUDA tensors cost 22.9 us a call against torch.matmul's
13.7 us and the planned execute's 6.3 us (H100, 2026-12-07). This times, host clock, back to
back (the GPU work of a 64^3 product is ~3 us, so the host is the bottleneck), median of 7
repeats of 5000 calls, each piece of the function form alone:
  package_of + export of both operands; the binding's cached_matmul (key, lookup, rebind);
  torch.empty of the result; the stream lookup; execute_into (cuBLASLt launch); and the
  whole call; next to torch.matmul, torch.mm with out=, and the planned Matmul.execute.
Reports only.

    python bench/probes/probe_matmul_latency.py
"""

from __future__ import annotations

import statistics
import time


def per_call_us(fn, n=5000, repeats=7):
    import torch

    for _ in range(500):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
        out.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(out)


def main() -> None:
    import torch

    import gpula as gl
    from gpula import _gpula, _interop, _matmul, _options

    a = torch.randn(64, 64, device="cuda")
    b = torch.randn(64, 64, device="cuda")
    pkg = _interop.package_of(a, "matmul", "a")
    dev = pkg.device_of(a)
    ea, eb = pkg.export(a), pkg.export(b)
    native = _options.native(None)
    scales = (1.0, 1.0, 1.0)
    h, specs, gen = _gpula.cached_matmul(ea, eb, None, 1.0, None, _matmul.epilog_of(None), None,
                                         native, scales)
    out = torch.empty(64, 64, device="cuda")
    stream = pkg.current_stream(dev)
    mm = gl.Matmul(a, b)
    mm.plan()
    o2 = torch.empty(64, 64, device="cuda")
    rows = [
        ("torch.matmul(a, b)", lambda: torch.matmul(a, b)),
        ("torch.mm(a, b, out=o)", lambda: torch.mm(a, b, out=o2)),
        ("gl.matmul(a, b)", lambda: gl.matmul(a, b)),
        ("gl.Matmul.execute()", lambda: mm.execute()),
        ("  package_of(a)", lambda: _interop.package_of(a, "matmul", "a")),
        ("  pkg.export(a)", lambda: pkg.export(a)),
        ("  _interop.export(b)", lambda: _interop.export(b, "matmul", "b")),
        ("  cached_matmul(...)", lambda: _gpula.cached_matmul(
            ea, eb, None, 1.0, None, _matmul.epilog_of(None), None, native, scales)),
        ("  options.native(None)", lambda: _options.native(None)),
        ("  torch.empty(64, 64)", lambda: torch.empty((64, 64), dtype=torch.float32, device=dev)),
        ("  pkg.current_stream(dev)", lambda: pkg.current_stream(dev)),
        ("  execute_into([ptr], stream)", lambda: h.execute_into([out.data_ptr()], stream, gen)),
    ]
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    print("| call | us per call (host, back to back) |")
    print("|---|---|")
    for name, fn in rows:
        print(f"| {name} | {per_call_us(fn):.2f} |")


if __name__ == "__main__":
    main()
