"""Every documented error: its class, and a message that names the argument and the value."""

from __future__ import annotations

import numpy as np
import pytest

import gpula as gl


def f32(*shape):
    return np.ones(shape, np.float32)


def test_hierarchy():
    # One base catches everything gpula raises; each class is also the builtin a caller catches.
    assert issubclass(gl.Error, Exception) and not issubclass(gl.Error, RuntimeError)
    assert issubclass(gl.InvalidArgument, gl.Error) and issubclass(gl.InvalidArgument, ValueError)
    assert issubclass(gl.DTypeError, gl.InvalidArgument) and issubclass(gl.DTypeError, TypeError)
    assert issubclass(gl.NotSupported, gl.Error) and issubclass(gl.NotSupported, RuntimeError)
    assert issubclass(gl.NotCompiled, gl.NotSupported)
    assert issubclass(gl.OutOfMemory, gl.Error) and issubclass(gl.OutOfMemory, MemoryError)
    assert issubclass(gl.VendorError, gl.Error) and issubclass(gl.VendorError, RuntimeError)
    assert gl.VendorError.status == 0 and gl.VendorError.status_name == ""
    vendors = (gl.CudaError, gl.CublasError, gl.CusolverError, gl.CusparseError, gl.CudssError)
    for cls in (*vendors, gl.NcclError, gl.CublasMpError):
        assert issubclass(cls, gl.VendorError) and issubclass(cls, RuntimeError)
    assert issubclass(gl.LinAlgError, gl.Error)
    assert issubclass(gl.LinAlgError, np.linalg.LinAlgError)
    assert issubclass(gl.NotPositiveDefinite, gl.LinAlgError)
    assert issubclass(gl.SingularMatrix, gl.LinAlgError)
    assert gl.errors.Error is gl.Error
    assert gl.Error.__module__ == "gpula"
    for name in gl.errors.__all__:
        assert getattr(gl, name) is getattr(gl.errors, name)


# Every C++ exception class becomes its Python class, message and attributes intact.
CPP_TO_PYTHON = [
    ("Error", gl.Error),
    ("InvalidArgument", gl.InvalidArgument),
    ("DTypeError", gl.DTypeError),
    ("NotSupported", gl.NotSupported),
    ("NotCompiled", gl.NotCompiled),
    ("OutOfMemory", gl.OutOfMemory),
    ("VendorError", gl.VendorError),
    ("CudaError", gl.CudaError),
    ("CublasError", gl.CublasError),
    ("CusolverError", gl.CusolverError),
    ("CusparseError", gl.CusparseError),
    ("CudssError", gl.CudssError),
    ("NcclError", gl.NcclError),
    ("CublasMpError", gl.CublasMpError),
    ("LinAlgError", gl.LinAlgError),
    ("NotPositiveDefinite", gl.NotPositiveDefinite),
    ("SingularMatrix", gl.SingularMatrix),
]


@pytest.mark.parametrize("kind, cls", CPP_TO_PYTHON, ids=[k for k, _ in CPP_TO_PYTHON])
def test_cpp_errors_translate_one_to_one(kind, cls):
    with pytest.raises(gl.Error) as e:
        gl._gpula._throw_cpp_error(kind, f"[op] arg: {kind} happened")
    assert type(e.value) is cls
    assert f"[op] arg: {kind} happened" in str(e.value)
    if issubclass(cls, gl.VendorError):
        assert e.value.status == 7 and e.value.status_name == "STATUS_SEVEN"
        assert isinstance(e.value, RuntimeError)
    if issubclass(cls, gl.LinAlgError):
        assert isinstance(e.value, np.linalg.LinAlgError)


def test_inner_dimension_mismatch():
    with pytest.raises(ValueError) as e:
        gl.matmul(f32(3, 4), f32(5, 2))
    assert "(3, 4)" in str(e.value) and "(5, 2)" in str(e.value)
    assert isinstance(e.value, gl.InvalidArgument)


def test_batch_dimensions_do_not_broadcast():
    with pytest.raises(ValueError, match="broadcast"):
        gl.matmul(f32(2, 3, 4), f32(3, 4, 5))


def test_dtype_mismatch():
    with pytest.raises(TypeError) as e:
        gl.matmul(f32(3, 4), np.ones((4, 2)))
    assert "float32" in str(e.value) and "float64" in str(e.value)
    assert isinstance(e.value, gl.DTypeError)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.bool_, np.uint16])
def test_unsupported_dtype(dtype):
    with pytest.raises(TypeError) as e:
        gl.matmul(np.ones((3, 4), dtype), np.ones((4, 2), dtype))
    assert isinstance(e.value, gl.DTypeError)
    assert "a" in str(e.value)


def test_not_an_array():
    with pytest.raises(TypeError, match="list"):
        gl.matmul([[1.0, 2.0]], f32(2, 2))
    with pytest.raises(TypeError):
        gl.matmul(f32(2, 2), [[1.0], [2.0]])


def test_c_dtype_mismatch():
    with pytest.raises(TypeError, match="float64"):
        gl.matmul(f32(3, 4), f32(4, 2), np.ones((3, 2)), beta=1.0)


def test_c_does_not_broadcast():
    with pytest.raises(ValueError, match=r"\(4, 4\)"):
        gl.matmul(f32(3, 4), f32(4, 2), f32(4, 4), beta=1.0)


def test_epilog_needs_bias():
    with pytest.raises(ValueError, match="bias"):
        gl.matmul(f32(3, 4), f32(4, 5), epilog=gl.Epilog.RELU_BIAS)


def test_epilog_takes_no_bias():
    with pytest.raises(ValueError, match="bias"):
        gl.matmul(f32(3, 4), f32(4, 5), epilog=gl.Epilog.RELU, epilog_inputs={"bias": f32(5)})


def test_bias_wrong_length():
    with pytest.raises(ValueError) as e:
        gl.matmul(f32(3, 4), f32(4, 5), epilog=gl.Epilog.BIAS, epilog_inputs={"bias": f32(3)})
    msg = str(e.value)
    assert "bias" in msg and "5" in msg and "(3,)" in msg


def test_bias_wrong_dtype():
    with pytest.raises(TypeError, match="bias"):
        gl.matmul(f32(3, 4), f32(4, 5), epilog="BIAS", epilog_inputs={"bias": np.ones(5)})


def test_unknown_epilog_input():
    with pytest.raises(ValueError, match="'bais'"):
        gl.matmul(f32(3, 4), f32(4, 5), epilog="BIAS", epilog_inputs={"bais": f32(5)})


def test_unknown_epilog_name():
    with pytest.raises(ValueError, match="RELU_TYPO"):
        gl.matmul(f32(3, 4), f32(4, 5), epilog="RELU_TYPO")


def test_backward_needs_aux():
    with pytest.raises(ValueError, match="gelu_aux"):
        gl.matmul(f32(3, 4), f32(4, 5), epilog=gl.Epilog.DGELU)
    with pytest.raises(ValueError, match="relu_aux"):
        gl.matmul(f32(3, 4), f32(4, 5), epilog=gl.Epilog.DRELU_BGRAD)


def test_aux_wrong_shape():
    with pytest.raises(ValueError, match="relu_aux"):
        gl.matmul(
            f32(3, 4),
            f32(4, 5),
            epilog=gl.Epilog.DRELU,
            epilog_inputs={"relu_aux": np.zeros((3, 1), np.uint8)},
        )


@pytest.mark.parametrize("epilog", ["RELU", "BIAS", "GELU_AUX", "BGRADB"])
def test_complex_epilog_not_supported(epilog):
    a = np.ones((3, 4), np.complex64)
    inputs = {"bias": f32(5)} if epilog == "BIAS" else None
    with pytest.raises(gl.NotSupported, match="complex64"):
        gl.matmul(a, np.ones((4, 5), np.complex64), epilog=epilog, epilog_inputs=inputs)


def test_fp8_on_cpu_not_supported():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    a = np.ones((16, 16), ml_dtypes.float8_e4m3fn)
    with pytest.raises(gl.NotSupported, match="CPU"):
        gl.matmul(a, a)


def test_cuda_not_compiled():
    if gl.devices()["cuda_compiled"]:
        pytest.skip("built with CUDA")
    with pytest.raises(gl.NotCompiled):
        gl.matmul(f32(2, 2), f32(2, 2), options={"device": "cuda"})


def test_cuda_unavailable_is_a_typed_error():
    d = gl.devices()
    if not d["cuda_compiled"] or d["cuda_device_count"] > 0:
        pytest.skip("needs a CUDA build on a machine without a usable GPU")
    with pytest.raises(gl.Error) as e:
        gl.matmul(f32(2, 2), f32(2, 2), options={"device": "cuda"})
    if isinstance(e.value, gl.CudaError):
        assert e.value.status != 0 and e.value.status_name.startswith("cuda")


@pytest.mark.gpu
def test_operands_on_different_devices():
    torch = pytest.importorskip("torch")
    a = torch.ones(3, 4, device="cuda")
    with pytest.raises(ValueError, match="different devices") as e:
        gl.matmul(a, torch.ones(4, 2))
    assert "cuda:0" in str(e.value) and "cpu" in str(e.value)
    with pytest.raises(ValueError, match="bias"):
        gl.matmul(
            a, torch.ones(4, 2, device="cuda"), epilog="BIAS", epilog_inputs={"bias": torch.ones(2)}
        )


def test_unknown_option_key():
    with pytest.raises(ValueError, match="'compute'"):
        gl.matmul(f32(2, 2), f32(2, 2), options={"compute": "COMPUTE_32F"})
    with pytest.raises(TypeError):
        gl.matmul(f32(2, 2), f32(2, 2), options=42)


def test_wrong_compute_type_for_dtype():
    a = np.ones((2, 2))
    with pytest.raises(ValueError) as e:
        gl.matmul(a, a, options={"compute_type": gl.ComputeType.COMPUTE_32F})
    assert "COMPUTE_32F" in str(e.value) and "float64" in str(e.value)
    with pytest.raises(ValueError, match="COMPUTE_16F"):
        gl.matmul(f32(2, 2), f32(2, 2), options=gl.MatmulOptions(compute_type="COMPUTE_16F"))
    with pytest.raises(ValueError, match="compute_type"):
        gl.matmul(f32(2, 2), f32(2, 2), options={"compute_type": "FAST_AS_POSSIBLE"})


def test_wrong_result_and_scale_type():
    with pytest.raises(TypeError, match="result_type"):
        gl.matmul(f32(2, 2), f32(2, 2), options={"result_type": np.float16})
    with pytest.raises(TypeError, match="scale_type"):
        gl.matmul(f32(2, 2), f32(2, 2), options={"scale_type": "float64"})
    with pytest.raises(TypeError, match="flaot32"):
        gl.matmul(f32(2, 2), f32(2, 2), options={"result_type": "flaot32"})


@pytest.mark.parametrize(
    "key, value",
    [
        ("memory_limit", "120%"),
        ("memory_limit", -5),
        ("memory_limit", 1.5),
        ("device", "gpu"),
        ("device", "cuda:x"),
        ("fallback", "disk"),
        ("blocking", "sometimes"),
    ],
)
def test_bad_option_values(key, value):
    with pytest.raises(ValueError, match=key):
        gl.matmul(f32(2, 2), f32(2, 2), options={key: value})


def test_beta_without_c():
    with pytest.raises(ValueError, match="beta"):
        gl.matmul(f32(2, 2), f32(2, 2), beta=0.5)


def test_complex_scalars_with_real_operands():
    with pytest.raises(ValueError, match="complex"):
        gl.matmul(f32(2, 2), f32(2, 2), alpha=1j)


def test_bad_stream():
    with pytest.raises(TypeError, match="stream"):
        gl.matmul(f32(2, 2), f32(2, 2), stream="default")


def test_autotune_iterations():
    mm = gl.Matmul(f32(2, 2), f32(2, 2))
    mm.plan()
    with pytest.raises(ValueError, match="iterations"):
        mm.autotune(iterations=0)


def test_bad_input_leaves_arrays_alone():
    a, b, bias = f32(3, 4), f32(4, 5), f32(3)
    copies = [x.copy() for x in (a, b, bias)]
    with pytest.raises(ValueError):
        gl.matmul(a, b, epilog="BIAS", epilog_inputs={"bias": bias})
    for x, y in zip((a, b, bias), copies):
        np.testing.assert_array_equal(x, y)


def test_host_allocation_failure_is_out_of_memory():
    with pytest.raises(gl.OutOfMemory, match="host memory") as e:
        gl._gpula._throw_cpp_error("bad_alloc", "")
    assert isinstance(e.value, MemoryError) and isinstance(e.value, gl.Error)


def test_beta_is_required_with_c():
    # c without beta used to run as beta = 0 and drop c silently.
    a, b, c = f32(3, 4), f32(4, 2), f32(3, 2)
    c0 = c.copy()
    for call in (lambda: gl.matmul(a, b, c), lambda: gl.Matmul(a, b, c)):
        with pytest.raises(gl.InvalidArgument) as e:
            call()
        assert "[matmul] beta is required when c is given" in str(e.value), e.value
    np.testing.assert_array_equal(c, c0)
    np.testing.assert_array_equal(gl.matmul(a, b, c, beta=0.0), a.astype(np.float64) @ b)
    np.testing.assert_array_equal(gl.matmul(a, b, c, beta=2.0), a @ b + 2.0 * c)
    with gl.Matmul(a, b, c, beta=-1.0) as mm:
        mm.plan()
        np.testing.assert_array_equal(mm.execute(), a @ b - c)
    with pytest.raises(gl.InvalidArgument, match="beta"):
        gl.matmul(a, b, c)  # a cached plan with beta does not serve a call without


def test_bad_scalar_types():
    with pytest.raises(gl.DTypeError, match="beta"):
        gl.matmul(f32(2, 2), f32(2, 2), f32(2, 2), beta="1")
    with pytest.raises(gl.DTypeError, match="alpha"):
        gl.matmul(f32(2, 2), f32(2, 2), alpha=[1.0])
    with pytest.raises(gl.DTypeError, match="alpha"):
        gl.matmul(f32(2, 2), f32(2, 2), alpha=True)
    r = gl.matmul(f32(2, 2), f32(2, 2), f32(2, 2), alpha=np.float32(2), beta=np.float64(1))
    np.testing.assert_array_equal(r, np.full((2, 2), 5.0))


@pytest.mark.parametrize("order", [">", "<"])
def test_non_native_byte_order_is_named(order):
    if np.dtype(order + "f8").isnative:
        order = "<" if order == ">" else ">"
    name = "big-endian" if order == ">" else "little-endian"
    a = np.ones((2, 2), order + "f8")
    with pytest.raises(gl.DTypeError) as e:
        gl.matmul(a, np.ones((2, 2)))
    msg = str(e.value)
    assert f"dtype {order}f8 ({name}) is not supported" in msg, msg
    assert msg.startswith("[matmul] a:"), msg
    assert "DLPack" not in msg and "code" not in msg, msg
    with pytest.raises(gl.DTypeError, match=r"\[matmul\] b: dtype"):
        gl.matmul(np.ones((2, 2)), a)


@pytest.mark.parametrize(
    "value, kind", [(np.array([["x"]]), "<U1"), (np.ones((2, 2), object), "object")]
)
def test_dtypes_without_dlpack_are_named(value, kind):
    with pytest.raises(gl.DTypeError, match=f"dtype {kind} is not supported"):
        gl.matmul(value, f32(1, 1))


def test_interop_helpers_name_the_operation():
    from gpula import _interop

    with pytest.raises(gl.DTypeError) as e:
        _interop.export("x", "linalg.cholesky", "a")
    assert str(e.value).startswith("[linalg.cholesky] a must be an array"), e.value
    with pytest.raises(gl.DTypeError, match=r"^\[linalg.solve\] stream must be"):
        _interop.stream_handle("s", "linalg.solve")
    with pytest.raises(gl.InvalidArgument, match=r"^\[linalg.solve\] stream handle"):
        _interop.stream_handle(-1, "linalg.solve")
    with pytest.raises(gl.DTypeError, match=r"^\[eig\] dtype is not a dtype"):
        _interop.dtype_name(object(), "eig", "dtype")
    # Older call sites without `op` get a neutral name, never another operation's.
    with pytest.raises(gl.DTypeError) as e:
        _interop.export("x")
    assert str(e.value).startswith("[gpula] the operand must be an array"), e.value


def test_other_operations_are_not_reported_as_matmul():
    with pytest.raises(gl.Error) as e:
        gl.linalg.cholesky("x")
    assert "[matmul]" not in str(e.value), e.value


def test_every_error_is_caught_by_the_base():
    calls = [
        lambda: gl.matmul(f32(3, 4), f32(5, 2)),
        lambda: gl.matmul(f32(2, 2), np.ones((2, 2))),
        lambda: gl.matmul("a", f32(2, 2)),
        lambda: gl.matmul(f32(2, 2), f32(2, 2), options=42),
        lambda: gl.matmul(f32(2, 2), f32(2, 2), epilog=3.5),
        lambda: gl.set_log_level(2**40),
        lambda: gl.Matmul(f32(2, 2), f32(2, 2)).execute(),
    ]
    for call in calls:
        with pytest.raises(gl.Error):
            call()
