#pragma once
// What the product fronts (SpMV, SpMM, SDDMM, SpGEMM) share: the checks of op and of dense
// operands, the row-major facts the cuSPARSE backends need, and the stream a product runs on.
#include <gpula/sparse.h>

#include <memory>

namespace gpula::sparse::detail {

// Checks a dense operand: 2-D of shape (rows, cols), `dtype`, on `device`. Throws
// InvalidArgument / DTypeError "[op] name must ..." naming the shape, dtype or device found.
void check_dense(const TensorView& t, const char* op, const char* name, int64_t rows, int64_t cols,
                 DType dtype, Device device, const char* what_shape);

// InvalidArgument unless `o` is none, transpose or conjugate_transpose.
void check_op(Op o, const char* op);

// Row-major with leading dimension >= cols: strides (ld, 1) (size-1 dimensions any stride).
bool is_row_major(const TensorView& t);
// The leading dimension of a row-major view (at least max(1, cols)).
int64_t row_major_ld(const TensorView& t);

// The caller's stream moved to `device`: a product runs (and allocates) on its matrix's device.
inline Stream on_device(Stream s, Device device) {
  s.device = device;
  return s;
}

// What a planned product (SpMV, SpMM, SDDMM) holds: the checked matrix, op, options, the
// CsrMatrix the view belongs to (when built from one) and the backend plan.
template <class BackendPlan>
struct PlannedProduct {
  CsrView a;
  Op op = Op::none;
  CommonOptions options;
  CsrMatrix keep;
  std::unique_ptr<BackendPlan> plan;
};

// The Impl of a planned product over `a` (validated here, or the view of `keep`, validated when
// it was built): op checked, then the backend plan made by make(a, o) for a's device.
template <class Impl, class Make>
std::unique_ptr<Impl> plan_product(const CsrView& a, const CsrMatrix* keep, Op o,
                                   const CommonOptions& options, const char* op, Make&& make) {
  if (keep == nullptr) validate_csr(a, op);
  check_op(o, op);
  auto impl = std::make_unique<Impl>();
  impl->a = a;
  impl->op = o;
  impl->options = options;
  if (keep != nullptr) impl->keep = *keep;
  impl->plan = make(a, o);
  return impl;
}

}  // namespace gpula::sparse::detail
