// Batched Cholesky (potrf), its solve from the right (potrs_right), LU with partial pivoting
// (getrf) and its solve (getrs) for many small matrices, order n <= 32.
//
// Layout. A group of g threads works on one matrix, g the power of two >= n, so a warp holds
// 32 / g matrices and a block kThreads / g (fewer where shared memory runs short). Thread i of a
// group owns row i. The group copies its matrix column by column between global memory (a
// column is one contiguous run, the batch is contiguous) and its slice of shared memory, where
// the leading dimension ld is odd and the slices start g elements apart modulo 32: then a column
// (A[i, c] over the group's threads), a row (A[c, i]) and one element per group all fall in
// distinct banks across the warp. Groups never share data, so the only synchronization is
// __syncwarp between the steps that read what other rows wrote, and shuffles of width g. Every
// lane of a warp runs every loop (rows past n and matrices past count idle through them), so
// full-mask warp operations always find all 32 lanes.
//
// potrf: left-looking Cholesky of the lower triangle (an upper one is staged as its conjugate
// transpose and written back the same way). Step j: row i >= j forms
// s_i = A[i, j] - sum_{k<j} L[i, k] conj(L[j, k]); d = re(s_j) must be positive and finite, else
// info = j + 1 and the item stops with columns j.. as they were; L[j, j] = sqrt(d),
// L[i, j] = s_i / sqrt(d).
// getrf: right-looking unblocked LU (LAPACK's getf2). Step j: a shuffle reduction over the
// group picks the pivot row p (the largest |A[i, j]|, i >= j, first on ties), the threads swap
// rows j and p one column each, and row i > j scales L[i, j] = A[i, j] / U[j, j] (not for an
// exactly zero pivot, which sets info) and updates its part of the trailing matrix.
// getrs, potrs_right: the factor is staged in shared memory; each right-hand side in turn lives
// in registers, b_i in thread i, and the forward and back substitutions broadcast each solved
// x_j by a shuffle. Row interchanges are one permutation shuffle per right-hand side.
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "backend/cuda/kernels/batched_small.h"
#include "backend/cuda/kernels/scalar.cuh"

namespace gpula::detail::cuda {
namespace {

constexpr unsigned kFull = 0xffffffffu;
constexpr int kThreads = 128;
constexpr size_t kMaxShared = 48 * 1024;  // the default per-block limit: no opt-in needed
constexpr int64_t kMaxBlocks = int64_t{1} << 20;

// The value of thread `src` of this thread's group of g.
template <class T>
__device__ T shfl(T v, int src, int g) {
  return __shfl_sync(kFull, v, src, g);
}
template <class R>
__device__ Cx<R> shfl(Cx<R> v, int src, int g) {
  return {__shfl_sync(kFull, v.re, src, g), __shfl_sync(kFull, v.im, src, g)};
}

// ---- layout ---------------------------------------------------------------------------------

struct Tile {
  int n = 0;          // order
  int g = 0;          // threads per matrix: the power of two >= n
  int ld = 0;         // leading dimension in shared memory: odd
  int stride = 0;     // elements between the matrices of a block in shared memory, = g mod 32
  int per_block = 0;  // matrices per block, a multiple of 32 / g (whole warps)
};

Tile tile_for(int n, size_t elem_size) {
  Tile t;
  t.n = n;
  t.g = 1;
  while (t.g < n) t.g *= 2;
  t.ld = n | 1;
  t.stride = n * t.ld;
  while (t.stride % 32 != t.g % 32) ++t.stride;
  const int per_warp = 32 / t.g;
  const int fit = static_cast<int>(kMaxShared / (static_cast<size_t>(t.stride) * elem_size));
  t.per_block = kThreads / t.g;
  if (t.per_block > fit) t.per_block = fit / per_warp * per_warp;
  if (t.per_block < per_warp) t.per_block = per_warp;  // cannot happen for n <= 32, 16 bytes
  return t;
}

// This thread's place: row i of the matrix at `s` in shared memory.
struct Place {
  int i;
  int group;
};

__device__ Place place_of(const Tile& tl) {
  return {static_cast<int>(threadIdx.x) & (tl.g - 1), static_cast<int>(threadIdx.x) / tl.g};
}

template <class T>
__device__ T* slice(const Tile& tl, int group) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  return reinterpret_cast<T*>(smem_raw) + group * tl.stride;
}

// Stages the triangle of `am` (column-major, order n) that a Cholesky factor lives in, as the
// lower triangle of s: A[i, c] for i >= c, or conj(A[c, i]) for an upper one. The rest of s is
// zero; `am` is read only in that triangle.
template <class T>
__device__ void stage_lower(T* s, const T* am, bool active, bool upper, int i, const Tile& tl) {
  const int n = tl.n, ld = tl.ld;
  if (i >= n) return;
  for (int c = 0; c < n; ++c) {
    const bool mine = upper ? i <= c : i >= c;
    const T v = active && mine ? am[i + c * n] : T{};
    if (upper)
      s[c + i * ld] = conj_of(v);
    else
      s[i + c * ld] = v;
  }
}

// ---- potrf ----------------------------------------------------------------------------------

template <class T>
__global__ void __launch_bounds__(kThreads)
    potrf_small_kernel(T* a, int64_t count, Tile tl, bool upper, int32_t* info) {
  using R = real_t<T>;
  const int n = tl.n, g = tl.g, ld = tl.ld;
  const auto [i, group] = place_of(tl);
  T* s = slice<T>(tl, group);
  const int64_t nn = int64_t{n} * n;
  for (int64_t first = int64_t{blockIdx.x} * tl.per_block; first < count;
       first += int64_t{gridDim.x} * tl.per_block) {
    const int64_t mat = first + group;
    const bool active = mat < count;
    T* am = a + (active ? mat : 0) * nn;
    stage_lower(s, am, active, upper, i, tl);
    __syncwarp();
    int32_t bad = 0;  // the same in the whole group: it comes from a shuffled d
    for (int j = 0; j < n; ++j) {
      T acc{};
      if (bad == 0 && i >= j && i < n) {
        acc = s[i + j * ld];
        for (int k = 0; k < j; ++k) acc -= s[i + k * ld] * conj_of(s[j + k * ld]);
      }
      const R d = shfl(real_of(acc), j, g);
      if (bad == 0) {
        if (!(d > R(0)) || isinf(d)) {
          bad = j + 1;
        } else {
          const R r = sqrt(d);
          if (i == j)
            s[j + j * ld] = from_real<T>(r);
          else if (i > j && i < n)
            s[i + j * ld] = acc * (R(1) / r);
        }
      }
      __syncwarp();  // column j is read by every row from the next step on
    }
    if (active) {
      if (i == 0) info[mat] = bad;
      if (i < n)
        for (int c = 0; c < n; ++c) {
          if (upper) {
            if (i <= c) am[i + c * n] = conj_of(s[c + i * ld]);
          } else if (i >= c) {
            am[i + c * n] = s[i + c * ld];
          }
        }
    }
    __syncwarp();  // the slice is restaged next round
  }
}

// ---- potrs_right ----------------------------------------------------------------------------

template <class T>
__global__ void __launch_bounds__(kThreads)
    potrs_right_small_kernel(const T* f, int64_t count, Tile tl, bool upper, T* y, int64_t m) {
  const int n = tl.n, g = tl.g, ld = tl.ld;
  const auto [i, group] = place_of(tl);
  T* s = slice<T>(tl, group);
  const int64_t nn = int64_t{n} * n;
  for (int64_t first = int64_t{blockIdx.x} * tl.per_block; first < count;
       first += int64_t{gridDim.x} * tl.per_block) {
    const int64_t mat = first + group;
    const bool active = mat < count;
    stage_lower(s, f + (active ? mat : 0) * nn, active, upper, i, tl);
    __syncwarp();
    // M = L L^H with L in s. Y M = B row by row: M is Hermitian, so row r of Y is conj(x) for
    // M x = conj(row r of B).
    // The diagonal is real in potrf's output; cho_solve's may not be, and is used as given.
    const T rdiag = i < n ? divide(from_real<T>(1), s[i + i * ld]) : T{};
    T* ym = y + (active ? mat : 0) * m * n;
    for (int64_t r = 0; r < m; ++r) {
      T b = active && i < n ? conj_of(ym[r + i * m]) : T{};
      for (int j = 0; j < n; ++j) {  // L z = b
        if (i == j) b = b * rdiag;
        const T z = shfl(b, j, g);
        if (i > j && i < n) b -= s[i + j * ld] * z;
      }
      for (int j = n - 1; j >= 0; --j) {  // L^H x = z
        if (i == j) b = b * conj_of(rdiag);
        const T z = shfl(b, j, g);
        if (i < j) b -= conj_of(s[j + i * ld]) * z;
      }
      if (active && i < n) ym[r + i * m] = conj_of(b);
    }
    __syncwarp();
  }
}

// ---- getrf ----------------------------------------------------------------------------------

template <class T>
__global__ void __launch_bounds__(kThreads)
    getrf_small_kernel(T* a, int64_t count, Tile tl, int32_t* ipiv, int32_t* info) {
  using R = real_t<T>;
  const int n = tl.n, g = tl.g, ld = tl.ld;
  const auto [i, group] = place_of(tl);
  T* s = slice<T>(tl, group);
  const int64_t nn = int64_t{n} * n;
  for (int64_t first = int64_t{blockIdx.x} * tl.per_block; first < count;
       first += int64_t{gridDim.x} * tl.per_block) {
    const int64_t mat = first + group;
    const bool active = mat < count;
    T* am = a + (active ? mat : 0) * nn;
    if (i < n)
      for (int c = 0; c < n; ++c) s[i + c * ld] = active ? am[i + c * n] : T{};
    __syncwarp();
    int32_t piv = i + 1, first_zero = 0;
    for (int j = 0; j < n; ++j) {
      // The pivot row: the largest key over rows j..n-1, the first on ties. NaN is keyed as the
      // largest so that every thread's reduction orders the same values and agrees on p; rows
      // outside j..n-1 carry -1 and never win.
      const T x = i < n ? s[i + j * ld] : T{};
      R key = R(-1);
      if (i >= j && i < n) {
        key = abs1(x);
        if (isnan(key)) key = R(INFINITY);
      }
      int row = i;
      for (int off = g / 2; off > 0; off /= 2) {
        const R other_key = __shfl_xor_sync(kFull, key, off, g);
        const int other_row = __shfl_xor_sync(kFull, row, off, g);
        if (other_key > key || (other_key == key && other_row < row)) {
          key = other_key;
          row = other_row;
        }
      }
      const int p = row;  // in [j, n)
      const T pivot = shfl(x, p, g);
      if (i == j) piv = p + 1;
      __syncwarp();  // column j is read before rows j and p change
      if (p != j && i < n) {
        const T t = s[j + i * ld];
        s[j + i * ld] = s[p + i * ld];
        s[p + i * ld] = t;
      }
      __syncwarp();
      const bool zero = is_zero(pivot);
      if (zero && first_zero == 0) first_zero = j + 1;
      if (i > j && i < n) {
        T l = s[i + j * ld];
        if (!zero) {
          l = divide(l, pivot);
          s[i + j * ld] = l;
        }
        for (int c = j + 1; c < n; ++c) s[i + c * ld] -= l * s[j + c * ld];
      }
      __syncwarp();  // row j + 1 on is read by every thread in the next step
    }
    if (active) {
      if (i == 0) info[mat] = first_zero;
      if (i < n) {
        ipiv[mat * n + i] = piv;
        for (int c = 0; c < n; ++c) am[i + c * n] = s[i + c * ld];
      }
    }
    __syncwarp();
  }
}

// ---- getrs ----------------------------------------------------------------------------------

template <class T>
__global__ void __launch_bounds__(kThreads)
    getrs_small_kernel(const T* lu, int64_t count, Tile tl, const int32_t* ipiv, bool transpose,
                       T* x, int64_t k) {
  const int n = tl.n, g = tl.g, ld = tl.ld;
  const auto [i, group] = place_of(tl);
  T* s = slice<T>(tl, group);
  const int64_t nn = int64_t{n} * n;
  for (int64_t first = int64_t{blockIdx.x} * tl.per_block; first < count;
       first += int64_t{gridDim.x} * tl.per_block) {
    const int64_t mat = first + group;
    const bool active = mat < count;
    const T* am = lu + (active ? mat : 0) * nn;
    if (i < n)
      for (int c = 0; c < n; ++c) s[i + c * ld] = active ? am[i + c * n] : T{};
    __syncwarp();
    // perm: row i of P b is row perm of b, P the interchanges ipiv[0], ipiv[1], ... in turn
    // (LAPACK's laswp); inv: row i of P^T w is row inv of w.
    const int my_p = active && i < n ? ipiv[mat * n + i] - 1 : i;
    int perm = i;
    for (int j = 0; j < n; ++j) {
      int p = shfl(my_p, j, g);
      if (p < 0 || p >= n) p = j;
      const int at_j = shfl(perm, j, g), at_p = shfl(perm, p, g);
      if (i == j)
        perm = at_p;
      else if (i == p)
        perm = at_j;
    }
    int inv = i;
    for (int q = 0; q < n; ++q)
      if (shfl(perm, q, g) == i) inv = q;
    const T rdiag = i < n ? divide(from_real<T>(1), s[i + i * ld]) : T{};
    T* xm = x + (active ? mat : 0) * n * k;
    for (int64_t c = 0; c < k; ++c) {
      T b = active && i < n ? xm[c * n + i] : T{};
      if (!transpose) {  // A = P^T L U: L U x = P b
        b = shfl(b, perm, g);
        for (int j = 0; j < n; ++j) {  // L unit lower
          const T v = shfl(b, j, g);
          if (i > j && i < n) b -= s[i + j * ld] * v;
        }
        for (int j = n - 1; j >= 0; --j) {  // U
          if (i == j) b = b * rdiag;
          const T v = shfl(b, j, g);
          if (i < j) b -= s[i + j * ld] * v;
        }
      } else {                         // A^T = U^T L^T P: U^T L^T w = b, x = P^T w
        for (int j = 0; j < n; ++j) {  // U^T
          if (i == j) b = b * rdiag;
          const T v = shfl(b, j, g);
          if (i > j && i < n) b -= s[j + i * ld] * v;
        }
        for (int j = n - 1; j >= 0; --j) {  // L^T unit upper
          const T v = shfl(b, j, g);
          if (i < j) b -= s[j + i * ld] * v;
        }
        b = shfl(b, inv, g);
      }
      if (active && i < n) xm[c * n + i] = b;
    }
    __syncwarp();
  }
}

// ---- launchers ------------------------------------------------------------------------------

struct Grid {
  Tile tile;
  unsigned blocks = 0, threads = 0;
  size_t shared = 0;
};

template <class T>
Grid grid_for(int n, int64_t count) {
  Grid g;
  g.tile = tile_for(n, sizeof(T));
  const int64_t blocks = (count + g.tile.per_block - 1) / g.tile.per_block;
  g.blocks = static_cast<unsigned>(blocks < kMaxBlocks ? blocks : kMaxBlocks);
  g.threads = static_cast<unsigned>(g.tile.per_block * g.tile.g);
  g.shared = static_cast<size_t>(g.tile.per_block) * g.tile.stride * sizeof(T);
  return g;
}

bool bad_order(int n) { return n < 1 || n > kSmallBatchedMaxN; }

}  // namespace

cudaError_t launch_potrf_small(void* a, ElemType t, int n, int64_t count, bool upper, int32_t* info,
                               cudaStream_t stream) {
  if (bad_order(n)) return cudaErrorInvalidValue;
  if (count <= 0) return cudaSuccess;
  return with_type(t, [&](auto tag) {
    using T = decltype(tag);
    const Grid g = grid_for<T>(n, count);
    potrf_small_kernel<T>
        <<<g.blocks, g.threads, g.shared, stream>>>(static_cast<T*>(a), count, g.tile, upper, info);
    return cudaGetLastError();
  });
}

cudaError_t launch_potrs_right_small(const void* f, ElemType t, int n, int64_t count, bool upper,
                                     void* y, int64_t m, cudaStream_t stream) {
  if (bad_order(n)) return cudaErrorInvalidValue;
  if (count <= 0 || m <= 0) return cudaSuccess;
  return with_type(t, [&](auto tag) {
    using T = decltype(tag);
    const Grid g = grid_for<T>(n, count);
    potrs_right_small_kernel<T><<<g.blocks, g.threads, g.shared, stream>>>(
        static_cast<const T*>(f), count, g.tile, upper, static_cast<T*>(y), m);
    return cudaGetLastError();
  });
}

cudaError_t launch_getrf_small(void* a, ElemType t, int n, int64_t count, int32_t* ipiv,
                               int32_t* info, cudaStream_t stream) {
  if (bad_order(n)) return cudaErrorInvalidValue;
  if (count <= 0) return cudaSuccess;
  return with_type(t, [&](auto tag) {
    using T = decltype(tag);
    const Grid g = grid_for<T>(n, count);
    getrf_small_kernel<T>
        <<<g.blocks, g.threads, g.shared, stream>>>(static_cast<T*>(a), count, g.tile, ipiv, info);
    return cudaGetLastError();
  });
}

cudaError_t launch_getrs_small(const void* lu, ElemType t, int n, int64_t count,
                               const int32_t* ipiv, bool transpose, void* x, int64_t k,
                               cudaStream_t stream) {
  if (bad_order(n)) return cudaErrorInvalidValue;
  if (count <= 0 || k <= 0) return cudaSuccess;
  return with_type(t, [&](auto tag) {
    using T = decltype(tag);
    const Grid g = grid_for<T>(n, count);
    getrs_small_kernel<T><<<g.blocks, g.threads, g.shared, stream>>>(
        static_cast<const T*>(lu), count, g.tile, ipiv, transpose, static_cast<T*>(x), k);
    return cudaGetLastError();
  });
}

}  // namespace gpula::detail::cuda
