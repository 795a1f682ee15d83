// CPU backend of the Bunch-Kaufman factorization: LAPACK ?sytrf (symmetric, also complex
// symmetric) or ?hetrf (complex Hermitian) per matrix; batches of small matrices run one matrix
// per OpenMP thread. Pivots go from LAPACK's Int (32-bit in scipy-openblas32) to int32 as they are.
#include <omp.h>

#include <vector>

#include "backend/cpu/base/lapack.h"
#include "backend/cpu/linalg/common.h"
#include "linalg/ldl_backend.h"

namespace gpula::detail::cpu {
namespace lapack {

extern "C" {
// clang-format off
void scipy_chetrf_(const char* uplo, const Int* n, c32* a, const Int* lda, Int* ipiv, c32* work, const Int* lwork, Int* info, std::size_t);
void scipy_zhetrf_(const char* uplo, const Int* n, c64* a, const Int* lda, Int* ipiv, c64* work, const Int* lwork, Int* info, std::size_t);
// clang-format on
}

// ?hetrf for complex types, ?sytrf (lapack.h) for real ones, where Hermitian is symmetric.
template <class T>
Int hetrf(char uplo, Int n, T* a, Int lda, Int* ipiv, T* work, Int lwork) {
  return sytrf(uplo, n, a, lda, ipiv, work, lwork);
}
inline Int hetrf(char uplo, Int n, c32* a, Int lda, Int* ipiv, c32* work, Int lwork) {
  Int info = 0;
  scipy_chetrf_(&uplo, &n, a, &lda, ipiv, work, &lwork, &info, 1);
  return info;
}
inline Int hetrf(char uplo, Int n, c64* a, Int lda, Int* ipiv, c64* work, Int lwork) {
  Int info = 0;
  scipy_zhetrf_(&uplo, &n, a, &lda, ipiv, work, &lwork, &info, 1);
  return info;
}

}  // namespace lapack

namespace {

static_assert(sizeof(lapack::Int) == sizeof(int32_t), "pivots are written in place as int32");

class CpuLdl final : public LdlBackend {
 public:
  void sytrf(const SquareBatch& a, bool upper, bool hermitian, int32_t* ipiv, int32_t* info,
             const LinalgCall& c) const override {
    const lapack::Int n = to_int(a.n, c, "n");
    const char uplo = upper ? 'U' : 'L';
    visit_float(a.dtype, [&](auto t) {
      using T = decltype(t);
      auto factor = [&](T* m, lapack::Int* p, T* work, lapack::Int lwork) {
        return hermitian ? lapack::hetrf(uplo, n, m, n, p, work, lwork)
                         : lapack::sytrf(uplo, n, m, n, p, work, lwork);
      };
      T query{};
      factor(item<T>(a, 0), ipiv, &query, -1);
      const lapack::Int lwork = work_size(query);
      const bool par = parallel(a.count, a.n);
      const int lanes = par ? omp_get_max_threads() : 1;
      std::vector<T> work(static_cast<std::size_t>(lwork) * lanes);
      const blas::SerialScope serial(serial_blas(a.count, a.n));  // see serial_blas
#pragma omp parallel for schedule(static) num_threads(lanes) if (par)
      for (int64_t b = 0; b < a.count; ++b) {
        const std::size_t lane = par ? static_cast<std::size_t>(omp_get_thread_num()) : 0;
        info[b] = static_cast<int32_t>(
            factor(item<T>(a, b), ipiv + b * a.n, work.data() + lwork * lane, lwork));
      }
    });
    check_lapack(c, hermitian ? "hetrf" : "sytrf", info, a.count);
  }
};

}  // namespace

const LdlBackend& ldl_backend() {
  static const CpuLdl backend;
  return backend;
}

}  // namespace gpula::detail::cpu
