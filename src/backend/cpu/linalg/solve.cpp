// CPU backend of the dense solvers: LAPACK (OpenBLAS) per matrix. Batches of small matrices run
// one matrix per OpenMP thread (OpenBLAS keeps such sizes single-threaded); larger ones run one
// after another, each call using OpenBLAS's own threads.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "backend/cpu/base/lapack.h"
#include "backend/cpu/linalg/common.h"
#include "core/format.h"
#include "linalg/solve_backend.h"

namespace gpula::detail::cpu {
namespace {

// det, or sign and log|det|, of one matrix from its LU factorization. Products are kept as a
// mantissa and a binary exponent, so that neither overflows before the end.
template <class T>
void det_from_lu(const T* lu, int64_t n, const lapack::Int* ipiv, bool singular, T* det_or_sign,
                 real_t<T>* logabs) {
  using R = real_t<T>;
  using W = std::conditional_t<is_complex_v<T>, std::complex<double>, double>;
  W m = 1.0;
  int64_t e = 0;
  double log_sum = 0.0;
  bool neg = false;
  for (int64_t i = 0; i < n; ++i) {
    if (ipiv[i] != i + 1) neg = !neg;
    const W u = static_cast<W>(lu[i + i * n]);
    if (u == W(0.0)) singular = true;
    if (logabs) {
      const double au = std::abs(u);
      log_sum += std::log(au);
      m *= au == 0.0 ? W(0.0) : u / au;  // the phase (or sign) only
    } else {
      m *= u;
      int k = 0;
      const double am = std::abs(m);
      if (am != 0.0 && std::isfinite(am)) {
        std::frexp(am, &k);
        m *= std::ldexp(1.0, -k);
        e += k;
      }
    }
  }
  if (neg) m = -m;
  if (logabs) {
    if (singular) {
      *det_or_sign = T(0);
      *logabs = -std::numeric_limits<R>::infinity();
    } else {
      *det_or_sign = static_cast<T>(m);
      *logabs = static_cast<R>(log_sum);
    }
    return;
  }
  if (singular) {
    *det_or_sign = T(0);
    return;
  }
  const int ex = static_cast<int>(std::clamp<int64_t>(e, -4000, 4000));  // past this: 0 or inf
  if constexpr (is_complex_v<T>) {
    *det_or_sign =
        T(static_cast<R>(std::ldexp(m.real(), ex)), static_cast<R>(std::ldexp(m.imag(), ex)));
  } else {
    *det_or_sign = static_cast<T>(std::ldexp(m, ex));
  }
}

class CpuSolve final : public SolveBackend {
 public:
  void potrf(const SquareBatch& a, bool upper, int32_t* info, const LinalgCall& c) const override {
    const lapack::Int n = to_int(a.n, c, "n");
    visit_float(a.dtype, [&](auto t) {
      using T = decltype(t);
      const blas::SerialScope serial(serial_blas(a.count, a.n));  // see serial_blas
#pragma omp parallel for schedule(static) if (parallel(a.count, a.n))
      for (int64_t b = 0; b < a.count; ++b)
        info[b] = lapack::potrf(upper ? 'U' : 'L', n, item<T>(a, b), n);
    });
    check_lapack(c, "potrf", info, a.count);
  }

  void potrs_right(const SquareBatch& f, bool upper, const DenseBatch& y,
                   const LinalgCall& c) const override {
    const lapack::Int n = to_int(f.n, c, "n"), m = to_int(y.rows, c, "rows of b");
    if (m == 0) return;
    visit_float(f.dtype, [&](auto t) {
      using T = decltype(t);
      // Y F^H F = B (upper) or Y F F^H = B (lower): peel off the rightmost factor first.
      const CBLAS_UPLO uplo = upper ? CblasUpper : CblasLower;
      const CBLAS_TRANSPOSE first = upper ? CblasNoTrans : CblasConjTrans;
      const CBLAS_TRANSPOSE second = upper ? CblasConjTrans : CblasNoTrans;
      const blas::SerialScope serial(serial_blas(y.count, f.n));  // see serial_blas
#pragma omp parallel for schedule(static) if (parallel(y.count, f.n))
      for (int64_t b = 0; b < y.count; ++b) {
        lapack::trsm(CblasRight, uplo, first, CblasNonUnit, m, n, item<T>(f, b), n, item<T>(y, b),
                     m);
        lapack::trsm(CblasRight, uplo, second, CblasNonUnit, m, n, item<T>(f, b), n, item<T>(y, b),
                     m);
      }
    });
  }

  void getrf(const SquareBatch& a, int32_t* ipiv, int32_t* info,
             const LinalgCall& c) const override {
    const lapack::Int n = to_int(a.n, c, "n");
    visit_float(a.dtype, [&](auto t) {
      using T = decltype(t);
      const blas::SerialScope serial(serial_blas(a.count, a.n));  // see serial_blas
#pragma omp parallel for schedule(static) if (parallel(a.count, a.n))
      for (int64_t b = 0; b < a.count; ++b)
        info[b] = lapack::getrf(n, item<T>(a, b), n, ipiv + b * a.n);
    });
    check_lapack(c, "getrf", info, a.count);
  }

  void getrs(const SquareBatch& lu, const int32_t* ipiv, bool transpose, const DenseBatch& x,
             const LinalgCall& c) const override {
    const lapack::Int n = to_int(lu.n, c, "n"), k = to_int(x.cols, c, "columns of b");
    if (k == 0) return;
    std::vector<lapack::Int> bad(x.count, 0);
    visit_float(lu.dtype, [&](auto t) {
      using T = decltype(t);
      const blas::SerialScope serial(serial_blas(x.count, lu.n));  // see serial_blas
#pragma omp parallel for schedule(static) if (parallel(x.count, lu.n))
      for (int64_t b = 0; b < x.count; ++b)
        bad[b] = lapack::getrs(transpose ? 'T' : 'N', n, k, item<T>(lu, b), n, ipiv + b * lu.n,
                               item<T>(x, b), n);
    });
    for (lapack::Int v : bad) check_lapack(c, "getrs", v);
  }

  void sysv(const SquareBatch& a, bool upper, const DenseBatch& x, int32_t* info,
            const LinalgCall& c) const override {
    const lapack::Int n = to_int(a.n, c, "n"), k = to_int(x.cols, c, "columns of b");
    const char uplo = upper ? 'U' : 'L';
    visit_float(a.dtype, [&](auto t) {
      using T = decltype(t);
      T query{};
      std::vector<lapack::Int> ipiv(a.n);
      lapack::sytrf(uplo, n, item<T>(a, 0), n, ipiv.data(), &query, -1);
      const lapack::Int lwork = work_size(query);
      std::vector<T> work(lwork);
      for (int64_t b = 0; b < a.count; ++b) {
        info[b] = lapack::sytrf(uplo, n, item<T>(a, b), n, ipiv.data(), work.data(), lwork);
        check_lapack(c, "sytrf", info[b]);
        if (info[b] > 0 || k == 0) continue;
        const lapack::Int st =
            lapack::sytrs(uplo, n, k, item<T>(a, b), n, ipiv.data(), item<T>(x, b), n);
        check_lapack(c, "sytrs", st);
      }
    });
  }

  void gesv_refined(const SquareBatch& a, const DenseBatch& b, const DenseBatch& x, linalg::Refine,
                    int32_t* info, const LinalgCall& c) const override {
    log(LogLevel::debug,
        cat("[", c.op, "] the CPU backend has no mixed-precision refinement; plain LU solve"),
        c.logger ? *c.logger : LogSink{});
    std::memcpy(x.data, b.data, size_of(b.dtype) * b.rows * b.cols * b.count);
    std::vector<int32_t> ipiv(a.n * a.count);
    getrf(a, ipiv.data(), info, c);
    getrs(a, ipiv.data(), false, x, c);
  }

  void inv(const SquareBatch& a, int32_t* info, const LinalgCall& c) const override {
    const lapack::Int n = to_int(a.n, c, "n");
    std::vector<int32_t> ipiv(a.n * a.count);
    getrf(a, ipiv.data(), info, c);
    visit_float(a.dtype, [&](auto t) {
      using T = decltype(t);
      T query{};
      lapack::getri(n, item<T>(a, 0), n, ipiv.data(), &query, -1);
      const lapack::Int lwork = work_size(query);
      const bool par = parallel(a.count, a.n);
      const int lanes = par ? omp_get_max_threads() : 1;
      std::vector<T> work(static_cast<std::size_t>(lwork) * lanes);
      const blas::SerialScope serial(serial_blas(a.count, a.n));  // see serial_blas
#pragma omp parallel for schedule(static) num_threads(lanes) if (par)
      for (int64_t b = 0; b < a.count; ++b) {
        if (info[b] != 0) continue;
        T* w = work.data() + static_cast<std::size_t>(lwork) * omp_get_thread_num();
        lapack::getri(n, item<T>(a, b), n, ipiv.data() + b * a.n, w, lwork);
      }
    });
  }

  void det(const SquareBatch& a, void* det_or_sign, void* logabs,
           const LinalgCall& c) const override {
    std::vector<int32_t> ipiv(a.n * a.count), info(a.count);
    getrf(a, ipiv.data(), info.data(), c);
    visit_float(a.dtype, [&](auto t) {
      using T = decltype(t);
      using R = real_t<T>;
      for (int64_t b = 0; b < a.count; ++b)
        det_from_lu<T>(item<T>(a, b), a.n, ipiv.data() + b * a.n, info[b] != 0,
                       static_cast<T*>(det_or_sign) + b,
                       logabs ? static_cast<R*>(logabs) + b : nullptr);
    });
  }

  void zero_triangle(const SquareBatch& a, bool upper, const LinalgCall&) const override {
    const std::size_t es = size_of(a.dtype);
    auto* p = static_cast<char*>(a.data);
    const int64_t n = a.n;
    for (int64_t b = 0; b < a.count; ++b) {
      char* m = p + b * n * n * static_cast<int64_t>(es);
      for (int64_t j = 0; j < n; ++j) {
        // column j: rows [0, j) are above the diagonal, rows (j, n) below
        const int64_t lo = upper ? 0 : j + 1, hi = upper ? j : n;
        if (hi > lo) std::memset(m + (lo + j * n) * static_cast<int64_t>(es), 0, (hi - lo) * es);
      }
    }
  }

  void shift_pivots(int32_t* p, int64_t count, int64_t n, int32_t delta, int32_t* bad,
                    const LinalgCall&) const override {
    // Output range [lo, lo + n): 1-based for delta >= 0, 0-based for delta = -1.
    const int64_t lo = delta < 0 ? 1 + static_cast<int64_t>(delta) : 1;
    for (int64_t i = 0; i < count; ++i) {
      const int64_t v = static_cast<int64_t>(p[i]) + delta;
      if (v < lo || v >= lo + n) {
        p[i] = static_cast<int32_t>(i % n + lo);
        ++*bad;
      } else {
        p[i] = static_cast<int32_t>(v);
      }
    }
  }
};

}  // namespace

const SolveBackend& solve_backend() {
  static const CpuSolve backend;
  return backend;
}

}  // namespace gpula::detail::cpu
