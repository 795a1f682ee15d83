"""Probe: svd(method="gesvdp") (cusolverDnXgesvdp, polar decomposition) on square Gaussian
matrices of growing order, fp32 and fp64, against method="gesvd": reconstruction
||u s vh - a|| / ||a||, orthogonality of u, the largest singular value error relative to
sigma_1, and the h_err_sigma cuSOLVER returns (from gpula's debug note). The 2026-12-03 and
-04 benchmark runs saw reconstruction errors of 76 at n = 4096 fp32; this finds where that
starts and whether h_err_sigma tells. Reports only.
"""

from __future__ import annotations

import logging
import re

import torch

import gpula as gl


class Notes(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record):
        self.lines.append(record.getMessage())


def main():
    notes = Notes()
    logging.getLogger("gpula").addHandler(notes)
    gl.set_log_level("DEBUG")
    g = torch.Generator(device="cuda").manual_seed(0)
    print(f"{'n':>6s} {'dtype':8s} {'method':7s} {'recon':>9s} {'orth_u':>9s} {'sigma_err':>9s}"
          f" {'h_err_sigma':>12s}")
    for dtype in (torch.float32, torch.float64):
        for n in (256, 1024, 2048, 4096):
            a = torch.randn(n, n, device="cuda", dtype=dtype, generator=g)
            ref = torch.linalg.svdvals(a.double())
            for method in ("gesvd", "gesvdp"):
                notes.lines.clear()
                u, s, vh = gl.linalg.svd(a, method=method)
                ad, ud, sd, vd = a.double(), u.double(), s.double(), vh.double()
                recon = float(torch.linalg.norm(ud * sd @ vd - ad) / torch.linalg.norm(ad))
                eye = torch.eye(n, device="cuda", dtype=torch.float64)
                orth = float(torch.linalg.norm(ud.mT @ ud - eye) / n**0.5)
                serr = float((sd - ref).abs().max() / ref[0])
                err = ""
                for line in notes.lines:
                    m = re.search(r"h_err_sigma ([0-9.eE+-]+)", line)
                    if m:
                        err = m.group(1)
                print(f"{n:6d} {str(dtype)[6:]:8s} {method:7s} {recon:9.2e} {orth:9.2e} "
                      f"{serr:9.2e} {err:>12s}", flush=True)


if __name__ == "__main__":
    main()
