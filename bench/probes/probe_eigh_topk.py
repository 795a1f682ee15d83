"""Probe: where eigh(k=64) of n=8192 fp64 spends its time, and how degree/block change it."""
import collections
import logging
import time

import torch

import gpula as gl
import gpula._linalg_topk as tk

n, k = 8192, 64
torch.manual_seed(0)
s = 0.97 ** torch.arange(n, dtype=torch.float64, device="cuda") + 1e-3
q, _ = torch.linalg.qr(torch.randn(n, n, dtype=torch.float64, device="cuda"))
a = (q * s) @ q.mT
a = (a + a.mT) / 2
acc = collections.defaultdict(float)
cnt = collections.Counter()


def wrap(name):
    f = getattr(tk, name)

    def g(*args, **kw):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        r = f(*args, **kw)
        torch.cuda.synchronize()
        acc[name] += time.perf_counter() - t0
        cnt[name] += 1
        return r

    setattr(tk, name, g)


for name in ("_mm", "_orth", "_hermitian", "_lanczos_bounds", "_to_host", "_like"):
    wrap(name)
msgs = []


class H(logging.Handler):
    def emit(self, rec):
        if "eigh_topk" in rec.getMessage():
            msgs.append(rec.getMessage())


logging.getLogger("gpula").addHandler(H())
logging.getLogger("gpula").setLevel(logging.INFO)
for opts in ({}, {"degree": 8}, {"degree": 20}, {"degree": 30}, {"block": 96}, {"block": 128, "degree": 16}):
    acc.clear(); cnt.clear(); msgs.clear()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    w, v = tk.eigh_topk(a, k=k, options=opts)
    torch.cuda.synchronize()
    tot = time.perf_counter() - t0
    err = float(((w - torch.sort(s).values[-k:]).abs()).max())
    print(f"opts {opts}: total {tot*1e3:.1f} ms err {err:.1e}; " + "; ".join(f"{m}: {acc[m]*1e3:.1f} ms x{cnt[m]}" for m in acc))
    print("   ", msgs[-1] if msgs else "")
