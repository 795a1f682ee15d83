// gpula::distributed fronts over cusolverMg: argument checks, the host column-major staging
// copy, dispatch to the backend, and the info checks. Layout: a row-major (n, n) host matrix is
// copied into a column-major buffer holding a itself (for eigh with lower=false, a^T, so the
// triangle cusolverMgSyevd reads, the lower one, holds a's upper triangle).
#include <gpula/distributed.h>
#include <gpula/error.h>

#include <algorithm>
#include <cstring>

#include "distributed/mg_backend.h"
#include "core/format.h"

namespace gpula::distributed {

using detail::cat;
using detail::throw_error;

namespace {

void check_options(const char* op, const MgOptions& o) {
  if (o.block_size < 1)
    throw_error<InvalidArgument>(op, "block_size expected >= 1, got ", o.block_size);
  for (std::size_t i = 0; i < o.devices.size(); ++i) {
    if (o.devices[i] < 0)
      throw_error<InvalidArgument>(op, "devices expected non-negative ordinals, got ",
                                   o.devices[i]);
    if (std::count(o.devices.begin(), o.devices.end(), o.devices[i]) > 1)
      throw_error<InvalidArgument>(op, "devices expected distinct ordinals, got ", o.devices[i],
                                   " twice");
  }
}

void check_host_float(const char* op, const char* name, const TensorView& v) {
  if (v.device.is_cuda())
    throw_error<InvalidArgument>(op, name, " expected a host array, got ", v.describe());
  if (v.dtype != DType::f32 && v.dtype != DType::f64)
    throw_error<DTypeError>(op, name, " expected float32 or float64, got ", v.describe());
}

int64_t check_square_matrix(const char* op, const TensorView& a) {
  check_host_float(op, "a", a);
  if (a.ndim() != 2 || a.shape[0] != a.shape[1])
    throw_error<InvalidArgument>(op, "a expected a square matrix (n, n), got shape ",
                                 a.shape_str());
  return a.shape[0];
}

detail::cuda::MgCall call_of(const char* op, const MgOptions& o) {
  return {op, o.devices, o.block_size};
}

Tensor host(const Shape& s, DType t) { return Tensor::empty(s, t, Stream{}); }

// A host column-major copy of a (transposed: of a^T).
Tensor column_major(const TensorView& a, bool transposed) {
  const int64_t rows = a.shape[0], cols = a.ndim() == 2 ? a.shape[1] : 1;
  Tensor buf = host({cols, rows}, a.dtype);  // row-major (cols, rows) is column-major (rows, cols)
  TensorView dst = buf.view();
  dst.shape = {rows, cols};
  dst.strides = {1, rows};
  TensorView src = a;
  if (a.ndim() == 1) {
    src.shape = {rows, 1};
    src.strides = {a.strides[0], 0};
  }
  if (transposed) std::swap(src.strides[0], src.strides[1]);
  copy(src, dst);
  return buf;
}

// The row-major (rows, cols) Tensor of a column-major buffer (transposed: of its transpose,
// square buffers only).
Tensor row_major(const Tensor& cm, int64_t rows, int64_t cols, DType t, bool transposed = false) {
  Tensor out = host({rows, cols}, t);
  TensorView src = cm.view();
  src.shape = {rows, cols};
  src.strides = transposed ? Shape{rows, 1} : Shape{1, rows};
  copy(src, out.view());
  return out;
}

}  // namespace

Tensor cholesky(const TensorView& a, bool lower, const MgOptions& options) {
  const char* op = "distributed.cholesky";
  const int64_t n = check_square_matrix(op, a);
  check_options(op, options);
  if (n == 0) return host({0, 0}, a.dtype);
  // cusolverMg factors the lower triangle only: for upper, stage a^T (whose lower triangle is
  // a's upper one); its factor L gives U = L^T, read back transposed.
  Tensor cm = column_major(a, !lower);
  int info = 0;
  detail::cuda::mg_potrf(call_of(op, options), a.dtype, n, cm.data(), &info);
  if (info > 0 && options.check_info)
    throw NotPositiveDefinite(
        cat("[", op, "] the leading minor of order ", info, " is not positive definite"), info, -1);
  Tensor r = row_major(cm, n, n, a.dtype, !lower);
  const std::size_t es = size_of(a.dtype);
  char* p = static_cast<char*>(r.data());
  for (int64_t i = 0; i < n; ++i)  // zero the triangle that is not the factor
    for (int64_t j = 0; j < n; ++j)
      if (lower ? j > i : j < i) std::memset(p + (i * n + j) * es, 0, es);
  return r;
}

Tensor solve(const TensorView& a, const TensorView& b, linalg::Assume assume_a, bool lower,
             const MgOptions& options) {
  const char* op = "distributed.solve";
  const int64_t n = check_square_matrix(op, a);
  check_host_float(op, "b", b);
  check_options(op, options);
  if (b.dtype != a.dtype)
    throw_error<DTypeError>(op, "b expected a's dtype, got ", b.describe(), " and ", a.describe());
  if ((b.ndim() != 1 && b.ndim() != 2) || b.shape[0] != n)
    throw_error<InvalidArgument>(op, "b expected shape (", n, ",) or (", n, ", k), got ",
                                 b.shape_str());
  if (assume_a == linalg::Assume::sym)
    throw_error<NotSupported>(op,
                              "assume_a sym: cusolverMg has no symmetric indefinite solver; "
                              "use gen or pos");
  const int64_t k = b.ndim() == 2 ? b.shape[1] : 1;
  const Shape xs = b.shape;
  if (n == 0 || k == 0) return host(xs, a.dtype);
  Tensor acm = column_major(a, assume_a == linalg::Assume::pos && !lower);
  Tensor bcm = column_major(b, false);
  int info = 0;
  if (assume_a == linalg::Assume::pos) {
    detail::cuda::mg_potrf_potrs(call_of(op, options), a.dtype, n, k, acm.data(), bcm.data(),
                                 &info);
    if (info > 0 && options.check_info)
      throw NotPositiveDefinite(
          cat("[", op, "] the leading minor of order ", info, " is not positive definite"), info,
          -1);
  } else {
    detail::cuda::mg_getrf_getrs(call_of(op, options), a.dtype, n, k, acm.data(), bcm.data(),
                                 &info);
    if (info > 0 && options.check_info)
      throw SingularMatrix(
          cat("[", op, "] a is singular: U[", info - 1, ", ", info - 1, "] is exactly zero"),
          info - 1, -1);
  }
  Tensor x = row_major(bcm, n, k, a.dtype);
  if (b.ndim() == 1) {  // the (n, 1) result as (n,)
    TensorView v = x.view();
    v.shape = {n};
    v.strides = {1};
    Tensor x1 = host({n}, a.dtype);
    copy(v, x1.view());
    return x1;
  }
  return x;
}

linalg::Eigh eigh(const TensorView& a, bool lower, bool eigvals_only, const MgOptions& options) {
  const char* op = "distributed.eigh";
  const int64_t n = check_square_matrix(op, a);
  check_options(op, options);
  linalg::Eigh r;
  r.w = host({n}, a.dtype);
  r.info = host({}, DType::i32);
  *static_cast<int32_t*>(r.info.data()) = 0;
  if (n == 0) {
    if (!eigvals_only) r.v = host({0, 0}, a.dtype);
    return r;
  }
  Tensor cm = column_major(a, !lower);
  int info = 0;
  detail::cuda::mg_syevd(call_of(op, options), a.dtype, n, cm.data(), r.w.data(), !eigvals_only,
                         &info);
  *static_cast<int32_t*>(r.info.data()) = info;
  if (info != 0 && options.check_info)
    throw_error<LinAlgError>(op, "eigenvalues did not converge (info ", info, ")");
  if (!eigvals_only) r.v = row_major(cm, n, n, a.dtype);
  return r;
}

}  // namespace gpula::distributed
