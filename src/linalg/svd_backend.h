#pragma once
// What the SVD front (svd.cpp: svd, svdvals) asks of a backend, on the batches of batch.h.
#include <gpula/linalg.h>

#include "linalg/batch.h"

namespace gpula::detail {

// `count` matrices X (rows x cols each, column-major, ld = rows) to decompose as
// X = U diag(s) VT with k = min(rows, cols):
//   s:  count * k reals of a's real type, descending;
//   u:  count * rows * ucols (ld rows), ucols = rows when `full`, else k;
//   vt: count * vrows * cols (ld vrows), vrows = cols when `full`, else k.
// u and vt are both null when only the singular values are wanted. a is destroyed.
struct SvdBatch {
  DenseBatch a;
  void* s = nullptr;
  void* u = nullptr;
  void* vt = nullptr;
  bool full = false;

  int64_t k() const { return a.rows < a.cols ? a.rows : a.cols; }
  int64_t ucols() const { return full ? a.rows : k(); }
  int64_t vrows() const { return full ? a.cols : k(); }
  bool vectors() const { return u != nullptr; }
};

class SvdBackend {
 public:
  virtual ~SvdBackend() = default;

  // Whether the routine `method` resolves to for `count` matrices of rows x cols needs
  // rows >= cols; the front then hands the backend the transposed problem.
  virtual bool needs_tall(linalg::SvdMethod method, int64_t rows, int64_t cols,
                          int64_t count) const = 0;
  // The SVD of every matrix of p. info (count int32): 0, or > 0 where the algorithm did not
  // converge. rows >= cols holds when needs_tall said so. Matrices with NaN or Inf give NaN
  // results or info > 0, never a crash.
  virtual void gesvd(const SvdBatch& p, linalg::SvdMethod method, int32_t* info,
                     const LinalgCall& c) const = 0;
};

namespace cpu {
const SvdBackend& svd_backend();
}
namespace cuda {
// Throws NotCompiled("cuda") in a build without CUDA.
const SvdBackend& svd_backend();
}  // namespace cuda

}  // namespace gpula::detail
