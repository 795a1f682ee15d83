#pragma once
// Typed shim over CBLAS (OpenBLAS): one overload per element type, so templated backend code calls
// blas::gemm(...) for float, double, std::complex<float> and std::complex<double> alike.
#include <cblas.h>
#include <gpula/error.h>

#include <complex>
#include <cstdint>
#include <limits>
#include <string>

namespace gpula::detail::cpu::blas {

using Int = blasint;

// gpula's OpenBLAS is a pthreads build. Called from several OpenMP threads at once (the LAPACK
// backends that give each thread its own small matrix of a batch), a call it would thread nests
// its pool inside OpenMP's and oversubscribes the cores; OpenBLAS prints "Detect OpenMP Loop and
// this application may hang" where it can see the OpenMP runtime (once torch is imported). While
// such a loop runs, SerialScope keeps gpula's OpenBLAS on one thread; the last scope to end
// restores the thread count the first one found. Other threads' calls meanwhile run on one BLAS
// thread (slower, never wrong). blas_threads.cpp.
class SerialScope {
 public:
  explicit SerialScope(bool active);
  ~SerialScope();
  SerialScope(const SerialScope&) = delete;
  SerialScope& operator=(const SerialScope&) = delete;

 private:
  bool active_;
};

// BLAS sizes are 32-bit in this build: refuse larger values instead of truncating them.
inline Int to_int(int64_t v, const char* op, const char* what) {
  if (v < 0 || v > std::numeric_limits<Int>::max()) {
    throw NotSupported(std::string("[") + op + "] " + what + " = " + std::to_string(v) +
                       " is outside the range of the BLAS integer type");
  }
  return static_cast<Int>(v);
}

inline CBLAS_TRANSPOSE trans(bool t) { return t ? CblasTrans : CblasNoTrans; }

// C = alpha * op(A) @ op(B) + beta * C; beta == 0 does not read C.
inline void gemm(CBLAS_ORDER order, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, Int m, Int n, Int k,
                 float alpha, const float* a, Int lda, const float* b, Int ldb, float beta,
                 float* c, Int ldc) {
  scipy_cblas_sgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
inline void gemm(CBLAS_ORDER order, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, Int m, Int n, Int k,
                 double alpha, const double* a, Int lda, const double* b, Int ldb, double beta,
                 double* c, Int ldc) {
  scipy_cblas_dgemm(order, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
inline void gemm(CBLAS_ORDER order, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, Int m, Int n, Int k,
                 std::complex<float> alpha, const std::complex<float>* a, Int lda,
                 const std::complex<float>* b, Int ldb, std::complex<float> beta,
                 std::complex<float>* c, Int ldc) {
  scipy_cblas_cgemm(order, ta, tb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
}
inline void gemm(CBLAS_ORDER order, CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, Int m, Int n, Int k,
                 std::complex<double> alpha, const std::complex<double>* a, Int lda,
                 const std::complex<double>* b, Int ldb, std::complex<double> beta,
                 std::complex<double>* c, Int ldc) {
  scipy_cblas_zgemm(order, ta, tb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc);
}

}  // namespace gpula::detail::cpu::blas
