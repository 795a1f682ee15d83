#include <cmath>
#include <type_traits>

#include "backend/cuda/kernels/rbt.h"
#include "backend/cuda/kernels/scalar.cuh"

namespace gpula::detail::cuda {
namespace {

constexpr int kThreads = 256;
constexpr double kHalf = 0.5;  // (1/sqrt 2)^2: the two butterfly levels' scale

// The weights of one quad: rows (or columns) a, a + q, a + h, a + h + q take part together.
template <class R>
struct Quad {
  R r0a, r0aq, s0a, s0aq;  // B0's R and S at a and a + q
  R r1, s1, r2, s2;        // B1's and B2's R and S at a
  __device__ Quad(const R* w, int64_t N, int64_t a) {
    const int64_t h = N / 2, q = N / 4;
    r0a = w[a];
    r0aq = w[a + q];
    s0a = w[h + a];
    s0aq = w[h + a + q];
    r1 = w[2 * h + a];
    s1 = w[2 * h + q + a];
    r2 = w[2 * h + 2 * q + a];
    s2 = w[2 * h + 3 * q + a];
  }
};

// m <- U^T m on the quad (m[0..3] at a, a + q, a + h, a + h + q): B1^T/B2^T, then B0^T. The same
// map is M V along a row of M.
template <class T, class R>
__device__ inline void butterfly_t(T m[4], const Quad<R>& w) {
  const R f = static_cast<R>(kHalf);
  const T p0 = (m[0] + m[1]) * w.r1, p1 = (m[0] - m[1]) * w.s1;
  const T p2 = (m[2] + m[3]) * w.r2, p3 = (m[2] - m[3]) * w.s2;
  m[0] = (p0 + p2) * (w.r0a * f);
  m[2] = (p0 - p2) * (w.s0a * f);
  m[1] = (p1 + p3) * (w.r0aq * f);
  m[3] = (p1 - p3) * (w.s0aq * f);
}

// y <- V y on the quad: B0, then B1/B2.
template <class T, class R>
__device__ inline void butterfly(T y[4], const Quad<R>& w) {
  const R f = static_cast<R>(kHalf);
  const T z0 = y[0] * w.r0a + y[2] * w.s0a, z2 = y[0] * w.r0a - y[2] * w.s0a;
  const T z1 = y[1] * w.r0aq + y[3] * w.s0aq, z3 = y[1] * w.r0aq - y[3] * w.s0aq;
  y[0] = (z0 * w.r1 + z1 * w.s1) * f;
  y[1] = (z0 * w.r1 - z1 * w.s1) * f;
  y[2] = (z2 * w.r2 + z3 * w.s2) * f;
  y[3] = (z2 * w.r2 - z3 * w.s2) * f;
}

__device__ inline int64_t quad_row(int64_t a, int i, int64_t N) {
  return a + (i & 1) * (N / 4) + (i >> 1) * (N / 2);
}

template <class T, class R>
__global__ void rbt_matrix_kernel(const T* a, int64_t n, T* w, int64_t N, const R* wu, const R* wv,
                                  const R* anorm) {
  const int64_t q = N / 4;
  const int64_t ra = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (ra >= q) return;
  R p = *anorm / static_cast<R>(n);  // the padded diagonal: a's mean column 1-norm
  if (!(p > R(0)) || !isfinite(p)) p = R(1);
  const Quad<R> wr(wu, N, ra);
  for (int64_t ca = blockIdx.y; ca < q; ca += gridDim.y) {
    T m[4][4];  // m[column][row]
    for (int j = 0; j < 4; ++j) {
      const int64_t c = quad_row(ca, j, N);
      for (int i = 0; i < 4; ++i) {
        const int64_t r = quad_row(ra, i, N);
        m[j][i] = (r < n && c < n) ? a[r + c * n] : from_real<T>(r == c ? p : R(0));
      }
      butterfly_t(m[j], wr);
    }
    const Quad<R> wc(wv, N, ca);
    for (int i = 0; i < 4; ++i) {
      T row[4] = {m[0][i], m[1][i], m[2][i], m[3][i]};
      butterfly_t(row, wc);
      for (int j = 0; j < 4; ++j) w[quad_row(ra, i, N) + quad_row(ca, j, N) * N] = row[j];
    }
  }
}

template <class T, class R>
__global__ void rbt_left_kernel(const T* b, int64_t n, int64_t k, T* out, int64_t N, const R* wu) {
  const int64_t q = N / 4;
  const int64_t ra = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (ra >= q) return;
  const Quad<R> w(wu, N, ra);
  for (int64_t j = blockIdx.y; j < k; j += gridDim.y) {
    T m[4];
    for (int i = 0; i < 4; ++i) {
      const int64_t r = quad_row(ra, i, N);
      m[i] = r < n ? b[r + j * n] : from_real<T>(R(0));
    }
    butterfly_t(m, w);
    for (int i = 0; i < 4; ++i) out[quad_row(ra, i, N) + j * N] = m[i];
  }
}

template <class T, class R>
__global__ void rbt_right_kernel(const T* y, int64_t N, int64_t k, T* x, int64_t n, const R* wv,
                                 bool accumulate) {
  const int64_t q = N / 4;
  const int64_t ra = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (ra >= q) return;
  const Quad<R> w(wv, N, ra);
  for (int64_t j = blockIdx.y; j < k; j += gridDim.y) {
    T m[4];
    for (int i = 0; i < 4; ++i) m[i] = y[quad_row(ra, i, N) + j * N];
    butterfly(m, w);
    for (int i = 0; i < 4; ++i) {
      const int64_t r = quad_row(ra, i, N);
      if (r < n) x[r + j * n] = accumulate ? x[r + j * n] + m[i] : m[i];
    }
  }
}

// Sum of |v[i]| over one column by one block; the result in thread 0.
template <class T>
__device__ double column_abs_sum(const T* v, int64_t rows) {
  __shared__ double part[kThreads];
  double s = 0;
  for (int64_t i = threadIdx.x; i < rows; i += blockDim.x)
    s += static_cast<double>(magnitude(v[i]));
  part[threadIdx.x] = s;
  __syncthreads();
  for (int w = kThreads / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  const double total = part[0];
  __syncthreads();  // part is reused by the caller's next column
  return total;
}

// atomicMax for non-negative reals (NaN included) through their bit patterns.
__device__ inline void max_nonnegative(float* p, float v) {
  atomicMax(reinterpret_cast<unsigned int*>(p), __float_as_uint(v));
}
__device__ inline void max_nonnegative(double* p, double v) {
  atomicMax(reinterpret_cast<unsigned long long*>(p),
            static_cast<unsigned long long>(__double_as_longlong(v)));
}

template <class T, class R>
__global__ void norm1_kernel(const T* a, int64_t rows, int64_t cols, R* out) {
  for (int64_t j = blockIdx.x; j < cols; j += gridDim.x) {
    const double s = column_abs_sum(a + j * rows, rows);
    if (threadIdx.x == 0) max_nonnegative(out, static_cast<R>(s));
  }
}

template <class T, class R>
__global__ void refine_check_kernel(const T* r, const T* x, int64_t n, int64_t k, const R* anorm,
                                    double tol, RefineCheck* out) {
  for (int64_t j = blockIdx.x; j < k; j += gridDim.x) {
    const double rn = column_abs_sum(r + j * n, n);
    const double xn = column_abs_sum(x + j * n, n);
    if (threadIdx.x == 0) {
      const double scale_ = static_cast<double>(*anorm) * xn;
      if (!(rn <= tol * scale_)) atomicAdd(&out->fails, 1);
      max_nonnegative(&out->worst, rn == 0 ? 0.0 : rn / scale_);
    }
  }
}

template <class T>
__global__ void pivot_check_kernel(const T* w, int64_t N, double rel, RefineCheck* out) {
  __shared__ double lo[kThreads], hi[kThreads];
  __shared__ int bad;
  if (threadIdx.x == 0) bad = 0;
  __syncthreads();
  double mn = INFINITY, mx = 0;
  for (int64_t k = threadIdx.x; k < N; k += blockDim.x) {
    const double v = static_cast<double>(magnitude(w[k + k * N]));
    if (!isfinite(v)) bad = 1;
    mn = fmin(mn, v);
    mx = fmax(mx, v);
  }
  lo[threadIdx.x] = mn;
  hi[threadIdx.x] = mx;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s /= 2) {
    if (threadIdx.x < s) {
      lo[threadIdx.x] = fmin(lo[threadIdx.x], lo[threadIdx.x + s]);
      hi[threadIdx.x] = fmax(hi[threadIdx.x], hi[threadIdx.x + s]);
    }
    __syncthreads();
  }
  if (threadIdx.x == 0 && (bad || !(lo[0] > rel * hi[0]))) out->small_pivots = 1;
}

unsigned quad_blocks(int64_t N) { return static_cast<unsigned>((N / 4 + kThreads - 1) / kThreads); }
unsigned grid_y(int64_t v) { return static_cast<unsigned>(v < 65535 ? (v < 1 ? 1 : v) : 65535); }
unsigned grid_x(int64_t v) {
  return static_cast<unsigned>(v < 65535 * 16 ? (v < 1 ? 1 : v) : 65535 * 16);
}

}  // namespace

cudaError_t launch_rbt_matrix(const void* a, ElemType t, int64_t n, void* w, int64_t N,
                              const void* wu, const void* wv, const void* anorm,
                              cudaStream_t stream) {
  if (N == 0) return cudaSuccess;
  const dim3 grid(quad_blocks(N), grid_y(N / 4));
  return with_type(t, [&](auto v) {
    using T = decltype(v);
    using R = real_t<T>;
    rbt_matrix_kernel<T, R><<<grid, kThreads, 0, stream>>>(
        static_cast<const T*>(a), n, static_cast<T*>(w), N, static_cast<const R*>(wu),
        static_cast<const R*>(wv), static_cast<const R*>(anorm));
    return cudaGetLastError();
  });
}

cudaError_t launch_rbt_left(const void* b, ElemType t, int64_t n, int64_t k, void* out, int64_t N,
                            const void* wu, cudaStream_t stream) {
  if (N == 0 || k == 0) return cudaSuccess;
  const dim3 grid(quad_blocks(N), grid_y(k));
  return with_type(t, [&](auto v) {
    using T = decltype(v);
    using R = real_t<T>;
    rbt_left_kernel<T, R><<<grid, kThreads, 0, stream>>>(
        static_cast<const T*>(b), n, k, static_cast<T*>(out), N, static_cast<const R*>(wu));
    return cudaGetLastError();
  });
}

cudaError_t launch_rbt_right(const void* y, ElemType t, int64_t N, int64_t k, void* x, int64_t n,
                             const void* wv, bool accumulate, cudaStream_t stream) {
  if (N == 0 || k == 0) return cudaSuccess;
  const dim3 grid(quad_blocks(N), grid_y(k));
  return with_type(t, [&](auto v) {
    using T = decltype(v);
    using R = real_t<T>;
    rbt_right_kernel<T, R><<<grid, kThreads, 0, stream>>>(static_cast<const T*>(y), N, k,
                                                          static_cast<T*>(x), n,
                                                          static_cast<const R*>(wv), accumulate);
    return cudaGetLastError();
  });
}

cudaError_t launch_norm1(const void* a, ElemType t, int64_t rows, int64_t cols, void* out,
                         cudaStream_t stream) {
  if (rows == 0 || cols == 0) return cudaSuccess;
  return with_type(t, [&](auto v) {
    using T = decltype(v);
    using R = real_t<T>;
    norm1_kernel<T, R><<<grid_x(cols), kThreads, 0, stream>>>(static_cast<const T*>(a), rows, cols,
                                                              static_cast<R*>(out));
    return cudaGetLastError();
  });
}

cudaError_t launch_refine_check(const void* r, const void* x, ElemType t, int64_t n, int64_t k,
                                const void* anorm, double tol, RefineCheck* out,
                                cudaStream_t stream) {
  if (k == 0) return cudaSuccess;
  return with_type(t, [&](auto v) {
    using T = decltype(v);
    using R = real_t<T>;
    refine_check_kernel<T, R>
        <<<grid_x(k), kThreads, 0, stream>>>(static_cast<const T*>(r), static_cast<const T*>(x), n,
                                             k, static_cast<const R*>(anorm), tol, out);
    return cudaGetLastError();
  });
}

cudaError_t launch_pivot_check(const void* w, ElemType t, int64_t N, double rel, RefineCheck* out,
                               cudaStream_t stream) {
  if (N == 0) return cudaSuccess;
  return with_type(t, [&](auto v) {
    using T = decltype(v);
    pivot_check_kernel<T><<<1, kThreads, 0, stream>>>(static_cast<const T*>(w), N, rel, out);
    return cudaGetLastError();
  });
}

}  // namespace gpula::detail::cuda
