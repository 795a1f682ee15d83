// General (non-symmetric) eigensolver front: argument checks, layouts, dispatch to the backend
// where the work runs.
//
// Layout: a row-major matrix read column-major is its transpose, whose right eigenvectors are
// a's left ones. So a is copied transposed into a column-major workspace (the backend then sees
// a itself; the copy is needed anyway, as ?geev destroys its input), and the column-major
// complex eigenvectors the backend writes are copied transposed back into the row-major v.
#include <gpula/linalg.h>

#include "linalg/eig_backend.h"
#include "linalg/exec.h"

namespace gpula::linalg {

using detail::check_square;
using detail::eig_complex_type;
using detail::Failure;
using detail::LinalgExec;
using detail::product;
using detail::run_linalg;
using detail::square_dst;
using detail::SquareBatch;
using detail::throw_error;

namespace {

Eig eig_impl(const char* op, const TensorView& a, bool eigvals_only, const LinalgOptions& options,
             Stream stream) {
  const int64_t n = check_square(op, "a", a);
  return run_linalg(op, "a", a.device, options, stream, [&](LinalgExec& x) {
    const Shape batch = detail::batch_of(a, 2);
    const int64_t count = product(batch);
    const DType ct = eig_complex_type(a.dtype);
    Shape wshape = batch;
    wshape.push_back(n);
    Eig r;
    Tensor w = x.empty(wshape, ct);
    Tensor v = eigvals_only ? Tensor{} : x.empty(a.shape, ct);
    Tensor info = x.empty(batch, DType::i32);
    if (count * n == 0) {
      x.zero(info.view());
    } else {
      Tensor ws = x.empty({count * n * n}, a.dtype);
      x.copy(a, square_dst(ws.data(), a.dtype, batch, n, true, x.exec()));
      Tensor vs = eigvals_only ? Tensor{} : x.empty({count * n * n}, ct);
      x.backend(detail::cpu::eig_backend, detail::cuda::eig_backend)
          .geev(SquareBatch{ws.data(), a.dtype, n, count}, w.data(),
                eigvals_only ? nullptr : vs.data(), static_cast<int32_t*>(info.data()), x.call());
      if (!eigvals_only) x.copy(square_dst(vs.data(), ct, batch, n, true, x.exec()), v.view());
      if (options.check_info) x.check(info, Failure::eig_not_converged);
    }
    r.w = x.result(w);
    if (!eigvals_only) r.v = x.result(v);
    r.info = x.result(info);
    return r;
  });
}

}  // namespace

Eig eig(const TensorView& a, bool eigvals_only, const LinalgOptions& options, Stream stream) {
  return eig_impl("linalg.eig", a, eigvals_only, options, stream);
}

Factor eigvals_ex(const TensorView& a, const LinalgOptions& options, Stream stream) {
  Eig r = eig_impl("linalg.eigvals", a, true, options, stream);
  return Factor{r.w, r.info};
}

Tensor eigvals(const TensorView& a, const LinalgOptions& options, Stream stream) {
  return eigvals_ex(a, options, stream).value;
}

}  // namespace gpula::linalg
