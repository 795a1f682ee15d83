// CPU backend of QR and least squares: LAPACK (OpenBLAS) per matrix, one after another (each
// call uses OpenBLAS's own threads). Workspaces are sized once per batch by LAPACK's queries.
#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>

#include "backend/cpu/linalg/common.h"
#include "backend/cpu/linalg/lapack_qr.h"
#include "core/format.h"
#include "linalg/qr_backend.h"

namespace gpula::detail::cpu {
namespace {

class CpuQr final : public QrBackend {
 public:
  void geqrf(const DenseBatch& a, void* tau, const LinalgCall& c) const override {
    const lapack::Int m = to_int(a.rows, c, "m"), n = to_int(a.cols, c, "n");
    const int64_t k = std::min(a.rows, a.cols);
    if (a.count == 0 || k == 0) return;
    visit_float(a.dtype, [&](auto t) {
      using T = decltype(t);
      T* tp = static_cast<T*>(tau);
      T query{};
      check_lapack(c, "geqrf", lapack::geqrf(m, n, item<T>(a, 0), m, tp, &query, -1));
      const lapack::Int lwork = work_size(query);
      std::vector<T> work(lwork);
      for (int64_t b = 0; b < a.count; ++b)
        check_lapack(c, "geqrf",
                     lapack::geqrf(m, n, item<T>(a, b), m, tp + b * k, work.data(), lwork));
    });
  }

  void orgqr(const DenseBatch& q, int64_t k, const void* tau, const LinalgCall& c) const override {
    const lapack::Int m = to_int(q.rows, c, "m"), n = to_int(q.cols, c, "columns of q"),
                      ki = to_int(k, c, "k");
    if (q.count == 0 || n == 0) return;
    visit_float(q.dtype, [&](auto t) {
      using T = decltype(t);
      const T* tp = static_cast<const T*>(tau);
      T query{};
      check_lapack(c, "orgqr", lapack::orgqr(m, n, ki, item<T>(q, 0), m, tp, &query, -1));
      const lapack::Int lwork = work_size(query);
      std::vector<T> work(lwork);
      for (int64_t b = 0; b < q.count; ++b)
        check_lapack(c, "orgqr",
                     lapack::orgqr(m, n, ki, item<T>(q, b), m, tp + b * k, work.data(), lwork));
    });
  }

  void lstsq(const DenseBatch& a, const DenseBatch& b, double rcond, void* s, int32_t* rank,
             const LinalgCall& c) const override {
    const lapack::Int m = to_int(a.rows, c, "m"), n = to_int(a.cols, c, "n"),
                      nrhs = to_int(b.cols, c, "right-hand sides"), ldb = to_int(b.rows, c, "ldb");
    if (a.count == 0 || m == 0 || n == 0) return;
    const int64_t k = std::min(a.rows, a.cols);
    visit_float(a.dtype, [&](auto t) {
      using T = decltype(t);
      using R = real_t<T>;
      // gelsd does not return on an Inf in a (its SVD iterates for ever) and rejects a NaN
      // through LAPACK's xerbla, which prints to stderr. So every item is scanned first (one
      // pass, against an SVD), whatever the caller checked: LinAlgError, as a failed SVD.
      for (int64_t i = 0; i < a.count; ++i)
        if (!all_finite(item<T>(a, i), a.rows * a.cols))
          throw LinAlgError(cat("[", c.op, "] a contains infs or NaNs",
                                a.count > 1 ? cat(" (batch index ", i, ")") : std::string(),
                                "; LAPACK's gelsd cannot solve it"));
      R* sp = static_cast<R*>(s);
      const R rc = static_cast<R>(rcond);
      lapack::Int rk = 0, iquery = 0;
      T query{};
      R rquery{};
      check_lapack(c, "gelsd",
                   lapack::gelsd(m, n, nrhs, item<T>(a, 0), m, item<T>(b, 0), ldb, sp, rc, &rk,
                                 &query, -1, &rquery, &iquery));
      const lapack::Int lwork = work_size(query);
      std::vector<T> work(lwork);
      std::vector<R> rwork(std::max<lapack::Int>(1, static_cast<lapack::Int>(rquery)));
      std::vector<lapack::Int> iwork(std::max<lapack::Int>(1, iquery));
      for (int64_t i = 0; i < a.count; ++i) {
        const lapack::Int info =
            lapack::gelsd(m, n, nrhs, item<T>(a, i), m, item<T>(b, i), ldb, sp + i * k, rc, &rk,
                          work.data(), lwork, rwork.data(), iwork.data());
        check_lapack(c, "gelsd", info);
        if (info > 0)
          throw LinAlgError(cat("[", c.op, "] the SVD did not converge",
                                a.count > 1 ? cat(" (batch index ", i, ")") : std::string()));
        rank[i] = static_cast<int32_t>(rk);
      }
    });
  }
};

}  // namespace

const QrBackend& qr_backend() {
  static const CpuQr backend;
  return backend;
}

}  // namespace gpula::detail::cpu
