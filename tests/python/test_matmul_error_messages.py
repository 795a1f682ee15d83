"""gpula.matmul's errors on hostile input: typed, "[matmul]" first, naming the argument (issue 17;
the hostile suite's matmul cases)."""

from __future__ import annotations

import numpy as np
import pytest

import gpula as gl


def test_alpha_none_is_a_dtype_error_naming_alpha():
    a, b = np.ones((2, 3)), np.ones((3, 2))
    with pytest.raises(gl.DTypeError, match=r"^\[matmul\] alpha must be a number, got NoneType"):
        gl.matmul(a, b, alpha=None)
    with pytest.raises(gl.DTypeError, match=r"^\[matmul\] alpha must be a number"):
        gl.Matmul(a, b, alpha=None)
    # beta=None is the default: "no beta".
    np.testing.assert_allclose(gl.matmul(a, b, beta=None), a @ b)


@pytest.mark.skipif(gl.devices()["cuda_compiled"], reason="the CUDA backend is built in")
def test_device_cuda_without_cuda_names_matmul_and_device():
    a, b = np.ones((2, 3)), np.ones((3, 2))
    with pytest.raises(gl.NotCompiled,
                       match=r"^\[matmul\] device: gpula was built without its cuda backend"):
        gl.matmul(a, b, options={"device": "cuda"})


@pytest.mark.parametrize("which", ["a", "b"])
def test_blas_integer_range_names_the_operand(which):
    # 2**40 rows of a (columns of b) that are one row (column) repeated: a zero stride.
    if which == "a":
        a, b = np.broadcast_to(np.ones(4), (2**40, 4)), np.ones((4, 3))
    else:
        a, b = np.ones((3, 4)), np.broadcast_to(np.ones((4, 1)), (4, 2**40))
    with pytest.raises(gl.NotSupported) as e:
        gl.matmul(a, b)
    msg = str(e.value)
    assert msg.startswith("[matmul] "), msg
    assert f"of {which}," in msg and "outside the range of the BLAS integer type" in msg
