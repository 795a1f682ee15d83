#pragma once
// Kernels of quantize_fp8 (matmul/quantize.cpp): per-tile largest finite |x|, then the scales and
// the fp8 elements by fp8_codec.h's rule (the CPU backend's bits). x is a contiguous rows x cols
// matrix of f16/bf16/f32 cut into block_rows x block_cols tiles (see matmul/quantize_backend.h).
#include <cuda_runtime.h>

#include <cstdint>

namespace gpula::detail::cuda {

struct QuantizeFp8Args {
  const void* x;
  int in_kind;   // 0 f16, 1 bf16, 2 f32
  bool e5m2;     // the output format: e4m3fn when false
  int64_t rows, cols, block_rows, block_cols, tiles_r, tiles_c;
  int64_t scale_stride_r, scale_stride_c;
  uint8_t* q;
  float* scales;
  unsigned int* amax;  // tiles_r * tiles_c words (float bits), zeroed by the caller
};

// Runs the three passes (amax, scales, elements) on `stream`.
cudaError_t launch_quantize_fp8(const QuantizeFp8Args& args, cudaStream_t stream);

}  // namespace gpula::detail::cuda
