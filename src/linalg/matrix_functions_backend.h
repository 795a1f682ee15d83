#pragma once
// What the matrix-function front (matrix_functions.cpp: orthogonalize, inv_root, sqrtm_psd,
// polar) asks of a backend beyond matmul, eigh and svd, on the batches of batch.h: the
// element-wise passes around those calls. Every pointer is on the device the backend runs on;
// items are contiguous.
#include "linalg/batch.h"

namespace gpula::detail {

class MatrixFunctionsBackend {
 public:
  virtual ~MatrixFunctionsBackend() = default;

  // y = x / (||x||_F + eps) for each of the x.count items of x.rows * x.cols elements (any
  // order: the norm is over the whole item), the sum of squares taken in double. x and y hold
  // as many items of the same size; their dtypes (f16, bf16, f32 or f64) may differ, y's is
  // rounded to (nearest even).
  virtual void frobenius_normalize(const DenseBatch& x, const DenseBatch& y, double eps,
                                   const LinalgCall& c) const = 0;
  // y = x element by element, rounded to y.dtype; dtypes and sizes as frobenius_normalize's.
  virtual void convert(const DenseBatch& x, const DenseBatch& y, const LinalgCall& c) const = 0;
  // out = conj(v) diag(f) (v diag(f) without `conj`; real v ignores it) for each of the
  // v.count rows x cols items of v, read row-major here (element (i, j) of item b at
  // (b * rows + i) * cols + j, as the eigh and svd fronts return their vectors; batch.h's
  // column-major reading scales rows instead): out[b, i, j] = conj(v[b, i, j]) * f[b * cols + j],
  // f holding v.count * cols reals of v's real type.
  virtual void scale_columns(const DenseBatch& v, const void* f, bool conj, void* out,
                             const LinalgCall& c) const = 0;
  // p = (p + p^H) / 2 in place for each n x n item of p (either reading: the result is
  // exactly Hermitian, its diagonal real; real p becomes exactly symmetric).
  virtual void hermitian_part(const SquareBatch& p, const LinalgCall& c) const = 0;
};

namespace cpu {
const MatrixFunctionsBackend& matrix_functions_backend();
}
namespace cuda {
// Throws NotCompiled("cuda") in a build without CUDA.
const MatrixFunctionsBackend& matrix_functions_backend();
}  // namespace cuda

}  // namespace gpula::detail
