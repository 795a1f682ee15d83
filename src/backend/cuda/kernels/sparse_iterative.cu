// Fused kernels of the device-resident CG loop: alpha / beta from device scalars, the x / r and
// p updates, the convergence flag, the Jacobi preconditioner and the Jacobi sweeps that apply
// the IC(0) factor.
#include <cmath>

#include "backend/cuda/kernels/sparse_iterative.h"

namespace gpula::detail::cuda {

namespace {

constexpr int kThreads = 256;
unsigned blocks(int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

template <class T>
__global__ void alpha_kernel(const T* rho, const T* pq, T* alpha, int64_t* status) {
  if (status[0] != 0) return;
  const T a = *rho / *pq;
  if (!(*pq != T(0)) || !isfinite(a)) {
    status[0] = -1;
    return;
  }
  *alpha = a;
}

template <class T>
__global__ void update_xr_kernel(int64_t n, const T* alpha, const T* p, const T* q, T* x, T* r,
                                 const int64_t* status) {
  if (status[0] != 0) return;
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const T a = *alpha;
  x[i] += a * p[i];
  r[i] -= a * q[i];
}

template <class T>
__global__ void check_kernel(const T* rnorm, double tol, int64_t iteration, int64_t* status) {
  if (status[0] != 0) return;
  status[1] = iteration;
  const double v = static_cast<double>(*rnorm);
  if (v <= tol)
    status[0] = 1;
  else if (!isfinite(v))
    status[0] = -1;
}

template <class T>
__global__ void update_p_kernel(int64_t n, const T* rho, const T* rho_new, const T* z, T* p,
                                const int64_t* status) {
  if (status[0] != 0) return;
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  p[i] = z[i] + (*rho_new / *rho) * p[i];
}

template <class T>
__global__ void shift_rho_kernel(T* rho, const T* rho_new, const int64_t* status) {
  if (status[0] != 0) return;
  *rho = *rho_new;
}

template <class T>
__global__ void jacobi_kernel(int64_t n, const T* d, const T* r, T* z, const int64_t* status) {
  if (status[0] != 0) return;
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i < n) z[i] = d[i] * r[i];
}

// One row per thread: out[i] = dinv[i] (rhs[i] - sum of v[k] in[col[k]] over the row's entries
// strictly below (lower) or above (upper) the diagonal); in == nullptr: out[i] = dinv[i] rhs[i].
template <class T>
__global__ void triangular_sweep_kernel(int64_t n, const int32_t* ptr, const int32_t* col,
                                        const T* v, const T* dinv, const T* rhs, const T* in,
                                        T* out, bool lower, const int64_t* status) {
  if (status[0] != 0) return;
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  T s = rhs[i];
  if (in != nullptr) {
    for (int32_t k = ptr[i]; k < ptr[i + 1]; ++k) {
      const int32_t j = col[k];
      if (lower ? j < i : j > i) s -= v[k] * in[j];
    }
  }
  out[i] = dinv[i] * s;
}

template <class T, class I>
__global__ void inv_diag_kernel(int64_t n, const I* ptr, const I* col, const T* val, T* d,
                                unsigned long long* zero_row) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  T s = T(0);
  for (int64_t k = ptr[i]; k < ptr[i + 1]; ++k) {
    if (col[k] == i) s += val[k];
  }
  if (s == T(0)) {
    atomicMin(zero_row, static_cast<unsigned long long>(i));
    d[i] = T(0);
  } else {
    d[i] = T(1) / s;
  }
}

// First row whose stored diagonal of the IC(0) factor is missing, not positive or not finite.
template <class T>
__global__ void bad_pivot_kernel(int64_t n, const int32_t* ptr, const int32_t* col, const T* val,
                                 unsigned long long* bad_row) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  bool found = false, ok = false;
  for (int64_t k = ptr[i]; k < ptr[i + 1]; ++k) {
    if (col[k] == i) {
      found = true;
      ok = val[k] > T(0) && isfinite(val[k]);
    }
  }
  if (!found || !ok) atomicMin(bad_row, static_cast<unsigned long long>(i));
}

// First row whose column indices are not strictly increasing (unsorted or duplicated).
__global__ void unsorted_row_kernel(int64_t n, const int32_t* ptr, const int32_t* col,
                                    unsigned long long* bad_row) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  for (int64_t k = ptr[i] + 1; k < ptr[i + 1]; ++k) {
    if (col[k] <= col[k - 1]) {
      atomicMin(bad_row, static_cast<unsigned long long>(i));
      return;
    }
  }
}

}  // namespace

void first_unsorted_row(int64_t n, const int32_t* ptr, const int32_t* col, int64_t* bad_row,
                        cudaStream_t st) {
  unsorted_row_kernel<<<blocks(n), kThreads, 0, st>>>(
      n, ptr, col, reinterpret_cast<unsigned long long*>(bad_row));
}

template <class T>
void cg_alpha(const CgScalars& s, int64_t* status, cudaStream_t st) {
  alpha_kernel<T><<<1, 1, 0, st>>>(static_cast<const T*>(s.rho), static_cast<const T*>(s.pq),
                                   static_cast<T*>(s.alpha), status);
}
template <class T>
void cg_update_xr(int64_t n, const CgScalars& s, const T* p, const T* q, T* x, T* r,
                  const int64_t* status, cudaStream_t st) {
  update_xr_kernel<T>
      <<<blocks(n), kThreads, 0, st>>>(n, static_cast<const T*>(s.alpha), p, q, x, r, status);
}
template <class T>
void cg_check(const CgScalars& s, double tol, int64_t iteration, int64_t* status, cudaStream_t st) {
  check_kernel<T><<<1, 1, 0, st>>>(static_cast<const T*>(s.rnorm), tol, iteration, status);
}
template <class T>
void cg_update_p(int64_t n, const CgScalars& s, const T* z, T* p, const int64_t* status,
                 cudaStream_t st) {
  update_p_kernel<T><<<blocks(n), kThreads, 0, st>>>(
      n, static_cast<const T*>(s.rho), static_cast<const T*>(s.rho_new), z, p, status);
  shift_rho_kernel<T>
      <<<1, 1, 0, st>>>(static_cast<T*>(s.rho), static_cast<const T*>(s.rho_new), status);
}
template <class T>
void jacobi_apply(int64_t n, const T* d, const T* r, T* z, const int64_t* status, cudaStream_t st) {
  jacobi_kernel<T><<<blocks(n), kThreads, 0, st>>>(n, d, r, z, status);
}
template <class T, class I>
void inverse_diagonal(int64_t n, const I* ptr, const I* col, const T* val, T* d, int64_t* zero_row,
                      cudaStream_t st) {
  inv_diag_kernel<T, I><<<blocks(n), kThreads, 0, st>>>(
      n, ptr, col, val, d, reinterpret_cast<unsigned long long*>(zero_row));
}

template <class T>
void triangular_sweep(int64_t n, const int32_t* ptr, const int32_t* col, const T* v,
                      const T* inv_diag, const T* rhs, const T* in, T* out, bool lower,
                      const int64_t* status, cudaStream_t st) {
  triangular_sweep_kernel<T>
      <<<blocks(n), kThreads, 0, st>>>(n, ptr, col, v, inv_diag, rhs, in, out, lower, status);
}

template <class T>
void ic0_bad_pivot(int64_t n, const int32_t* ptr, const int32_t* col, const T* val,
                   int64_t* bad_row, cudaStream_t st) {
  bad_pivot_kernel<T><<<blocks(n), kThreads, 0, st>>>(
      n, ptr, col, val, reinterpret_cast<unsigned long long*>(bad_row));
}

#define GPULA_CG_INST(T)                                                                        \
  template void cg_alpha<T>(const CgScalars&, int64_t*, cudaStream_t);                          \
  template void cg_update_xr<T>(int64_t, const CgScalars&, const T*, const T*, T*, T*,          \
                                const int64_t*, cudaStream_t);                                  \
  template void cg_check<T>(const CgScalars&, double, int64_t, int64_t*, cudaStream_t);         \
  template void cg_update_p<T>(int64_t, const CgScalars&, const T*, T*, const int64_t*,         \
                               cudaStream_t);                                                   \
  template void jacobi_apply<T>(int64_t, const T*, const T*, T*, const int64_t*, cudaStream_t); \
  template void inverse_diagonal<T, int32_t>(int64_t, const int32_t*, const int32_t*, const T*, \
                                             T*, int64_t*, cudaStream_t);                       \
  template void inverse_diagonal<T, int64_t>(int64_t, const int64_t*, const int64_t*, const T*, \
                                             T*, int64_t*, cudaStream_t);                       \
  template void ic0_bad_pivot<T>(int64_t, const int32_t*, const int32_t*, const T*, int64_t*,   \
                                 cudaStream_t);                                                 \
  template void triangular_sweep<T>(int64_t, const int32_t*, const int32_t*, const T*, const T*, \
                                    const T*, const T*, T*, bool, const int64_t*, cudaStream_t);
GPULA_CG_INST(float)
GPULA_CG_INST(double)

}  // namespace gpula::detail::cuda
