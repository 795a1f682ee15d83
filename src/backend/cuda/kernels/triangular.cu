#include <cuComplex.h>

#include <climits>

#include "backend/cuda/kernels/triangular.h"

namespace gpula::detail::cuda {
namespace {

constexpr int kThreads = 256;

__device__ bool is_zero(float v) { return v == 0.0f; }
__device__ bool is_zero(double v) { return v == 0.0; }
__device__ bool is_zero(cuComplex v) { return v.x == 0.0f && v.y == 0.0f; }
__device__ bool is_zero(cuDoubleComplex v) { return v.x == 0.0 && v.y == 0.0; }

// One block per matrix (grid-stride over the batch); its threads scan the diagonal and keep the
// smallest index of a zero.
template <class T>
__global__ void first_zero_diagonal_kernel(const T* a, int64_t n, int64_t count, int32_t* info) {
  __shared__ int first;
  for (int64_t b = blockIdx.x; b < count; b += gridDim.x) {
    if (threadIdx.x == 0) first = INT_MAX;
    __syncthreads();
    const T* m = a + b * n * n;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      if (is_zero(m[i * (n + 1)])) {
        atomicMin(&first, static_cast<int>(i));
        break;  // later indices of this thread are larger
      }
    }
    __syncthreads();
    if (threadIdx.x == 0) info[b] = first == INT_MAX ? 0 : first + 1;
    __syncthreads();
  }
}

template <class T>
void launch(const void* a, int64_t n, int64_t count, int32_t* info, cudaStream_t stream) {
  const unsigned grid = static_cast<unsigned>(count < 65535 * 16 ? count : 65535 * 16);
  const int threads = n < kThreads ? static_cast<int>((n + 31) / 32 * 32) : kThreads;
  first_zero_diagonal_kernel<<<grid, threads, 0, stream>>>(static_cast<const T*>(a), n, count,
                                                           info);
}

}  // namespace

cudaError_t launch_first_zero_diagonal(const void* a, ElemType t, int64_t n, int64_t count,
                                       int32_t* info, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  if (n == 0) return cudaMemsetAsync(info, 0, count * sizeof(int32_t), stream);
  switch (t) {
    case ElemType::f32:
      launch<float>(a, n, count, info, stream);
      break;
    case ElemType::f64:
      launch<double>(a, n, count, info, stream);
      break;
    case ElemType::c64:
      launch<cuComplex>(a, n, count, info, stream);
      break;
    default:
      launch<cuDoubleComplex>(a, n, count, info, stream);
      break;
  }
  return cudaGetLastError();
}

}  // namespace gpula::detail::cuda
