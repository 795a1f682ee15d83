"""Probe: cuSOLVER IRS (gl.linalg.solve refine=...) at n=8192 fp64 nrhs=16: time and the logged
iterations / fallback, on a Gaussian matrix and on a better conditioned one (Gaussian + sqrt(n) I)."""
import logging
import time

import torch

import gpula as gl

msgs = []


class H(logging.Handler):
    def emit(self, rec):
        m = rec.getMessage()
        if "IRS" in m or "refine" in m or "iteration" in m:
            msgs.append(m)


log = logging.getLogger("gpula")
log.addHandler(H())
log.setLevel(logging.INFO)
n = 8192
torch.manual_seed(0)
b = torch.randn(n, 16, dtype=torch.float64, device="cuda")
for name, a in (("gaussian", torch.randn(n, n, dtype=torch.float64, device="cuda")),
                ("gaussian + sqrt(n) I", torch.randn(n, n, dtype=torch.float64, device="cuda")
                 + n ** 0.5 * torch.eye(n, dtype=torch.float64, device="cuda"))):
    for ref in (None, "f32", "tf32", "bf16", "f16"):
        msgs.clear()
        gl.linalg.solve(a, b, refine=ref)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        x = gl.linalg.solve(a, b, refine=ref)
        torch.cuda.synchronize()
        ms = (time.perf_counter() - t0) * 1e3
        berr = float(torch.linalg.matrix_norm(b - a @ x, 1) / (torch.linalg.matrix_norm(a, 1) * torch.linalg.matrix_norm(x, 1)))
        print(f"{name:22s} refine={ref!s:5s} {ms:8.2f} ms berr {berr:.1e} | {' / '.join(msgs[-2:])[:200]}")
