// CPU backend of the triangular solve: BLAS ?trsm per matrix (scipy-openblas32). Batches of
// small matrices run one matrix per OpenMP thread; larger ones one after another, each call on
// OpenBLAS's own threads.
#include "backend/cpu/linalg/common.h"
#include "linalg/triangular_backend.h"

namespace gpula::detail::cpu {
namespace {

CBLAS_TRANSPOSE cblas_op(linalg::Trans op) {
  switch (op) {
    case linalg::Trans::none:
      return CblasNoTrans;
    case linalg::Trans::transpose:
      return CblasTrans;
    default:
      return CblasConjTrans;
  }
}

class CpuTriangular final : public TriangularBackend {
 public:
  void trsm_right(const SquareBatch& a, bool upper, linalg::Trans op, bool unit,
                  const DenseBatch& y, const LinalgCall& c) const override {
    if (y.rows == 0 || a.n == 0) return;
    const lapack::Int n = to_int(a.n, c, "n"), m = to_int(y.rows, c, "right-hand sides");
    const CBLAS_UPLO uplo = upper ? CblasUpper : CblasLower;
    const CBLAS_DIAG diag = unit ? CblasUnit : CblasNonUnit;
    visit_float(a.dtype, [&](auto t) {
      using T = decltype(t);
      const blas::SerialScope serial(serial_blas(y.count, a.n));  // see serial_blas
#pragma omp parallel for schedule(static) if (parallel(y.count, a.n))
      for (int64_t b = 0; b < y.count; ++b)
        lapack::trsm(CblasRight, uplo, cblas_op(op), diag, m, n, item<T>(a, b), n, item<T>(y, b),
                     m);
    });
  }

  void zero_diagonal(const SquareBatch& a, int32_t* info, const LinalgCall&) const override {
    visit_float(a.dtype, [&](auto t) {
      using T = decltype(t);
      for (int64_t b = 0; b < a.count; ++b) {
        const T* m = item<T>(a, b);
        info[b] = 0;
        for (int64_t i = 0; i < a.n; ++i) {
          if (m[i * (a.n + 1)] == T(0)) {
            info[b] = static_cast<int32_t>(i + 1);
            break;
          }
        }
      }
    });
  }
};

}  // namespace

const TriangularBackend& triangular_backend() {
  static const CpuTriangular backend;
  return backend;
}

}  // namespace gpula::detail::cpu
