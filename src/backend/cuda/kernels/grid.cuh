#pragma once
// Grid-stride loops of the element-wise kernels (linalg.cu, eig.cu, matrix_functions.cu): the
// block count for `work` elements at `threads` a block, and the loop itself.
#include <cuda_runtime.h>

#include <cstdint>

namespace gpula::detail::cuda {

constexpr int64_t kMaxGridBlocks = 65535 * 16;

// ceil(work / threads) blocks, at least 1 and at most kMaxGridBlocks (the loop covers the rest).
inline unsigned grid_blocks(int64_t work, int threads) {
  const int64_t b = (work + threads - 1) / threads;
  return static_cast<unsigned>(b < kMaxGridBlocks ? (b < 1 ? 1 : b) : kMaxGridBlocks);
}

}  // namespace gpula::detail::cuda

#define GPULA_GRID_LOOP(i, total)                                                            \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (total); \
       i += static_cast<int64_t>(gridDim.x) * blockDim.x)
