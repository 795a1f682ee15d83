// CUDA backend of the matrix functions' element-wise passes (matrix_functions_backend.h): the
// kernels of kernels/matrix_functions.cu on the call's stream. Nothing here synchronizes; the
// Frobenius norms live in a scratch array from the stream-ordered pool.
#include "backend/cuda/kernels/matrix_functions.h"
#include "backend/cuda/linalg/common.h"
#include "linalg/matrix_functions_backend.h"

namespace gpula::detail::cuda {
namespace {

// The kernels' name for a real storage dtype (the front admits f16, bf16, f32, f64 only).
RealKind real_kind(DType t) {
  switch (t) {
    case DType::f16:
      return RealKind::f16;
    case DType::bf16:
      return RealKind::bf16;
    case DType::f32:
      return RealKind::f32;
    default:
      return RealKind::f64;
  }
}

class CudaMatrixFunctions final : public MatrixFunctionsBackend {
 public:
  void frobenius_normalize(const DenseBatch& x, const DenseBatch& y, double eps,
                           const LinalgCall& c) const override {
    const int64_t size = x.rows * x.cols;
    const Tensor sums = scratch(x.count * static_cast<int64_t>(sizeof(double)), c);
    GPULA_CHECK(c.op, cudaMemsetAsync(sums.data(), 0, x.count * sizeof(double), raw(c)));
    auto* s = static_cast<double*>(sums.data());
    GPULA_CHECK(c.op, launch_sum_squares(x.data, real_kind(x.dtype), x.count, size, s, raw(c)));
    GPULA_CHECK(c.op, launch_scale_convert(x.data, real_kind(x.dtype), y.data, real_kind(y.dtype),
                                           x.count, size, s, eps, raw(c)));
  }

  void convert(const DenseBatch& x, const DenseBatch& y, const LinalgCall& c) const override {
    GPULA_CHECK(c.op, launch_scale_convert(x.data, real_kind(x.dtype), y.data, real_kind(y.dtype),
                                           x.count, x.rows * x.cols, nullptr, 0.0, raw(c)));
  }

  void scale_columns(const DenseBatch& v, const void* f, bool conj, void* out,
                     const LinalgCall& c) const override {
    GPULA_CHECK(c.op, launch_scale_columns(v.data, elem_type(v.dtype), f, v.rows, v.cols, v.count,
                                           conj, out, raw(c)));
  }

  void hermitian_part(const SquareBatch& p, const LinalgCall& c) const override {
    GPULA_CHECK(c.op, launch_hermitian_part(p.data, elem_type(p.dtype), p.n, p.count, raw(c)));
  }
};

}  // namespace

const MatrixFunctionsBackend& matrix_functions_backend() {
  static const CudaMatrixFunctions backend;
  return backend;
}

}  // namespace gpula::detail::cuda
