#pragma once
// Recursive Cholesky of one large matrix on a GPU (cholesky_recursive.cpp). cuSOLVER's Xpotrf
// updates the trailing matrix one narrow panel at a time and runs at about a third of the
// H200's float64 GEMM rate at n = 8192 (8.4 ms, 22 TFLOP/s). Splitting the matrix in halves,
//   lower:  L11 = chol(A11), L21 = A21 L11^-H, A22 -= L21 L21^H, L22 = chol(A22)
//   upper:  U11 = chol(A11), U12 = U11^-H A12, A22 -= U12^H U12, U22 = chol(A22)
// puts most of the work in two large cuBLAS calls per level (trsm and syrk/herk with k = n/2);
// the halves recurse down to leaves of at most kCholeskyLeafMaxN, each factored by Xpotrf.
// The info of the whole is LAPACK's: the order of the first leading minor that is not positive
// definite (leaf offset + the leaf's info), 0 if none; nothing synchronizes.
#include <cstdint>

#include "linalg_problem.h"

namespace gpula::detail::cuda {

// Orders from which potrf of one matrix takes the recursive scheme.
constexpr int64_t kRecursiveCholeskyMinN = 4096;
// The largest leaf one Xpotrf call factors.
constexpr int64_t kCholeskyLeafMaxN = 2048;

// In-place Cholesky of the column-major n x n matrix `a` (lower or upper triangle read and
// written, the other untouched); *info (a device int) as above.
void potrf_recursive(DType t, bool upper, int64_t n, void* a, int32_t* info, const LinalgCall& c);

}  // namespace gpula::detail::cuda
