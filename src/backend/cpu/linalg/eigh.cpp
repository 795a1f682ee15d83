// CPU backend of the symmetric/Hermitian eigensolver: LAPACK ?syevd / ?heevd (divide and
// conquer) per matrix, through the Fortran symbols OpenBLAS exports (declared here in the style
// of lapack.h). Batches of small matrices run one matrix per OpenMP thread; larger ones run one
// after another, each call using OpenBLAS's own threads. A matrix with NaN or Inf in the
// triangle that is read is not handed to LAPACK (which may misbehave on it): its eigenvalues
// and eigenvectors are NaN.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>
#include <vector>

#include "backend/cpu/base/lapack.h"
#include "backend/cpu/linalg/common.h"
#include "core/format.h"
#include "linalg/eigh_backend.h"

namespace gpula::detail::cpu {
namespace lapack {

extern "C" {
// clang-format off
void scipy_ssyevd_(const char* jobz, const char* uplo, const Int* n, float* a, const Int* lda, float* w, float* work, const Int* lwork, Int* iwork, const Int* liwork, Int* info, std::size_t, std::size_t);
void scipy_dsyevd_(const char* jobz, const char* uplo, const Int* n, double* a, const Int* lda, double* w, double* work, const Int* lwork, Int* iwork, const Int* liwork, Int* info, std::size_t, std::size_t);
void scipy_cheevd_(const char* jobz, const char* uplo, const Int* n, c32* a, const Int* lda, float* w, c32* work, const Int* lwork, float* rwork, const Int* lrwork, Int* iwork, const Int* liwork, Int* info, std::size_t, std::size_t);
void scipy_zheevd_(const char* jobz, const char* uplo, const Int* n, c64* a, const Int* lda, double* w, c64* work, const Int* lwork, double* rwork, const Int* lrwork, Int* iwork, const Int* liwork, Int* info, std::size_t, std::size_t);
// clang-format on
}

// ---- syevd / heevd: eigenvalues (jobz 'N') and eigenvectors ('V'); lwork = lrwork = liwork =
// -1 query the workspace sizes into work[0], rwork[0], iwork[0]. rwork is unused for real types.
inline Int heevd(char jobz, char uplo, Int n, float* a, Int lda, float* w, float* work, Int lwork,
                 float*, Int, Int* iwork, Int liwork) {
  Int info = 0;
  scipy_ssyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, &info, 1, 1);
  return info;
}
inline Int heevd(char jobz, char uplo, Int n, double* a, Int lda, double* w, double* work,
                 Int lwork, double*, Int, Int* iwork, Int liwork) {
  Int info = 0;
  scipy_dsyevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, &info, 1, 1);
  return info;
}
inline Int heevd(char jobz, char uplo, Int n, c32* a, Int lda, float* w, c32* work, Int lwork,
                 float* rwork, Int lrwork, Int* iwork, Int liwork) {
  Int info = 0;
  scipy_cheevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork, &info,
                1, 1);
  return info;
}
inline Int heevd(char jobz, char uplo, Int n, c64* a, Int lda, double* w, c64* work, Int lwork,
                 double* rwork, Int lrwork, Int* iwork, Int liwork) {
  Int info = 0;
  scipy_zheevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork, &info,
                1, 1);
  return info;
}

}  // namespace lapack

namespace {

// Whether the triangle `upper` (column-major, order n) of m is all finite.
template <class T>
bool triangle_finite(const T* m, int64_t n, bool upper) {
  for (int64_t j = 0; j < n; ++j) {
    const int64_t lo = upper ? 0 : j, hi = upper ? j + 1 : n;
    for (int64_t i = lo; i < hi; ++i)
      if (!finite(m[i + j * n])) return false;
  }
  return true;
}

class CpuEigh final : public EighBackend {
 public:
  void syevd(const SquareBatch& a, bool upper, bool vectors, void* w, int32_t* info,
             const LinalgCall& c) const override {
    const lapack::Int n = blas::to_int(a.n, c.op, "n");
    const char jobz = vectors ? 'V' : 'N', uplo = upper ? 'U' : 'L';
    visit_float(a.dtype, [&](auto t) {
      using T = decltype(t);
      using R = real_t<T>;
      T* base = static_cast<T*>(a.data);
      R* wb = static_cast<R*>(w);
      // Workspace sizes, once for the batch.
      T qwork{};
      R qrwork{};
      lapack::Int qiwork = 0;
      lapack::heevd(jobz, uplo, n, base, n, wb, &qwork, -1, &qrwork, -1, &qiwork, -1);
      const lapack::Int lwork = work_size(qwork);
      const lapack::Int lrwork = std::max<lapack::Int>(1, static_cast<lapack::Int>(qrwork));
      const lapack::Int liwork = std::max<lapack::Int>(1, qiwork);
      const bool par = parallel(a.count, a.n);
      const int lanes = par ? omp_get_max_threads() : 1;
      std::vector<T> work(static_cast<std::size_t>(lwork) * lanes);
      std::vector<R> rwork(static_cast<std::size_t>(lrwork) * lanes);
      std::vector<lapack::Int> iwork(static_cast<std::size_t>(liwork) * lanes);
      const int64_t nn = a.n * a.n;
      const blas::SerialScope serial(serial_blas(a.count, a.n));  // see serial_blas
#pragma omp parallel for schedule(static) num_threads(lanes) if (par)
      for (int64_t b = 0; b < a.count; ++b) {
        T* m = base + b * nn;
        R* wi = wb + b * a.n;
        if (!triangle_finite(m, a.n, upper)) {
          std::fill(wi, wi + a.n, std::numeric_limits<R>::quiet_NaN());
          if (vectors) std::fill(m, m + nn, T(std::numeric_limits<R>::quiet_NaN()));
          info[b] = 0;
          continue;
        }
        const int lane = par ? omp_get_thread_num() : 0;
        info[b] = static_cast<int32_t>(lapack::heevd(
            jobz, uplo, n, m, n, wi, work.data() + static_cast<std::size_t>(lwork) * lane, lwork,
            rwork.data() + static_cast<std::size_t>(lrwork) * lane, lrwork,
            iwork.data() + static_cast<std::size_t>(liwork) * lane, liwork));
      }
    });
    check_lapack(c, "syevd/heevd", info, a.count);
  }
};

}  // namespace

const EighBackend& eigh_backend() {
  static const CpuEigh backend;
  return backend;
}

}  // namespace gpula::detail::cpu
