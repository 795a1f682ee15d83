// quantize_fp8 on the CPU: per tile, the largest finite |x|, then fp8_codec.h's rule per element.
#include <algorithm>
#include <cmath>
#include <vector>

#include "backend/cpu/base/half.h"
#include "matmul/fp8_codec.h"
#include "matmul/quantize_backend.h"

namespace gpula::detail::cpu {
namespace {

// Row r of x widened to float.
void load_row(const QuantizeProblem& p, const void* x, int64_t r, float* out) {
  const int64_t off = r * p.cols;
  switch (p.in) {
    case DType::f16:
      f16_to_float(static_cast<const uint16_t*>(x) + off, out, p.cols);
      break;
    case DType::bf16:
      bf16_to_float(static_cast<const uint16_t*>(x) + off, out, p.cols);
      break;
    default:
      std::copy_n(static_cast<const float*>(x) + off, p.cols, out);
      break;
  }
}

}  // namespace

void quantize_fp8(const QuantizeProblem& p, const void* x, void* q, float* scales) {
  const fp8::Format f = p.out == DType::f8_e4m3 ? fp8::e4m3() : fp8::e5m2();
  const int64_t tr = p.tiles_r(), tc = p.tiles_c();
  auto* out = static_cast<uint8_t*>(q);
  std::vector<float> rowbuf(static_cast<std::size_t>(p.cols));
  std::vector<float> amax(static_cast<std::size_t>(tc));
  for (int64_t i = 0; i < tr; ++i) {
    const int64_t r0 = i * p.block_rows, r1 = std::min(p.rows, r0 + p.block_rows);
    std::fill(amax.begin(), amax.end(), 0.0f);
    for (int64_t r = r0; r < r1; ++r) {
      load_row(p, x, r, rowbuf.data());
      for (int64_t c = 0; c < p.cols; ++c) {
        const float v = std::fabs(rowbuf[c]);
        float& m = amax[static_cast<std::size_t>(c / p.block_cols)];
        if (fp8::is_finite(v) && v > m) m = v;
      }
    }
    std::vector<float> s(static_cast<std::size_t>(tc));
    for (int64_t j = 0; j < tc; ++j) {
      s[j] = fp8::scale_for(amax[j], f);
      scales[i * p.scale_stride_r + j * p.scale_stride_c] = s[j];
    }
    for (int64_t r = r0; r < r1; ++r) {
      load_row(p, x, r, rowbuf.data());
      uint8_t* o = out + r * p.cols;
      for (int64_t c = 0; c < p.cols; ++c)
        o[c] = fp8::quantize(rowbuf[c], s[static_cast<std::size_t>(c / p.block_cols)], f);
    }
  }
}

}  // namespace gpula::detail::cpu
