#pragma once
// Launchers of the fused kernels of the device-resident CG loop (kernels/sparse_iterative.cu).
// Every kernel reads the device status word: once it is nonzero (converged or broken down), the
// vector updates are no-ops, so the host may test it only every few iterations.
#include <cuda_runtime.h>

#include <cstdint>

namespace gpula::detail::cuda {

/// status[0]: 0 running, 1 converged, -1 breakdown; status[1]: iterations at that point.
struct CgScalars {  // device pointers of T (real) scalars
  void* rho;
  void* rho_new;
  void* pq;
  void* alpha;
  void* rnorm;
};

template <class T>
void cg_alpha(const CgScalars& s, int64_t* status, cudaStream_t st);
template <class T>
void cg_update_xr(int64_t n, const CgScalars& s, const T* p, const T* q, T* x, T* r,
                  const int64_t* status, cudaStream_t st);
template <class T>
void cg_check(const CgScalars& s, double tol, int64_t iteration, int64_t* status, cudaStream_t st);
template <class T>
void cg_update_p(int64_t n, const CgScalars& s, const T* z, T* p, const int64_t* status,
                 cudaStream_t st);
template <class T>
void jacobi_apply(int64_t n, const T* inv_diag, const T* r, T* z, const int64_t* status,
                  cudaStream_t st);
/// inv_diag[i] = 1 / sum of the stored A[i, i]; *zero_row = the first row with a zero (or -1).
template <class T, class I>
void inverse_diagonal(int64_t n, const I* indptr, const I* indices, const T* values, T* inv_diag,
                      int64_t* zero_row, cudaStream_t st);

/// *bad_row = min(*bad_row, the first row whose column indices are not strictly increasing).
void first_unsorted_row(int64_t n, const int32_t* indptr, const int32_t* indices, int64_t* bad_row,
                        cudaStream_t st);
/// *bad_row = min(*bad_row, the first row whose stored diagonal of the factored values is
/// missing, <= 0 or not finite); int32 indices (the IC(0) factor of cusparse?csric02).
template <class T>
void ic0_bad_pivot(int64_t n, const int32_t* indptr, const int32_t* indices, const T* values,
                   int64_t* bad_row, cudaStream_t st);

/// One Jacobi sweep of a triangular solve with the triangle of (ptr, col, v) strictly below
/// (lower) or above the diagonal and the inverse diagonal inv_diag:
/// out = inv_diag * (rhs - T_strict in); in == nullptr: out = inv_diag * rhs (the first sweep
/// from zero). out must not alias in or rhs.
template <class T>
void triangular_sweep(int64_t n, const int32_t* ptr, const int32_t* col, const T* v,
                      const T* inv_diag, const T* rhs, const T* in, T* out, bool lower,
                      const int64_t* status, cudaStream_t st);

}  // namespace gpula::detail::cuda
