#include <cuComplex.h>

#include <cmath>

#include "backend/cuda/kernels/eig.h"
#include "backend/cuda/kernels/grid.cuh"

namespace gpula::detail::cuda {
namespace {

constexpr int kThreads = 256;
unsigned blocks_for(int64_t work) { return grid_blocks(work, kThreads); }

// R: the real type; `parts` reals per element (1 real, 2 complex).
template <class R, int parts>
__global__ void screen_kernel(R* a, int64_t n, int64_t count, int32_t* bad) {
  const int64_t len = n * n * parts;
  for (int64_t b = blockIdx.x; b < count; b += gridDim.x) {  // uniform over the block
    R* m = a + b * len;
    int local = 0;
    for (int64_t e = threadIdx.x; e < len; e += blockDim.x) local |= !isfinite(m[e]);
    const int any = __syncthreads_or(local);
    if (any)
      for (int64_t e = threadIdx.x; e < len; e += blockDim.x) m[e] = R(0);
    if (threadIdx.x == 0) bad[b] = any ? 1 : 0;
    __syncthreads();
  }
}

template <class R>
__global__ void unpack_w_kernel(const R* w2, int64_t n, int64_t total, R* w) {
  GPULA_GRID_LOOP(k, total) {
    const int64_t b = k / n, j = k % n;
    w[2 * k] = w2[b * 2 * n + j];
    w[2 * k + 1] = w2[b * 2 * n + n + j];
  }
}

template <class R>
__global__ void unpack_v_kernel(const R* w2, const R* vr, int64_t n, int64_t total, R* v) {
  const int64_t nn = n * n;
  GPULA_GRID_LOOP(k, total) {
    const int64_t b = k / nn, r = k % nn, j = r / n;
    const R wi = w2[b * 2 * n + n + j];
    const R* c = vr + k;  // element (i, j) of item b
    R re, im;
    if (wi > R(0) && j + 1 < n) {
      re = c[0], im = c[n];
    } else if (wi < R(0) && j > 0) {
      re = c[-n], im = -c[0];
    } else {
      re = c[0], im = R(0);
    }
    v[2 * k] = re;
    v[2 * k + 1] = im;
  }
}

template <class R>
__global__ void poison_kernel(const int32_t* bad, int64_t per, int64_t total, R* x) {
  GPULA_GRID_LOOP(k, total) {
    if (bad[k / per] != 0) {
      const R nan = R(NAN);
      x[2 * k] = nan;
      x[2 * k + 1] = nan;
    }
  }
}

template <class R>
__global__ void widen_kernel(const R* in, int64_t total, R* out) {
  GPULA_GRID_LOOP(k, total) {
    out[2 * k] = in[k];
    out[2 * k + 1] = R(0);
  }
}

template <class R>
cudaError_t unpack_real(const void* w2, const void* vr, int64_t n, int64_t count, void* w, void* v,
                        cudaStream_t s) {
  const R* wp = static_cast<const R*>(w2);
  const int64_t tw = n * count;
  unpack_w_kernel<R><<<blocks_for(tw), kThreads, 0, s>>>(wp, n, tw, static_cast<R*>(w));
  if (vr && v) {
    const int64_t tv = n * n * count;
    unpack_v_kernel<R><<<blocks_for(tv), kThreads, 0, s>>>(wp, static_cast<const R*>(vr), n, tv,
                                                           static_cast<R*>(v));
  }
  return cudaGetLastError();
}

template <class R>
cudaError_t poison(const int32_t* bad, int64_t n, int64_t count, void* w, void* v, cudaStream_t s) {
  const int64_t tw = n * count;
  poison_kernel<R><<<blocks_for(tw), kThreads, 0, s>>>(bad, n, tw, static_cast<R*>(w));
  if (v) {
    const int64_t tv = n * n * count;
    poison_kernel<R><<<blocks_for(tv), kThreads, 0, s>>>(bad, n * n, tv, static_cast<R*>(v));
  }
  return cudaGetLastError();
}

}  // namespace

cudaError_t launch_eig_screen(void* a, ElemType t, int64_t n, int64_t count, int32_t* bad,
                              cudaStream_t stream) {
  if (n * count == 0) return cudaSuccess;
  const unsigned g = static_cast<unsigned>(count < kMaxGridBlocks ? count : kMaxGridBlocks);
  switch (t) {
    case ElemType::f32:
      screen_kernel<float, 1><<<g, kThreads, 0, stream>>>(static_cast<float*>(a), n, count, bad);
      break;
    case ElemType::f64:
      screen_kernel<double, 1><<<g, kThreads, 0, stream>>>(static_cast<double*>(a), n, count, bad);
      break;
    case ElemType::c64:
      screen_kernel<float, 2><<<g, kThreads, 0, stream>>>(static_cast<float*>(a), n, count, bad);
      break;
    case ElemType::c128:
      screen_kernel<double, 2><<<g, kThreads, 0, stream>>>(static_cast<double*>(a), n, count, bad);
      break;
  }
  return cudaGetLastError();
}

cudaError_t launch_eig_unpack_real(const void* w2, const void* vr, bool f64, int64_t n,
                                   int64_t count, void* w, void* v, cudaStream_t stream) {
  if (n * count == 0) return cudaSuccess;
  return f64 ? unpack_real<double>(w2, vr, n, count, w, v, stream)
             : unpack_real<float>(w2, vr, n, count, w, v, stream);
}

cudaError_t launch_eig_widen(const void* in, bool f64, int64_t total, void* out,
                             cudaStream_t stream) {
  if (total == 0) return cudaSuccess;
  if (f64)
    widen_kernel<double><<<blocks_for(total), kThreads, 0, stream>>>(
        static_cast<const double*>(in), total, static_cast<double*>(out));
  else
    widen_kernel<float><<<blocks_for(total), kThreads, 0, stream>>>(
        static_cast<const float*>(in), total, static_cast<float*>(out));
  return cudaGetLastError();
}

cudaError_t launch_eig_poison(const int32_t* bad, bool f64, int64_t n, int64_t count, void* w,
                              void* v, cudaStream_t stream) {
  if (n * count == 0) return cudaSuccess;
  return f64 ? poison<double>(bad, n, count, w, v, stream)
             : poison<float>(bad, n, count, w, v, stream);
}

}  // namespace gpula::detail::cuda
