#pragma once
// What the QR / least-squares front (qr.cpp: qr, lstsq) asks of a backend, on the batches of
// batch.h.
#include "linalg/batch.h"

namespace gpula::detail {

class QrBackend {
 public:
  virtual ~QrBackend() = default;

  // Householder QR in place (LAPACK geqrf): a (rows m x cols n per item) ends with R on and
  // above the diagonal and the reflectors below; tau holds count * min(m, n) scalars of a's
  // dtype.
  virtual void geqrf(const DenseBatch& a, void* tau, const LinalgCall& c) const = 0;
  // The first q.cols columns of Q (orgqr/ungqr) in place of q, whose first k columns hold the
  // reflectors from geqrf (tau: count * k scalars, k <= q.cols <= q.rows).
  virtual void orgqr(const DenseBatch& q, int64_t k, const void* tau,
                     const LinalgCall& c) const = 0;
  // Least squares / minimum norm: a (m x n per item) is destroyed; b is column-major with
  // b.rows = max(m, n) and b.cols right-hand sides per item, holding B in its first m rows on
  // entry and X in its first n rows on exit. The CPU uses ?gelsd (any rank; singular values
  // <= rcond * s_max count as zero, rcond < 0: eps), writes each item's singular values to s
  // (count * min(m, n) reals) and its rank to rank (count int32), and raises InvalidArgument
  // where a holds Inf or NaN (gelsd does not return on them). A GPU uses QR, assumes a has full
  // rank, and takes neither rcond, s nor rank (the front passes null).
  virtual void lstsq(const DenseBatch& a, const DenseBatch& b, double rcond, void* s, int32_t* rank,
                     const LinalgCall& c) const = 0;
};

namespace cpu {
const QrBackend& qr_backend();
}
namespace cuda {
// Throws NotCompiled("cuda") in a build without CUDA.
const QrBackend& qr_backend();
}  // namespace cuda

}  // namespace gpula::detail
