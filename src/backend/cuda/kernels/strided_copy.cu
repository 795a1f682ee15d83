#include "backend/cuda/kernels/strided_copy.h"
#include <algorithm>
#include <cstdint>

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

// Transposing copies (the dimension of unit stride differs between src and dst, as in a
// row-major <-> column-major copy): 32 x 32 tiles through shared memory, so that both the
// reads and the writes are coalesced. Dimension `a` has unit dst stride, `b` unit src stride;
// the other dimensions are enumerated by blockIdx.y (offsets decoded once per block).
constexpr int kTile = 32, kTileRows = 8;

template <class T>
__global__ void transpose_copy_kernel(const T* __restrict__ src, T* __restrict__ dst, CopyParams p,
                                      int a, int b, int64_t tiles_a, int64_t outer) {
  __shared__ T tile[kTile][kTile + 1];
  const int64_t na = p.shape[a], nb = p.shape[b];
  const int64_t ta = blockIdx.x % tiles_a, tb = blockIdx.x / tiles_a;
  const int64_t a0 = ta * kTile, b0 = tb * kTile;
  for (int64_t o = blockIdx.y; o < outer; o += gridDim.y) {
    int64_t rem = o, so = 0, d_off = 0;
    for (int d = p.ndim - 1; d >= 0; --d) {
      if (d == a || d == b) continue;
      const int64_t idx = rem % p.shape[d];
      rem /= p.shape[d];
      so += idx * p.src_strides[d];
      d_off += idx * p.dst_strides[d];
    }
    // Read: consecutive threads along b (unit src stride).
    for (int j = threadIdx.y; j < kTile; j += kTileRows) {
      const int64_t ib = b0 + threadIdx.x, ia = a0 + j;
      if (ib < nb && ia < na)
        tile[j][threadIdx.x] = src[so + ib * p.src_strides[b] + ia * p.src_strides[a]];
    }
    __syncthreads();
    // Write: consecutive threads along a (unit dst stride).
    for (int j = threadIdx.y; j < kTile; j += kTileRows) {
      const int64_t ia = a0 + threadIdx.x, ib = b0 + j;
      if (ia < na && ib < nb)
        dst[d_off + ia * p.dst_strides[a] + ib * p.dst_strides[b]] =
            tile[threadIdx.x][j];
    }
    __syncthreads();
  }
}

// The (a, b) pair of a transposing copy worth tiling, or false.
bool transposing(const CopyParams& p, int* a, int* b) {
  *a = *b = -1;
  for (int d = 0; d < p.ndim; ++d) {
    if (p.dst_strides[d] == 1 && *a < 0) *a = d;
    if (p.src_strides[d] == 1 && *b < 0) *b = d;
  }
  return *a >= 0 && *b >= 0 && *a != *b && p.shape[*a] >= 8 && p.shape[*b] >= 8;
}

template <class T>
cudaError_t launch(const void* src, void* dst, const CopyParams& p, cudaStream_t stream) {
  int a = 0, b = 0;
  if (src != nullptr && transposing(p, &a, &b)) {
    const int64_t tiles_a = (p.shape[a] + kTile - 1) / kTile;
    const int64_t tiles_b = (p.shape[b] + kTile - 1) / kTile;
    const int64_t outer = p.numel / (p.shape[a] * p.shape[b]);
    if (tiles_a * tiles_b <= INT32_MAX) {
      const dim3 grid(static_cast<unsigned>(tiles_a * tiles_b),
                      static_cast<unsigned>(std::min<int64_t>(outer, 65535)));
      transpose_copy_kernel<T><<<grid, dim3(kTile, kTileRows), 0, stream>>>(
          static_cast<const T*>(src), static_cast<T*>(dst), p, a, b, tiles_a, outer);
      return cudaGetLastError();
    }
  }
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
