// Symmetric/Hermitian eigensolver front: argument checks, layouts, dispatch to the backend
// where the work runs.
//
// Layout: a row-major matrix read column-major is its transpose, and for complex Hermitian a
// that is conj(a), whose eigenvectors are conj(v). So a complex a is copied transposed into a
// column-major workspace (the backend then sees a itself and the triangle named by `lower` is
// the same one). A real symmetric a is its own transpose: on the CPU it is copied as it is (a
// plain copy, no transpose) and the backend reads the other triangle. Either way the column-major
// eigenvectors are copied transposed back into the row-major v.
#include <gpula/linalg.h>

#include "linalg/eigh_backend.h"
#include "linalg/exec.h"

namespace gpula::linalg {

using detail::check_square;
using detail::Failure;
using detail::LinalgExec;
using detail::product;
using detail::run_linalg;
using detail::square_dst;
using detail::SquareBatch;
using detail::throw_error;

namespace {

Eigh eigh_impl(const char* op, const TensorView& a, bool lower, bool eigvals_only,
               const LinalgOptions& options, Stream stream) {
  const int64_t n = check_square(op, "a", a);
  return run_linalg(op, "a", a.device, options, stream, [&](LinalgExec& x) {
    const Shape batch = detail::batch_of(a, 2);
    const int64_t count = product(batch);
    Shape wshape = batch;
    wshape.push_back(n);
    Eigh r;
    Tensor w = x.empty(wshape, real_type(a.dtype));
    Tensor v = eigvals_only ? Tensor{} : x.empty(a.shape, a.dtype);
    Tensor info = x.empty(batch, DType::i32);
    if (count * n == 0) {
      x.zero(info.view());
    } else {
      Tensor ws = x.empty({count * n * n}, a.dtype);
      const TensorView cm = square_dst(ws.data(), a.dtype, batch, n, true, x.exec());
      // Real a on the CPU: staged as it is (the backend sees a^T = a, the other triangle). On a
      // GPU the triangle stays the one asked for: cuSOLVER's speed differs by triangle (potrf:
      // 2x), and the other one's was not measured for syevd.
      const bool real = !is_complex(a.dtype) && !x.exec().is_cuda();
      x.copy(a, real ? square_dst(ws.data(), a.dtype, batch, n, false, x.exec()) : cm);
      x.backend(detail::cpu::eigh_backend, detail::cuda::eigh_backend)
          .syevd(SquareBatch{ws.data(), a.dtype, n, count}, real ? lower : !lower, !eigvals_only,
                 w.data(), static_cast<int32_t*>(info.data()), x.call());
      if (!eigvals_only) x.copy(cm, v.view());
      if (options.check_info) x.check(info, Failure::eig_not_converged);
    }
    r.w = x.result(w);
    if (!eigvals_only) r.v = x.result(v);
    r.info = x.result(info);
    return r;
  });
}

}  // namespace

Eigh eigh(const TensorView& a, bool lower, bool eigvals_only, const LinalgOptions& options,
          Stream stream) {
  return eigh_impl("linalg.eigh", a, lower, eigvals_only, options, stream);
}

Tensor eigvalsh(const TensorView& a, bool lower, const LinalgOptions& options, Stream stream) {
  return eigh_impl("linalg.eigvalsh", a, lower, true, options, stream).w;
}

}  // namespace gpula::linalg
