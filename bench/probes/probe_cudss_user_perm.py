"""Probe: can a fill-reducing ordering computed outside cuDSS make the first sparse direct solve
faster? cuDSS 1.0 spends 1.2-1.3 s of the 1.4 s first solve of the 2-D Poisson matrix (n = 1e6)
in its reordering, with 16 host threads. This probe times, on the same matrix:

- METIS_NodeND (libmetis 5.1, serial), and one top-level METIS_ComputeVertexSeparator;
- a nested dissection that runs METIS on independent subgraphs in parallel (separators for the
  top levels, METIS_NodeND for the leaves; Python threads, ctypes releases the GIL);
- cuDSS's phases with each ordering handed over as CUDSS_DATA_USER_PERM (and its inverse, to
  learn cuDSS's convention from the fill), against cuDSS's own reordering.

Host wall clock around each phase, ending with a device synchronize. Reports only.

    python bench/probes/probe_cudss_user_perm.py [--m 1000] [--levels 4]
"""

from __future__ import annotations

import argparse
import ctypes
import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from probe_cudss import (CONFIG_HOST_NTHREADS, CONFIG_ND_NLEVELS, CONFIG_REORDERING_ALG,
                         MTYPE_SPD, PHASE_FACTORIZATION, PHASE_REORDERING, PHASE_SOLVE,
                         PHASE_SYMBOLIC, Cudss, System, library_dir, poisson)

DATA_PERM_REORDER_ROW = 4
DATA_USER_PERM = 9
DATA_USER_ND_PARTITION_TREE = 21
DATA_ND_PARTITION_TREE = 22
ALG_NESTED_DISSECTION = 4
I32P = ctypes.POINTER(ctypes.c_int32)


def p32(a):
    return a.ctypes.data_as(I32P)


class Metis:
    def __init__(self):
        self.lib = ctypes.CDLL("libmetis.so.5")

    def options(self):
        o = np.zeros(40, np.int32)
        self.lib.METIS_SetDefaultOptions(p32(o))
        return o

    def nodend(self, g):
        n = g.shape[0]
        perm, iperm = np.empty(n, np.int32), np.empty(n, np.int32)
        nv = ctypes.c_int32(n)
        r = self.lib.METIS_NodeND(ctypes.byref(nv), p32(g.indptr), p32(g.indices), None,
                                  p32(self.options()), p32(perm), p32(iperm))
        assert r == 1, f"METIS_NodeND returned {r}"
        return perm  # row i of the permuted matrix is row perm[i] of the original

    def separator(self, g):
        n = g.shape[0]
        part = np.empty(n, np.int32)
        nv, ss = ctypes.c_int32(n), ctypes.c_int32()
        r = self.lib.METIS_ComputeVertexSeparator(ctypes.byref(nv), p32(g.indptr), p32(g.indices),
                                                  None, p32(self.options()), ctypes.byref(ss),
                                                  p32(part))
        assert r == 1, f"METIS_ComputeVertexSeparator returned {r}"
        return part


def adjacency(a):
    g = a.tocsr().copy()
    g.setdiag(0)
    g.eliminate_zeros()
    g.sort_indices()
    g.indptr = g.indptr.astype(np.int32)
    g.indices = g.indices.astype(np.int32)
    return g


def parallel_nd(metis, g, levels, pool, sizes=None, node=0):
    """Order (new -> old) of g's vertices: parts first, separator last, parts in parallel.
    sizes[node] (heap numbering: children 2 node + 1 and 2 node + 2) gets the number of vertices
    a tree node holds: its separator, or at depth `levels` its whole part."""
    n = g.shape[0]
    if levels == 0 or n < 64:
        if sizes is not None:
            sizes[node] = n
            if levels > 0:  # too small to split: empty subtrees below
                stack = [2 * node + 1, 2 * node + 2]
                while stack:
                    k = stack.pop()
                    if k < len(sizes):
                        sizes[k] = 0
                        stack += [2 * k + 1, 2 * k + 2]
                sizes[node] = 0
                # keep the vertices in the leftmost leaf below node
                k = node
                while 2 * k + 1 < len(sizes):
                    k = 2 * k + 1
                sizes[k] = n
        return metis.nodend(g).astype(np.int64) if n > 0 else np.empty(0, np.int64)
    part = metis.separator(g)
    ia, ib, isep = (np.flatnonzero(part == k) for k in (0, 1, 2))
    if sizes is not None:
        sizes[node] = len(isep)
    ga, gb = adjacency(g[ia][:, ia]), adjacency(g[ib][:, ib])
    fa = pool.submit(parallel_nd, metis, ga, levels - 1, pool, sizes, 2 * node + 1)
    ob = parallel_nd(metis, gb, levels - 1, pool, sizes, 2 * node + 2)
    return np.concatenate([ia[fa.result()], ib[ob], isep])


def tree_layouts(sizes):
    """The heap-numbered node sizes in three candidate layouts for CUDSS_DATA_USER_ND_PARTITION_TREE."""
    depth = int(np.log2(len(sizes) + 1))
    levels = [sizes[(1 << d) - 1:(1 << (d + 1)) - 1] for d in range(depth)]
    post = []

    def walk(k):
        if 2 * k + 1 < len(sizes):
            walk(2 * k + 1)
            walk(2 * k + 2)
        post.append(sizes[k])

    walk(0)
    return {"heap": np.asarray(sizes, np.int32),
            "bottom-up levels": np.concatenate(levels[::-1]).astype(np.int32),
            "post-order": np.asarray(post, np.int32)}


def get_array(cu, data, param, dtype=np.int32):
    lib, h = cu.lib, cu.handle
    nbytes = ctypes.c_size_t(0)
    st = lib.cudssDataGet(h, data, param, ctypes.c_void_p(None), ctypes.c_size_t(0),
                          ctypes.byref(nbytes))
    if st != 0 or nbytes.value == 0:
        return None, st
    out = np.zeros(nbytes.value // np.dtype(dtype).itemsize, dtype)
    written = ctypes.c_size_t(0)
    st = lib.cudssDataGet(h, data, param, ctypes.c_void_p(out.ctypes.data), nbytes,
                          ctypes.byref(written))
    return (out if st == 0 else None), st


def cudss_phases(cu, cp, a, b, perm, threads, alg=0, nlevels=0, tree=None):
    """cuDSS's first solve of SPD a, phase by phase, with an optional user permutation and tree:
    (times, nnz(LU), residual, (tree status, the tree and permutation cuDSS reports))."""
    s = System(cu, cp, a, b, MTYPE_SPD)
    s.set_config(CONFIG_REORDERING_ALG, alg, "alg")
    s.set_config(CONFIG_HOST_NTHREADS, threads, "nthreads")
    if nlevels:
        s.set_config(CONFIG_ND_NLEVELS, nlevels, "nlevels")
    times = {}
    t0 = time.perf_counter()
    for param, arr, what in ((DATA_USER_PERM, perm, "user perm"),
                             (DATA_USER_ND_PARTITION_TREE, tree, "user tree")):
        if arr is not None:
            v = np.ascontiguousarray(arr, dtype=np.int32)
            cu.ok(cu.lib.cudssDataSet(cu.handle, s.data, param, ctypes.c_void_p(v.ctypes.data),
                                      ctypes.c_size_t(v.nbytes)), what)
    times["set"] = time.perf_counter() - t0
    for name, phase in (("reorder", PHASE_REORDERING), ("symbolic", PHASE_SYMBOLIC),
                        ("factor", PHASE_FACTORIZATION), ("solve", PHASE_SOLVE)):
        times[name] = s.execute(name, phase)
    got_tree, st = get_array(cu, s.data, DATA_ND_PARTITION_TREE)
    got_perm, _ = get_array(cu, s.data, DATA_PERM_REORDER_ROW)
    result = times, s.lu_nnz(), s.residual(a, b), (st, got_tree, got_perm)
    s.close()
    return result


def show_tree(name, tree):
    if tree is None:
        print(f"{name}: no tree")
        return
    print(f"{name}: {len(tree)} entries, sum {int(tree.sum())}, min {int(tree.min())}, "
          f"max {int(tree.max())}")
    print("  " + " ".join(str(int(v)) for v in tree[:16]) + " ... " + " ".join(str(int(v)) for v in tree[-8:]))


WRAPPER = r"""
#include "sparse_ordering.h"
#include <algorithm>
using namespace gpula::sparse::detail;
extern "C" int gpula_nd(long n, const int* indptr, const int* indices, int levels, int* perm,
                        int* tree) {
  Graph g = symmetric_pattern(n, indptr, indices, 4);
  NestedDissection nd = level_set_nested_dissection(g, levels);
  std::copy(nd.perm.begin(), nd.perm.end(), perm);
  std::copy(nd.tree.begin(), nd.tree.end(), tree);
  return nd.complete ? (nd.usable ? 2 : 1) : 0;
}
"""


def gpula_nd(a, levels):
    """gpula's level-set nested dissection (src/sparse/ordering.cpp), compiled here."""
    import subprocess
    import tempfile

    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    d = tempfile.mkdtemp()
    with open(os.path.join(d, "w.cpp"), "w") as fh:
        fh.write(WRAPPER)
    so = os.path.join(d, "nd.so")
    subprocess.run(["g++", "-O2", "-std=c++20", "-shared", "-fPIC", "-I", os.path.join(root, "src"),
                    os.path.join(root, "src", "sparse_ordering.cpp"), os.path.join(d, "w.cpp"),
                    "-o", so, "-pthread"], check=True)
    lib = ctypes.CDLL(so)
    n = a.shape[0]
    perm = np.empty(n, np.int32)
    tree = np.empty((1 << levels) - 1, np.int32)
    ip, ix = a.indptr.astype(np.int32), a.indices.astype(np.int32)
    t0 = time.perf_counter()
    ok = lib.gpula_nd(ctypes.c_long(n), p32(ip), p32(ix), levels, p32(perm), p32(tree))
    return perm, tree, ok, time.perf_counter() - t0


def check_dissection(a, perm, tree, levels):
    """Whether perm lists the tree's nodes in the tree array's order (bottom-up levels, as cuDSS
    lays out its own permutation) and no edge joins a node's left and right subtrees."""
    n = len(perm)
    if int(tree.sum()) != n:
        return f"sizes add to {int(tree.sum())}"
    heap_of = [k for d in range(levels - 1, -1, -1) for k in range((1 << d) - 1, (2 << d) - 1)]
    node = np.empty(n, np.int64)
    start = np.concatenate([[0], np.cumsum(tree)])
    for i, k in enumerate(heap_of):
        node[perm[start[i]:start[i + 1]]] = k
    coo = a.tocoo()
    x, y = node[coo.row], node[coo.col]
    for k in range((1 << (levels - 1)) - 1):
        def side(v):  # 1: left subtree of k, 2: right, 0: neither
            out = np.zeros_like(v)
            w = v.copy()
            while True:
                up = w > 2 * k + 2
                if not up.any():
                    break
                w[up] = (w[up] - 1) // 2
            out[w == 2 * k + 1] = 1
            out[w == 2 * k + 2] = 2
            return out
        if np.any(side(x) + side(y) == 3):
            return f"node {k}: an edge crosses"
    return "valid"


def level_order(post, sizes, levels):
    """A post-order layout (left, right, separator) rearranged into the tree array's order."""
    internal = (1 << (levels - 1)) - 1
    total = np.array(sizes, np.int64)
    for k in range(len(sizes) - 1, -1, -1):
        if k < internal:
            total[k] += total[2 * k + 1] + total[2 * k + 2]
    lo = np.zeros(len(sizes), np.int64)
    for k in range(internal):
        lo[2 * k + 1] = lo[k]
        lo[2 * k + 2] = lo[k] + total[2 * k + 1]
    out = []
    for d in range(levels - 1, -1, -1):
        for k in range((1 << d) - 1, (2 << d) - 1):
            end = lo[k] + total[k]
            out.append(post[end - sizes[k]:end])
    return np.concatenate(out)


def show_row(name, t, lu, res):
    tot = t["set"] + t["reorder"] + t["symbolic"] + t["factor"] + t["solve"]
    print(f"ROW {name:44s} set {t['set']:6.3f} reorder {t['reorder']:8.3f} symbolic "
          f"{t['symbolic']:8.3f} factor {t['factor']:8.3f} solve {t['solve']:8.3f} total {tot:8.3f} "
          f"nnz(LU) {lu:11d} resid {res:8.1e}", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--m", type=int, default=300)
    ap.add_argument("--nlevels", type=int, default=5)
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    import cupy as cp

    cu = Cudss(library_dir())
    mt = os.path.join(cu.libdir, "libcudss_mtlayer_gomp.so.1")
    cu.ok(cu.lib.cudssSetThreadingLayer(cu.handle, mt.encode()), "threading layer")
    metis = Metis()
    rows = []

    a = poisson(args.m)
    n = a.shape[0]
    b = np.random.default_rng(0).standard_normal(n)
    t, lu, res, (st, tree0, perm0) = cudss_phases(cu, cp, a, b, None, args.threads,
                                                  alg=ALG_NESTED_DISSECTION, nlevels=args.nlevels)
    rows.append(("cuDSS ND, its own ordering", t, lu, res))
    show_row(*rows[-1])
    show_tree(f"cuDSS tree, {args.m}x{args.m}, status {st}", tree0)
    if os.environ.get("OUT"):
        np.save(os.path.join(os.environ["OUT"], f"cudss_perm_{args.m}_{args.nlevels}.npy"), perm0)
        np.save(os.path.join(os.environ["OUT"], f"cudss_tree_{args.m}_{args.nlevels}.npy"), tree0)
    for m, nl in ((16, 3), (40, 4)):
        sm = poisson(m)
        _, _, _, (_, tr, pe) = cudss_phases(cu, cp, sm, np.ones(m * m), None, args.threads,
                                            alg=ALG_NESTED_DISSECTION, nlevels=nl)
        if os.environ.get("OUT"):
            np.save(os.path.join(os.environ["OUT"], f"cudss_perm_{m}_{nl}.npy"), pe)
            np.save(os.path.join(os.environ["OUT"], f"cudss_tree_{m}_{nl}.npy"), tr)
    if perm0 is not None and tree0 is not None:
        t, lu, res, _ = cudss_phases(cu, cp, a, b, perm0, args.threads, alg=ALG_NESTED_DISSECTION,
                                     nlevels=args.nlevels, tree=tree0)
        rows.append(("cuDSS's perm + tree handed back", t, lu, res))
        show_row(*rows[-1])
        t, lu, res, _ = cudss_phases(cu, cp, a, b, perm0, args.threads, alg=ALG_NESTED_DISSECTION,
                                     nlevels=args.nlevels)
        rows.append(("cuDSS's perm, no tree", t, lu, res))
        show_row(*rows[-1])

    g = adjacency(a)
    sizes = np.full((1 << args.nlevels) - 1, -1, np.int64)
    pool = ThreadPoolExecutor(max_workers=64)
    t0 = time.perf_counter()
    order = parallel_nd(metis, g, args.nlevels - 1, pool, sizes)
    t_nd = time.perf_counter() - t0
    assert np.array_equal(np.sort(order), np.arange(n)) and sizes.min() >= 0 and sizes.sum() == n
    print(f"parallel METIS nested dissection, {args.nlevels - 1} levels: {t_nd:.3f} s")
    layouts = tree_layouts(sizes)
    order = level_order(order, sizes, args.nlevels)
    print(f"METIS ND tree check: {check_dissection(a, order, layouts['bottom-up levels'], args.nlevels)}")
    gperm, gtree, gok, gsecs = gpula_nd(a, args.nlevels)
    print(f"gpula level-set ND: {gsecs:.3f} s, complete/usable code {gok}, check "
          f"{check_dissection(a, gperm, gtree, args.nlevels)}", flush=True)
    show_tree("gpula level-set ND tree", gtree)
    candidates = [("parallel METIS ND + tree (bottom-up levels)", order, layouts["bottom-up levels"]),
                  ("gpula level-set ND + tree", gperm, gtree),
                  ("gpula level-set ND, no tree", gperm, None)]
    for name, perm, tree in candidates:
        try:
            t, lu, res, (st, got, _) = cudss_phases(cu, cp, a, b, perm, args.threads,
                                                    alg=ALG_NESTED_DISSECTION,
                                                    nlevels=args.nlevels, tree=tree)
            rows.append((name, t, lu, res))
            show_row(*rows[-1])
        except Exception as e:
            print(f"  {name}: {e!r}", flush=True)
    print(f"\ncuDSS phases, 2-D Poisson n = {n}, fp64 SPD, {args.threads} threads, seconds")
    print(f"{'ordering':44s} {'set':>6s} {'reorder':>8s} {'symbol':>8s} {'factor':>8s} "
          f"{'solve':>8s} {'cuDSS':>8s} {'nnz(LU)':>11s} {'resid':>8s}")
    for name, t, lu, res in rows:
        tot = t["set"] + t["reorder"] + t["symbolic"] + t["factor"] + t["solve"]
        print(f"{name:44s} {t['set']:6.3f} {t['reorder']:8.3f} {t['symbolic']:8.3f} "
              f"{t['factor']:8.3f} {t['solve']:8.3f} {tot:8.3f} {lu:11d} {res:8.1e}")


if __name__ == "__main__":
    main()
