#pragma once
// What the symmetric/Hermitian eigensolver front (eigh.cpp: eigh, eigvalsh) asks of a backend,
// on the batches of batch.h.
#include "linalg/batch.h"

namespace gpula::detail {

class EighBackend {
 public:
  virtual ~EighBackend() = default;

  // Full spectrum of each Hermitian (real symmetric) matrix of a, of which only the triangle
  // `upper` (else lower) is read: eigenvalues ascending into w (count * n reals of a's real
  // type), and with `vectors` the orthonormal eigenvectors in place of a (column j of item b
  // belongs to w[b * n + j]); a is destroyed either way. info (count int32): 0, or k > 0 when
  // the algorithm did not converge. Matrices with NaN or Inf in the triangle read give NaN
  // eigenvalues (and vectors) or info > 0, never a crash.
  virtual void syevd(const SquareBatch& a, bool upper, bool vectors, void* w, int32_t* info,
                     const LinalgCall& c) const = 0;
};

namespace cpu {
const EighBackend& eigh_backend();
}
namespace cuda {
// Throws NotCompiled("cuda") in a build without CUDA.
const EighBackend& eigh_backend();
}  // namespace cuda

}  // namespace gpula::detail
