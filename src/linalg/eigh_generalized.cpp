// Generalized symmetric-definite eigensolver front (eigh_generalized): argument checks, the
// broadcast batch, layouts, dispatch to the backend where the work runs.
//
// Layout: both operands are copied transposed into column-major workspaces, so the backend sees
// a and b themselves (for complex Hermitian input a plain copy would be conj(a), whose
// eigenvectors are conj(v)) and the triangle named by `lower` is the one read. The column-major
// eigenvectors are copied transposed back into the row-major v.
#include <gpula/linalg.h>

#include "linalg/eigh_generalized_backend.h"
#include "linalg/exec.h"

namespace gpula::linalg {

using detail::Failure;
using detail::LinalgExec;
using detail::product;
using detail::square_dst;
using detail::SquareBatch;
using detail::throw_error;

Eigh eigh_generalized(const TensorView& a, const TensorView& b, int type, bool lower,
                      bool eigvals_only, const LinalgOptions& options, Stream stream) {
  const char* op = "linalg.eigh";
  const int64_t n = detail::check_square(op, "a", a);
  const int64_t nb = detail::check_square(op, "b", b);
  detail::check_pair(op, "a", a, "b", b);
  if (nb != n)
    throw_error<InvalidArgument>(op, "a has shape ", a.shape_str(), " and b ", b.shape_str(),
                                 ": expected matrices of one order");
  if (type < 1 || type > 3) throw_error<InvalidArgument>(op, "type must be 1, 2 or 3, got ", type);
  const auto batch_or = detail::broadcast_batch(detail::batch_of(a, 2), detail::batch_of(b, 2));
  if (!batch_or)
    throw_error<InvalidArgument>(op, "batch dimensions of a ", a.shape_str(), " and b ",
                                 b.shape_str(), " do not broadcast");
  const Shape batch = *batch_or;
  return detail::run_linalg(op, "a", a.device, options, stream, [&](LinalgExec& x) {
    const int64_t count = product(batch);
    Eigh r;
    Tensor w = x.empty(detail::with(batch, {n}), real_type(a.dtype));
    Tensor v = eigvals_only ? Tensor{} : x.empty(detail::with(batch, {n, n}), a.dtype);
    Tensor info = x.empty(batch, DType::i32);
    if (count * n == 0) {
      x.zero(info.view());
    } else {
      Tensor wa = x.empty({count * n * n}, a.dtype);
      Tensor wb = x.empty({count * n * n}, a.dtype);
      const TensorView cm = square_dst(wa.data(), a.dtype, batch, n, true, x.exec());
      x.copy(detail::expand_batch(a, batch, 2), cm);
      x.copy(detail::expand_batch(b, batch, 2),
             square_dst(wb.data(), a.dtype, batch, n, true, x.exec()));
      x.backend(detail::cpu::eigh_generalized_backend, detail::cuda::eigh_generalized_backend)
          .sygvd(SquareBatch{wa.data(), a.dtype, n, count}, SquareBatch{wb.data(), a.dtype, n, count},
                 type, !lower, !eigvals_only, w.data(), static_cast<int32_t*>(info.data()),
                 x.call());
      if (!eigvals_only) x.copy(cm, v.view());
      if (options.check_info) x.check(info, Failure::generalized_eig, n);
    }
    r.w = x.result(w);
    if (!eigvals_only) r.v = x.result(v);
    r.info = x.result(info);
    return r;
  });
}

}  // namespace gpula::linalg
