#pragma once
// Typed cuBLAS / cuSOLVER calls behind one untyped signature each (solver_calls.cpp): the
// s/d/c/z variants are picked from the DType, every status is checked. Pointer arrays (void**)
// are device arrays of `count` matrix pointers; all matrices column-major.
#include <cublas_v2.h>
#include <cusolverDn.h>
#include <gpula/dtype.h>

#include <cstdint>

namespace gpula::detail::cuda::calls {

// cusolverDn<t>potrfBatched; info: `count` device ints.
void potrf_batched(cusolverDnHandle_t h, DType t, bool upper, int n, void** a, int* info, int count,
                   const char* op);
// cusolverDn<t>potrsBatched, one right-hand side; info: one device int.
void potrs_batched(cusolverDnHandle_t h, DType t, bool upper, int n, void** a, void** b, int* info,
                   int count, const char* op);
// cublas<t>trsmBatched with alpha = 1.
void trsm_batched(cublasHandle_t h, DType t, cublasSideMode_t side, cublasFillMode_t uplo,
                  cublasOperation_t trans, int m, int n, void** a, int lda, void** b, int ldb,
                  int count, const char* op, cublasDiagType_t diag = CUBLAS_DIAG_NON_UNIT);
// cublas<t>trsm_64 with alpha = 1, one matrix.
void trsm(cublasHandle_t h, DType t, cublasSideMode_t side, cublasFillMode_t uplo,
          cublasOperation_t trans, int64_t m, int64_t n, const void* a, int64_t lda, void* b,
          int64_t ldb, const char* op, cublasDiagType_t diag = CUBLAS_DIAG_NON_UNIT);
// c = alpha a b + beta c (no transposes; alpha, beta real) through cublasGemmEx_64 in the data's
// own precision (COMPUTE_32F / COMPUTE_64F: never TF32).
void gemm(cublasHandle_t h, DType t, int64_t m, int64_t n, int64_t k, double alpha, const void* a,
          int64_t lda, const void* b, int64_t ldb, double beta, void* c, int64_t ldc,
          const char* op);
// cublas<t>getrfBatched: ipiv `count * n` device ints (1-based), info `count` device ints.
void getrf_batched(cublasHandle_t h, DType t, int n, void** a, int* ipiv, int* info, int count,
                   const char* op);
// cublas<t>getrsBatched: ipiv as getrf_batched's.
void getrs_batched(cublasHandle_t h, DType t, bool transpose, int n, int nrhs, void** a,
                   const int* ipiv, void** b, int count, const char* op);
// cublas<t>getriBatched: c[i] = inv from the LU a[i].
void getri_batched(cublasHandle_t h, DType t, int n, void** a, const int* ipiv, void** c, int* info,
                   int count, const char* op);
// cublas<t>matinvBatched (n <= 32): c[i] = inv(a[i]).
void matinv_batched(cublasHandle_t h, DType t, int n, void** a, void** c, int* info, int count,
                    const char* op);

}  // namespace gpula::detail::cuda::calls
