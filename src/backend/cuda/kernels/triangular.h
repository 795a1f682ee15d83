#pragma once
// Launcher of the triangular solve's device kernel (kernels/triangular.cu).
#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/kernels/linalg.h"

namespace gpula::detail::cuda {

// info[b] = k > 0 where element (k-1, k-1) is the first exact zero (+-0; a complex zero has both
// parts zero) of the diagonal of matrix b, else 0, for `count` contiguous n x n matrices.
cudaError_t launch_first_zero_diagonal(const void* a, ElemType t, int64_t n, int64_t count,
                                       int32_t* info, cudaStream_t stream);

}  // namespace gpula::detail::cuda
