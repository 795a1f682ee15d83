#pragma once
// gpula's own batched Cholesky, LU and their solves for many small matrices (order n <=
// kSmallBatchedMaxN), in place of cuSOLVER's potrfBatched/potrsBatched and cuBLAS's
// getrfBatched/getrsBatched/trsmBatched, which are slow there (kernels/batched_small.cu says
// how they work). Matrices are `count` contiguous column-major n x n items; results follow
// LAPACK's conventions so that the rest of the backend cannot tell them from the vendor's.
#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/kernels/linalg.h"

namespace gpula::detail::cuda {

constexpr int kSmallBatchedMaxN = 32;

// Cholesky in place, A = L L^H (lower) or U^H U (upper); only that triangle is read or written.
// info[b] = 0, or the order j of the first leading minor whose pivot is not positive and finite
// (NaN and Inf included); factoring stops there, leaving column (row) j on of the triangle as it
// was.
cudaError_t launch_potrf_small(void* a, ElemType t, int n, int64_t count, bool upper, int32_t* info,
                               cudaStream_t stream);

// Y M = B in place of y (each item m x n, column-major), M = F^H F (upper) or F F^H (lower) from
// potrf's factor F; f is read only in that triangle.
cudaError_t launch_potrs_right_small(const void* f, ElemType t, int n, int64_t count, bool upper,
                                     void* y, int64_t m, cudaStream_t stream);

// LU with partial pivoting in place: ipiv 1-based (row i was interchanged with row ipiv[i]),
// the pivot the largest |a| (|re| + |im| for complex, NaN counting as the largest), the first
// on ties; info[b] = 0 or the smallest j with U[j-1, j-1] exactly zero (the factorization goes
// on past it, as LAPACK's).
cudaError_t launch_getrf_small(void* a, ElemType t, int n, int64_t count, int32_t* ipiv,
                               int32_t* info, cudaStream_t stream);

// op(A) X = B in place of x (each item n x k, column-major) from getrf's output; op(A) = A^T
// (no conjugation) when `transpose`. Pivots outside [1, n] are taken as no interchange.
cudaError_t launch_getrs_small(const void* lu, ElemType t, int n, int64_t count,
                               const int32_t* ipiv, bool transpose, void* x, int64_t k,
                               cudaStream_t stream);

}  // namespace gpula::detail::cuda
