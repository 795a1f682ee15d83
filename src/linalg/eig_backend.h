#pragma once
// What the general (non-symmetric) eigensolver front (eig.cpp: eig, eigvals) asks of a backend,
// on the batches of batch.h.
#include "linalg/batch.h"

namespace gpula::detail {

// The complex type of the eigenvalues of a matrix of type t (f32, c64 -> c64; f64, c128 -> c128).
inline DType eig_complex_type(DType t) {
  return t == DType::f32 || t == DType::c64 ? DType::c64 : DType::c128;
}

class EigBackend {
 public:
  virtual ~EigBackend() = default;

  // Eigenvalues of each matrix of a into w (count * n of eig_complex_type(a.dtype)), and with v
  // (non-null: count column-major n x n of that complex type) the right eigenvectors, unit
  // 2-norm, column j of item b belonging to w[b * n + j]. Real a: complex conjugate pairs come
  // out exactly conjugate (positive imaginary part first), as LAPACK ?geev returns them. a is
  // destroyed. info (count int32): 0, or k > 0 when the QR algorithm did not converge (w and v
  // of that item undefined). A matrix with NaN or Inf anywhere is not handed to the solver: its
  // w (and v) are NaN and its info is 0.
  virtual void geev(const SquareBatch& a, void* w, void* v, int32_t* info,
                    const LinalgCall& c) const = 0;
};

namespace cpu {
const EigBackend& eig_backend();
}
namespace cuda {
// Throws NotCompiled("cuda") in a build without CUDA.
const EigBackend& eig_backend();
}  // namespace cuda

}  // namespace gpula::detail
