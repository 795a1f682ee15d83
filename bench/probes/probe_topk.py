"""Probe: the pieces of the randomized top-k SVD of a 4096 x 4096 fp32 matrix with k = 64,
l = k + 10, on the GPU, each timed alone (CUDA events, median of 20 after warm-up): gpula's and
torch's matmul of the (n, n) matrix with an (n, l) block, QR of the (n, l) block, and the
pieces of a Cholesky-QR orthonormalization with a float64 Gram matrix; then whole svd(k) runs
with 4 and 2 power iterations vs torch.svd_lowrank(q=64, niter=2), and their singular value
errors against the full SVD. Reports only; it guides the choice of svd_topk's steps.
"""

from __future__ import annotations

import statistics

import torch

import gpula as gl
from gpula.linalg._topk import svd_topk


def gpu_ms(fn, reps=20):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        e.synchronize()
        out.append(s.elapsed_time(e))
    return statistics.median(out)


def main():
    n, k, ell = 4096, 64, 74
    g = torch.Generator(device="cuda").manual_seed(0)
    u, _ = torch.linalg.qr(torch.randn(n, n, device="cuda", generator=g, dtype=torch.float64))
    v, _ = torch.linalg.qr(torch.randn(n, n, device="cuda", generator=g, dtype=torch.float64))
    # The spectrum of bench_linalg's svd(k) case: sigma_i = 0.97^i + 1e-3.
    sig = 0.97 ** torch.arange(n, device="cuda", dtype=torch.float64) + 1e-3
    a64 = (u * sig) @ v.T
    a = a64.float().contiguous()
    y = torch.randn(n, ell, device="cuda", generator=g)
    rows = []

    def add(name, ms):
        rows.append((name, ms))
        print(f"{name:58s} {ms:8.3f} ms", flush=True)

    add("gpula matmul (n,n)@(n,l)", gpu_ms(lambda: gl.matmul(a, y)))
    add("torch matmul (n,n)@(n,l)", gpu_ms(lambda: a @ y))
    add("gpula matmul a^H (n,n)^T@(n,l)", gpu_ms(lambda: gl.matmul(a.mT, y)))
    add("gpula qr (n,l) reduced", gpu_ms(lambda: gl.linalg.qr(y)))
    add("torch qr (n,l) reduced", gpu_ms(lambda: torch.linalg.qr(y)))

    def chol_qr():
        y64 = y.double()
        gram = y64.mT @ y64
        r = gl.linalg.cholesky(gram, lower=False, check_info=False)
        r = r[0] if isinstance(r, tuple) else r
        return torch.linalg.solve_triangular(r.float(), y, upper=True, left=False)

    add("cholesky-QR, float64 Gram (torch glue, gpula cholesky)", gpu_ms(chol_qr))
    add("torch float64 Gram (l,n)@(n,l)", gpu_ms(lambda: (lambda z: z.mT @ z)(y.double())))
    gram = (lambda z: z.mT @ z)(y.double())
    add("gpula cholesky (l,l) f64", gpu_ms(lambda: gl.linalg.cholesky(gram, lower=False)))
    add("torch cholesky (l,l) f64", gpu_ms(lambda: torch.linalg.cholesky(gram, upper=True)))
    r = torch.linalg.cholesky(gram, upper=True).float()
    add("torch solve_triangular (n,l) R^-1", gpu_ms(
        lambda: torch.linalg.solve_triangular(r, y, upper=True, left=False)))

    ref = torch.linalg.svdvals(a64)[:k]

    def err(s):
        s = torch.as_tensor(s, device="cuda").double()
        return float(((s[:k] - ref).abs() / ref).max())

    for q in (4, 2, 1):
        opts = {"power_iterations": q}
        ms = gpu_ms(lambda: svd_topk(a, k=k, options=opts), reps=10)
        s = svd_topk(a, k=k, options=opts)[1]
        add(f"gpula svd k=64 power_iterations={q} (sigma err {err(s):.1e})", ms)
    ms = gpu_ms(lambda: torch.svd_lowrank(a, q=k, niter=2), reps=10)
    s = torch.svd_lowrank(a, q=k, niter=2)[1]
    add(f"torch.svd_lowrank q=64 niter=2 (sigma err {err(s):.1e})", ms)


if __name__ == "__main__":
    main()
