"""The system OpenBLAS's kernel set ("core"), chosen before the extension loads it.

gpula's extension loads two OpenBLAS libraries: scipy-openblas32 (a current OpenBLAS, symbols
prefixed ``scipy_``) for dense BLAS and LAPACK, and the system's (Debian 12: 0.3.21), which
SuiteSparse, the CPU sparse direct solver, calls. A DYNAMIC_ARCH OpenBLAS older than the CPU
model (0.3.21 on Emerald Rapids) does not recognize the CPU and runs its generic SSE3 kernels,
"Prescott": 1.5-4x slower. OpenBLAS reads ``OPENBLAS_CORETYPE`` once, in its load-time
constructor. So the package first loads scipy-openblas32 (it detects its core itself), then sets
the variable for the duration of the extension's import only and removes it right after, so that
an OpenBLAS loaded later in the process (NumPy's or SciPy's own, if not loaded yet) detects its
core itself too.

``GPULA_OPENBLAS_CORETYPE`` selects what happens:

- ``auto`` (default): on Linux x86-64, ``SkylakeX`` when /proc/cpuinfo's flags have AVX-512
  (f, cd, bw, dq, vl), else ``Haswell`` with AVX2 and FMA, else nothing.
- ``keep``: nothing; OpenBLAS detects the core itself.
- a core name (letters, digits, underscores, e.g. ``Zen``): passed through as is.

Anything else (empty, spaces, shell characters) raises ``ValueError`` at ``import gpula``. A
user's own ``OPENBLAS_CORETYPE`` is never overridden.

Forcing the core is safe: on a CPU that OpenBLAS 0.3.21 recognizes, SkylakeX / Haswell are the
kernel families it picks itself for double-precision BLAS and LAPACK (Skylake-X, Cascade Lake,
Cooper Lake and Sapphire Rapids run the SkylakeX kernels, AVX2-only Intel models the Haswell
ones; AMD Zen's core is built from the Haswell kernels). Where 0.3.21 gives an AVX-512 AMD Zen 4
its AVX2 Zen core, "auto" takes SkylakeX, which that CPU runs.

Thread pools. The same import tells gpula's own pools not to spin long once a call is done, as
NumPy's OpenBLAS, SciPy's and any other pool share the cores with them: OpenBLAS's idle threads
(gpula's scipy-openblas32 and SuiteSparse's system OpenBLAS) otherwise busy-wait 2^28 cycles
(~0.1 s) after each threaded call, and libgomp's ~300,000 spins (milliseconds), holding a core
that the next library's threads need; a threaded call whose helper thread lost its core then
waits a whole scheduler time slice. Each reads its setting once, when it loads, so the import
sets, for the extension's loading only, ``OPENBLAS_THREAD_TIMEOUT`` (``POOL_SETTINGS``: spin
2^N cycles, then sleep) and ``OMP_WAIT_POLICY=passive``. NumPy is imported first, so that its
OpenBLAS reads the environment as the user left it; a user's own value of a variable (or
``GOMP_SPINCOUNT``, which sets libgomp's spin too) is never overridden, and a library already
loaded before ``import gpula`` keeps what it read (``pools_set`` and ``pools_missed`` record
both).
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import platform
import re
import sys
from collections.abc import Iterable, Iterator, Mapping

AVX512_FLAGS = frozenset({"avx512f", "avx512cd", "avx512bw", "avx512dq", "avx512vl"})
AVX2_FLAGS = frozenset({"avx2", "fma"})
SETTING = "GPULA_OPENBLAS_CORETYPE"

# OpenBLAS's core names are identifiers (SkylakeX, Haswell, Zen, CooperLake, NeoverseN1, ...).
_CORE_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]*")

#: The core this process's import set, or None (user's OPENBLAS_CORETYPE, "keep", no AVX2).
chosen: str | None = None
_chosen_from = ""  # "the CPU flags" or the GPULA_OPENBLAS_CORETYPE setting

#: What gpula's pools read at load time: OpenBLAS spins 2^N cycles after a call, libgomp none.
POOL_SETTINGS = {"OPENBLAS_THREAD_TIMEOUT": "16", "OMP_WAIT_POLICY": "passive"}
#: The variables of the user's environment that leave each setting to the user.
_USER_OWNED = {
    "OPENBLAS_THREAD_TIMEOUT": ("OPENBLAS_THREAD_TIMEOUT",),
    "OMP_WAIT_POLICY": ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT"),
}
#: The libraries that read POOL_SETTINGS, by the start of their file name.
_POOL_LIBRARIES = ("libscipy_openblas.so", "libopenblas", "libgomp.so")

#: The POOL_SETTINGS this process's import set (those the user had not set).
pools_set: dict[str, str] = {}
#: The libraries of _POOL_LIBRARIES already loaded before the import: they kept their settings.
pools_missed: list[str] = []


def choose_core(flags: Iterable[str], environ: Mapping[str, str]) -> str | None:
    """The OPENBLAS_CORETYPE to set while the extension loads, or None to set nothing.

    ``flags`` are the CPU's flags (empty where unknown or not x86-64); ``environ`` the
    environment. Raises ValueError for a GPULA_OPENBLAS_CORETYPE that is neither "auto",
    "keep" nor a core name.
    """
    setting = environ.get(SETTING, "auto")
    if setting not in ("auto", "keep") and not _CORE_NAME.fullmatch(setting):
        raise ValueError(
            f"{SETTING}={setting!r}: expected 'auto' (choose from the CPU flags), 'keep' "
            "(OpenBLAS detects the core) or an OpenBLAS core name such as 'SkylakeX'"
        )
    if "OPENBLAS_CORETYPE" in environ or setting == "keep":
        return None
    if setting != "auto":
        return setting
    have = set(flags)
    if have.issuperset(AVX512_FLAGS):
        return "SkylakeX"
    if have.issuperset(AVX2_FLAGS):
        return "Haswell"
    return None


def cpu_flags() -> frozenset[str]:
    """The "flags" of /proc/cpuinfo's first CPU on Linux x86-64; empty elsewhere."""
    if not sys.platform.startswith("linux") or platform.machine() not in ("x86_64", "AMD64"):
        return frozenset()
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "flags":
                    return frozenset(value.split())
    except OSError:
        pass
    return frozenset()


def load_dense_blas() -> None:
    """Loads scipy-openblas32's library, so that it picks its core before OPENBLAS_CORETYPE is set.

    The extension then finds it loaded (its DT_NEEDED name is the library's soname). Without the
    package (a build that points CMake elsewhere) the extension's run path finds it instead.
    """
    try:
        import scipy_openblas32
    except ImportError:
        return
    ctypes.CDLL(os.path.join(scipy_openblas32.get_lib_dir(), "libscipy_openblas.so"))


def pool_settings(environ: Mapping[str, str]) -> dict[str, str]:
    """The POOL_SETTINGS to set while the extension loads: those the user left unset."""
    return {
        k: v
        for k, v in POOL_SETTINGS.items()
        if not any(name in environ for name in _USER_OWNED[k])
    }


def loaded_libraries() -> list[str]:
    """File names of the shared libraries mapped into this process (Linux; empty elsewhere)."""
    try:
        with open("/proc/self/maps", encoding="ascii", errors="replace") as f:
            names = {os.path.basename(line.split()[-1]) for line in f if "/" in line}
    except OSError:
        return []
    return sorted(names)


@contextlib.contextmanager
def _environ(changes: Mapping[str, str]) -> Iterator[None]:
    """Sets the variables for the body only."""
    os.environ.update(changes)
    try:
        yield
    finally:
        for k in changes:
            os.environ.pop(k, None)


@contextlib.contextmanager
def core_for_import() -> Iterator[None]:
    """Sets OPENBLAS_CORETYPE (as choose_core says) and the pool settings for the body only.

    Records the core in ``chosen``, the pool settings in ``pools_set`` and ``pools_missed``.
    """
    global chosen, _chosen_from
    import numpy  # noqa: F401  (NumPy's OpenBLAS reads the user's environment, not ours)

    pools = pool_settings(os.environ)
    pools_missed[:] = [
        name for name in loaded_libraries() if pools and name.startswith(_POOL_LIBRARIES)
    ]
    core = choose_core(cpu_flags(), os.environ)
    with _environ(pools):
        load_dense_blas()  # picks its own core: before OPENBLAS_CORETYPE is set
        with _environ({"OPENBLAS_CORETYPE": core} if core is not None else {}):
            yield
    pools_set.clear()
    pools_set.update(pools)
    log = logging.getLogger("gpula")
    if pools:
        log.info(
            "[cpu] %s while loading OpenBLAS and OpenMP%s",
            ", ".join(f"{k}={v}" for k, v in pools.items()),
            f" (already loaded, unchanged: {', '.join(pools_missed)})" if pools_missed else "",
        )
    if core is None:
        return
    chosen = core
    setting = os.environ.get(SETTING, "auto")
    _chosen_from = "the CPU flags" if setting == "auto" else f"{SETTING}={setting}"
    log.info(
        "[cpu] OPENBLAS_CORETYPE=%s while loading OpenBLAS (%s=keep to let OpenBLAS decide)",
        core,
        SETTING,
    )


def describe(description: str) -> str:
    """describe_devices()'s text, its CPU line saying so when this import chose SuiteSparse's core.

    The line reads "cpu: OpenBLAS 0.3.34 (core ..., N threads); SuiteSparse: OpenBLAS 0.3.21
    (core ..., N threads)".
    """
    lines = description.split("\n")
    for i, line in enumerate(lines):
        system = line.partition("SuiteSparse: ")[2]
        core = system.partition("(core ")[2].partition(",")[0]
        if line.startswith("cpu:") and chosen is not None and core.lower() == chosen.lower():
            lines[i] += (
                f"; SuiteSparse's core chosen by gpula from {_chosen_from} "
                f"({SETTING}=keep lets OpenBLAS decide)"
            )
    return "\n".join(lines)
