"""Probe: where cuDSS spends the first solve of the 2-D Poisson matrix (n = m^2), phase by phase,
for several configurations: cuDSS's defaults (what gpula 0.x used), the multi-threaded
reordering through cuDSS's OpenMP threading layer, and the other reordering algorithms.

It calls libcudss directly through ctypes (the library is the carried nvidia-cudss-cu13 wheel's,
found from $GPULA_CUDSS_ROOT or next to the nvidia.cu13 package), so it needs no gpula build.
Timing: host wall clock around each phase, which ends with a device synchronize. Reports only.

    python bench/probes/probe_cudss.py [--m 1000] [--threads 16]
"""

from __future__ import annotations

import argparse
import ctypes
import os
import time

import numpy as np
import scipy.sparse as sp

# Enum values of cuDSS 1.0's cudss_data_types.h (checked by compiling against the header).
CONFIG_REORDERING_ALG = 0
CONFIG_HOST_NTHREADS = 14
CONFIG_ND_NLEVELS = 17
CONFIG_ND_UBFACTOR = 25
DATA_INFO = 0
DATA_LU_NNZ = 1
PHASE_REORDERING = 1
PHASE_SYMBOLIC = 2
PHASE_FACTORIZATION = 4
PHASE_REFACTORIZATION = 8
PHASE_SOLVE = 16 | 32 | 64 | 128 | 256 | 512
MTYPE_GENERAL, MTYPE_SPD = 0, 3
MVIEW_FULL = 0
CUDA_R_64F, CUDA_R_32I = 1, 10
ALGS = {"default": 0, "btf_colamd": 1, "colamd": 2, "amd": 3, "nested_dissection": 4}


def library_dir() -> str:
    root = os.environ.get("GPULA_CUDSS_ROOT")
    if root:
        return os.path.join(root, "lib")
    import nvidia.cu13 as cu13  # the wheel's namespace package

    return os.path.join(list(cu13.__path__)[0], "lib")


def poisson(m: int) -> sp.csr_matrix:
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(m, m))
    eye = sp.identity(m)
    return (sp.kron(eye, t) + sp.kron(t, eye)).tocsr()


class Cudss:
    def __init__(self, libdir: str):
        self.libdir = libdir
        self.lib = ctypes.CDLL(os.path.join(libdir, "libcudss.so.1"))
        self.handle = ctypes.c_void_p()
        self.ok(self.lib.cudssCreate(ctypes.byref(self.handle)), "cudssCreate")

    def ok(self, status, what):
        if status != 0:
            raise RuntimeError(f"{what} failed: status {status}")


class System:
    """A (int32 CSR, float64), b and x = 0 on the device, with the cuDSS config, data and matrix
    objects of one solve on CuPy's current stream."""

    def __init__(self, cu, cp, a, b, mtype: int):
        self.cu, self.cp = cu, cp
        lib, vp = cu.lib, ctypes.c_void_p
        n, nnz = a.shape[0], a.nnz
        self.arrays = (cp.asarray(a.indptr.astype(np.int32)), cp.asarray(a.indices.astype(np.int32)),
                       cp.asarray(a.data))
        self.db = cp.asarray(b)
        self.dx = cp.zeros_like(self.db)
        self.config, self.data, self.mat, self.bm, self.xm = vp(), vp(), vp(), vp(), vp()
        cu.ok(lib.cudssConfigCreate(ctypes.byref(self.config)), "cudssConfigCreate")
        cu.ok(lib.cudssDataCreate(cu.handle, ctypes.byref(self.data)), "cudssDataCreate")
        indptr, indices, values = self.arrays
        cu.ok(
            lib.cudssMatrixCreateCsr(
                ctypes.byref(self.mat), ctypes.c_int64(n), ctypes.c_int64(n), ctypes.c_int64(nnz),
                vp(indptr.data.ptr), vp(None), vp(indices.data.ptr), vp(values.data.ptr),
                CUDA_R_32I, CUDA_R_32I, CUDA_R_64F, mtype, MVIEW_FULL, 0,
            ),
            "cudssMatrixCreateCsr",
        )
        for m_, arr in ((self.bm, self.db), (self.xm, self.dx)):
            cu.ok(
                lib.cudssMatrixCreateDn(
                    ctypes.byref(m_), ctypes.c_int64(n), ctypes.c_int64(1), ctypes.c_int64(n),
                    vp(arr.data.ptr), CUDA_R_64F, 0,
                ),
                "cudssMatrixCreateDn",
            )
        cu.ok(lib.cudssSetStream(cu.handle, vp(cp.cuda.get_current_stream().ptr)), "cudssSetStream")

    def set_config(self, param: int, value: int, what: str):
        v = ctypes.c_int(value)
        self.cu.ok(self.cu.lib.cudssConfigSet(self.config, param, ctypes.byref(v), 4), what)

    def execute(self, name: str, phase: int) -> float:
        """One phase, host wall clock between device synchronizations, in seconds."""
        self.cp.cuda.Device().synchronize()
        t0 = time.perf_counter()
        self.cu.ok(self.cu.lib.cudssExecute(self.cu.handle, phase, self.config, self.data,
                                            self.mat, self.xm, self.bm), f"execute {name}")
        self.cp.cuda.Device().synchronize()
        return time.perf_counter() - t0

    def lu_nnz(self) -> int:
        lu, written = ctypes.c_int64(), ctypes.c_size_t()
        self.cu.lib.cudssDataGet(self.cu.handle, self.data, DATA_LU_NNZ, ctypes.byref(lu), 8,
                                 ctypes.byref(written))
        return int(lu.value)

    def residual(self, a, b) -> float:
        x = self.cp.asnumpy(self.dx)
        return float(np.linalg.norm(a @ x - b) / np.linalg.norm(b))

    def close(self):
        lib = self.cu.lib
        for m_ in (self.bm, self.xm, self.mat):
            lib.cudssMatrixDestroy(m_)
        lib.cudssDataDestroy(self.cu.handle, self.data)
        lib.cudssConfigDestroy(self.config)


def run(cu, cp, a, b, alg: str, threads: int, mtype: int, nd_levels: int = 0, ubfactor: int = 0):
    s = System(cu, cp, a, b, mtype)
    s.set_config(CONFIG_REORDERING_ALG, ALGS[alg], "reordering")
    if threads > 1:
        s.set_config(CONFIG_HOST_NTHREADS, threads, "nthreads")
    if nd_levels > 0:
        s.set_config(CONFIG_ND_NLEVELS, nd_levels, "nd_nlevels")
    else:
        nl, written = ctypes.c_int(-1), ctypes.c_size_t()
        cu.lib.cudssConfigGet(s.config, CONFIG_ND_NLEVELS, ctypes.byref(nl), 4, ctypes.byref(written))
        print(f"  (ND_NLEVELS default: {nl.value})", flush=True)
    if ubfactor > 0:
        s.set_config(CONFIG_ND_UBFACTOR, ubfactor, "nd_ubfactor")
    times = {}
    for name, phase in (
        ("reorder", PHASE_REORDERING),
        ("symbolic", PHASE_SYMBOLIC),
        ("factor", PHASE_FACTORIZATION),
        ("solve", PHASE_SOLVE),
        ("refactor", PHASE_REFACTORIZATION),
        ("solve2", PHASE_SOLVE),
    ):
        times[name] = s.execute(name, phase)
    result = times, s.lu_nnz(), s.residual(a, b)
    s.close()
    return result


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--m", type=int, default=1000)
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = p.parse_args()
    import cupy as cp

    a = poisson(args.m)
    b = np.random.default_rng(0).standard_normal(a.shape[0])
    cu = Cudss(library_dir())
    run(cu, cp, poisson(64), b[: 64 * 64], "default", 1, MTYPE_SPD)  # load and initialize
    mt = os.path.join(cu.libdir, "libcudss_mtlayer_gomp.so.1")
    have_mt = os.path.exists(mt)
    rows = []
    if have_mt:
        cu.ok(cu.lib.cudssSetThreadingLayer(cu.handle, mt.encode()), "cudssSetThreadingLayer")
        t = args.threads
        for alg, th, mtype, tag, nd, ub in (
            ("default", t, MTYPE_SPD, "spd", 0, 0),
            ("nested_dissection", t, MTYPE_SPD, "spd", 0, 0),
            ("nested_dissection", 1, MTYPE_SPD, "spd", 0, 0),
            ("default", t, MTYPE_SPD, "spd", 0, 5),
            ("default", t, MTYPE_SPD, "spd", 0, 30),
            ("default", t, MTYPE_SPD, "spd", 12, 30),
            ("nested_dissection", t, MTYPE_GENERAL, "gen", 0, 0),
            ("default", t, MTYPE_GENERAL, "gen", 0, 0),
        ):
            name = (f"{tag} {alg} {th} threads" + (f" nd_nlevels={nd}" if nd else "")
                    + (f" ubfactor={ub}" if ub else ""))
            try:
                rows.append((name, *run(cu, cp, a, b, alg, th, mtype, nd, ub)))
            except RuntimeError as e:
                print(f"  {name}: {e}", flush=True)
    else:
        print(f"no threading layer at {mt}")
    print(f"\ncuDSS phases, 2-D Poisson n = {a.shape[0]}, nnz = {a.nnz}, fp64, seconds")
    print(f"{'configuration':44s} {'reorder':>8s} {'symbol':>8s} {'factor':>8s} {'solve':>8s}"
          f" {'refact':>8s} {'solve2':>8s} {'first':>8s} {'nnz(LU)':>11s} {'resid':>8s}")
    for name, t, lu, res in rows:
        first = t["reorder"] + t["symbolic"] + t["factor"] + t["solve"]
        print(f"{name:44s} {t['reorder']:8.3f} {t['symbolic']:8.3f} {t['factor']:8.3f} "
              f"{t['solve']:8.3f} {t['refactor']:8.3f} {t['solve2']:8.3f} {first:8.3f} "
              f"{lu:11d} {res:8.1e}")


if __name__ == "__main__":
    main()
