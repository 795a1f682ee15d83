// CPU backend of the general eigensolver: LAPACK ?geev (jobvl 'N', jobvr 'V' or 'N') per
// matrix, through the Fortran symbols OpenBLAS exports (declared here in the style of
// lapack.h). Batches of small matrices run one matrix per OpenMP thread; larger ones run one
// after another, each call using OpenBLAS's own threads. Real input: ?geev returns wr, wi and
// the eigenvectors in its real packed form (a conjugate pair j, j + 1 as VR(:, j) +- i
// VR(:, j + 1)), unpacked here into complex columns. A matrix with NaN or Inf anywhere is not
// handed to LAPACK (which may misbehave on it): its eigenvalues and eigenvectors are NaN.
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
#include "linalg/eig_backend.h"

namespace gpula::detail::cpu {
namespace lapack {

extern "C" {
// clang-format off
void scipy_sgeev_(const char* jobvl, const char* jobvr, const Int* n, float* a, const Int* lda, float* wr, float* wi, float* vl, const Int* ldvl, float* vr, const Int* ldvr, float* work, const Int* lwork, Int* info, std::size_t, std::size_t);
void scipy_dgeev_(const char* jobvl, const char* jobvr, const Int* n, double* a, const Int* lda, double* wr, double* wi, double* vl, const Int* ldvl, double* vr, const Int* ldvr, double* work, const Int* lwork, Int* info, std::size_t, std::size_t);
void scipy_cgeev_(const char* jobvl, const char* jobvr, const Int* n, c32* a, const Int* lda, c32* w, c32* vl, const Int* ldvl, c32* vr, const Int* ldvr, c32* work, const Int* lwork, float* rwork, Int* info, std::size_t, std::size_t);
void scipy_zgeev_(const char* jobvl, const char* jobvr, const Int* n, c64* a, const Int* lda, c64* w, c64* vl, const Int* ldvl, c64* vr, const Int* ldvr, c64* work, const Int* lwork, double* rwork, Int* info, std::size_t, std::size_t);
// clang-format on
}

// ---- geev, right eigenvectors only (jobvl 'N'); lwork = -1 queries the workspace size into
// work[0]. Real: wr, wi and packed real vr. Complex: w and vr complex, rwork of 2 n reals.
inline Int geev_real(char jobvr, Int n, float* a, Int lda, float* wr, float* wi, float* vr,
                     Int ldvr, float* work, Int lwork) {
  const char jobvl = 'N';
  const Int ldvl = 1;
  Int info = 0;
  scipy_sgeev_(&jobvl, &jobvr, &n, a, &lda, wr, wi, nullptr, &ldvl, vr, &ldvr, work, &lwork, &info,
               1, 1);
  return info;
}
inline Int geev_real(char jobvr, Int n, double* a, Int lda, double* wr, double* wi, double* vr,
                     Int ldvr, double* work, Int lwork) {
  const char jobvl = 'N';
  const Int ldvl = 1;
  Int info = 0;
  scipy_dgeev_(&jobvl, &jobvr, &n, a, &lda, wr, wi, nullptr, &ldvl, vr, &ldvr, work, &lwork, &info,
               1, 1);
  return info;
}
inline Int geev_complex(char jobvr, Int n, c32* a, Int lda, c32* w, c32* vr, Int ldvr, c32* work,
                        Int lwork, float* rwork) {
  const char jobvl = 'N';
  const Int ldvl = 1;
  Int info = 0;
  scipy_cgeev_(&jobvl, &jobvr, &n, a, &lda, w, nullptr, &ldvl, vr, &ldvr, work, &lwork, rwork,
               &info, 1, 1);
  return info;
}
inline Int geev_complex(char jobvr, Int n, c64* a, Int lda, c64* w, c64* vr, Int ldvr, c64* work,
                        Int lwork, double* rwork) {
  const char jobvl = 'N';
  const Int ldvl = 1;
  Int info = 0;
  scipy_zgeev_(&jobvl, &jobvr, &n, a, &lda, w, nullptr, &ldvl, vr, &ldvr, work, &lwork, rwork,
               &info, 1, 1);
  return info;
}

}  // namespace lapack

namespace {

// Complex column j of the real packed eigenvectors vr (column-major, order n) given the
// imaginary parts wi: a column whose eigenvalue has wi > 0 pairs with the next one (real and
// imaginary part), wi < 0 with the previous one (the conjugate); otherwise it is real. The same
// rule as the CUDA unpacking kernel (kernels/eig.cu).
template <class R>
void unpack_column(const R* vr, const R* wi, int64_t n, int64_t j, std::complex<R>* out) {
  const R* c = vr + j * n;
  if (wi[j] > 0 && j + 1 < n) {
    for (int64_t i = 0; i < n; ++i) out[i] = {c[i], c[i + n]};
  } else if (wi[j] < 0 && j > 0) {
    for (int64_t i = 0; i < n; ++i) out[i] = {c[i - n], -c[i]};
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = {c[i], R(0)};
  }
}

class CpuEig final : public EigBackend {
 public:
  void geev(const SquareBatch& a, void* w, void* v, int32_t* info,
            const LinalgCall& c) const override {
    const lapack::Int n = blas::to_int(a.n, c.op, "n");
    const bool vectors = v != nullptr;
    const char jobvr = vectors ? 'V' : 'N';
    const lapack::Int ldvr = vectors ? n : 1;
    visit_float(a.dtype, [&](auto t) {
      using T = decltype(t);
      using R = real_t<T>;
      using C = std::complex<R>;
      constexpr bool real = std::is_same_v<T, R>;
      T* base = static_cast<T*>(a.data);
      C* wb = static_cast<C*>(w);
      C* vb = static_cast<C*>(v);
      const int64_t nn = a.n * a.n;
      // Workspace size, once for the batch.
      T qwork{};
      R rdummy{};
      T tdummy{};
      if constexpr (real) {
        lapack::geev_real(jobvr, n, base, n, &rdummy, &rdummy, &tdummy, ldvr, &qwork, -1);
      } else {
        lapack::geev_complex(jobvr, n, base, n, &tdummy, &tdummy, ldvr, &qwork, -1, &rdummy);
      }
      const lapack::Int lwork = work_size(qwork);
      const bool par = parallel(a.count, a.n);
      const int lanes = par ? omp_get_max_threads() : 1;
      std::vector<T> work(static_cast<std::size_t>(lwork) * lanes);
      // Per lane: real: wr, wi (n each) and the packed vr (n * n with vectors); complex: rwork.
      const std::size_t lane_r = real ? static_cast<std::size_t>(2 * a.n + (vectors ? nn : 0))
                                      : static_cast<std::size_t>(2 * a.n);
      std::vector<R> rws(lane_r * lanes);
      constexpr R nan = std::numeric_limits<R>::quiet_NaN();
      const blas::SerialScope serial(serial_blas(a.count, a.n));  // see serial_blas
#pragma omp parallel for schedule(static) num_threads(lanes) if (par)
      for (int64_t b = 0; b < a.count; ++b) {
        T* m = base + b * nn;
        C* wi_out = wb + b * a.n;
        C* vi = vectors ? vb + b * nn : nullptr;
        if (!all_finite(m, nn)) {
          std::fill(wi_out, wi_out + a.n, C(nan, nan));
          if (vectors) std::fill(vi, vi + nn, C(nan, nan));
          info[b] = 0;
          continue;
        }
        const int lane = par ? omp_get_thread_num() : 0;
        T* wk = work.data() + static_cast<std::size_t>(lwork) * lane;
        R* rw = rws.data() + lane_r * lane;
        if constexpr (real) {
          R* wr = rw;
          R* wim = rw + a.n;
          R* vr = vectors ? rw + 2 * a.n : &rdummy;
          info[b] =
              static_cast<int32_t>(lapack::geev_real(jobvr, n, m, n, wr, wim, vr, ldvr, wk, lwork));
          for (int64_t j = 0; j < a.n; ++j) wi_out[j] = C(wr[j], wim[j]);
          if (vectors)
            for (int64_t j = 0; j < a.n; ++j) unpack_column(vr, wim, a.n, j, vi + j * a.n);
        } else {
          T dummy{};
          info[b] = static_cast<int32_t>(lapack::geev_complex(
              jobvr, n, m, n, wi_out, vectors ? vi : &dummy, ldvr, wk, lwork, rw));
        }
      }
    });
    check_lapack(c, "geev", info, a.count);
  }
};

}  // namespace

const EigBackend& eig_backend() {
  static const CpuEig backend;
  return backend;
}

}  // namespace gpula::detail::cpu
