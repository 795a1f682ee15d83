"""The OpenBLAS libraries of ``import gpula``: scipy-openblas32 for dense linear algebra, which
picks its kernel set itself, and the system's (SuiteSparse's), whose kernel set the import sets
while the extension loads."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from gpula._openblas_core import AVX2_FLAGS, AVX512_FLAGS, choose_core, cpu_flags

AVX512 = AVX512_FLAGS | AVX2_FLAGS | {"sse3", "avx"}
AVX2 = AVX2_FLAGS | {"sse3", "avx"}


def test_avx512_chooses_skylakex():
    assert choose_core(AVX512, {}) == "SkylakeX"


def test_avx2_fma_chooses_haswell():
    assert choose_core(AVX2, {}) == "Haswell"
    # AVX-512 incomplete (no avx512vl): still Haswell.
    assert choose_core(AVX2 | (AVX512_FLAGS - {"avx512vl"}), {}) == "Haswell"


def test_neither_chooses_nothing():
    assert choose_core({"sse3", "avx", "avx2"}, {}) is None  # AVX2 without FMA
    assert choose_core(set(), {}) is None  # not x86-64, or flags unknown


def test_users_openblas_coretype_is_kept():
    assert choose_core(AVX512, {"OPENBLAS_CORETYPE": "Haswell"}) is None
    env = {"OPENBLAS_CORETYPE": "Haswell", "GPULA_OPENBLAS_CORETYPE": "Zen"}
    assert choose_core(AVX512, env) is None


def test_keep_and_auto():
    assert choose_core(AVX512, {"GPULA_OPENBLAS_CORETYPE": "keep"}) is None
    assert choose_core(AVX512, {"GPULA_OPENBLAS_CORETYPE": "auto"}) == "SkylakeX"


def test_explicit_core_is_passed_through():
    assert choose_core(AVX512, {"GPULA_OPENBLAS_CORETYPE": "Haswell"}) == "Haswell"
    assert choose_core(set(), {"GPULA_OPENBLAS_CORETYPE": "Zen"}) == "Zen"


@pytest.mark.parametrize("bad", ["", " ", "Sky lakeX", "SkylakeX;rm -rf /", "$(x)", "Auto ", "1x"])
def test_bad_setting_is_a_value_error(bad):
    with pytest.raises(ValueError, match="GPULA_OPENBLAS_CORETYPE") as e:
        choose_core(AVX512, {"GPULA_OPENBLAS_CORETYPE": bad})
    assert repr(bad) in str(e.value)


# ---- a fresh interpreter: what OpenBLAS picked, and the environment after the import -----------

CHILD = """
import json, os
import gpula as gl, gpula._openblas_core as c
d = gl.devices()["description"]
cpu = next(line for line in d.splitlines() if line.startswith("cpu:"))
dense, _, system = cpu.partition("; SuiteSparse: ")
core = lambda s: s.split("(core ", 1)[1].split(",", 1)[0]
print(json.dumps({"core": core(system), "dense_core": core(dense),
                  "dense_version": dense.split("OpenBLAS ", 1)[1].split(" ", 1)[0],
                  "description": d, "chosen": c.chosen,
                  "env": os.environ.get("OPENBLAS_CORETYPE")}))
"""


def run_child(**env_changes: str | None) -> dict:
    env = dict(os.environ)
    env.pop("OPENBLAS_CORETYPE", None)
    env.pop("GPULA_OPENBLAS_CORETYPE", None)
    for k, v in env_changes.items():
        if v is not None:
            env[k] = v
    p = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=120
    )
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_import_sets_the_core_and_removes_the_variable():
    if not cpu_flags().issuperset(AVX2_FLAGS):
        pytest.skip("needs Linux x86-64 with AVX2 and FMA")
    r = run_child()
    assert r["core"] != "Prescott", r["description"]
    assert r["chosen"] == choose_core(cpu_flags(), {})
    assert r["core"].lower() == r["chosen"].lower(), r["description"]
    assert "SuiteSparse's core chosen by gpula from the CPU flags" in r["description"]
    assert r["env"] is None


def test_dense_openblas_is_current_and_picks_its_own_core():
    # Dense BLAS/LAPACK is scipy-openblas32 (>= 0.3.30), loaded before the import sets the
    # system OpenBLAS's core: its own choice is the same with "auto" and with "keep".
    auto, keep = run_child(), run_child(GPULA_OPENBLAS_CORETYPE="keep")
    major, minor, patch = (int(x) for x in auto["dense_version"].split(".")[:3])
    assert (major, minor, patch) >= (0, 3, 30), auto["description"]
    assert auto["dense_core"] == keep["dense_core"], (auto["description"], keep["description"])
    if cpu_flags().issuperset(AVX2_FLAGS):
        assert auto["dense_core"] != "Prescott", auto["description"]


def test_keep_leaves_openblas_alone():
    r = run_child(GPULA_OPENBLAS_CORETYPE="keep")
    assert r["chosen"] is None
    assert r["env"] is None
    assert "chosen by gpula" not in r["description"]


def test_users_variable_survives_the_import():
    r = run_child(OPENBLAS_CORETYPE="Haswell")
    assert r["chosen"] is None
    assert r["env"] == "Haswell"
    if cpu_flags().issuperset(AVX2_FLAGS):
        assert r["core"] == "Haswell", r["description"]


def test_bad_setting_fails_the_import():
    env = dict(os.environ, GPULA_OPENBLAS_CORETYPE="Skylake X")
    p = subprocess.run(
        [sys.executable, "-c", "import gpula"], env=env, capture_output=True, text=True
    )
    assert p.returncode != 0
    assert "ValueError: GPULA_OPENBLAS_CORETYPE='Skylake X'" in p.stderr
