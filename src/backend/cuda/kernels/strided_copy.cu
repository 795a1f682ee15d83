#include "backend/cuda/kernels/strided_copy.h"

namespace gpula::detail::cuda {
namespace {

struct alignas(16) Bytes16 {
  uint64_t lo, hi;
};

template <class T>
__global__ void strided_copy_kernel(const T* __restrict__ src, T* __restrict__ dst, CopyParams p) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < p.numel;
       i += stride) {
    int64_t rem = i, so = 0, d_off = 0;
    for (int d = p.ndim - 1; d >= 0; --d) {
      const int64_t idx = rem % p.shape[d];
      rem /= p.shape[d];
      so += idx * p.src_strides[d];
      d_off += idx * p.dst_strides[d];
    }
    dst[d_off] = src ? src[so] : T{};
  }
}

template <class T>
cudaError_t launch(const void* src, void* dst, const CopyParams& p, cudaStream_t stream) {
  const int threads = 256;
  const int64_t blocks = std::min<int64_t>((p.numel + threads - 1) / threads, 65535 * 8);
  strided_copy_kernel<T><<<static_cast<unsigned>(blocks), threads, 0, stream>>>(
      static_cast<const T*>(src), static_cast<T*>(dst), p);
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_strided_copy(const void* src, void* dst, int elem_size, const CopyParams& p,
                                cudaStream_t stream) {
  if (p.numel == 0) return cudaSuccess;
  switch (elem_size) {
    case 1: return launch<uint8_t>(src, dst, p, stream);
    case 2: return launch<uint16_t>(src, dst, p, stream);
    case 4: return launch<uint32_t>(src, dst, p, stream);
    case 8: return launch<uint64_t>(src, dst, p, stream);
    case 16: return launch<Bytes16>(src, dst, p, stream);
    default: return cudaErrorInvalidValue;
  }
}

}  // namespace gpula::detail::cuda
