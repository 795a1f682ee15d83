"""Fixtures: `xp` over the array packages present (numpy | torch-cpu | torch-cuda | cupy), a seeded
`rng` (seed printed; GPULA_TEST_SEED reproduces a run), and the `gpu` marker (skipped without a
usable CUDA device)."""

from __future__ import annotations

import importlib
import os

import numpy as np
import pytest

import gpula as gl

try:
    import ml_dtypes
except ImportError:
    ml_dtypes = None


def _module(name):
    try:
        return importlib.import_module(name)
    except Exception:  # absent, or present but broken (no driver): the same for tests
        return None


torch = _module("torch")
cupy = _module("cupy")


def _cuda_usable() -> bool:
    if gl.devices()["cuda_device_count"] == 0:
        return False
    if torch is not None and torch.cuda.is_available():
        return True
    if cupy is not None:
        try:
            return cupy.cuda.runtime.getDeviceCount() > 0
        except Exception:
            return False
    return True  # gpula sees a GPU; numpy with device="cuda" can still use it


HAS_GPU = _cuda_usable()


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs a CUDA device (skipped when none is usable)")


def pytest_collection_modifyitems(config, items):
    if HAS_GPU:
        return
    skip = pytest.mark.skip(reason="no usable CUDA device")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


# ---------------------------------------------------------------------------------------------
# Array packages

DTYPES = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128")


def np_dtype(name: str):
    """NumPy dtype for a gpula dtype name (bfloat16/float8 through ml_dtypes)."""
    if name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):
        if ml_dtypes is None:
            pytest.skip("ml_dtypes is not installed")
        return np.dtype(getattr(ml_dtypes, name))
    return np.dtype(name)


def to_np64(x) -> np.ndarray:
    """Any package's array as a NumPy float64 (complex128 for complex) copy."""
    if torch is not None and isinstance(x, torch.Tensor):
        x = x.detach()
        if x.dtype in (torch.bfloat16, torch.float16) or str(x.dtype).startswith("torch.float8"):
            x = x.float()
        x = x.cpu().numpy()
    elif cupy is not None and isinstance(x, cupy.ndarray):
        x = cupy.asnumpy(x)
    x = np.asarray(x)
    if x.dtype.kind == "c":
        return x.astype(np.complex128)
    if x.dtype.kind in "iub":
        return x.astype(np.float64) if x.dtype != np.uint8 else x.copy()
    return x.astype(np.float32).astype(np.float64) if x.dtype.kind == "V" else x.astype(np.float64)


class XP:
    """One array package on one device, for tests."""

    def __init__(self, name: str):
        self.name = name
        self.gpu = name in ("torch-cuda", "cupy")

    def __repr__(self):
        return self.name

    def supports(self, dtype: str) -> bool:
        if self.name == "cupy":
            return dtype not in ("bfloat16", "float8_e4m3fn", "float8_e5m2")
        if self.name == "numpy" and dtype == "bfloat16":
            return ml_dtypes is not None
        return True

    def skip_unless(self, dtype: str) -> None:
        if not self.supports(dtype):
            pytest.skip(f"{self.name} has no {dtype}")

    def asarray(self, a: np.ndarray, dtype: str | None = None):
        """The NumPy array a (any dtype) in this package, cast to dtype; contiguous."""
        dtype = dtype or a.dtype.name
        self.skip_unless(dtype)
        if self.name == "numpy":
            return np.ascontiguousarray(np.asarray(a).astype(np_dtype(dtype)))
        if self.name.startswith("torch"):
            dev = "cuda" if self.gpu else "cpu"
            tdt = getattr(torch, dtype)
            src = a.astype(np.float32) if a.dtype.kind == "V" else a
            return torch.from_numpy(np.ascontiguousarray(src)).to(device=dev, dtype=tdt)
        return cupy.asarray(np.ascontiguousarray(a.astype(dtype)))

    def random(self, rng, shape, dtype: str):
        """(array in this package, the same values as NumPy float64/complex128)."""
        self.skip_unless(dtype)
        x = rng.standard_normal(shape)
        if dtype.startswith("complex"):
            x = x + 1j * rng.standard_normal(shape)
        arr = self.asarray(x, dtype)
        return arr, to_np64(arr)

    def empty_like_check(self, r, dtype: str, shape) -> None:
        """Asserts r is this package's array of this dtype and shape, on this device."""
        assert tuple(r.shape) == tuple(shape), (r.shape, shape)
        if self.name == "numpy":
            assert isinstance(r, np.ndarray)
            assert r.dtype == np_dtype(dtype)
        elif self.name.startswith("torch"):
            assert isinstance(r, torch.Tensor)
            assert r.dtype == getattr(torch, dtype)
            assert r.device.type == ("cuda" if self.gpu else "cpu")
        else:
            assert isinstance(r, cupy.ndarray)
            assert r.dtype == np.dtype(dtype)

    def transpose(self, x):
        """Swaps the last two axes (a strided view)."""
        if self.name.startswith("torch"):
            return x.transpose(-1, -2)
        return x.swapaxes(-1, -2)

    def synchronize(self):
        if self.name == "torch-cuda":
            torch.cuda.synchronize()
        elif self.name == "cupy":
            cupy.cuda.get_current_stream().synchronize()


def _xp_params():
    params = [pytest.param("numpy", id="numpy")]
    marks_absent = pytest.mark.skip(reason="not installed")
    params.append(pytest.param("torch-cpu", id="torch-cpu", marks=() if torch else marks_absent))
    params.append(
        pytest.param(
            "torch-cuda",
            id="torch-cuda",
            marks=(pytest.mark.gpu,) + (() if torch else (marks_absent,)),
        )
    )
    params.append(
        pytest.param(
            "cupy", id="cupy", marks=(pytest.mark.gpu,) + (() if cupy else (marks_absent,))
        )
    )
    return params


@pytest.fixture(params=_xp_params())
def xp(request) -> XP:
    return XP(request.param)


@pytest.fixture
def numpy_xp() -> XP:
    return XP("numpy")


@pytest.fixture
def rng():
    env = os.environ.get("GPULA_TEST_SEED")
    seed = int(env) if env else int.from_bytes(os.urandom(4), "little")
    print(f"GPULA_TEST_SEED={seed}")  # shown with a failure; set it to reproduce
    return np.random.default_rng(seed)


def gelu_tol(xp, dtype: str, tol: dict) -> float:
    """cuBLASLt evaluates GELU and its derivative to about 1e-10 relative in float64 (5e-11 seen
    on an H100): the float64 tolerance of GELU epilogues on the GPU."""
    return 1e-9 if xp.gpu and dtype == "float64" else tol[dtype]


def rel_err(x, ref, scale=None) -> float:
    """Relative Frobenius error of x against the float64 reference. `scale` (e.g. |a| @ |b|)
    replaces ||ref|| when larger, so that cancellation in ref does not inflate the error."""
    x, ref = to_np64(x), np.asarray(ref)
    denom = np.linalg.norm(ref)
    if scale is not None:
        denom = max(denom, float(np.linalg.norm(scale)))
    num = np.linalg.norm(x - ref)
    return float(num / denom) if denom > 0 else float(num)


TOL = {
    "float16": 1e-2,
    "bfloat16": 1e-2,
    "float32": 1e-5,
    "complex64": 1e-5,
    "float64": 1e-12,
    "complex128": 1e-12,
}
