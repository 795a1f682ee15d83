// CPU backend of the SVD: LAPACK ?gesdd (divide and conquer) per matrix, through the Fortran
// symbols OpenBLAS exports (declared here in the style of lapack.h). Every SvdMethod runs
// gesdd: the method names GPU algorithms and is ignored here. Batches of small matrices run one
// matrix per OpenMP thread; larger ones run one after another, each call using OpenBLAS's own
// threads. A matrix with NaN or Inf is not handed to LAPACK (which may misbehave on it): its
// singular values and vectors are NaN.
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
#include "linalg/svd_backend.h"

namespace gpula::detail::cpu {
namespace lapack {

extern "C" {
// clang-format off
void scipy_sgesdd_(const char* jobz, const Int* m, const Int* n, float* a, const Int* lda, float* s, float* u, const Int* ldu, float* vt, const Int* ldvt, float* work, const Int* lwork, Int* iwork, Int* info, std::size_t);
void scipy_dgesdd_(const char* jobz, const Int* m, const Int* n, double* a, const Int* lda, double* s, double* u, const Int* ldu, double* vt, const Int* ldvt, double* work, const Int* lwork, Int* iwork, Int* info, std::size_t);
void scipy_cgesdd_(const char* jobz, const Int* m, const Int* n, c32* a, const Int* lda, float* s, c32* u, const Int* ldu, c32* vt, const Int* ldvt, c32* work, const Int* lwork, float* rwork, Int* iwork, Int* info, std::size_t);
void scipy_zgesdd_(const char* jobz, const Int* m, const Int* n, c64* a, const Int* lda, double* s, c64* u, const Int* ldu, c64* vt, const Int* ldvt, c64* work, const Int* lwork, double* rwork, Int* iwork, Int* info, std::size_t);
// clang-format on
}

// ---- gesdd: SVD by divide and conquer; jobz 'A' (full U, VT), 'S' (economy), 'N' (values
// only). lwork = -1 queries the workspace size into work[0]. rwork: complex types only; iwork
// holds 8 min(m, n) entries.
inline Int gesdd(char jobz, Int m, Int n, float* a, Int lda, float* s, float* u, Int ldu, float* vt,
                 Int ldvt, float* work, Int lwork, float*, Int* iwork) {
  Int info = 0;
  scipy_sgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, &info, 1);
  return info;
}
inline Int gesdd(char jobz, Int m, Int n, double* a, Int lda, double* s, double* u, Int ldu,
                 double* vt, Int ldvt, double* work, Int lwork, double*, Int* iwork) {
  Int info = 0;
  scipy_dgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, &info, 1);
  return info;
}
inline Int gesdd(char jobz, Int m, Int n, c32* a, Int lda, float* s, c32* u, Int ldu, c32* vt,
                 Int ldvt, c32* work, Int lwork, float* rwork, Int* iwork) {
  Int info = 0;
  scipy_cgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, &info,
                1);
  return info;
}
inline Int gesdd(char jobz, Int m, Int n, c64* a, Int lda, double* s, c64* u, Int ldu, c64* vt,
                 Int ldvt, c64* work, Int lwork, double* rwork, Int* iwork) {
  Int info = 0;
  scipy_zgesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork, &info,
                1);
  return info;
}

}  // namespace lapack

namespace {

// LAPACK's minimum rwork of ?gesdd for complex types (jobz 'N', else 'S'/'A').
int64_t rwork_size(bool vectors, int64_t m, int64_t n) {
  const int64_t mn = std::min(m, n), mx = std::max(m, n);
  if (!vectors) return 7 * mn;
  return std::max(5 * mn * mn + 5 * mn, 2 * mx * mn + 2 * mn * mn + mn);
}

class CpuSvd final : public SvdBackend {
 public:
  bool needs_tall(linalg::SvdMethod, int64_t, int64_t, int64_t) const override { return false; }

  void gesvd(const SvdBatch& p, linalg::SvdMethod, int32_t* info,
             const LinalgCall& c) const override {
    const int64_t rows = p.a.rows, cols = p.a.cols, k = p.k();
    const lapack::Int m = to_int(rows, c, "m"), n = to_int(cols, c, "n");
    const bool vectors = p.vectors();
    const char jobz = !vectors ? 'N' : (p.full ? 'A' : 'S');
    const int64_t ucols = p.ucols(), vrows = p.vrows();
    const lapack::Int ldu = std::max<lapack::Int>(1, m);
    const lapack::Int ldvt = std::max<lapack::Int>(1, to_int(vectors ? vrows : 1, c, "ldvt"));
    visit_float(p.a.dtype, [&](auto t) {
      using T = decltype(t);
      using R = real_t<T>;
      T* base = static_cast<T*>(p.a.data);
      R* sb = static_cast<R*>(p.s);
      T* ub = static_cast<T*>(p.u);
      T* vb = static_cast<T*>(p.vt);
      // Workspace size, once for the batch.
      T qwork{};
      std::vector<lapack::Int> qiwork(static_cast<std::size_t>(8 * k));
      R qrwork{};
      T du{}, dv{};
      lapack::gesdd(jobz, m, n, base, m, sb, vectors ? ub : &du, ldu, vectors ? vb : &dv, ldvt,
                    &qwork, -1, &qrwork, qiwork.data());
      const lapack::Int lwork = work_size(qwork);
      const int64_t lrwork = std::max<int64_t>(1, rwork_size(vectors, rows, cols));
      const int64_t liwork = 8 * k;
      const bool par = parallel(p.a.count, std::max(rows, cols));
      const int lanes = par ? omp_get_max_threads() : 1;
      std::vector<T> work(static_cast<std::size_t>(lwork) * lanes);
      std::vector<R> rwork(is_complex(p.a.dtype) ? static_cast<std::size_t>(lrwork) * lanes : 1);
      std::vector<lapack::Int> iwork(static_cast<std::size_t>(liwork) * lanes);
      const int64_t mn = rows * cols, us = rows * ucols, vs = vrows * cols;
      const R nan = std::numeric_limits<R>::quiet_NaN();
      const blas::SerialScope serial(serial_blas(p.a.count, std::max(rows, cols)));
#pragma omp parallel for schedule(static) num_threads(lanes) if (par)
      for (int64_t b = 0; b < p.a.count; ++b) {
        T* a = base + b * mn;
        R* s = sb + b * k;
        T* u = vectors ? ub + b * us : nullptr;
        T* vt = vectors ? vb + b * vs : nullptr;
        if (!all_finite(a, mn)) {
          std::fill(s, s + k, nan);
          if (vectors) {
            std::fill(u, u + us, T(nan));
            std::fill(vt, vt + vs, T(nan));
          }
          info[b] = 0;
          continue;
        }
        const int lane = par ? omp_get_thread_num() : 0;
        T dummy_u{}, dummy_v{};
        info[b] = static_cast<int32_t>(lapack::gesdd(
            jobz, m, n, a, m, s, vectors ? u : &dummy_u, ldu, vectors ? vt : &dummy_v, ldvt,
            work.data() + static_cast<std::size_t>(lwork) * lane, lwork,
            is_complex(p.a.dtype) ? rwork.data() + static_cast<std::size_t>(lrwork) * lane
                                  : rwork.data(),
            iwork.data() + static_cast<std::size_t>(liwork) * lane));
      }
    });
    check_lapack(c, "gesdd", info, p.a.count);
  }
};

}  // namespace

const SvdBackend& svd_backend() {
  static const CpuSvd backend;
  return backend;
}

}  // namespace gpula::detail::cpu
