#pragma once
// Typed shim over OpenBLAS's Fortran LAPACK for QR and least squares (see lapack.h): ?geqrf,
// ?orgqr/?ungqr and ?gelsd, one overload per element type. lwork = -1 queries the workspace
// sizes (into work[0], and iwork[0] / rwork[0] for gelsd). Column-major throughout.
#include "backend/cpu/base/lapack.h"

namespace gpula::detail::cpu::lapack {

extern "C" {
// clang-format off
void scipy_sgeqrf_(const Int* m, const Int* n, float* a, const Int* lda, float* tau, float* work, const Int* lwork, Int* info);
void scipy_dgeqrf_(const Int* m, const Int* n, double* a, const Int* lda, double* tau, double* work, const Int* lwork, Int* info);
void scipy_cgeqrf_(const Int* m, const Int* n, c32* a, const Int* lda, c32* tau, c32* work, const Int* lwork, Int* info);
void scipy_zgeqrf_(const Int* m, const Int* n, c64* a, const Int* lda, c64* tau, c64* work, const Int* lwork, Int* info);

void scipy_sorgqr_(const Int* m, const Int* n, const Int* k, float* a, const Int* lda, const float* tau, float* work, const Int* lwork, Int* info);
void scipy_dorgqr_(const Int* m, const Int* n, const Int* k, double* a, const Int* lda, const double* tau, double* work, const Int* lwork, Int* info);
void scipy_cungqr_(const Int* m, const Int* n, const Int* k, c32* a, const Int* lda, const c32* tau, c32* work, const Int* lwork, Int* info);
void scipy_zungqr_(const Int* m, const Int* n, const Int* k, c64* a, const Int* lda, const c64* tau, c64* work, const Int* lwork, Int* info);

void scipy_sgelsd_(const Int* m, const Int* n, const Int* nrhs, float* a, const Int* lda, float* b, const Int* ldb, float* s, const float* rcond, Int* rank, float* work, const Int* lwork, Int* iwork, Int* info);
void scipy_dgelsd_(const Int* m, const Int* n, const Int* nrhs, double* a, const Int* lda, double* b, const Int* ldb, double* s, const double* rcond, Int* rank, double* work, const Int* lwork, Int* iwork, Int* info);
void scipy_cgelsd_(const Int* m, const Int* n, const Int* nrhs, c32* a, const Int* lda, c32* b, const Int* ldb, float* s, const float* rcond, Int* rank, c32* work, const Int* lwork, float* rwork, Int* iwork, Int* info);
void scipy_zgelsd_(const Int* m, const Int* n, const Int* nrhs, c64* a, const Int* lda, c64* b, const Int* ldb, double* s, const double* rcond, Int* rank, c64* work, const Int* lwork, double* rwork, Int* iwork, Int* info);
// clang-format on
}

// ---- geqrf: Householder QR in place ----
inline Int geqrf(Int m, Int n, float* a, Int lda, float* tau, float* work, Int lwork) {
  Int info = 0;
  scipy_sgeqrf_(&m, &n, a, &lda, tau, work, &lwork, &info);
  return info;
}
inline Int geqrf(Int m, Int n, double* a, Int lda, double* tau, double* work, Int lwork) {
  Int info = 0;
  scipy_dgeqrf_(&m, &n, a, &lda, tau, work, &lwork, &info);
  return info;
}
inline Int geqrf(Int m, Int n, c32* a, Int lda, c32* tau, c32* work, Int lwork) {
  Int info = 0;
  scipy_cgeqrf_(&m, &n, a, &lda, tau, work, &lwork, &info);
  return info;
}
inline Int geqrf(Int m, Int n, c64* a, Int lda, c64* tau, c64* work, Int lwork) {
  Int info = 0;
  scipy_zgeqrf_(&m, &n, a, &lda, tau, work, &lwork, &info);
  return info;
}

// ---- orgqr / ungqr: the first n columns of Q from k reflectors ----
inline Int orgqr(Int m, Int n, Int k, float* a, Int lda, const float* tau, float* work, Int lwork) {
  Int info = 0;
  scipy_sorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, &info);
  return info;
}
inline Int orgqr(Int m, Int n, Int k, double* a, Int lda, const double* tau, double* work,
                 Int lwork) {
  Int info = 0;
  scipy_dorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, &info);
  return info;
}
inline Int orgqr(Int m, Int n, Int k, c32* a, Int lda, const c32* tau, c32* work, Int lwork) {
  Int info = 0;
  scipy_cungqr_(&m, &n, &k, a, &lda, tau, work, &lwork, &info);
  return info;
}
inline Int orgqr(Int m, Int n, Int k, c64* a, Int lda, const c64* tau, c64* work, Int lwork) {
  Int info = 0;
  scipy_zungqr_(&m, &n, &k, a, &lda, tau, work, &lwork, &info);
  return info;
}

// ---- gelsd: minimum-norm least squares through the SVD (rwork: complex types only) ----
inline Int gelsd(Int m, Int n, Int nrhs, float* a, Int lda, float* b, Int ldb, float* s,
                 float rcond, Int* rank, float* work, Int lwork, float*, Int* iwork) {
  Int info = 0;
  scipy_sgelsd_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, iwork, &info);
  return info;
}
inline Int gelsd(Int m, Int n, Int nrhs, double* a, Int lda, double* b, Int ldb, double* s,
                 double rcond, Int* rank, double* work, Int lwork, double*, Int* iwork) {
  Int info = 0;
  scipy_dgelsd_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, iwork, &info);
  return info;
}
inline Int gelsd(Int m, Int n, Int nrhs, c32* a, Int lda, c32* b, Int ldb, float* s, float rcond,
                 Int* rank, c32* work, Int lwork, float* rwork, Int* iwork) {
  Int info = 0;
  scipy_cgelsd_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, rwork, iwork,
                &info);
  return info;
}
inline Int gelsd(Int m, Int n, Int nrhs, c64* a, Int lda, c64* b, Int ldb, double* s, double rcond,
                 Int* rank, c64* work, Int lwork, double* rwork, Int* iwork) {
  Int info = 0;
  scipy_zgelsd_(&m, &n, &nrhs, a, &lda, b, &ldb, s, &rcond, rank, work, &lwork, rwork, iwork,
                &info);
  return info;
}

}  // namespace gpula::detail::cpu::lapack
