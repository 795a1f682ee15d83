#include <algorithm>

#include "backend/cuda/kernels/amax.h"
#include "backend/cuda/kernels/half_load.cuh"

namespace gpula::detail::cuda {
namespace {

constexpr int kThreads = 256;

// Non-negative floats (and NaN, above +inf) order as their bits do: an unsigned max is a float max
// that keeps NaN.
__global__ void amax_kernel(AmaxArgs a) {
  const int64_t per_matrix = a.rows * a.cols, n = a.batch * per_matrix;
  unsigned int m = 0;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<int64_t>(gridDim.x) * blockDim.x) {
    const int64_t b = i / per_matrix, e = i % per_matrix;
    const int64_t off = b * a.batch_stride + (e / a.cols) * a.row_stride + e % a.cols;
    m = max(m, __float_as_uint(fabsf(load_as_float(a.x, a.kind, off))));
  }
  __shared__ unsigned int part[kThreads];
  part[threadIdx.x] = m;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) part[threadIdx.x] = max(part[threadIdx.x], part[threadIdx.x + s]);
    __syncthreads();
  }
  if (threadIdx.x == 0 && part[0] != 0)
    atomicMax(reinterpret_cast<unsigned int*>(a.out), part[0]);
}

}  // namespace

cudaError_t launch_amax(const AmaxArgs& args, cudaStream_t stream) {
  const int64_t n = args.batch * args.rows * args.cols;
  if (n == 0) return cudaSuccess;
  const int64_t blocks = std::min<int64_t>((n + kThreads - 1) / kThreads, 1024);
  amax_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(args);
  return cudaGetLastError();
}

}  // namespace gpula::detail::cuda
