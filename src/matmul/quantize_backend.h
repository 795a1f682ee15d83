#pragma once
// Contract of quantize_fp8: the front (quantize.cpp) checks every argument and describes the work
// as one QuantizeProblem; cpu:: and cuda:: quantize it with fp8_codec.h's rule (the same bits).
#include <gpula/matmul.h>

namespace gpula::detail {

// x is a contiguous (rows, cols) matrix (Fp8Block::tensor: rows = 1, cols = every element) cut
// into tiles of block_rows x block_cols (the last ones ragged; block_cols = cols = 0 is one empty
// tile per row of tiles, whose scale is 1). Tile (i, j) has the scale at
// scales[i * scale_stride_r + j * scale_stride_c]. q is contiguous like x.
struct QuantizeProblem {
  DType in = DType::f32;       // f16, bf16 or f32
  DType out = DType::f8_e4m3;  // f8_e4m3 or f8_e5m2
  int64_t rows = 0, cols = 0;
  int64_t block_rows = 1, block_cols = 1;
  int64_t scale_stride_r = 0, scale_stride_c = 0;

  int64_t tiles_r() const { return block_rows > 0 ? (rows + block_rows - 1) / block_rows : 0; }
  int64_t tiles_c() const { return block_cols > 0 ? (cols + block_cols - 1) / block_cols : 1; }
};

namespace cpu {
void quantize_fp8(const QuantizeProblem& p, const void* x, void* q, float* scales);
}
namespace cuda {
void quantize_fp8(const QuantizeProblem& p, const void* x, void* q, float* scales, Stream stream);
}

}  // namespace gpula::detail
