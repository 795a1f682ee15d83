#pragma once
// What the Bunch-Kaufman front (ldl.cpp: ldl_factor) asks of a backend, on the batches of
// batch.h.
#include <gpula/dtype.h>

#include "linalg/batch.h"

namespace gpula::detail {

class LdlBackend {
 public:
  virtual ~LdlBackend() = default;

  // LAPACK ?sytrf (or ?hetrf with `hermitian` for complex a) in place on the triangle `upper`
  // (else lower): D's blocks and L's (U's) multipliers in LAPACK's packed form, the 1-based
  // LAPACK ipiv into ipiv (count * n int32), info (count int32): k > 0 where D(k, k) is exactly
  // zero (the factorization is still complete).
  virtual void sytrf(const SquareBatch& a, bool upper, bool hermitian, int32_t* ipiv,
                     int32_t* info, const LinalgCall& c) const = 0;
  // Whether sytrf takes matrices of type t with `hermitian` (cuSOLVER has no hetrf: the front
  // then factors on the host).
  virtual bool takes(DType /*t*/, bool /*hermitian*/) const { return true; }
};

namespace cpu {
const LdlBackend& ldl_backend();
}
namespace cuda {
// Throws NotCompiled("cuda") in a build without CUDA.
const LdlBackend& ldl_backend();
}  // namespace cuda

}  // namespace gpula::detail
