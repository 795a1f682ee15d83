// CPU backend of the generalized symmetric-definite eigensolver: LAPACK ?sygvd / ?hegvd
// (Cholesky of b, reduction to a standard problem, divide and conquer) per pair, through the
// Fortran symbols scipy-openblas32 exports (declared here in the style of lapack.h). Batches of
// small matrices run one pair per OpenMP thread. A pair with NaN or Inf in a triangle that is
// read is not handed to LAPACK: its eigenvalues and eigenvectors are NaN.
#include <omp.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "backend/cpu/base/lapack.h"
#include "backend/cpu/linalg/common.h"
#include "linalg/eigh_generalized_backend.h"

namespace gpula::detail::cpu {
namespace lapack {

extern "C" {
// clang-format off
void scipy_ssygvd_(const Int* itype, const char* jobz, const char* uplo, const Int* n, float* a, const Int* lda, float* b, const Int* ldb, float* w, float* work, const Int* lwork, Int* iwork, const Int* liwork, Int* info, std::size_t, std::size_t);
void scipy_dsygvd_(const Int* itype, const char* jobz, const char* uplo, const Int* n, double* a, const Int* lda, double* b, const Int* ldb, double* w, double* work, const Int* lwork, Int* iwork, const Int* liwork, Int* info, std::size_t, std::size_t);
void scipy_chegvd_(const Int* itype, const char* jobz, const char* uplo, const Int* n, c32* a, const Int* lda, c32* b, const Int* ldb, float* w, c32* work, const Int* lwork, float* rwork, const Int* lrwork, Int* iwork, const Int* liwork, Int* info, std::size_t, std::size_t);
void scipy_zhegvd_(const Int* itype, const char* jobz, const char* uplo, const Int* n, c64* a, const Int* lda, c64* b, const Int* ldb, double* w, c64* work, const Int* lwork, double* rwork, const Int* lrwork, Int* iwork, const Int* liwork, Int* info, std::size_t, std::size_t);
// clang-format on
}

// ---- sygvd / hegvd: lwork = lrwork = liwork = -1 query the workspace sizes into work[0],
// rwork[0], iwork[0]. rwork is unused for real types.
inline Int hegvd(Int itype, char jobz, char uplo, Int n, float* a, float* b, float* w, float* work,
                 Int lwork, float*, Int, Int* iwork, Int liwork) {
  Int info = 0;
  scipy_ssygvd_(&itype, &jobz, &uplo, &n, a, &n, b, &n, w, work, &lwork, iwork, &liwork, &info, 1,
                1);
  return info;
}
inline Int hegvd(Int itype, char jobz, char uplo, Int n, double* a, double* b, double* w,
                 double* work, Int lwork, double*, Int, Int* iwork, Int liwork) {
  Int info = 0;
  scipy_dsygvd_(&itype, &jobz, &uplo, &n, a, &n, b, &n, w, work, &lwork, iwork, &liwork, &info, 1,
                1);
  return info;
}
inline Int hegvd(Int itype, char jobz, char uplo, Int n, c32* a, c32* b, float* w, c32* work,
                 Int lwork, float* rwork, Int lrwork, Int* iwork, Int liwork) {
  Int info = 0;
  scipy_chegvd_(&itype, &jobz, &uplo, &n, a, &n, b, &n, w, work, &lwork, rwork, &lrwork, iwork,
                &liwork, &info, 1, 1);
  return info;
}
inline Int hegvd(Int itype, char jobz, char uplo, Int n, c64* a, c64* b, double* w, c64* work,
                 Int lwork, double* rwork, Int lrwork, Int* iwork, Int liwork) {
  Int info = 0;
  scipy_zhegvd_(&itype, &jobz, &uplo, &n, a, &n, b, &n, w, work, &lwork, rwork, &lrwork, iwork,
                &liwork, &info, 1, 1);
  return info;
}

}  // namespace lapack

namespace {

// Whether the triangle `upper` (column-major, order n) of m is all finite.
template <class T>
bool triangle_finite(const T* m, int64_t n, bool upper) {
  for (int64_t j = 0; j < n; ++j)
    if (!all_finite(m + j * n + (upper ? 0 : j), upper ? j + 1 : n - j)) return false;
  return true;
}

class CpuEighGeneralized final : public EighGeneralizedBackend {
 public:
  void sygvd(const SquareBatch& a, const SquareBatch& b, int type, bool upper, bool vectors,
             void* w, int32_t* info, const LinalgCall& c) const override {
    const lapack::Int n = to_int(a.n, c, "n");
    const char jobz = vectors ? 'V' : 'N', uplo = upper ? 'U' : 'L';
    visit_float(a.dtype, [&](auto t) {
      using T = decltype(t);
      using R = real_t<T>;
      R* wb = static_cast<R*>(w);
      // Workspace sizes, once for the batch.
      T qwork{};
      R qrwork{};
      lapack::Int qiwork = 0;
      lapack::hegvd(type, jobz, uplo, n, item<T>(a, 0), item<T>(b, 0), wb, &qwork, -1, &qrwork, -1,
                    &qiwork, -1);
      const lapack::Int lwork = work_size(qwork);
      const lapack::Int lrwork = std::max<lapack::Int>(1, static_cast<lapack::Int>(qrwork));
      const lapack::Int liwork = std::max<lapack::Int>(1, qiwork);
      const bool par = parallel(a.count, a.n);
      const int lanes = par ? omp_get_max_threads() : 1;
      std::vector<T> work(static_cast<std::size_t>(lwork) * lanes);
      std::vector<R> rwork(static_cast<std::size_t>(lrwork) * lanes);
      std::vector<lapack::Int> iwork(static_cast<std::size_t>(liwork) * lanes);
      const R nan = std::numeric_limits<R>::quiet_NaN();
      const blas::SerialScope serial(serial_blas(a.count, a.n));  // see serial_blas
#pragma omp parallel for schedule(static) num_threads(lanes) if (par)
      for (int64_t i = 0; i < a.count; ++i) {
        T* m = item<T>(a, i);
        R* wi = wb + i * a.n;
        if (!triangle_finite(m, a.n, upper) || !triangle_finite(item<T>(b, i), a.n, upper)) {
          std::fill(wi, wi + a.n, nan);
          if (vectors) std::fill(m, m + a.n * a.n, T(nan));
          info[i] = 0;
          continue;
        }
        const std::size_t lane = par ? static_cast<std::size_t>(omp_get_thread_num()) : 0;
        info[i] = static_cast<int32_t>(
            lapack::hegvd(type, jobz, uplo, n, m, item<T>(b, i), wi, work.data() + lwork * lane,
                          lwork, rwork.data() + lrwork * lane, lrwork,
                          iwork.data() + liwork * lane, liwork));
      }
    });
    check_lapack(c, "sygvd/hegvd", info, a.count);
  }
};

}  // namespace

const EighGeneralizedBackend& eigh_generalized_backend() {
  static const CpuEighGeneralized backend;
  return backend;
}

}  // namespace gpula::detail::cpu
