#pragma once
// Kernels of the randomized butterfly transformation (RBT) solve (solve_rbt.cpp): depth-2
// recursive butterflies U and V of order N (a multiple of 4), applied as U^T A V, U^T b and V y,
// and the norms of the refinement's stopping test. Matrices are column-major.
//
// A butterfly of order m is B = [R S; R -S] / sqrt(2) with R, S diagonal (m/2 each); the depth-2
// transformation is U = diag(B1, B2) B0 (B1, B2 of order N/2, B0 of order N). Its weights are one
// real array w of 2N entries: B0's R and S (N/2 each), then B1's R and S, then B2's (N/4 each).
#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/kernels/linalg.h"

namespace gpula::detail::cuda {

// w (N x N, ld N) = U^T [a 0; 0 p I] V, a n x n (ld n), N = n rounded up to a multiple of 4;
// p = *anorm / n (anorm: a's 1-norm, a real on the device; 1 where that is not positive) keeps
// the padded system as well scaled as a.
cudaError_t launch_rbt_matrix(const void* a, ElemType t, int64_t n, void* w, int64_t N,
                              const void* wu, const void* wv, const void* anorm,
                              cudaStream_t stream);
// out (N x k, ld N) = U^T [b; 0], b n x k (ld n).
cudaError_t launch_rbt_left(const void* b, ElemType t, int64_t n, int64_t k, void* out, int64_t N,
                            const void* wu, cudaStream_t stream);
// x (n x k, ld n) = (V y)[0:n] or, with `accumulate`, x += (V y)[0:n]; y N x k (ld N).
cudaError_t launch_rbt_right(const void* y, ElemType t, int64_t N, int64_t k, void* x, int64_t n,
                             const void* wv, bool accumulate, cudaStream_t stream);

// *out (a real, zeroed by the caller) = max over columns of sum_i |a(i, j)|: the 1-norm of a
// rows x cols matrix (ld rows).
cudaError_t launch_norm1(const void* a, ElemType t, int64_t rows, int64_t cols, void* out,
                         cudaStream_t stream);

// The stopping test of iterative refinement, per right-hand side j:
// ||r_j||_1 <= tol * ||A||_1 * ||x_j||_1. `fails` counts the columns that fail it (NaN fails) and
// `worst` is the largest ||r_j||_1 / (||A||_1 ||x_j||_1); both zeroed by the caller.
struct RefineCheck {
  int32_t fails;
  int32_t small_pivots;  // set by launch_pivot_check
  double worst;
};
cudaError_t launch_refine_check(const void* r, const void* x, ElemType t, int64_t n, int64_t k,
                                const void* anorm, double tol, RefineCheck* out,
                                cudaStream_t stream);

// out->small_pivots = 1 where min_k |w(k, k)| <= rel * max_k |w(k, k)| or a diagonal entry is not
// finite (w N x N, ld N: an LU factor's U diagonal).
cudaError_t launch_pivot_check(const void* w, ElemType t, int64_t N, double rel, RefineCheck* out,
                               cudaStream_t stream);

}  // namespace gpula::detail::cuda
