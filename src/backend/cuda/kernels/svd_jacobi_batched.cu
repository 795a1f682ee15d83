#include <cfloat>
#include <cmath>

#include "backend/cuda/base/check.h"
#include "backend/cuda/kernels/svd_jacobi_batched.h"

namespace gpula::detail::cuda {
namespace {

constexpr int kMaxThreads = 1024;  // one warp per column pair of a step, up to 32 warps
constexpr int kMaxCols = 512;  // bounds the per-column arrays below

template <class T>
struct Eps;
template <>
struct Eps<float> {
  static constexpr float value = FLT_EPSILON;
};
template <>
struct Eps<double> {
  static constexpr double value = DBL_EPSILON;
};

template <class T>
__device__ T warp_sum(T x) {
  for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
  return x;
}

// Flat index e over a rows x cols item as (i, j), with consecutive e along the dimension whose
// global stride is smaller (coalesced loads and stores).
__device__ bool row_fast(const Strided3& st) {
  return (st.row < 0 ? -st.row : st.row) <= (st.col < 0 ? -st.col : st.col);
}
__device__ void index_pair(int e, int rows, int cols, bool i_fast, int* i, int* j) {
  if (i_fast) {
    *i = e % rows;
    *j = e / rows;
  } else {
    *i = e / cols;
    *j = e % cols;
  }
}

// Player at position p of step s in the circle method over n2 (even) players: position 0 is
// fixed, the others rotate; pairs are (pos k, pos n2 - 1 - k).
__device__ int player(int p, int s, int n2) { return p == 0 ? 0 : 1 + (p - 1 + s) % (n2 - 1); }

template <class T>
__global__ void __launch_bounds__(kMaxThreads)
    svd_jacobi_kernel(const T* __restrict__ m, Strided3 m_st, int64_t count, int rows, int cols,
                      T* __restrict__ u, Strided3 u_st, T* __restrict__ s_out, T* __restrict__ v,
                      Strided3 v_st, int32_t* __restrict__ info, int max_sweeps) {
  extern __shared__ unsigned char smem_raw[];
  T* g = reinterpret_cast<T*>(smem_raw);  // column j at g + j * rows
  T* vv = g + static_cast<int64_t>(rows) * cols;  // column j at vv + j * cols
  __shared__ T sigma[kMaxCols];
  __shared__ int order[kMaxCols];  // order[r] = column with the r-th largest sigma
  __shared__ int rotated;
  __shared__ int bad;
  __shared__ T frob2;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int nthreads = static_cast<int>(blockDim.x), nwarps = nthreads >> 5;
  const int n2 = cols + (cols & 1);
  const T eps = Eps<T>::value;
  const T tol = sqrt(static_cast<T>(rows)) * eps;

  for (int64_t b = blockIdx.x; b < count; b += gridDim.x) {
    const T* mb = m + b * m_st.batch;
    for (int e = threadIdx.x; e < rows * cols; e += nthreads) {
      int i, j;
      index_pair(e, rows, cols, row_fast(m_st), &i, &j);
      g[static_cast<int64_t>(j) * rows + i] = mb[i * m_st.row + j * m_st.col];
    }
    for (int e = threadIdx.x; e < cols * cols; e += nthreads)
      vv[e] = (e % cols == e / cols) ? T(1) : T(0);
    if (threadIdx.x == 0) {
      bad = 0;
      frob2 = 0;
    }
    __syncthreads();
    {
      T part = 0;
      for (int e = threadIdx.x; e < rows * cols; e += nthreads) part += g[e] * g[e];
      part = warp_sum(part);
      if (lane == 0) atomicAdd(&frob2, part);
    }
    __syncthreads();
    // Squared column norm below which a column is rounding noise of the whole matrix.
    const T negligible = frob2 * (eps * eps) * static_cast<T>(rows);

    int sweep = 0;
    for (; sweep < max_sweeps; ++sweep) {
      if (threadIdx.x == 0) rotated = 0;
      __syncthreads();
      int mine = 0;
      for (int step = 0; step < n2 - 1; ++step) {
        for (int k = warp; k < n2 / 2; k += nwarps) {
          int p = player(k, step, n2), q = player(n2 - 1 - k, step, n2);
          if (p >= cols || q >= cols) continue;  // the padding column of an odd count
          if (p > q) {
            const int t = p;
            p = q;
            q = t;
          }
          T* gp = g + static_cast<int64_t>(p) * rows;
          T* gq = g + static_cast<int64_t>(q) * rows;
          T alpha = 0, beta = 0, gamma = 0;
          for (int i = lane; i < rows; i += 32) {
            const T x = gp[i], y = gq[i];
            alpha += x * x;
            beta += y * y;
            gamma += x * y;
          }
          // Lane 0's sums for every lane: the butterfly's lanes may differ in the last bit,
          // and the whole warp must take the same branch and rotation.
          alpha = __shfl_sync(0xffffffffu, warp_sum(alpha), 0);
          beta = __shfl_sync(0xffffffffu, warp_sum(beta), 0);
          gamma = __shfl_sync(0xffffffffu, warp_sum(gamma), 0);
          // No rotation for an orthogonal enough pair, for a pair of columns at rounding level
          // of the whole matrix (noise, as in rank-deficient input: rotating it never
          // converges), or for NaN.
          if (!(fabs(gamma) > tol * sqrt(alpha) * sqrt(beta)) || alpha <= negligible ||
              beta <= negligible)
            continue;
          // Rotation zeroing the (p, q) entry of G^T G (Rutishauser's formulas).
          const T zeta = (beta - alpha) / (2 * gamma);
          const T t = copysign(T(1), zeta) / (fabs(zeta) + sqrt(T(1) + zeta * zeta));
          const T c = T(1) / sqrt(T(1) + t * t), sn = c * t;
          for (int i = lane; i < rows; i += 32) {
            const T x = gp[i], y = gq[i];
            gp[i] = c * x - sn * y;
            gq[i] = sn * x + c * y;
          }
          T* vp = vv + static_cast<int64_t>(p) * cols;
          T* vq = vv + static_cast<int64_t>(q) * cols;
          for (int i = lane; i < cols; i += 32) {
            const T x = vp[i], y = vq[i];
            vp[i] = c * x - sn * y;
            vq[i] = sn * x + c * y;
          }
          mine = 1;
        }
        __syncthreads();
      }
      if (mine) rotated = 1;  // benign race: every writer stores 1
      __syncthreads();
      const int any = rotated;
      __syncthreads();  // everyone has read `rotated` before thread 0 resets it
      if (!any) break;
    }

    // Singular values (column norms), NaN check, descending order (rank by comparison).
    for (int j = warp; j < cols; j += nwarps) {
      const T* gj = g + static_cast<int64_t>(j) * rows;
      T acc = 0;
      for (int i = lane; i < rows; i += 32) acc += gj[i] * gj[i];
      acc = warp_sum(acc);
      if (lane == 0) {
        sigma[j] = sqrt(acc);
        if (!isfinite(acc)) bad = 1;
      }
    }
    __syncthreads();
    const bool failed = bad || sweep == max_sweeps;
    if (threadIdx.x == 0) info[b] = failed ? 1 : 0;
    T* sb = s_out + b * static_cast<int64_t>(cols);
    if (failed) {
      const T nan = T(NAN);
      for (int j = threadIdx.x; j < cols; j += nthreads) sb[j] = nan;
      if (u)
        for (int e = threadIdx.x; e < rows * cols; e += nthreads)
          u[b * u_st.batch + (e % rows) * u_st.row + (e / rows) * u_st.col] = nan;
      if (v)
        for (int e = threadIdx.x; e < cols * cols; e += nthreads)
          v[b * v_st.batch + (e % cols) * v_st.row + (e / cols) * v_st.col] = nan;
      __syncthreads();
      continue;
    }
    for (int j = threadIdx.x; j < cols; j += nthreads) {
      int r = 0;
      for (int i = 0; i < cols; ++i)
        r += (sigma[i] > sigma[j]) || (sigma[i] == sigma[j] && i < j);
      order[r] = j;
    }
    __syncthreads();
    const T smax = sigma[order[0]];
    const T small = static_cast<T>(rows) * eps * smax;
    for (int j = threadIdx.x; j < cols; j += nthreads) sb[j] = sigma[order[j]];
    // Left vectors: normalize the well-separated columns in place.
    for (int j = warp; j < cols; j += nwarps) {
      if (sigma[j] > small && sigma[j] > T(0)) {
        T* gj = g + static_cast<int64_t>(j) * rows;
        const T inv = T(1) / sigma[j];
        for (int i = lane; i < rows; i += 32) gj[i] *= inv;
      }
    }
    __syncthreads();
    // Orthonormal completion of the columns with (numerically) zero sigma: one warp, in rank
    // order. Each such column becomes the unit vector e_r least covered by the columns accepted
    // so far (largest 1 - sum_k U[r,k]^2, at least (rows - accepted) / rows), orthogonalized
    // against them by Gram-Schmidt twice and normalized.
    if (u && warp == 0 && sigma[order[cols - 1]] <= small) {
      for (int rk = 0; rk < cols; ++rk) {
        const int j = order[rk];
        if (sigma[j] > small && sigma[j] > T(0)) continue;
        T best = -1;
        int best_r = 0;
        for (int i = lane; i < rows; i += 32) {
          T covered = 0;
          for (int rk2 = 0; rk2 < rk; ++rk2) {
            const T x = g[static_cast<int64_t>(order[rk2]) * rows + i];
            covered += x * x;
          }
          if (T(1) - covered > best) {
            best = T(1) - covered;
            best_r = i;
          }
        }
        for (int o = 16; o > 0; o >>= 1) {  // argmax over the warp, smallest row on ties
          const T ob = __shfl_xor_sync(0xffffffffu, best, o);
          const int orr = __shfl_xor_sync(0xffffffffu, best_r, o);
          if (ob > best || (ob == best && orr < best_r)) {
            best = ob;
            best_r = orr;
          }
        }
        T* gj = g + static_cast<int64_t>(j) * rows;
        for (int i = lane; i < rows; i += 32) gj[i] = (i == best_r) ? T(1) : T(0);
        __syncwarp();
        for (int pass = 0; pass < 2; ++pass) {
          for (int rk2 = 0; rk2 < rk; ++rk2) {
            const T* gi = g + static_cast<int64_t>(order[rk2]) * rows;
            T d = 0;
            for (int i = lane; i < rows; i += 32) d += gi[i] * gj[i];
            d = __shfl_sync(0xffffffffu, warp_sum(d), 0);
            for (int i = lane; i < rows; i += 32) gj[i] -= d * gi[i];
            __syncwarp();
          }
        }
        T nrm = 0;
        for (int i = lane; i < rows; i += 32) nrm += gj[i] * gj[i];
        nrm = __shfl_sync(0xffffffffu, sqrt(warp_sum(nrm)), 0);
        for (int i = lane; i < rows; i += 32) gj[i] /= nrm;
        __syncwarp();
      }
    }
    __syncthreads();
    if (u)
      for (int e = threadIdx.x; e < rows * cols; e += nthreads) {
        int i, r;
        index_pair(e, rows, cols, row_fast(u_st), &i, &r);
        u[b * u_st.batch + i * u_st.row + r * u_st.col] =
            g[static_cast<int64_t>(order[r]) * rows + i];
      }
    if (v)
      for (int e = threadIdx.x; e < cols * cols; e += nthreads) {
        int i, r;
        index_pair(e, cols, cols, row_fast(v_st), &i, &r);
        v[b * v_st.batch + i * v_st.row + r * v_st.col] =
            vv[static_cast<int64_t>(order[r]) * cols + i];
      }
    __syncthreads();
  }
}

}  // namespace

size_t svd_jacobi_shared_bytes(int rows, int cols, size_t elem_size, int device) {
  if (rows < cols || cols < 1 || cols > kMaxCols) return 0;
  int max_optin = 0;
  GPULA_CHECK("linalg.svd", cudaDeviceGetAttribute(&max_optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  const size_t fixed = kMaxCols * (elem_size + sizeof(int)) + 2 * sizeof(int);
  const size_t need =
      (static_cast<size_t>(rows) * cols + static_cast<size_t>(cols) * cols) * elem_size;
  return need + fixed <= static_cast<size_t>(max_optin) ? need : 0;
}

template <class T>
void svd_jacobi_batched(const T* m, Strided3 m_st, int64_t count, int rows, int cols, T* u,
                        Strided3 u_st, T* s, T* v, Strided3 v_st, int32_t* info, int max_sweeps,
                        cudaStream_t stream) {
  if (count == 0) return;
  int device = 0;
  GPULA_CHECK("linalg.svd", cudaGetDevice(&device));
  const size_t bytes = svd_jacobi_shared_bytes(rows, cols, sizeof(T), device);
  GPULA_CHECK("linalg.svd", cudaFuncSetAttribute(svd_jacobi_kernel<T>,
                                   cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   static_cast<int>(bytes)));
  const unsigned grid = static_cast<unsigned>(count < 65535 ? count : 65535);
  // A warp per pair of a step (cols / 2 rounded up), at least 4 and at most 32 warps: the
  // shared memory of one item usually allows one block per SM, so the block itself must hold
  // the parallelism.
  const int pairs = (cols + 1) / 2;
  const int warps = pairs < 4 ? 4 : pairs > 32 ? 32 : pairs;
  svd_jacobi_kernel<T><<<grid, warps * 32, bytes, stream>>>(m, m_st, count, rows, cols, u, u_st, s,
                                                          v, v_st, info, max_sweeps);
  GPULA_CHECK("linalg.svd", cudaGetLastError());
}

template void svd_jacobi_batched<float>(const float*, Strided3, int64_t, int, int, float*,
                                        Strided3, float*, float*, Strided3, int32_t*, int,
                                        cudaStream_t);
template void svd_jacobi_batched<double>(const double*, Strided3, int64_t, int, int, double*,
                                         Strided3, double*, double*, Strided3, int32_t*, int,
                                         cudaStream_t);

}  // namespace gpula::detail::cuda
