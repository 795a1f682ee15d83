"""Every example in examples/python runs to its end and passes its own checks (each exits nonzero
when its results part from the reference), on the CPU at small sizes. The training examples run
on the GPU at their default sizes in scripts/gpu_check.sh's examples stage."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "python"
HAVE_TORCH = importlib.util.find_spec("torch") is not None

CPU_RUNS = [
    ("mlp_demo.py", ["--cpu", "--repeats", "3"], False),
    ("gp_regression.py", ["--n", "300", "--m", "40", "--repeat", "1"], False),
    ("gnn_aggregation.py", ["--n", "2000", "--edges", "20000", "--features", "16"], False),
    ("pca_topk.py", [], False),
    ("poisson_refactorize.py", [], False),
    ("train_mlp_torch.py", ["--device", "cpu", "--dtype", "float64", "--steps", "40", "--batch",
                            "64", "--hidden", "64", "--target", "0.7"], True),
    ("train_mlp_torch.py", ["--device", "cpu", "--dtype", "float32", "--steps", "40", "--batch",
                            "64", "--hidden", "64", "--target", "0.7"], True),
    ("gp_train_torch.py", ["--device", "cpu", "--n", "150", "--steps", "15"], True),
    ("train_optim_torch.py", ["--device", "cpu", "--steps", "60", "--width", "64"], True),
    ("train_optim_torch.py", ["--optimizer", "shampoo", "--device", "cpu", "--steps", "60",
                              "--width", "64"], True),
]
def run(name: str, args: list[str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return subprocess.run([sys.executable, str(EXAMPLES / name), *args], capture_output=True,
                          text=True, timeout=600, env=env, cwd=EXAMPLES)


def test_every_example_is_run_here():
    ran = {name for name, _, _ in CPU_RUNS}
    assert ran == {p.name for p in EXAMPLES.glob("*.py")}


@pytest.mark.parametrize(("name", "args", "needs_torch"), CPU_RUNS,
                         ids=[f"{n}{' ' + ' '.join(a) if a else ''}" for n, a, _ in CPU_RUNS])
def test_example_runs_on_the_cpu(name, args, needs_torch):
    if needs_torch and not HAVE_TORCH:
        pytest.skip("torch is not installed")
    r = run(name, args)
    assert r.returncode == 0, f"{name} exited {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"

