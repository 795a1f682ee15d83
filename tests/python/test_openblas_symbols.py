"""gpula's dense BLAS (scipy-openblas32) and SuiteSparse's BLAS (the system OpenBLAS) live in one
process. scipy-openblas32 before 0.3.34 exported its internal kernels unprefixed
(dgemv_n_SKYLAKEX, blas_thread_init, ...): the system OpenBLAS's own calls to those names then
bound to the other library's kernels, and UMFPACK's first dgemv crashed (seen on the 16-core
SkylakeX GPU host with 0.3.31, 2026-12-06). The library gpula links must export BLAS/LAPACK
only under its scipy_ prefix (plus the few LAPACK auxiliaries the two libraries share)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

scipy_openblas32 = pytest.importorskip("scipy_openblas32")

# OpenBLAS-internal names: per-core kernels ("dgemv_n_SKYLAKEX", "camax_k_HASWELL") and the
# thread server ("blas_thread_init", "blas_memory_alloc", "gotoblas").
INTERNAL = re.compile(r"_(?:k|[nt])_[A-Z0-9]+$|^blas_|^gotoblas")


def _exported(lib: str) -> list[str]:
    out = subprocess.run(["nm", "-D", "--defined-only", lib], capture_output=True, text=True,
                         check=True).stdout
    return [line.split()[-1] for line in out.splitlines() if line.strip()]


@pytest.mark.skipif(shutil.which("nm") is None, reason="needs binutils' nm")
def test_dense_blas_exports_no_openblas_internals() -> None:
    d = scipy_openblas32.get_lib_dir()
    lib = os.path.join(d, f"lib{scipy_openblas32.get_library()}.so")
    names = _exported(lib)
    assert any(n.startswith("scipy_") for n in names), "not scipy-openblas32's library?"
    leaked = sorted(n for n in names if not n.startswith("scipy_") and INTERNAL.search(n))
    assert not leaked, (
        f"{lib} (scipy-openblas32 {getattr(scipy_openblas32, '__version__', '?')}) exports "
        f"{len(leaked)} OpenBLAS-internal names unprefixed, e.g. {leaked[:5]}: they interpose on "
        "the system OpenBLAS SuiteSparse calls; install scipy-openblas32>=0.3.34")
