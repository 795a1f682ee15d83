"""Probe: gl.linalg.svd(method="jacobi_batched") on float32 batches of several sizes: worst U / V
orthogonality, reconstruction, info, and for the worst column its sigma (bracketing a failure)."""
import torch

import gpula as gl

torch.manual_seed(0)
for m, n in ((64, 64), (96, 96), (112, 112), (120, 120), (127, 127), (128, 128), (128, 64),
             (128, 100), (100, 128), (90, 90)):
    a = torch.randn(24, m, n, device="cuda")
    try:
        u, s, vh = gl.linalg.svd(a, method="jacobi_batched")
    except Exception as e:  # noqa: BLE001
        print(m, n, "error", e)
        continue
    k = min(m, n)
    eu = (u.mT @ u - torch.eye(k, device="cuda")).abs()
    ev = (vh @ vh.mT - torch.eye(k, device="cuda")).abs()
    rec = ((u * s[:, None, :]) @ vh - a).abs().amax((1, 2)) / a.abs().amax((1, 2))
    worst = int(eu.amax((1, 2)).argmax())
    col = int(eu[worst].amax(0).argmax())
    print(f"{m}x{n}: U orth max {eu.max():.1e} (item {worst}, column {col}, sigma {s[worst, col]:.3e}, "
          f"sigma range {s[worst, 0]:.2e}..{s[worst, -1]:.2e}, |u_col| {u[worst, :, col].norm():.3f}); "
          f"V orth {ev.max():.1e}; rec {rec.max():.1e}")
