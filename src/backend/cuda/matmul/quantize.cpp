// quantize_fp8 on a GPU: the kernels of kernels/quantize_fp8.cu on the caller's stream, with one
// stream-ordered scratch word per tile for the amax.
#include "backend/cuda/base/check.h"
#include "backend/cuda/base/context.h"
#include "backend/cuda/kernels/quantize_fp8.h"
#include "matmul/quantize_backend.h"

namespace gpula::detail::cuda {

void quantize_fp8(const QuantizeProblem& p, const void* x, void* q, float* scales, Stream stream) {
  constexpr const char* kOp = "quantize_fp8";
  context(stream.device.index);  // makes the device current
  auto s = static_cast<cudaStream_t>(stream.handle);
  const int64_t tiles = p.tiles_r() * p.tiles_c();
  if (tiles == 0) return;
  Tensor amax = Tensor::empty({tiles}, DType::i32, stream);
  GPULA_CHECK(kOp, cudaMemsetAsync(amax.data(), 0, static_cast<size_t>(tiles) * 4, s));
  QuantizeFp8Args a{};
  a.x = x;
  a.in_kind = p.in == DType::f16 ? 0 : p.in == DType::bf16 ? 1 : 2;
  a.e5m2 = p.out == DType::f8_e5m2;
  a.rows = p.rows;
  a.cols = p.cols;
  a.block_rows = p.block_rows;
  a.block_cols = p.block_cols;
  a.tiles_r = p.tiles_r();
  a.tiles_c = p.tiles_c();
  a.scale_stride_r = p.scale_stride_r;
  a.scale_stride_c = p.scale_stride_c;
  a.q = static_cast<uint8_t*>(q);
  a.scales = scales;
  a.amax = static_cast<unsigned int*>(amax.data());
  GPULA_CHECK(kOp, launch_quantize_fp8(a, s));
  // `amax` returns to the stream-ordered pool here; later work on the stream may reuse it.
}

}  // namespace gpula::detail::cuda
