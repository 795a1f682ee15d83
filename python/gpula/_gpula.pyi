import enum
import logging
from collections.abc import Sequence
from typing import Any

from typing_extensions import TypeAlias

__version__: str

# ---- errors (errors.cpp) --------------------------------------------------------------------
class Error(Exception): ...
class InvalidArgument(Error, ValueError): ...
class DTypeError(InvalidArgument, TypeError): ...
class NotSupported(Error, RuntimeError): ...
class NotCompiled(NotSupported): ...
class OutOfMemory(Error, MemoryError): ...

class VendorError(Error, RuntimeError):
    status: int
    status_name: str

class CudaError(VendorError): ...
class CublasError(VendorError): ...
class CusolverError(VendorError): ...
class CusparseError(VendorError): ...
class CudssError(VendorError): ...
class NcclError(VendorError): ...
class CublasMpError(VendorError): ...

class LinAlgError(Error): ...  # also numpy.linalg.LinAlgError

def _throw_cpp_error(kind: str, message: str) -> None: ...  # testing: raises C++ class `kind`

# ---- logging (log.cpp) ----------------------------------------------------------------------
def set_log_level(level: int) -> None: ...
def log_level() -> int: ...

# ---- arrays and devices (tensor.cpp) --------------------------------------------------------
# An operand: an array with DLPack or the buffer protocol, or (uint view, dtype name).
Operand: TypeAlias = Any | tuple[Any, str]

def cuda_compiled() -> bool: ...
def cuda_device_count() -> int: ...
def describe_devices() -> str: ...
def describe_array(x: Operand) -> str: ...

# ---- matmul (matmul.cpp) --------------------------------------------------------------------
class Epilog(enum.Enum):
    DEFAULT = ...
    RELU = ...
    RELU_AUX = ...
    BIAS = ...
    RELU_BIAS = ...
    RELU_AUX_BIAS = ...
    GELU = ...
    GELU_AUX = ...
    GELU_BIAS = ...
    GELU_AUX_BIAS = ...
    DRELU = ...
    DRELU_BGRAD = ...
    DGELU = ...
    DGELU_BGRAD = ...
    BGRADA = ...
    BGRADB = ...

class ComputeType(enum.Enum):
    COMPUTE_16F = ...
    COMPUTE_16F_PEDANTIC = ...
    COMPUTE_32F = ...
    COMPUTE_32F_PEDANTIC = ...
    COMPUTE_32F_FAST_16F = ...
    COMPUTE_32F_FAST_16BF = ...
    COMPUTE_32F_FAST_TF32 = ...
    COMPUTE_64F = ...
    COMPUTE_64F_PEDANTIC = ...

class NativeMatmulOptions:
    def __init__(
        self,
        compute_type: ComputeType | None = None,
        scale_type: str | None = None,
        result_type: str | None = None,
        memory_limit_bytes: int = -1,
        memory_limit_fraction: float = 0.8,
        device: str | None = None,
        fallback_cpu: bool = False,
        blocking: bool = False,
        logger: logging.Logger | None = None,
    ) -> None: ...

EpilogInputs: TypeAlias = dict[str, Operand] | None
Scales: TypeAlias = tuple[float, float, float]
OutputSpec: TypeAlias = tuple[str, tuple[int, ...], str]

class Matmul:
    def __init__(
        self,
        a: Operand,
        b: Operand,
        c: Operand | None,
        alpha: complex,
        beta: complex | None,
        options: NativeMatmulOptions,
        scales: Scales,
    ) -> None: ...
    # (candidates best first, output specs, the plan's generation for execute_into)
    def plan(
        self, epilog: Epilog, inputs: EpilogInputs, limit: int = 8
    ) -> tuple[list[dict[str, Any]], list[OutputSpec], int]: ...
    def autotune(self, iterations: int, stream: int) -> dict[str, Any]: ...
    def execute_into(self, outputs: Sequence[Any], stream: int, generation: int) -> None: ...
    def output_specs(self) -> list[OutputSpec]: ...
    def reset_operands(
        self,
        a: Operand | None,
        b: Operand | None,
        c: Operand | None,
        inputs: EpilogInputs,
    ) -> None: ...
    def free(self) -> None: ...
    def algorithm(self) -> dict[str, Any]: ...
    @property
    def planned(self) -> bool: ...
    @property
    def device(self) -> str: ...
    @property
    def data_device(self) -> str: ...

def cached_matmul(
    a: Operand,
    b: Operand,
    c: Operand | None,
    alpha: complex,
    beta: complex | None,
    epilog: Epilog,
    inputs: EpilogInputs,
    options: NativeMatmulOptions,
    scales: Scales,
) -> tuple[Matmul, list[OutputSpec], int]: ...
def matmul_cache_size() -> int: ...
def matmul_cache_clear() -> None: ...

# ---- dense linear algebra (linalg.cpp) ------------------------------------------------------
class NotPositiveDefinite(LinAlgError):
    order: int  # the leading minor that failed (1-based)
    batch_index: int  # flat position in the batch; -1 without a batch

class SingularMatrix(LinAlgError):
    index: int  # the zero pivot U[i, i] (0-based)
    batch_index: int

# framework: the package results go to (0 numpy, 1 torch, 2 cupy, 3 a generic DLPack ndarray);
# stream: a cudaStream_t as an int (0: the default). Results are zero-copy views of gpula memory.
def linalg_cholesky(
    a: Operand,
    lower: bool = True,
    check_info: bool = True,
    device: str | None = None,
    fallback_cpu: bool = False,
    framework: int = 0,
    stream: int = 0,
) -> tuple[Any, Any]: ...
def linalg_cho_solve(
    c: Operand,
    b: Operand,
    lower: bool = True,
    check_info: bool = True,
    device: str | None = None,
    fallback_cpu: bool = False,
    framework: int = 0,
    stream: int = 0,
) -> Any: ...
def linalg_lu_factor(
    a: Operand,
    check_info: bool = True,
    device: str | None = None,
    fallback_cpu: bool = False,
    framework: int = 0,
    stream: int = 0,
) -> tuple[Any, Any, Any]: ...
def linalg_lu_solve(
    lu: Operand,
    piv: Operand,
    b: Operand,
    check_info: bool = True,
    device: str | None = None,
    fallback_cpu: bool = False,
    framework: int = 0,
    stream: int = 0,
) -> Any: ...
def linalg_solve(
    a: Operand,
    b: Operand,
    assume_a: str = "gen",
    refine: str = "none",
    lower: bool = False,
    check_info: bool = True,
    device: str | None = None,
    fallback_cpu: bool = False,
    framework: int = 0,
    stream: int = 0,
) -> tuple[Any, Any]: ...
def linalg_inv(
    a: Operand,
    check_info: bool = True,
    device: str | None = None,
    fallback_cpu: bool = False,
    framework: int = 0,
    stream: int = 0,
) -> tuple[Any, Any]: ...
def linalg_det(
    a: Operand,
    check_info: bool = True,
    device: str | None = None,
    fallback_cpu: bool = False,
    framework: int = 0,
    stream: int = 0,
) -> Any: ...
def linalg_slogdet(
    a: Operand,
    check_info: bool = True,
    device: str | None = None,
    fallback_cpu: bool = False,
    framework: int = 0,
    stream: int = 0,
) -> tuple[Any, Any]: ...

# ---- eigh (linalg_eigh.cpp): (w, v or None when eigvals_only, info) ----------------------------
def linalg_eigh(
    a: Operand,
    lower: bool = True,
    eigvals_only: bool = False,
    check_info: bool = True,
    device: str | None = None,
    fallback_cpu: bool = False,
    framework: int = 0,
    stream: int = 0,
) -> tuple[Any, Any, Any]: ...

# ---- eig (linalg_eig.cpp): (w, v or None when eigvals_only, info) ------------------------------
def linalg_eig(
    a: Operand,
    eigvals_only: bool = False,
# ---- SVD (linalg_svd.cpp): (u or None, s, vh or None when not compute_uv, info) ---------------
def linalg_svd(
    a: Operand,
    full_matrices: bool = False,
    compute_uv: bool = True,
    method: str = "auto",
    check_info: bool = True,
    device: str | None = None,
    fallback_cpu: bool = False,
    framework: int = 0,
    stream: int = 0,
) -> tuple[Any, Any, Any]: ...
) -> tuple[Any, Any, Any, Any]: ...

# ---- QR and least squares (linalg_qr.cpp) ------------------------------------------------------
def linalg_qr(
    a: Operand,
    mode: str = "reduced",
    device: str | None = None,
    fallback_cpu: bool = False,
    framework: int = 0,
    stream: int = 0,
) -> tuple[Any, Any]: ...  # (q, or None for mode "r"; r)
def linalg_lstsq(
    a: Operand,
    b: Operand,
    device: str | None = None,
    fallback_cpu: bool = False,
    framework: int = 0,
    stream: int = 0,
) -> Any: ...

# ---- sparse (sparse.cpp): y = alpha op(A) x + beta y into the caller's y ----------------------
def sparse_spmv(
    indptr: Operand,
    indices: Operand,
    values: Operand,
    rows: int,
    cols: int,
    x: Operand,
    y: Operand,
    op: int = 0,
    alpha: float = 1.0,
    beta: float = 0.0,
    stream: int = 0,
) -> None: ...
class SparseSpMV:
    def __init__(self, indptr: Operand, indices: Operand, values: Operand, rows: int, cols: int, op: int = 0) -> None: ...
    def execute(self, x: Operand, y: Operand, alpha: float = 1.0, beta: float = 0.0, stream: int = 0) -> None: ...

class SparseSpMM:
    def __init__(self, indptr: Operand, indices: Operand, values: Operand, rows: int, cols: int, op: int = 0) -> None: ...
    def execute(self, b: Operand, c: Operand, alpha: float = 1.0, beta: float = 0.0, stream: int = 0) -> None: ...

def sparse_spmm(
    indptr: Operand,
    indices: Operand,
    values: Operand,
    rows: int,
    cols: int,
    b: Operand,
    c: Operand,
    op: int = 0,
    alpha: float = 1.0,
    beta: float = 0.0,
    stream: int = 0,
) -> None: ...
def sparse_sddmm(
    indptr: Operand,
    indices: Operand,
    values: Operand,
    rows: int,
    cols: int,
    a: Operand,
    b: Operand,
    alpha: float = 1.0,
    beta: float = 0.0,
    stream: int = 0,
) -> None: ...
def sparse_spgemm(
    a_indptr: Operand,
    a_indices: Operand,
    a_values: Operand,
    a_rows: int,
    a_cols: int,
    b_indptr: Operand,
    b_indices: Operand,
    b_values: Operand,
    b_rows: int,
    b_cols: int,
    framework: int = 0,
    stream: int = 0,
) -> tuple[Any, Any, Any]: ...
# ---- distributed (distributed.cpp): block-cyclic helpers and cusolverMg solvers (host data) ----
def distributed_numroc(n: int, nb: int, iproc: int, isrcproc: int, nprocs: int) -> int: ...
def distributed_owner(g: int, nb: int, isrcproc: int, nprocs: int) -> int: ...
def distributed_global_to_local(g: int, nb: int, nprocs: int) -> int: ...
def distributed_local_to_global(l: int, nb: int, iproc: int, isrcproc: int, nprocs: int) -> int: ...
def distributed_scatter(global_: Operand, layout: tuple[int, ...], prow: int, pcol: int, local: Operand) -> None: ...
def distributed_gather(local: Operand, layout: tuple[int, ...], prow: int, pcol: int, global_: Operand) -> None: ...
def distributed_cholesky(a: Operand, lower: bool = True, devices: list[int] = ..., block_size: int = 256, check_info: bool = True) -> Any: ...
def distributed_solve(a: Operand, b: Operand, assume_a: str = "gen", lower: bool = False, devices: list[int] = ..., block_size: int = 256, check_info: bool = True) -> Any: ...
def distributed_eigh(a: Operand, lower: bool = True, eigvals_only: bool = False, devices: list[int] = ..., block_size: int = 256, check_info: bool = True) -> tuple[Any, Any, Any]: ...

# multi-process engines (cuSOLVERMp / cuBLASMp over NCCL): local pieces on the rank's GPU
class DistributedCommunicator:
    @property
    def rank(self) -> int: ...
    @property
    def size(self) -> int: ...
    @property
    def device(self) -> int: ...
    @property
    def defined(self) -> bool: ...

def distributed_unique_id() -> bytes: ...
def distributed_communicator(
    rank: int, size: int, unique_id: bytes, device: int
) -> DistributedCommunicator: ...
def distributed_cholesky_mp(
    comm: DistributedCommunicator, a: Operand, layout: tuple[int, ...], lower: bool,
    check_info: bool,
) -> None: ...
def distributed_solve_mp(
    comm: DistributedCommunicator, a: Operand, a_layout: tuple[int, ...], b: Operand,
    b_layout: tuple[int, ...], assume_a: str, lower: bool, check_info: bool,
) -> None: ...
def distributed_eigh_mp(
    comm: DistributedCommunicator, a: Operand, layout: tuple[int, ...], lower: bool,
    eigvals_only: bool, check_info: bool, framework: int,
) -> tuple[Any, Any, Any]: ...
def distributed_matmul_mp(
    comm: DistributedCommunicator, a: Operand, a_layout: tuple[int, ...], b: Operand,
    b_layout: tuple[int, ...], c: Operand, c_layout: tuple[int, ...], alpha: float,
    beta: float,
) -> None: ...
def distributed_has_mp() -> bool: ...
