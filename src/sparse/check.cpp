// Structural checks of CSR views, shared by every sparse operation's front, and the checks of
// dense operands the product fronts share (sparse/check.h).
#include "sparse/check.h"

#include <algorithm>
#include <limits>
#include <string>

#include "core/format.h"

namespace gpula::sparse {

namespace {

// `what` names the expected length in messages ("nnz = " for indices and values).
void check_array(const TensorView& t, const char* name, int64_t length, const std::string& op,
                 const char* what = "") {
  using gpula::detail::throw_error;
  if (t.ndim() != 1) {
    throw_error<InvalidArgument>(op.c_str(), name, " must be 1-D, got shape ", t.shape_str());
  }
  if (t.shape[0] < 0) {
    throw_error<InvalidArgument>(op.c_str(), name, " must have a non-negative length, got ",
                                 t.shape[0]);
  }
  if (t.shape[0] != length) {
    throw_error<InvalidArgument>(op.c_str(), name, " must have length ", what, length, ", got ",
                                 t.shape[0]);
  }
  if (length > 1 && t.strides[0] != 1) {
    throw_error<InvalidArgument>(op.c_str(), name, " must be contiguous, got stride ",
                                 t.strides[0]);
  }
  if (length > 0 && t.data == nullptr) {
    throw_error<InvalidArgument>(op.c_str(), name, " has no data");
  }
}

}  // namespace

void check_csr(const CsrView& a, std::string_view op_view) {
  using gpula::detail::throw_error;
  const std::string op(op_view);
  if (a.rows < 0 || a.cols < 0) {
    throw_error<InvalidArgument>(op.c_str(), "shape must be non-negative, got (", a.rows, ", ",
                                 a.cols, ")");
  }
  if (a.rows == std::numeric_limits<int64_t>::max()) {
    throw_error<InvalidArgument>(op.c_str(), "shape (", a.rows, ", ", a.cols,
                                 ") has too many rows: indptr would need rows + 1 entries");
  }
  if (a.indptr.dtype != DType::i32 && a.indptr.dtype != DType::i64) {
    throw_error<DTypeError>(op.c_str(), "indptr must be int32 or int64, got ",
                            name(a.indptr.dtype));
  }
  if (a.indices.dtype != a.indptr.dtype) {
    throw_error<DTypeError>(op.c_str(), "indices must have indptr's dtype ",
                            name(a.indptr.dtype), ", got ", name(a.indices.dtype));
  }
  const DType v = a.values.dtype;
  if (v != DType::f32 && v != DType::f64 && v != DType::c64 && v != DType::c128) {
    throw_error<DTypeError>(op.c_str(),
                            "values must be float32, float64, complex64 or complex128, got ",
                            name(v));
  }
  if (a.values.ndim() != 1) {
    throw_error<InvalidArgument>(op.c_str(), "values must be 1-D, got shape ",
                                 a.values.shape_str());
  }
  check_array(a.indptr, "indptr", a.rows + 1, op);
  check_array(a.indices, "indices", a.nnz(), op, "nnz = ");
  check_array(a.values, "values", a.nnz(), op, "nnz = ");
  if (a.indptr.device != a.values.device || a.indices.device != a.values.device) {
    throw_error<InvalidArgument>(op.c_str(), "indptr, indices and values must be on one device, got ",
                                 to_string(a.indptr.device), ", ", to_string(a.indices.device), ", ",
                                 to_string(a.values.device));
  }
}

}  // namespace gpula::sparse

namespace gpula::sparse::detail {

using gpula::detail::throw_error;

void check_dense(const TensorView& t, const char* op, const char* name, int64_t rows, int64_t cols,
                 DType dtype, Device device, const char* what_shape) {
  if (t.ndim() != 2) {
    throw_error<InvalidArgument>(op, name, " must be 2-D, got shape ", t.shape_str());
  }
  if (t.dtype != dtype) {
    throw_error<DTypeError>(op, name, " must have A's dtype ", gpula::name(dtype), ", got ",
                            gpula::name(t.dtype));
  }
  if (t.device != device) {
    throw_error<InvalidArgument>(op, name, " must be on A's device ", to_string(device), ", got ",
                                 to_string(t.device));
  }
  if ((rows >= 0 && t.shape[0] != rows) || (cols >= 0 && t.shape[1] != cols)) {
    throw_error<InvalidArgument>(op, name, " must have shape ", what_shape, ", got ",
                                 t.shape_str());
  }
  if (t.numel() > 0 && t.data == nullptr) throw_error<InvalidArgument>(op, name, " has no data");
}

void check_op(Op o, const char* op) {
  if (o != Op::none && o != Op::transpose && o != Op::conjugate_transpose) {
    throw_error<InvalidArgument>(op, "op must be none, transpose or conjugate_transpose, got ",
                                 static_cast<int>(o));
  }
}

bool is_row_major(const TensorView& t) {
  if (t.ndim() != 2) return false;
  const bool inner = t.shape[1] <= 1 || t.strides[1] == 1;
  const bool outer = t.shape[0] <= 1 || t.strides[0] >= std::max<int64_t>(1, t.shape[1]);
  return inner && outer;
}

int64_t row_major_ld(const TensorView& t) {
  const int64_t minimum = std::max<int64_t>(1, t.shape[1]);
  return t.shape[0] <= 1 ? minimum : std::max(minimum, t.strides[0]);
}

}  // namespace gpula::sparse::detail
