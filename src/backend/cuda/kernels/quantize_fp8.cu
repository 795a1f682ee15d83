#include <algorithm>

#include "backend/cuda/kernels/half_load.cuh"
#include "backend/cuda/kernels/quantize_fp8.h"
#include "matmul/fp8_codec.h"

namespace gpula::detail::cuda {
namespace {

constexpr int kThreads = 256;

// Grid (tiles, splits): CTA (t, s) covers the s-th of `splits` slices of tile t's elements (in the
// tile's row-major order) and folds its largest finite |x| into amax[t] (non-negative floats order
// as their bits do, so an unsigned atomicMax is a float max).
__global__ void tile_amax(QuantizeFp8Args a, int64_t per_split) {
  const int64_t t = blockIdx.x;
  const int64_t ti = t / a.tiles_c, tj = t % a.tiles_c;
  const int64_t r0 = ti * a.block_rows, c0 = tj * a.block_cols;
  const int64_t h = min(a.block_rows, a.rows - r0), w = min(a.block_cols, a.cols - c0);
  const int64_t n = h * w;
  const int64_t begin = static_cast<int64_t>(blockIdx.y) * per_split;
  const int64_t end = min(n, begin + per_split);
  float m = 0.0f;
  for (int64_t e = begin + threadIdx.x; e < end; e += blockDim.x) {
    const int64_t r = r0 + e / w, c = c0 + e % w;
    const float v = fabsf(load_as_float(a.x, a.in_kind, r * a.cols + c));
    if (fp8::is_finite(v)) m = fmaxf(m, v);
  }
  __shared__ float part[kThreads];
  part[threadIdx.x] = m;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) part[threadIdx.x] = fmaxf(part[threadIdx.x], part[threadIdx.x + s]);
    __syncthreads();
  }
  if (threadIdx.x == 0 && part[0] > 0.0f) atomicMax(&a.amax[t], __float_as_uint(part[0]));
}

__global__ void tile_scales(QuantizeFp8Args a) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (t >= a.tiles_r * a.tiles_c) return;
  const fp8::Format f = a.e5m2 ? fp8::e5m2() : fp8::e4m3();
  const int64_t ti = t / a.tiles_c, tj = t % a.tiles_c;
  a.scales[ti * a.scale_stride_r + tj * a.scale_stride_c] =
      fp8::scale_for(__uint_as_float(a.amax[t]), f);
}

__global__ void elements(QuantizeFp8Args a) {
  const fp8::Format f = a.e5m2 ? fp8::e5m2() : fp8::e4m3();
  const int64_t n = a.rows * a.cols;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t r = i / a.cols, c = i % a.cols;
    const int64_t t = (r / a.block_rows) * a.tiles_c + c / a.block_cols;
    const float s = fp8::scale_for(__uint_as_float(a.amax[t]), f);
    a.q[i] = fp8::quantize(load_as_float(a.x, a.in_kind, i), s, f);
  }
}

}  // namespace

cudaError_t launch_quantize_fp8(const QuantizeFp8Args& a, cudaStream_t stream) {
  const int64_t tiles = a.tiles_r * a.tiles_c;
  if (tiles == 0) return cudaSuccess;
  const int64_t n = a.rows * a.cols;
  if (n > 0) {
    // Enough CTAs to fill the GPU even for one big tile (Fp8Block::tensor, row-wise on few rows).
    const int64_t tile_elems = std::min(a.block_rows, a.rows) * std::min(a.block_cols, a.cols);
    const int64_t want = std::max<int64_t>(1, 1024 / tiles);
    const int64_t splits = std::clamp<int64_t>((tile_elems + 4 * kThreads - 1) / (4 * kThreads),
                                               1, std::min<int64_t>(want, 65535));
    const int64_t per_split = (tile_elems + splits - 1) / splits;
    if (tiles > 0x7fffffff) return cudaErrorInvalidConfiguration;
    tile_amax<<<dim3(static_cast<unsigned>(tiles), static_cast<unsigned>(splits)), kThreads, 0,
                stream>>>(a, per_split);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  tile_scales<<<static_cast<unsigned>((tiles + kThreads - 1) / kThreads), kThreads, 0, stream>>>(a);
  if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  if (n > 0) {
    const int64_t blocks = std::min<int64_t>((n + kThreads - 1) / kThreads, 65535 * 8);
    elements<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(a);
    if (cudaError_t e = cudaGetLastError(); e != cudaSuccess) return e;
  }
  return cudaSuccess;
}

}  // namespace gpula::detail::cuda
