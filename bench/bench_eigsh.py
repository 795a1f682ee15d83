#!/usr/bin/env python3
"""Sparse eigensolvers: gpula.sparse.linalg.eigsh / svds vs scipy.sparse.linalg (ARPACK, CPU)
and cupyx.scipy.sparse.linalg (GPU).

  python3 bench/bench_eigsh.py [--json PATH] [--summary PATH] [--quick]

Cases: eigsh k=6 'LA' on the 2-D Poisson matrix (n = 200^2; quick 60^2); eigsh k=6 'SM' without
sigma on a random sparse symmetric indefinite matrix (n = 3000; quick 800: interior values,
where ARPACK's Lanczos on A is slow or does not converge); eigsh k=6 sigma=0 (shift-invert);
svds k=6 of a random sparse 20000 x 2000 matrix (quick 4000 x 400). On a GPU (CuPy): 'LA' and
svds with a cupyx CSR matrix, gpula beside cupyx's eigsh / svds. Timing: CPU wall clock, GPU CUDA
events; medians over repeats after a warm-up. 'diff' is the largest difference of the values
from scipy's relative to the largest value (where ARPACK's 'SM' does not converge, 'n/a', the
reference is its sigma=0 run: the same values). Times are reported, never asserted.
"""

from __future__ import annotations

import sys

import numpy as np
import scipy.sparse as sps
import scipy.sparse.linalg as ssl
from common import (
    append_summary,
    arg_parser,
    device_time,
    fmt,
    gpu_cupy,
    host_time,
    md_table,
    poisson2d,
    save_json,
    today,
)

import gpula.sparse.linalg as gsl

K = 6


def indefinite(n, seed=0):
    g = np.random.default_rng(seed)
    a = sps.random(n, n, density=5.0 / n, random_state=g)
    return ((a + a.T) / 2 + sps.diags(g.standard_normal(n))).tocsr()


def values(r):
    """The sorted values of an eigsh / svds result, as NumPy."""
    w = r[1] if isinstance(r, tuple) and len(r) == 3 else r[0] if isinstance(r, tuple) else r
    w = w.get() if hasattr(w, "get") else np.asarray(w)
    return np.sort(w)


def diff(w, ref):
    if ref is None:
        return None
    return float(np.abs(w - ref).max() / np.abs(ref).max())


def cpu_cases(rows, quick, repeats):
    g = 60 if quick else 200
    n_sm = 800 if quick else 3000
    m, n = (4000, 400) if quick else (20000, 2000)
    p = poisson2d(g)
    ind = indefinite(n_sm)
    rect = sps.random(m, n, density=0.01, random_state=np.random.default_rng(1), format="csr")
    cases = [
        ("eigsh LA poisson2d", p.shape[0], lambda f: f.eigsh(p, k=K, which="LA")),
        ("eigsh SM indefinite", n_sm, lambda f: f.eigsh(ind, k=K, which="SM")),
        ("eigsh sigma=0 indefinite", n_sm, lambda f: f.eigsh(ind, k=K, sigma=0.0)),
        ("svds LM", f"{m}x{n}", lambda f: f.svds(rect, k=K)),
    ]
    for case, size, call in cases:
        try:
            t = host_time(lambda c=call: c(ssl), 1 if "SM" in case else repeats)
            ref, ms = values(t.out), t.ms
        except ssl.ArpackNoConvergence:  # the same values by ARPACK's shift-invert at 0
            ref, ms = values(ssl.eigsh(ind, k=K, sigma=0.0, return_eigenvectors=False)), None
        rows.append({"case": case, "impl": "scipy (ARPACK)", "n": size, "ms": ms,
                     "diff": 0.0 if ms is not None else None})
        t = host_time(lambda c=call: c(gsl), repeats)
        rows.append({"case": case, "impl": "gpula cpu", "n": size, "ms": t.ms,
                     "diff": diff(values(t.out), ref)})


def gpu_cases(rows, quick, repeats):
    cp = gpu_cupy()
    if cp is None:
        return
    import cupyx.scipy.sparse as csp
    import cupyx.scipy.sparse.linalg as csl

    g = 100 if quick else 400
    m, n = (4000, 400) if quick else (100000, 5000)
    p = poisson2d(g)
    rect = sps.random(m, n, density=0.01, random_state=np.random.default_rng(1), format="csr")
    ref_p = values(ssl.eigsh(p, k=K, which="LA", return_eigenvectors=False))
    ref_r = values(ssl.svds(rect, k=K, return_singular_vectors=False))
    pg, rg = csp.csr_matrix(p), csp.csr_matrix(rect)
    cases = [
        ("eigsh LA poisson2d", p.shape[0], ref_p, lambda f: f.eigsh(pg, k=K, which="LA")),
        ("svds LM", f"{m}x{n}", ref_r, lambda f: f.svds(rg, k=K)),
    ]
    for case, size, ref, call in cases:
        for impl, f in (("cupyx gpu", csl), ("gpula gpu", gsl)):
            t = device_time(lambda c=call, f=f: c(f), repeats, lib="cupy")
            rows.append({"case": case, "impl": impl, "n": size, "ms": t.ms,
                         "diff": diff(values(t.out), ref)})


def main(argv=None):
    p = arg_parser(__doc__)
    p.add_argument("--gpu-only", action="store_true", help="skip the CPU cases")
    args = p.parse_args(argv)
    rows = []
    repeats = 1 if args.quick else 3
    if not args.gpu_only:
        cpu_cases(rows, args.quick, repeats)
    gpu_cases(rows, args.quick, repeats)
    date = today()
    lines = [f"## Sparse eigensolvers, {date}{' (quick sizes)' if args.quick else ''}", ""]
    lines += md_table(["case", "implementation", "n", "ms (median)", "diff"],
                      [[r["case"], r["impl"], r["n"], fmt(r["ms"], ".1f"),
                        fmt(r["diff"], ".1e")] for r in rows])
    print("\n".join(lines))
    summary = ["sparse eigensolvers (eigsh / svds; gpula beside ARPACK and cupyx):"]
    summary += [f"  {r['case']} n={r['n']} {r['impl']}: {fmt(r['ms'], '.0f')} ms, "
                f"diff {fmt(r['diff'], '.1e')}" for r in rows]
    save_json(args.json, {"date": date, "rows": rows, "table": lines})
    append_summary(args.summary, summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
