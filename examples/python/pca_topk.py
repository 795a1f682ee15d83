"""PCA of a low-rank-plus-noise data matrix with gpula's top-k SVD, checked against NumPy.

Exits nonzero when a check fails. Times the CPU path, and the GPU path when CuPy with CUDA is
present.
"""

import sys
import time

import numpy as np

from gpula.linalg._topk import svd_topk


def data(rng, m=20000, n=1024, rank=32):
    scores = rng.standard_normal((m, rank)) * (0.85 ** np.arange(rank))
    loadings, _ = np.linalg.qr(rng.standard_normal((n, rank)))
    return (scores @ loadings.T * 10 + 0.01 * rng.standard_normal((m, n))).astype(np.float32)


def main() -> int:
    rng = np.random.default_rng(0)
    x = data(rng)
    x -= x.mean(axis=0)
    k = 16
    t = time.perf_counter()
    u, s, vh = svd_topk(x, k=k)
    cpu_s = time.perf_counter() - t
    ref = np.linalg.svd(x.astype(np.float64), full_matrices=False)
    ev = s.astype(np.float64) ** 2 / (x.shape[0] - 1)
    ev_ref = ref[1][:k] ** 2 / (x.shape[0] - 1)
    err_ev = np.max(np.abs(ev - ev_ref) / ev_ref)
    cosines = np.linalg.svd(vh.astype(np.float64) @ ref[2][:k].T, compute_uv=False)
    angle = np.degrees(np.arccos(np.clip(cosines.min(), -1, 1)))
    print(f"cpu svd_topk k={k}: {cpu_s * 1e3:.1f} ms, explained-variance rel err {err_ev:.2e}, "
          f"largest subspace angle {angle:.3e} deg")
    ok = err_ev < 1e-3 and angle < 0.1
    try:
        import cupy

        if cupy.cuda.runtime.getDeviceCount() > 0:
            xg = cupy.asarray(x)
            svd_topk(xg, k=k)
            cupy.cuda.Device().synchronize()
            t = time.perf_counter()
            sg = svd_topk(xg, k=k, compute_uv=False)
            cupy.cuda.Device().synchronize()
            print(f"gpu svd_topk: {(time.perf_counter() - t) * 1e3:.1f} ms")
            ok = ok and np.allclose(cupy.asnumpy(sg), s, rtol=1e-3)
    except Exception as e:  # no CuPy or no GPU
        print(f"gpu: skipped ({type(e).__name__})")
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
