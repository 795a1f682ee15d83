// CUDA backend of the triangular solve: cuBLAS. Batches of matrices up to order kBatchedMaxN:
// cublas<t>trsmBatched over device pointer arrays, one call; one matrix, or larger ones:
// cublas<t>trsm_64 per matrix on the stream. The zero-diagonal scan is gpula's kernel
// (kernels/triangular.h). Nothing here synchronizes.
#include "backend/cuda/kernels/triangular.h"
#include "backend/cuda/linalg/common.h"
#include "backend/cuda/linalg/solver_calls.h"
#include "linalg/triangular_backend.h"

namespace gpula::detail::cuda {
namespace {

constexpr int64_t kBatchedMaxN = 128;  // as the solve backend's batched cuBLAS calls

cublasOperation_t cublas_op(linalg::Trans op) {
  switch (op) {
    case linalg::Trans::none:
      return CUBLAS_OP_N;
    case linalg::Trans::transpose:
      return CUBLAS_OP_T;
    default:
      return CUBLAS_OP_C;
  }
}

// The device pointer array of `count` contiguous items of `bytes` each.
Tensor item_pointers(void* base, int64_t bytes, int64_t count, const LinalgCall& c) {
  Tensor p = scratch(count * static_cast<int64_t>(sizeof(void*)), c);
  GPULA_CHECK(c.op,
              launch_fill_pointers(static_cast<void**>(p.data()), base, bytes, count, raw(c)));
  return p;
}

class CudaTriangular final : public TriangularBackend {
 public:
  void trsm_right(const SquareBatch& a, bool upper, linalg::Trans op, bool unit,
                  const DenseBatch& y, const LinalgCall& c) const override {
    const int64_t n = a.n, m = y.rows;
    if (m == 0 || n == 0) return;
    cublasHandle_t h = context(c.stream.device.index).cublas(raw(c));
    const cublasDiagType_t diag = unit ? CUBLAS_DIAG_UNIT : CUBLAS_DIAG_NON_UNIT;
    const int64_t es = static_cast<int64_t>(size_of(a.dtype));
    if (y.count > 1 && n <= kBatchedMaxN) {
      note(c, cat("cublas<t>trsmBatched: ", y.count, " matrices of order ", n, ", ", m,
                  " right-hand sides"));
      const char* routine = "cublas<t>trsmBatched";
      Tensor pa = item_pointers(a.data, n * n * es, a.count, c);
      Tensor py = item_pointers(y.data, m * n * es, y.count, c);
      calls::trsm_batched(h, a.dtype, CUBLAS_SIDE_RIGHT, fill(upper), cublas_op(op),
                          checked_int(m, c, "right-hand sides", routine),
                          checked_int(n, c, "n", routine), static_cast<void**>(pa.data()),
                          static_cast<int>(n), static_cast<void**>(py.data()),
                          static_cast<int>(m), checked_int(y.count, c, "batch", routine), c.op,
                          diag);
      return;
    }
    note(c, cat("cublas<t>trsm: ", y.count, " x order ", n, ", ", m, " right-hand sides"));
    for (int64_t b = 0; b < y.count; ++b)
      calls::trsm(h, a.dtype, CUBLAS_SIDE_RIGHT, fill(upper), cublas_op(op), m, n,
                  static_cast<const char*>(a.data) + b * n * n * es, n,
                  static_cast<char*>(y.data) + b * m * n * es, m, c.op, diag);
  }

  void zero_diagonal(const SquareBatch& a, int32_t* info, const LinalgCall& c) const override {
    GPULA_CHECK(c.op, launch_first_zero_diagonal(a.data, elem_type(a.dtype), a.n, a.count, info,
                                                 raw(c)));
  }
};

}  // namespace

const TriangularBackend& triangular_backend() {
  static const CudaTriangular backend;
  return backend;
}

}  // namespace gpula::detail::cuda
