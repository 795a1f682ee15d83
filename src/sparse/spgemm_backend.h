#pragma once
// Backends of SpGEMM C = A B, stateless: Gustavson's algorithm with OpenMP on the CPU,
// cusparseSpGEMM on a GPU. A and B are validated, of one dtype, index dtype and device, and
// the product has at least one term (the front builds the empty ones).
#include <gpula/sparse.h>

namespace gpula::sparse::detail {

namespace cpu {
CsrMatrix spgemm(const CsrView& a, const CsrView& b);
}
namespace cuda {
// `stream` on A's device; returns once C is complete (C's nnz decides its allocation).
CsrMatrix spgemm(const CsrView& a, const CsrView& b, Stream stream);
}  // namespace cuda

}  // namespace gpula::sparse::detail
