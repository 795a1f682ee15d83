"""Probe: why gpula's CSR SpMV measured 0.59-0.89x torch's (issue 21).

bench_sparse_products.py times one call between two device events: the GPU idles while the
host prepares the call, so a call's host cost counts in its "bandwidth" whenever it exceeds
the time the GPU needs (2-D Poisson n = 1e6 moves ~80 MB: ~30 us at 3 TB/s). This separates
host cost from the kernels, on each benchmark matrix, for torch (torch.mv on a CSR tensor with
int32 indices), cupyx (A @ x) and gpula (A @ x on CuPy and on torch operands):
  - one call between events (the bench's number);
  - 50 back-to-back calls between events, / 50 (the host runs ahead: device time per call);
  - host microseconds per call (back to back, with a final synchronize);
  - the kernels each call launches and their mean duration (torch.profiler, CUPTI), which names
    the cuSPARSE algorithm.
Reports only.

    python bench/probes/probe_spmv.py
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import common  # noqa: E402


def one_call_ms(fn):
    """Median ms of one call between events (the bench's old number: host latency included)."""
    return common.device_time(fn, 20, warmup=3).ms


def burst_ms(fn, n=50):
    """Median ms per call of n back-to-back calls between events (the GPU's time per call)."""

    def burst():
        for _ in range(n):
            fn()

    return common.device_time(burst, 7).ms / n


def host_us(fn, torch, n=200):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / n * 1e6


def kernels(fn):
    """The kernels of one call and their mean times, on one line."""
    n = 20
    rows = [r for r in common.kernel_times(fn, n) if r[1] >= 1]
    return "; ".join(f"{key[:60]} x{calls:g} {us / calls:.1f}us" for us, calls, key in rows) or "-"


def main() -> None:
    import torch

    import gpula as gl

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from bench_sparse_products import poisson2d, poisson3d, powerlaw_graph, spmv_bytes, torch_csr

    cp = common.gpu_cupy(report=False)
    mats = [("poisson2d n=1e6", poisson2d(1000)), ("poisson2d n=9e6", poisson2d(3000)),
            ("poisson3d n=1e6", poisson3d(100)),
            ("powerlaw graph n=1e6", powerlaw_graph(1_000_000, 10_000_000))]
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}")
    print("| matrix | impl | one call ms | burst ms/call | GB/s (burst) | host us/call | kernels |")
    print("|---|---|---|---|---|---|---|")
    for name, a in mats:
        nbytes = spmv_bytes(a)
        x = np.random.default_rng(1).standard_normal(a.shape[1]).astype(a.dtype)
        at, xt = torch_csr(torch, a), torch.from_numpy(x).cuda()
        impls = [("torch.mv", lambda: torch.mv(at, xt))]
        At = gl.sparse.as_csr(at, "probe")
        impls.append(("gpula (torch)", lambda: At @ xt))
        if cp is not None:
            import cupyx.scipy.sparse as csps

            ad, xd = csps.csr_matrix(a), cp.asarray(x)
            Ad = gl.sparse.csr_matrix((ad.data, ad.indices, ad.indptr), shape=a.shape)
            impls += [("cupyx", lambda: ad @ xd), ("gpula (cupy)", lambda: Ad @ xd)]
        for impl, fn in impls:
            one, burst = one_call_ms(fn), burst_ms(fn)
            print(f"| {name} | {impl} | {one:.4f} | {burst:.4f} | {nbytes / burst / 1e6:.0f} | "
                  f"{host_us(fn, torch):.1f} | {kernels(fn)} |", flush=True)


if __name__ == "__main__":
    main()
