#pragma once
// What the generalized symmetric-definite eigensolver front (eigh_generalized.cpp) asks of a
// backend, on the batches of batch.h.
#include "linalg/batch.h"

namespace gpula::detail {

class EighGeneralizedBackend {
 public:
  virtual ~EighGeneralizedBackend() = default;

  // LAPACK ?sygvd/?hegvd for each pair of a and b (same order and count), of which only the
  // triangle `upper` (else lower) is read: type (itype) 1, 2 or 3; eigenvalues ascending into
  // w (count * n reals), with `vectors` the eigenvectors in place of a; b is overwritten with
  // its Cholesky factor. info (count int32): 0; k in 1..n where the eigensolver did not converge;
  // n + k where b's leading minor of order k is not positive definite. Pairs with NaN or Inf in
  // a read triangle give NaN eigenvalues (and vectors) or info > 0, never a crash.
  virtual void sygvd(const SquareBatch& a, const SquareBatch& b, int type, bool upper,
                     bool vectors, void* w, int32_t* info, const LinalgCall& c) const = 0;
};

namespace cpu {
const EighGeneralizedBackend& eigh_generalized_backend();
}
namespace cuda {
// Throws NotCompiled("cuda") in a build without CUDA.
const EighGeneralizedBackend& eigh_generalized_backend();
}  // namespace cuda

}  // namespace gpula::detail
