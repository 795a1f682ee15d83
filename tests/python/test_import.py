"""`import gpula` stays light: ml_dtypes (about 0.5 s to import) is loaded only when a bfloat16
or float8 result is made in NumPy."""

import os
import subprocess
import sys

import numpy as np
import pytest

import gpula as gl


def _run(code: str) -> str:
    # A fresh interpreter: this process has imported ml_dtypes already (conftest, other tests).
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_import_does_not_load_ml_dtypes():
    code = "import sys, gpula; print(sorted(m for m in sys.modules if m.startswith('ml_dtypes')))"
    assert _run(code) == "[]"


def test_float_work_does_not_load_ml_dtypes():
    # float32/float64 matmul and a linalg call never need ml_dtypes either.
    code = (
        "import sys, numpy as np, gpula as gl\n"
        "a = np.eye(4)\n"
        "gl.matmul(a, a); gl.matmul(a.astype(np.float16), a.astype(np.float16))\n"
        "gl.linalg.solve(a, a[:, 0])\n"
        "print('ml_dtypes' in sys.modules)"
    )
    assert _run(code) == "False"


def test_bfloat16_result_loads_ml_dtypes_on_demand():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    from gpula._interop.base import numpy_dtype

    assert numpy_dtype("bfloat16") == np.dtype(ml_dtypes.bfloat16)
    assert numpy_dtype("float8_e5m2") == np.dtype(ml_dtypes.float8_e5m2)
    assert numpy_dtype("float32") == np.float32
    assert numpy_dtype("no_such_type") is None
    a = np.ones((4, 8), ml_dtypes.bfloat16)
    assert gl.matmul(a, a.T).dtype == ml_dtypes.bfloat16
