// The typed cuBLAS / cuSOLVER batched calls of solver_calls.h.
#include "backend/cuda/linalg/solver_calls.h"

#include <cuComplex.h>

#include "backend/cuda/base/check.h"
#include "backend/cuda/base/types.h"
#include "backend/cuda/linalg/common.h"
#include "core/format.h"

namespace gpula::detail::cuda::calls {
namespace {

template <class T>
T* const* as(void** p) {
  return reinterpret_cast<T* const*>(p);
}
template <class T>
T** raw(void** p) {
  return reinterpret_cast<T**>(p);
}

[[noreturn]] void bad_type(const char* op, DType t) {
  throw_error<DTypeError>(op, "no cuSOLVER routine for ", name(t));
}

}  // namespace

void potrf_batched(cusolverDnHandle_t h, DType t, bool upper, int n, void** a, int* info, int count,
                   const char* op) {
  const auto u = fill(upper);
  switch (t) {
    case DType::f32:
      GPULA_CHECK(op, cusolverDnSpotrfBatched(h, u, n, raw<float>(a), n, info, count));
      break;
    case DType::f64:
      GPULA_CHECK(op, cusolverDnDpotrfBatched(h, u, n, raw<double>(a), n, info, count));
      break;
    case DType::c64:
      GPULA_CHECK(op, cusolverDnCpotrfBatched(h, u, n, raw<cuComplex>(a), n, info, count));
      break;
    case DType::c128:
      GPULA_CHECK(op, cusolverDnZpotrfBatched(h, u, n, raw<cuDoubleComplex>(a), n, info, count));
      break;
    default:
      bad_type(op, t);
  }
}

void potrs_batched(cusolverDnHandle_t h, DType t, bool upper, int n, void** a, void** b, int* info,
                   int count, const char* op) {
  const auto u = fill(upper);
  switch (t) {
    case DType::f32:
      GPULA_CHECK(
          op, cusolverDnSpotrsBatched(h, u, n, 1, raw<float>(a), n, raw<float>(b), n, info, count));
      break;
    case DType::f64:
      GPULA_CHECK(op, cusolverDnDpotrsBatched(h, u, n, 1, raw<double>(a), n, raw<double>(b), n,
                                              info, count));
      break;
    case DType::c64:
      GPULA_CHECK(op, cusolverDnCpotrsBatched(h, u, n, 1, raw<cuComplex>(a), n, raw<cuComplex>(b),
                                              n, info, count));
      break;
    case DType::c128:
      GPULA_CHECK(op, cusolverDnZpotrsBatched(h, u, n, 1, raw<cuDoubleComplex>(a), n,
                                              raw<cuDoubleComplex>(b), n, info, count));
      break;
    default:
      bad_type(op, t);
  }
}

void trsm_batched(cublasHandle_t h, DType t, cublasSideMode_t side, cublasFillMode_t uplo,
                  cublasOperation_t trans, int m, int n, void** a, int lda, void** b, int ldb,
                  int count, const char* op, cublasDiagType_t d) {
  switch (t) {
    case DType::f32: {
      const float one = 1.0f;
      GPULA_CHECK(op, cublasStrsmBatched(h, side, uplo, trans, d, m, n, &one, as<const float>(a),
                                         lda, as<float>(b), ldb, count));
      break;
    }
    case DType::f64: {
      const double one = 1.0;
      GPULA_CHECK(op, cublasDtrsmBatched(h, side, uplo, trans, d, m, n, &one, as<const double>(a),
                                         lda, as<double>(b), ldb, count));
      break;
    }
    case DType::c64: {
      const cuComplex one = make_cuComplex(1.0f, 0.0f);
      GPULA_CHECK(
          op, cublasCtrsmBatched(h, side, uplo, trans, d, m, n, &one, as<const cuComplex>(a), lda,
                                 as<cuComplex>(b), ldb, count));
      break;
    }
    case DType::c128: {
      const cuDoubleComplex one = make_cuDoubleComplex(1.0, 0.0);
      GPULA_CHECK(
          op, cublasZtrsmBatched(h, side, uplo, trans, d, m, n, &one, as<const cuDoubleComplex>(a),
                                 lda, as<cuDoubleComplex>(b), ldb, count));
      break;
    }
    default:
      bad_type(op, t);
  }
}

void trsm(cublasHandle_t h, DType t, cublasSideMode_t side, cublasFillMode_t uplo,
          cublasOperation_t trans, int64_t m, int64_t n, const void* a, int64_t lda, void* b,
          int64_t ldb, const char* op, cublasDiagType_t d) {
  switch (t) {
    case DType::f32: {
      const float one = 1.0f;
      GPULA_CHECK(
          op, cublasStrsm_64(h, side, uplo, trans, d, m, n, &one, static_cast<const float*>(a), lda,
                             static_cast<float*>(b), ldb));
      break;
    }
    case DType::f64: {
      const double one = 1.0;
      GPULA_CHECK(op,
                  cublasDtrsm_64(h, side, uplo, trans, d, m, n, &one, static_cast<const double*>(a),
                                 lda, static_cast<double*>(b), ldb));
      break;
    }
    case DType::c64: {
      const cuComplex one = make_cuComplex(1.0f, 0.0f);
      GPULA_CHECK(
          op, cublasCtrsm_64(h, side, uplo, trans, d, m, n, &one, static_cast<const cuComplex*>(a),
                             lda, static_cast<cuComplex*>(b), ldb));
      break;
    }
    case DType::c128: {
      const cuDoubleComplex one = make_cuDoubleComplex(1.0, 0.0);
      GPULA_CHECK(op, cublasZtrsm_64(h, side, uplo, trans, d, m, n, &one,
                                     static_cast<const cuDoubleComplex*>(a), lda,
                                     static_cast<cuDoubleComplex*>(b), ldb));
      break;
    }
    default:
      bad_type(op, t);
  }
}

void gemm(cublasHandle_t h, DType t, int64_t m, int64_t n, int64_t k, double alpha, const void* a,
          int64_t lda, const void* b, int64_t ldb, double beta, void* c, int64_t ldc,
          const char* op) {
  if (m == 0 || n == 0) return;
  const bool single = t == DType::f32 || t == DType::c64;
  const cublasComputeType_t ct = single ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_64F;
  const cudaDataType_t dt = data_type(t, op);
  // alpha and beta in the scale type: the compute type's real or complex float / double.
  union Scalar {
    float f;
    double d;
    cuComplex c;
    cuDoubleComplex z;
  } al{}, be{};
  switch (t) {
    case DType::f32:
      al.f = static_cast<float>(alpha), be.f = static_cast<float>(beta);
      break;
    case DType::f64:
      al.d = alpha, be.d = beta;
      break;
    case DType::c64:
      al.c = make_cuComplex(static_cast<float>(alpha), 0.0f);
      be.c = make_cuComplex(static_cast<float>(beta), 0.0f);
      break;
    case DType::c128:
      al.z = make_cuDoubleComplex(alpha, 0.0), be.z = make_cuDoubleComplex(beta, 0.0);
      break;
    default:
      bad_type(op, t);
  }
  GPULA_CHECK(op, cublasGemmEx_64(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, &al, a, dt, lda, b, dt, ldb,
                                  &be, c, dt, ldc, ct, CUBLAS_GEMM_DEFAULT));
}

void getrf_batched(cublasHandle_t h, DType t, int n, void** a, int* ipiv, int* info, int count,
                   const char* op) {
  switch (t) {
    case DType::f32:
      GPULA_CHECK(op, cublasSgetrfBatched(h, n, as<float>(a), n, ipiv, info, count));
      break;
    case DType::f64:
      GPULA_CHECK(op, cublasDgetrfBatched(h, n, as<double>(a), n, ipiv, info, count));
      break;
    case DType::c64:
      GPULA_CHECK(op, cublasCgetrfBatched(h, n, as<cuComplex>(a), n, ipiv, info, count));
      break;
    case DType::c128:
      GPULA_CHECK(op, cublasZgetrfBatched(h, n, as<cuDoubleComplex>(a), n, ipiv, info, count));
      break;
    default:
      bad_type(op, t);
  }
}

void getrs_batched(cublasHandle_t h, DType t, bool transpose, int n, int nrhs, void** a,
                   const int* ipiv, void** b, int count, const char* op) {
  const cublasOperation_t tr = transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
  int info = 0;  // host: argument errors only
  switch (t) {
    case DType::f32:
      GPULA_CHECK(op, cublasSgetrsBatched(h, tr, n, nrhs, as<const float>(a), n, ipiv, as<float>(b),
                                          n, &info, count));
      break;
    case DType::f64:
      GPULA_CHECK(op, cublasDgetrsBatched(h, tr, n, nrhs, as<const double>(a), n, ipiv,
                                          as<double>(b), n, &info, count));
      break;
    case DType::c64:
      GPULA_CHECK(op, cublasCgetrsBatched(h, tr, n, nrhs, as<const cuComplex>(a), n, ipiv,
                                          as<cuComplex>(b), n, &info, count));
      break;
    case DType::c128:
      GPULA_CHECK(op, cublasZgetrsBatched(h, tr, n, nrhs, as<const cuDoubleComplex>(a), n, ipiv,
                                          as<cuDoubleComplex>(b), n, &info, count));
      break;
    default:
      bad_type(op, t);
  }
  if (info != 0) throw_error<Error>(op, "cublas getrsBatched rejected argument ", -info);
}

void getri_batched(cublasHandle_t h, DType t, int n, void** a, const int* ipiv, void** c, int* info,
                   int count, const char* op) {
  switch (t) {
    case DType::f32:
      GPULA_CHECK(
          op, cublasSgetriBatched(h, n, as<const float>(a), n, ipiv, as<float>(c), n, info, count));
      break;
    case DType::f64:
      GPULA_CHECK(op, cublasDgetriBatched(h, n, as<const double>(a), n, ipiv, as<double>(c), n,
                                          info, count));
      break;
    case DType::c64:
      GPULA_CHECK(op, cublasCgetriBatched(h, n, as<const cuComplex>(a), n, ipiv, as<cuComplex>(c),
                                          n, info, count));
      break;
    case DType::c128:
      GPULA_CHECK(op, cublasZgetriBatched(h, n, as<const cuDoubleComplex>(a), n, ipiv,
                                          as<cuDoubleComplex>(c), n, info, count));
      break;
    default:
      bad_type(op, t);
  }
}

void matinv_batched(cublasHandle_t h, DType t, int n, void** a, void** c, int* info, int count,
                    const char* op) {
  switch (t) {
    case DType::f32:
      GPULA_CHECK(op,
                  cublasSmatinvBatched(h, n, as<const float>(a), n, as<float>(c), n, info, count));
      break;
    case DType::f64:
      GPULA_CHECK(
          op, cublasDmatinvBatched(h, n, as<const double>(a), n, as<double>(c), n, info, count));
      break;
    case DType::c64:
      GPULA_CHECK(op, cublasCmatinvBatched(h, n, as<const cuComplex>(a), n, as<cuComplex>(c), n,
                                           info, count));
      break;
    case DType::c128:
      GPULA_CHECK(op, cublasZmatinvBatched(h, n, as<const cuDoubleComplex>(a), n,
                                           as<cuDoubleComplex>(c), n, info, count));
      break;
    default:
      bad_type(op, t);
  }
}

}  // namespace gpula::detail::cuda::calls
