// Structural checks of CSR views, shared by every sparse operation's front.
#include <gpula/sparse.h>

#include <limits>
#include <string>

#include "core/format.h"

namespace gpula::sparse {

namespace {

// `what` names the expected length in messages ("nnz = " for indices and values).
void check_array(const TensorView& t, const char* name, int64_t length, const std::string& op,
                 const char* what = "") {
  using detail::throw_error;
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
  using detail::throw_error;
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
