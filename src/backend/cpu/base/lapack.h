#pragma once
// Typed shim over the Fortran LAPACK that scipy-openblas32 exports (scipy_spotrf_,
// scipy_zgetrf_, ...; every symbol carries its scipy_ prefix, CMakeLists.txt says why): one overload
// per element type, so templated backend code calls lapack::potrf(...) for float, double,
// std::complex<float> and std::complex<double> alike. The symbols are declared here (no LAPACKE
// package needed); character arguments carry gfortran's hidden length at the end, which
// OpenBLAS's own C implementations simply ignore. Column-major throughout.
#include <cblas.h>

#include <complex>
#include <cstddef>

#include "backend/cpu/base/blas.h"

namespace gpula::detail::cpu::lapack {

using Int = blasint;
using c32 = std::complex<float>;
using c64 = std::complex<double>;

extern "C" {
// clang-format off
void scipy_spotrf_(const char* uplo, const Int* n, float* a, const Int* lda, Int* info, std::size_t);
void scipy_dpotrf_(const char* uplo, const Int* n, double* a, const Int* lda, Int* info, std::size_t);
void scipy_cpotrf_(const char* uplo, const Int* n, c32* a, const Int* lda, Int* info, std::size_t);
void scipy_zpotrf_(const char* uplo, const Int* n, c64* a, const Int* lda, Int* info, std::size_t);

void scipy_sgetrf_(const Int* m, const Int* n, float* a, const Int* lda, Int* ipiv, Int* info);
void scipy_dgetrf_(const Int* m, const Int* n, double* a, const Int* lda, Int* ipiv, Int* info);
void scipy_cgetrf_(const Int* m, const Int* n, c32* a, const Int* lda, Int* ipiv, Int* info);
void scipy_zgetrf_(const Int* m, const Int* n, c64* a, const Int* lda, Int* ipiv, Int* info);

void scipy_sgetrs_(const char* trans, const Int* n, const Int* nrhs, const float* a, const Int* lda, const Int* ipiv, float* b, const Int* ldb, Int* info, std::size_t);
void scipy_dgetrs_(const char* trans, const Int* n, const Int* nrhs, const double* a, const Int* lda, const Int* ipiv, double* b, const Int* ldb, Int* info, std::size_t);
void scipy_cgetrs_(const char* trans, const Int* n, const Int* nrhs, const c32* a, const Int* lda, const Int* ipiv, c32* b, const Int* ldb, Int* info, std::size_t);
void scipy_zgetrs_(const char* trans, const Int* n, const Int* nrhs, const c64* a, const Int* lda, const Int* ipiv, c64* b, const Int* ldb, Int* info, std::size_t);

void scipy_sgetri_(const Int* n, float* a, const Int* lda, const Int* ipiv, float* work, const Int* lwork, Int* info);
void scipy_dgetri_(const Int* n, double* a, const Int* lda, const Int* ipiv, double* work, const Int* lwork, Int* info);
void scipy_cgetri_(const Int* n, c32* a, const Int* lda, const Int* ipiv, c32* work, const Int* lwork, Int* info);
void scipy_zgetri_(const Int* n, c64* a, const Int* lda, const Int* ipiv, c64* work, const Int* lwork, Int* info);

void scipy_ssytrf_(const char* uplo, const Int* n, float* a, const Int* lda, Int* ipiv, float* work, const Int* lwork, Int* info, std::size_t);
void scipy_dsytrf_(const char* uplo, const Int* n, double* a, const Int* lda, Int* ipiv, double* work, const Int* lwork, Int* info, std::size_t);
void scipy_csytrf_(const char* uplo, const Int* n, c32* a, const Int* lda, Int* ipiv, c32* work, const Int* lwork, Int* info, std::size_t);
void scipy_zsytrf_(const char* uplo, const Int* n, c64* a, const Int* lda, Int* ipiv, c64* work, const Int* lwork, Int* info, std::size_t);

void scipy_ssytrs_(const char* uplo, const Int* n, const Int* nrhs, const float* a, const Int* lda, const Int* ipiv, float* b, const Int* ldb, Int* info, std::size_t);
void scipy_dsytrs_(const char* uplo, const Int* n, const Int* nrhs, const double* a, const Int* lda, const Int* ipiv, double* b, const Int* ldb, Int* info, std::size_t);
void scipy_csytrs_(const char* uplo, const Int* n, const Int* nrhs, const c32* a, const Int* lda, const Int* ipiv, c32* b, const Int* ldb, Int* info, std::size_t);
void scipy_zsytrs_(const char* uplo, const Int* n, const Int* nrhs, const c64* a, const Int* lda, const Int* ipiv, c64* b, const Int* ldb, Int* info, std::size_t);
// clang-format on
}

// ---- potrf: Cholesky, a = U^H U (uplo 'U') or L L^H ('L') ----
inline Int potrf(char uplo, Int n, float* a, Int lda) {
  Int info = 0;
  scipy_spotrf_(&uplo, &n, a, &lda, &info, 1);
  return info;
}
inline Int potrf(char uplo, Int n, double* a, Int lda) {
  Int info = 0;
  scipy_dpotrf_(&uplo, &n, a, &lda, &info, 1);
  return info;
}
inline Int potrf(char uplo, Int n, c32* a, Int lda) {
  Int info = 0;
  scipy_cpotrf_(&uplo, &n, a, &lda, &info, 1);
  return info;
}
inline Int potrf(char uplo, Int n, c64* a, Int lda) {
  Int info = 0;
  scipy_zpotrf_(&uplo, &n, a, &lda, &info, 1);
  return info;
}

// ---- getrf: LU with partial pivoting, 1-based ipiv ----
inline Int getrf(Int n, float* a, Int lda, Int* ipiv) {
  Int info = 0;
  scipy_sgetrf_(&n, &n, a, &lda, ipiv, &info);
  return info;
}
inline Int getrf(Int n, double* a, Int lda, Int* ipiv) {
  Int info = 0;
  scipy_dgetrf_(&n, &n, a, &lda, ipiv, &info);
  return info;
}
inline Int getrf(Int n, c32* a, Int lda, Int* ipiv) {
  Int info = 0;
  scipy_cgetrf_(&n, &n, a, &lda, ipiv, &info);
  return info;
}
inline Int getrf(Int n, c64* a, Int lda, Int* ipiv) {
  Int info = 0;
  scipy_zgetrf_(&n, &n, a, &lda, ipiv, &info);
  return info;
}

// ---- getrs: op(A) X = B from getrf (trans 'N', 'T' or 'C') ----
inline Int getrs(char trans, Int n, Int nrhs, const float* a, Int lda, const Int* ipiv, float* b,
                 Int ldb) {
  Int info = 0;
  scipy_sgetrs_(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, &info, 1);
  return info;
}
inline Int getrs(char trans, Int n, Int nrhs, const double* a, Int lda, const Int* ipiv, double* b,
                 Int ldb) {
  Int info = 0;
  scipy_dgetrs_(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, &info, 1);
  return info;
}
inline Int getrs(char trans, Int n, Int nrhs, const c32* a, Int lda, const Int* ipiv, c32* b,
                 Int ldb) {
  Int info = 0;
  scipy_cgetrs_(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, &info, 1);
  return info;
}
inline Int getrs(char trans, Int n, Int nrhs, const c64* a, Int lda, const Int* ipiv, c64* b,
                 Int ldb) {
  Int info = 0;
  scipy_zgetrs_(&trans, &n, &nrhs, a, &lda, ipiv, b, &ldb, &info, 1);
  return info;
}

// ---- getri: inverse from getrf; lwork = -1 queries the workspace size into work[0] ----
inline Int getri(Int n, float* a, Int lda, const Int* ipiv, float* work, Int lwork) {
  Int info = 0;
  scipy_sgetri_(&n, a, &lda, ipiv, work, &lwork, &info);
  return info;
}
inline Int getri(Int n, double* a, Int lda, const Int* ipiv, double* work, Int lwork) {
  Int info = 0;
  scipy_dgetri_(&n, a, &lda, ipiv, work, &lwork, &info);
  return info;
}
inline Int getri(Int n, c32* a, Int lda, const Int* ipiv, c32* work, Int lwork) {
  Int info = 0;
  scipy_cgetri_(&n, a, &lda, ipiv, work, &lwork, &info);
  return info;
}
inline Int getri(Int n, c64* a, Int lda, const Int* ipiv, c64* work, Int lwork) {
  Int info = 0;
  scipy_zgetri_(&n, a, &lda, ipiv, work, &lwork, &info);
  return info;
}

// ---- sytrf / sytrs: symmetric (complex symmetric) Bunch-Kaufman ----
inline Int sytrf(char uplo, Int n, float* a, Int lda, Int* ipiv, float* work, Int lwork) {
  Int info = 0;
  scipy_ssytrf_(&uplo, &n, a, &lda, ipiv, work, &lwork, &info, 1);
  return info;
}
inline Int sytrf(char uplo, Int n, double* a, Int lda, Int* ipiv, double* work, Int lwork) {
  Int info = 0;
  scipy_dsytrf_(&uplo, &n, a, &lda, ipiv, work, &lwork, &info, 1);
  return info;
}
inline Int sytrf(char uplo, Int n, c32* a, Int lda, Int* ipiv, c32* work, Int lwork) {
  Int info = 0;
  scipy_csytrf_(&uplo, &n, a, &lda, ipiv, work, &lwork, &info, 1);
  return info;
}
inline Int sytrf(char uplo, Int n, c64* a, Int lda, Int* ipiv, c64* work, Int lwork) {
  Int info = 0;
  scipy_zsytrf_(&uplo, &n, a, &lda, ipiv, work, &lwork, &info, 1);
  return info;
}
inline Int sytrs(char uplo, Int n, Int nrhs, const float* a, Int lda, const Int* ipiv, float* b,
                 Int ldb) {
  Int info = 0;
  scipy_ssytrs_(&uplo, &n, &nrhs, a, &lda, ipiv, b, &ldb, &info, 1);
  return info;
}
inline Int sytrs(char uplo, Int n, Int nrhs, const double* a, Int lda, const Int* ipiv, double* b,
                 Int ldb) {
  Int info = 0;
  scipy_dsytrs_(&uplo, &n, &nrhs, a, &lda, ipiv, b, &ldb, &info, 1);
  return info;
}
inline Int sytrs(char uplo, Int n, Int nrhs, const c32* a, Int lda, const Int* ipiv, c32* b,
                 Int ldb) {
  Int info = 0;
  scipy_csytrs_(&uplo, &n, &nrhs, a, &lda, ipiv, b, &ldb, &info, 1);
  return info;
}
inline Int sytrs(char uplo, Int n, Int nrhs, const c64* a, Int lda, const Int* ipiv, c64* b,
                 Int ldb) {
  Int info = 0;
  scipy_zsytrs_(&uplo, &n, &nrhs, a, &lda, ipiv, b, &ldb, &info, 1);
  return info;
}

// ---- trsm (CBLAS, column-major): op(A) X = B (left) or X op(A) = B (right), alpha = 1 ----
inline void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE trans, CBLAS_DIAG diag, Int m,
                 Int n, const float* a, Int lda, float* b, Int ldb) {
  scipy_cblas_strsm(CblasColMajor, side, uplo, trans, diag, m, n, 1.0f, a, lda, b, ldb);
}
inline void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE trans, CBLAS_DIAG diag, Int m,
                 Int n, const double* a, Int lda, double* b, Int ldb) {
  scipy_cblas_dtrsm(CblasColMajor, side, uplo, trans, diag, m, n, 1.0, a, lda, b, ldb);
}
inline void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE trans, CBLAS_DIAG diag, Int m,
                 Int n, const c32* a, Int lda, c32* b, Int ldb) {
  const c32 one(1.0f);
  scipy_cblas_ctrsm(CblasColMajor, side, uplo, trans, diag, m, n, &one, a, lda, b, ldb);
}
inline void trsm(CBLAS_SIDE side, CBLAS_UPLO uplo, CBLAS_TRANSPOSE trans, CBLAS_DIAG diag, Int m,
                 Int n, const c64* a, Int lda, c64* b, Int ldb) {
  const c64 one(1.0);
  scipy_cblas_ztrsm(CblasColMajor, side, uplo, trans, diag, m, n, &one, a, lda, b, ldb);
}

}  // namespace gpula::detail::cpu::lapack
