"""Probe: which fp8 scale-mode / result-type / amax / d_scale combinations this cuBLASLt takes on
this GPU (issue 21: the scale-tensor tests failed with CUBLAS_STATUS_INVALID_VALUE from the
heuristic on an H100, cuBLAS 13). Each combination is one gl.matmul of (256, 512) @ (512, 384)
fp8 e4m3 operands with scale tensors from gl.quantize_fp8; prints OK (with the relative error
against float64 of the dequantized operands) or the error. Reports only.

    python bench/probes/probe_fp8_support.py
"""

from __future__ import annotations

import itertools

import numpy as np

import gpula as gl

try:
    import torch
except ImportError:  # pragma: no cover - the probe needs torch on a GPU
    torch = None

BLOCKS = {"tensor": None, "row": "row", "block128": 128, "block128x128": (128, 128)}


def dequant(q, s, block):
    v = q.float().cpu().numpy().astype(np.float64)
    s = s.float().cpu().numpy().astype(np.float64)
    if block is None:
        return v * float(s)
    if block == "row":
        return v * s[:, None]
    br = 128 if block == (128, 128) else 1
    return v * s[(np.arange(v.shape[0]) // br)[:, None], (np.arange(v.shape[1]) // 128)[None, :]]


def main() -> None:
    if torch is None or not torch.cuda.is_available():
        print("probe_fp8_support: needs torch with a CUDA device")
        return
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__} (CUDA {torch.version.cuda})")
    g = torch.Generator().manual_seed(1)
    x = (torch.randn(256, 512, generator=g) * 3).cuda()
    w = (torch.randn(384, 512, generator=g) * 0.05).cuda()
    print(f"{'a':>13} {'b':>13} {'result':>14} {'amax':>5} {'d_scale':>7}  outcome")
    for am, bm in itertools.product(BLOCKS, BLOCKS):
        qa, sa = gl.quantize_fp8(x, "e4m3", BLOCKS[am])
        qw, sw = gl.quantize_fp8(w, "e4m3", BLOCKS[bm])
        sb = sw.T if sw.dim() == 2 else sw
        ref = dequant(qa, sa, BLOCKS[am]) @ dequant(qw, sw, BLOCKS[bm]).T
        for rt, amax, dsc in itertools.product(
                ("float32", "bfloat16", "float16", "float8_e4m3fn"), (False, True), (False, True)):
            if dsc and rt != "float8_e4m3fn":
                continue
            ins = {"a_scale": sa, "b_scale": sb}
            if dsc:
                ins["d_scale"] = torch.tensor(0.25, device="cuda")
            try:
                out = gl.matmul(qa, qw.T, epilog_inputs=ins, options={"result_type": rt},
                                amax=amax)
                r = out[0] if isinstance(out, tuple) else out
                got = r.float().cpu().numpy().astype(np.float64) / (0.25 if dsc else 1.0)
                err = np.linalg.norm(got - ref) / np.linalg.norm(ref)
                what = f"OK rel err {err:.1e}"
            except Exception as e:  # noqa: BLE001 - the probe reports every outcome
                what = f"{type(e).__name__}: {str(e)[:90]}"
            print(f"{am:>13} {bm:>13} {rt:>14} {amax!s:>5} {dsc!s:>7}  {what}")


if __name__ == "__main__":
    main()
