#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

#include "backend/cuda/kernels/grid.cuh"
#include "backend/cuda/kernels/half_load.cuh"
#include "backend/cuda/kernels/matrix_functions.h"
#include "backend/cuda/kernels/scalar.cuh"

namespace gpula::detail::cuda {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kPerBlock = kThreads * 16;  // elements of one item that one block sums
constexpr int64_t kMaxItemBlocks = 65535;     // gridDim.y; further items loop

__device__ inline double load(const void* x, RealKind k, int64_t i) {
  if (k == RealKind::f64) return static_cast<const double*>(x)[i];
  return load_as_float(x, static_cast<int>(k), i);
}

__device__ inline void store(void* y, RealKind k, int64_t i, double v) {
  switch (k) {
    case RealKind::f16:
      static_cast<__half*>(y)[i] = __double2half(v);
      break;
    case RealKind::bf16:
      static_cast<__nv_bfloat16*>(y)[i] = __double2bfloat16(v);
      break;
    case RealKind::f32:
      static_cast<float*>(y)[i] = static_cast<float>(v);
      break;
    case RealKind::f64:
      static_cast<double*>(y)[i] = v;
      break;
  }
}

// Block (x, y) sums the squares of elements [x * kPerBlock, (x + 1) * kPerBlock) of items y,
// y + gridDim.y, ... and folds each item's part into sums[item].
__global__ void sum_squares_kernel(const void* x, RealKind kind, int64_t count, int64_t size,
                                   double* sums) {
  __shared__ double part[kThreads];
  const int64_t begin = blockIdx.x * kPerBlock, end = min(begin + kPerBlock, size);
  for (int64_t b = blockIdx.y; b < count; b += gridDim.y) {  // uniform over the block
    double s = 0.0;
    for (int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
      const double v = load(x, kind, b * size + i);
      s += v * v;
    }
    part[threadIdx.x] = s;
    __syncthreads();
    for (int h = blockDim.x / 2; h > 0; h /= 2) {
      if (threadIdx.x < h) part[threadIdx.x] += part[threadIdx.x + h];
      __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(&sums[b], part[0]);
    __syncthreads();  // part is reused for the next item
  }
}

__global__ void scale_convert_kernel(const void* x, RealKind xk, void* y, RealKind yk, int64_t size,
                                     int64_t total, const double* sums, double eps) {
  GPULA_GRID_LOOP(i, total) {
    double v = load(x, xk, i);
    if (sums) v /= sqrt(sums[i / size]) + eps;
    store(y, yk, i, v);
  }
}

template <class T>
__global__ void scale_columns_kernel(const T* v, const real_t<T>* f, int64_t rows, int64_t cols,
                                     int64_t total, bool conj, T* out) {
  GPULA_GRID_LOOP(e, total) {
    const T x = conj ? conj_of(v[e]) : v[e];
    out[e] = x * f[e / (rows * cols) * cols + e % cols];
  }
}

template <class T>
__global__ void hermitian_part_kernel(T* p, int64_t n, int64_t total) {
  GPULA_GRID_LOOP(e, total) {
    const int64_t r = e % (n * n), i = r / n, j = r % n;
    if (j < i) continue;
    T* m = p + (e - r);
    const T h = (m[i * n + j] + conj_of(m[j * n + i])) * real_t<T>(0.5);
    m[i * n + j] = h;
    if (j != i) m[j * n + i] = conj_of(h);
  }
}

}  // namespace

cudaError_t launch_sum_squares(const void* x, RealKind kind, int64_t count, int64_t size,
                               double* sums, cudaStream_t stream) {
  if (count * size == 0) return cudaSuccess;
  const dim3 grid(static_cast<unsigned>((size + kPerBlock - 1) / kPerBlock),
                  static_cast<unsigned>(std::min(count, kMaxItemBlocks)));
  sum_squares_kernel<<<grid, kThreads, 0, stream>>>(x, kind, count, size, sums);
  return cudaGetLastError();
}

cudaError_t launch_scale_convert(const void* x, RealKind x_kind, void* y, RealKind y_kind,
                                 int64_t count, int64_t size, const double* sums, double eps,
                                 cudaStream_t stream) {
  const int64_t total = count * size;
  if (total == 0) return cudaSuccess;
  scale_convert_kernel<<<grid_blocks(total, kThreads), kThreads, 0, stream>>>(
      x, x_kind, y, y_kind, size, total, sums, eps);
  return cudaGetLastError();
}

cudaError_t launch_scale_columns(const void* v, ElemType t, const void* f, int64_t rows,
                                 int64_t cols, int64_t count, bool conj, void* out,
                                 cudaStream_t stream) {
  const int64_t total = count * rows * cols;
  if (total == 0) return cudaSuccess;
  return with_type(t, [&](auto zero) {
    using T = decltype(zero);
    scale_columns_kernel<T><<<grid_blocks(total, kThreads), kThreads, 0, stream>>>(
        static_cast<const T*>(v), static_cast<const real_t<T>*>(f), rows, cols, total, conj,
        static_cast<T*>(out));
    return cudaGetLastError();
  });
}

cudaError_t launch_hermitian_part(void* p, ElemType t, int64_t n, int64_t count,
                                  cudaStream_t stream) {
  const int64_t total = count * n * n;
  if (total == 0) return cudaSuccess;
  return with_type(t, [&](auto zero) {
    using T = decltype(zero);
    hermitian_part_kernel<T>
        <<<grid_blocks(total, kThreads), kThreads, 0, stream>>>(static_cast<T*>(p), n, total);
    return cudaGetLastError();
  });
}

}  // namespace gpula::detail::cuda
