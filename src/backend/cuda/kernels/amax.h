#pragma once
// max |x| over a strided stack of f16/bf16/f32 matrices: the fp8 matmul's "amax" for results that
// cuBLASLt computes none for (float32/bfloat16/float16 results; H100, cuBLAS 13 refuses
// CUBLASLT_MATMUL_DESC_AMAX_D_POINTER unless D is fp8 with per-tensor scales).
#include <cuda_runtime.h>

#include <cstdint>

namespace gpula::detail::cuda {

struct AmaxArgs {
  const void* x;
  int kind;  // 0 f16, 1 bf16, 2 f32
  int64_t batch, rows, cols;
  int64_t row_stride, batch_stride;  // elements; columns are contiguous
  float* out;  // one float, zeroed by the caller; folded into with atomicMax on its bits
};

// Folds max |x| into *out on `stream` (a NaN anywhere makes *out NaN: its bits order above +inf).
cudaError_t launch_amax(const AmaxArgs& args, cudaStream_t stream);

}  // namespace gpula::detail::cuda
