"""Gaussian-process regression with gpula.linalg: RBF kernel, Cholesky, cho_solve, slogdet.

Fits a GP to n noisy samples of a 1-D function, predicts the posterior mean and variance on a
test grid, and computes the log marginal likelihood

    log p(y | X) = -1/2 y^T K^-1 y - 1/2 log|K| - n/2 log(2 pi),   K = k(X, X) + noise^2 I.

Each quantity is checked against NumPy/SciPy in float64 and timed on the CPU (NumPy arrays), and
on the GPU with torch or CuPy when one is present. Exits nonzero when a check fails.

    python examples/python/gp_regression.py [--n 2000] [--dtype float64] [--repeat 3]
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
import scipy.linalg as sl

import gpula as gl

TOL = {"float64": 1e-8, "float32": 5e-2}  # K is ill-conditioned: float32 loses digits


def rbf(x1: np.ndarray, x2: np.ndarray, length: float, scale: float) -> np.ndarray:
    d = x1[:, None] - x2[None, :]
    return scale**2 * np.exp(-0.5 * (d / length) ** 2)


def make_problem(n: int, m: int, rng: np.random.Generator):
    x = np.sort(rng.uniform(-5.0, 5.0, n))
    y = np.sin(x) + 0.3 * np.cos(3 * x) + 0.1 * rng.standard_normal(n)
    xs = np.linspace(-5.0, 5.0, m)
    length, scale, noise = 0.8, 1.0, 0.1
    k = rbf(x, x, length, scale) + noise**2 * np.eye(n)
    ks = rbf(x, xs, length, scale)  # (n, m)
    kss_diag = np.full(m, scale**2)
    return k, ks, kss_diag, y


def reference(k, ks, kss_diag, y):
    """NumPy/SciPy float64."""
    c, lower = sl.cho_factor(k, lower=True)
    alpha = sl.cho_solve((c, lower), y)
    mean = ks.T @ alpha
    v = sl.solve_triangular(c, ks, lower=True)
    var = kss_diag - np.sum(v * v, axis=0)
    _, logdet = np.linalg.slogdet(k)
    lml = -0.5 * y @ alpha - 0.5 * logdet - 0.5 * len(y) * np.log(2 * np.pi)
    return mean, var, lml


def gp_gpula(k, ks, kss_diag, y, xp):
    """The same with gpula; arrays of any package (xp: its module, for the few array ops)."""
    low = gl.linalg.cholesky(k, lower=True)
    alpha = gl.linalg.cho_solve(low, y)
    mean = ks.T @ alpha
    # var = diag(kss) - diag(ks^T K^-1 ks); K^-1 ks by cho_solve with k = m columns.
    kinv_ks = gl.linalg.cho_solve(low, ks)
    var = kss_diag - xp.sum(ks * kinv_ks, axis=0)
    _, logdet = gl.linalg.slogdet(k)
    lml = -0.5 * (y @ alpha) - 0.5 * logdet - 0.5 * y.shape[0] * np.log(2 * np.pi)
    return mean, var, lml


def as_numpy(x) -> np.ndarray:
    if hasattr(x, "get"):  # cupy
        x = x.get()
    elif hasattr(x, "detach"):  # torch
        x = x.detach().cpu().numpy()
    return np.asarray(x, dtype=np.float64)


def check(name: str, got, ref, tol: float) -> bool:
    got, ref = as_numpy(got), np.asarray(ref, dtype=np.float64)
    err = float(np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-300))
    ok = bool(np.isfinite(err) and err < tol)
    print(f"  {name:<10} rel. error {err:.2e}  {'ok' if ok else 'FAILED'} (tol {tol:.0e})")
    return ok


def timed(fn, repeat: int, sync=lambda: None) -> tuple[float, object]:
    out = fn()  # warm-up (plans, pools)
    sync()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        sync()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), out


def gpu_package():
    """(name, to_device, module, synchronize) for torch or CuPy on a usable GPU, else None."""
    if gl.devices()["cuda_device_count"] == 0:
        return None
    try:
        import torch

        if torch.cuda.is_available():
            return (
                "torch",
                lambda a: torch.from_numpy(np.ascontiguousarray(a)).cuda(),
                torch,
                torch.cuda.synchronize,
            )
    except ImportError:
        pass
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            return (
                "cupy",
                cupy.asarray,
                cupy,
                lambda: cupy.cuda.get_current_stream().synchronize(),
            )
    except Exception:
        pass
    return None


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=2000, help="training points")
    p.add_argument("--m", type=int, default=200, help="test points")
    p.add_argument("--dtype", default="float64", choices=sorted(TOL))
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()

    rng = np.random.default_rng(args.seed)
    k, ks, kss_diag, y = make_problem(args.n, args.m, rng)
    t_ref, (mean_ref, var_ref, lml_ref) = timed(lambda: reference(k, ks, kss_diag, y), args.repeat)
    print(f"GP regression: n={args.n} training points, m={args.m} test points, {args.dtype}")
    print(f"NumPy/SciPy float64 reference: {t_ref * 1e3:8.1f} ms   log ML = {lml_ref:.6f}")

    tol = TOL[args.dtype]
    cast = [a.astype(args.dtype) for a in (k, ks, kss_diag, y)]
    ok = True
    runs = [("gpula cpu (NumPy)", lambda a: a, np, lambda: None)]
    gpu = gpu_package()
    if gpu is not None:
        name, to_dev, mod, sync = gpu
        runs.append((f"gpula gpu ({name})", to_dev, mod, sync))
    else:
        print("(no GPU with torch or CuPy here: CPU only)")
    for label, to_dev, mod, sync in runs:
        dev = [to_dev(a) for a in cast]
        t, (mean, var, lml) = timed(lambda d=dev, m=mod: gp_gpula(*d, m), args.repeat, sync)
        print(f"{label}: {t * 1e3:8.1f} ms   log ML = {float(as_numpy(lml)):.6f}")
        ok &= check("mean", mean, mean_ref, tol)
        ok &= check("variance", var, var_ref, max(tol, 1e-6))
        ok &= check("log ML", lml, lml_ref, tol)
    # alpha once more through solve(assume_a="pos"), on the CPU.
    x = gl.linalg.solve(cast[0], cast[3], assume_a="pos")
    ok &= check("solve pos", x, sl.cho_solve(sl.cho_factor(k, lower=True), y), max(tol, 1e-6))
    print("all checks passed" if ok else "SOME CHECKS FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
