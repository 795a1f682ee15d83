"""Probe: cuSOLVER potrf lower vs upper fill on the same SPD data (n=8192 fp64; batched 10000x32 fp32)."""
import cupy as cp
from cupy_backends.cuda.libs import cusolver
from cupy.cuda import device


def t(fn, reps=5):
    fn()
    s, e = cp.cuda.Event(), cp.cuda.Event()
    ts = []
    for _ in range(reps):
        s.record(); fn(); e.record(); e.synchronize()
        ts.append(cp.cuda.get_elapsed_time(s, e))
    ts.sort()
    return ts[len(ts) // 2]


h = device.get_cusolver_handle()
n = 8192
g = cp.random.standard_normal((n, n))
a0 = g @ g.T / n + cp.eye(n)
info = cp.zeros(1, dtype=cp.int32)
for uplo, name in ((0, "lower"), (1, "upper")):
    a = a0.copy()
    lw = cusolver.dpotrf_bufferSize(h, uplo, n, a.data.ptr, n)
    w = cp.empty(lw, dtype=cp.float64)
    def run():
        a[...] = a0
        cusolver.dpotrf(h, uplo, n, a.data.ptr, n, w.data.ptr, lw, info.data.ptr)
    print(f"dpotrf n={n} {name}: {t(run):.2f} ms (includes a 512 MB copy)")
cp.cuda.Device().synchronize()
def copy_only():
    a[...] = a0
print(f"copy only: {t(copy_only):.2f} ms")
at = cp.empty_like(a0)
def tcopy():
    at[...] = a0.T
print(f"transposing copy: {t(tcopy):.2f} ms")
bt, m = 10000, 32
gb = cp.random.standard_normal((bt, m, m), dtype=cp.float32)
ab0 = gb @ gb.transpose(0, 2, 1) / m + cp.eye(m, dtype=cp.float32)
ab = ab0.copy()
ptrs = cp.arange(bt, dtype=cp.uint64) * (m * m * 4) + ab.data.ptr
infos = cp.zeros(bt, dtype=cp.int32)
for uplo, name in ((0, "lower"), (1, "upper")):
    def runb():
        ab[...] = ab0
        cusolver.spotrfBatched(h, uplo, m, ptrs.data.ptr, m, infos.data.ptr, bt)
    print(f"spotrfBatched {bt}x{m} {name}: {t(runb, 20):.3f} ms (with copy)")
def copyb():
    ab[...] = ab0
print(f"batched copy only: {t(copyb, 20):.3f} ms")
