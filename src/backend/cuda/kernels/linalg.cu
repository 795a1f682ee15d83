#include <cuComplex.h>

#include <algorithm>
#include <cmath>

#include "backend/cuda/kernels/linalg.h"
#include "backend/cuda/kernels/grid.cuh"

namespace gpula::detail::cuda {
namespace {

constexpr int kThreads = 256;

struct alignas(16) Bytes16 {
  uint64_t lo, hi;
};

unsigned blocks_for(int64_t work) { return grid_blocks(work, kThreads); }

__global__ void fill_pointers_kernel(void** out, char* base, int64_t stride, int64_t count) {
  GPULA_GRID_LOOP(i, count) out[i] = base + i * stride;
}

template <class T>
__global__ void zero_triangle_kernel(T* a, int64_t n, int64_t total, bool upper) {
  const int64_t nn = n * n;
  GPULA_GRID_LOOP(e, total) {
    const int64_t r = e % nn, i = r % n, j = r / n;
    if (upper ? i < j : i > j) a[e] = T{};
  }
}

constexpr int kTile = 32, kTileRows = 8;

template <class T>
__global__ void transpose_triangle_kernel(const T* __restrict__ src, T* __restrict__ dst, int64_t n,
                                          int64_t tiles, int64_t count, bool src_upper,
                                          bool zero_rest) {
  __shared__ T tile[kTile][kTile + 1];
  const int64_t r0 = blockIdx.x / tiles * kTile, c0 = blockIdx.x % tiles * kTile;
  const bool touches = src_upper ? c0 + kTile - 1 >= r0 : c0 <= r0 + kTile - 1;
  if (!touches && !zero_rest) return;
  auto in = [&](int64_t r, int64_t c) { return src_upper ? c >= r : c <= r; };
  for (int64_t b = blockIdx.y; b < count; b += gridDim.y) {
    const T* s = src + b * n * n;
    T* d = dst + b * n * n;
    for (int j = threadIdx.y; j < kTile; j += kTileRows) {  // read along c: unit stride in src
      const int64_t r = r0 + j, c = c0 + threadIdx.x;
      if (r < n && c < n) tile[j][threadIdx.x] = in(r, c) ? s[r * n + c] : T{};
    }
    __syncthreads();
    for (int j = threadIdx.y; j < kTile; j += kTileRows) {  // write along r: unit stride in dst
      const int64_t c = c0 + j, r = r0 + threadIdx.x;
      if (r < n && c < n && (zero_rest || in(r, c))) d[c * n + r] = tile[threadIdx.x][j];
    }
    __syncthreads();
  }
}

template <class T>
__global__ void mirror_triangle_kernel(T* a, int64_t n, int64_t total, bool from_upper) {
  const int64_t nn = n * n;
  GPULA_GRID_LOOP(e, total) {
    const int64_t b = e / nn, r = e % nn, i = r % n, j = r / n;
    if (from_upper ? i > j : i < j) a[e] = a[b * nn + j + i * n];
  }
}

template <class T>
__device__ T one_of();
template <>
__device__ float one_of<float>() {
  return 1.0f;
}
template <>
__device__ double one_of<double>() {
  return 1.0;
}
template <>
__device__ cuFloatComplex one_of<cuFloatComplex>() {
  return make_cuFloatComplex(1.0f, 0.0f);
}
template <>
__device__ cuDoubleComplex one_of<cuDoubleComplex>() {
  return make_cuDoubleComplex(1.0, 0.0);
}

template <class T>
__global__ void identity_kernel(T* a, int64_t n, int64_t total) {
  const int64_t nn = n * n;
  GPULA_GRID_LOOP(e, total) {
    const int64_t r = e % nn;
    a[e] = (r % n == r / n) ? one_of<T>() : T{};
  }
}

__global__ void convert_pivots_kernel(const void* in, bool in64, void* out, bool out64,
                                      int64_t count, int64_t n, int32_t delta, int32_t* bad) {
  // The 1-based side (the input when delta < 0, else the output) must be in [1, n]: the output
  // range is [lo, lo + n). A 0-based pivot 0 (row 0 kept, and every pivot of n = 1) is valid.
  const int64_t lo = delta < 0 ? 1 + static_cast<int64_t>(delta) : 1;
  GPULA_GRID_LOOP(i, count) {
    int64_t v = (in64 ? static_cast<const int64_t*>(in)[i]
                      : static_cast<int64_t>(static_cast<const int32_t*>(in)[i])) +
                delta;
    if (v < lo || v >= lo + n) {
      v = i % n + lo;
      if (bad) atomicAdd(bad, 1);
    }
    if (out64)
      static_cast<int64_t*>(out)[i] = v;
    else
      static_cast<int32_t*>(out)[i] = static_cast<int32_t>(v);
  }
}

// ---- determinants: one block per matrix --------------------------------------------------------

// Running product as mantissa * 2^exp (complex mantissa in (re, im)), plus log|.| sum, the
// number of row interchanges and whether a zero pivot was seen.
struct Acc {
  double re, im;
  long long exp;
  double logsum;
  int swaps;
  int zero;
};

__device__ Acc normalize(Acc a) {
  const double m = fmax(fabs(a.re), fabs(a.im));
  if (m != 0.0 && isfinite(m)) {
    int k = 0;
    frexp(m, &k);
    a.re = ldexp(a.re, -k);
    a.im = ldexp(a.im, -k);
    a.exp += k;
  }
  return a;
}

__device__ Acc combine(Acc a, const Acc& b) {
  Acc r;
  r.re = a.re * b.re - a.im * b.im;
  r.im = a.re * b.im + a.im * b.re;
  r.exp = a.exp + b.exp;
  r.logsum = a.logsum + b.logsum;
  r.swaps = a.swaps + b.swaps;
  r.zero = a.zero | b.zero;
  return normalize(r);
}

template <class T>
__device__ void load(const T* p, double& re, double& im);
template <>
__device__ void load<float>(const float* p, double& re, double& im) {
  re = *p, im = 0.0;
}
template <>
__device__ void load<double>(const double* p, double& re, double& im) {
  re = *p, im = 0.0;
}
template <>
__device__ void load<cuFloatComplex>(const cuFloatComplex* p, double& re, double& im) {
  re = p->x, im = p->y;
}
template <>
__device__ void load<cuDoubleComplex>(const cuDoubleComplex* p, double& re, double& im) {
  re = p->x, im = p->y;
}

template <class T, class R>
__device__ void store(T* p, double re, double im);
template <>
__device__ void store<float, float>(float* p, double re, double) {
  *p = static_cast<float>(re);
}
template <>
__device__ void store<double, double>(double* p, double re, double) {
  *p = re;
}
template <>
__device__ void store<cuFloatComplex, float>(cuFloatComplex* p, double re, double im) {
  *p = make_cuFloatComplex(static_cast<float>(re), static_cast<float>(im));
}
template <>
__device__ void store<cuDoubleComplex, double>(cuDoubleComplex* p, double re, double im) {
  *p = make_cuDoubleComplex(re, im);
}

template <class T, class R>
__global__ void lu_det_kernel(const T* lu, int64_t n, const int32_t* ipiv, const int32_t* info,
                              T* det_or_sign, R* logabs) {
  __shared__ Acc part[kThreads];
  const int64_t b = blockIdx.x;
  const T* m = lu + b * n * n;
  Acc acc{1.0, 0.0, 0, 0.0, 0, 0};
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    Acc u{0.0, 0.0, 0, 0.0, ipiv[b * n + i] != i + 1 ? 1 : 0, 0};
    load<T>(m + i + i * n, u.re, u.im);
    const double mag = hypot(u.re, u.im);
    u.zero = mag == 0.0;
    u.logsum = log(mag);
    if (logabs && mag != 0.0) u.re /= mag, u.im /= mag;  // the phase only
    acc = combine(acc, normalize(u));
  }
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) part[threadIdx.x] = combine(part[threadIdx.x], part[threadIdx.x + s]);
    __syncthreads();
  }
  if (threadIdx.x != 0) return;
  Acc r = part[0];
  const bool singular = r.zero || info[b] != 0;
  if (r.swaps & 1) r.re = -r.re, r.im = -r.im;
  if (logabs) {
    const double mag = hypot(r.re, r.im);
    if (singular) {
      store<T, R>(det_or_sign + b, 0.0, 0.0);
      logabs[b] = -INFINITY;
    } else {
      store<T, R>(det_or_sign + b, r.re / mag, r.im / mag);
      logabs[b] = static_cast<R>(r.logsum);
    }
    return;
  }
  if (singular) {
    store<T, R>(det_or_sign + b, 0.0, 0.0);
    return;
  }
  const int e = static_cast<int>(r.exp < -4000 ? -4000 : (r.exp > 4000 ? 4000 : r.exp));
  store<T, R>(det_or_sign + b, ldexp(r.re, e), ldexp(r.im, e));
}

}  // namespace

cudaError_t launch_fill_pointers(void** out, void* base, int64_t stride_bytes, int64_t count,
                                 cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  fill_pointers_kernel<<<blocks_for(count), kThreads, 0, stream>>>(out, static_cast<char*>(base),
                                                                   stride_bytes, count);
  return cudaGetLastError();
}

cudaError_t launch_zero_triangle(void* a, int elem_size, int64_t n, int64_t count, bool upper,
                                 cudaStream_t stream) {
  const int64_t total = n * n * count;
  if (total == 0) return cudaSuccess;
  const unsigned g = blocks_for(total);
  switch (elem_size) {
    case 4:
      zero_triangle_kernel<<<g, kThreads, 0, stream>>>(static_cast<float*>(a), n, total, upper);
      break;
    case 8:
      zero_triangle_kernel<<<g, kThreads, 0, stream>>>(static_cast<double*>(a), n, total, upper);
      break;
    case 16:
      zero_triangle_kernel<<<g, kThreads, 0, stream>>>(static_cast<Bytes16*>(a), n, total, upper);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

template <class T>
void transpose_triangle(const void* src, void* dst, int64_t n, int64_t count, bool src_upper,
                        bool zero_rest, cudaStream_t stream) {
  const int64_t tiles = (n + kTile - 1) / kTile;
  const dim3 grid(static_cast<unsigned>(tiles * tiles),
                  static_cast<unsigned>(std::min<int64_t>(count, 65535)));
  transpose_triangle_kernel<<<grid, dim3(kTile, kTileRows), 0, stream>>>(
      static_cast<const T*>(src), static_cast<T*>(dst), n, tiles, count, src_upper, zero_rest);
}

cudaError_t launch_transpose_triangle(const void* src, void* dst, int elem_size, int64_t n,
                                      int64_t count, bool src_upper, bool zero_rest,
                                      cudaStream_t stream) {
  if (n == 0 || count == 0) return cudaSuccess;
  const int64_t tiles = (n + kTile - 1) / kTile;
  if (tiles * tiles > 0x7fffffff) return cudaErrorInvalidValue;
  switch (elem_size) {
    case 4:
      transpose_triangle<float>(src, dst, n, count, src_upper, zero_rest, stream);
      break;
    case 8:
      transpose_triangle<double>(src, dst, n, count, src_upper, zero_rest, stream);
      break;
    case 16:
      transpose_triangle<Bytes16>(src, dst, n, count, src_upper, zero_rest, stream);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launch_mirror_triangle(void* a, int elem_size, int64_t n, int64_t count,
                                   bool from_upper, cudaStream_t stream) {
  const int64_t total = n * n * count;
  if (total == 0) return cudaSuccess;
  const unsigned g = blocks_for(total);
  switch (elem_size) {
    case 4:
      mirror_triangle_kernel<<<g, kThreads, 0, stream>>>(static_cast<float*>(a), n, total,
                                                         from_upper);
      break;
    case 8:
      mirror_triangle_kernel<<<g, kThreads, 0, stream>>>(static_cast<double*>(a), n, total,
                                                         from_upper);
      break;
    case 16:
      mirror_triangle_kernel<<<g, kThreads, 0, stream>>>(static_cast<Bytes16*>(a), n, total,
                                                         from_upper);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return cudaGetLastError();
}

cudaError_t launch_set_identity(void* a, ElemType t, int64_t n, int64_t count,
                                cudaStream_t stream) {
  const int64_t total = n * n * count;
  if (total == 0) return cudaSuccess;
  const unsigned g = blocks_for(total);
  switch (t) {
    case ElemType::f32:
      identity_kernel<<<g, kThreads, 0, stream>>>(static_cast<float*>(a), n, total);
      break;
    case ElemType::f64:
      identity_kernel<<<g, kThreads, 0, stream>>>(static_cast<double*>(a), n, total);
      break;
    case ElemType::c64:
      identity_kernel<<<g, kThreads, 0, stream>>>(static_cast<cuFloatComplex*>(a), n, total);
      break;
    case ElemType::c128:
      identity_kernel<<<g, kThreads, 0, stream>>>(static_cast<cuDoubleComplex*>(a), n, total);
      break;
  }
  return cudaGetLastError();
}

cudaError_t launch_convert_pivots(const void* in, bool in64, void* out, bool out64, int64_t count,
                                  int64_t n, int32_t delta, int32_t* bad, cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  convert_pivots_kernel<<<blocks_for(count), kThreads, 0, stream>>>(in, in64, out, out64, count, n,
                                                                    delta, bad);
  return cudaGetLastError();
}

cudaError_t launch_lu_det(const void* lu, ElemType t, int64_t n, int64_t count, const int32_t* ipiv,
                          const int32_t* info, void* det_or_sign, void* logabs,
                          cudaStream_t stream) {
  if (count == 0) return cudaSuccess;
  if (count > 0x7fffffff) return cudaErrorInvalidValue;
  // Small matrices: fewer threads per block.
  const int threads = n <= 32 ? 32 : (n <= 128 ? 128 : kThreads);
  const dim3 g(static_cast<unsigned>(count));
  switch (t) {
    case ElemType::f32:
      lu_det_kernel<float, float><<<g, threads, 0, stream>>>(static_cast<const float*>(lu), n, ipiv,
                                                             info, static_cast<float*>(det_or_sign),
                                                             static_cast<float*>(logabs));
      break;
    case ElemType::f64:
      lu_det_kernel<double, double><<<g, threads, 0, stream>>>(
          static_cast<const double*>(lu), n, ipiv, info, static_cast<double*>(det_or_sign),
          static_cast<double*>(logabs));
      break;
    case ElemType::c64:
      lu_det_kernel<cuFloatComplex, float><<<g, threads, 0, stream>>>(
          static_cast<const cuFloatComplex*>(lu), n, ipiv, info,
          static_cast<cuFloatComplex*>(det_or_sign), static_cast<float*>(logabs));
      break;
    case ElemType::c128:
      lu_det_kernel<cuDoubleComplex, double><<<g, threads, 0, stream>>>(
          static_cast<const cuDoubleComplex*>(lu), n, ipiv, info,
          static_cast<cuDoubleComplex*>(det_or_sign), static_cast<double*>(logabs));
      break;
  }
  return cudaGetLastError();
}

}  // namespace gpula::detail::cuda
