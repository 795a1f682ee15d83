// Bunch-Kaufman front (ldl_factor): argument checks, layouts, dispatch to the backend where the
// work runs; complex Hermitian input on a GPU is factored on the host (cuSOLVER has no hetrf).
//
// Layout: a is copied transposed into a column-major workspace, so the backend sees a itself
// (for complex input a plain copy would be a^T: conj(a) when Hermitian) and factors the triangle
// named by `lower`; the packed factor is copied transposed back into the row-major ldu.
#include <gpula/linalg.h>
#include <gpula/log.h>

#include "linalg/exec.h"
#include "linalg/ldl_backend.h"

namespace gpula::linalg {

using detail::LinalgExec;
using detail::product;
using detail::square_dst;
using detail::SquareBatch;

namespace {

Ldl ldl_on(LinalgExec& x, const TensorView& a, int64_t n, bool lower, bool hermitian) {
  const Shape batch = detail::batch_of(a, 2);
  const int64_t count = product(batch);
  Ldl r;
  Tensor ldu = x.empty(a.shape, a.dtype);
  Tensor piv = x.empty(detail::with(batch, {n}), DType::i32);
  Tensor info = x.empty(batch, DType::i32);
  if (count * n == 0) {
    x.zero(info.view());
  } else {
    Tensor ws = x.empty({count * n * n}, a.dtype);
    const TensorView cm = square_dst(ws.data(), a.dtype, batch, n, true, x.exec());
    x.copy(a, cm);
    x.backend(detail::cpu::ldl_backend, detail::cuda::ldl_backend)
        .sytrf(SquareBatch{ws.data(), a.dtype, n, count}, !lower, hermitian,
               static_cast<int32_t*>(piv.data()), static_cast<int32_t*>(info.data()), x.call());
    x.copy(cm, ldu.view());
  }
  r.ldu = x.result(ldu);
  r.pivots = x.result(piv);
  r.info = x.result(info);
  return r;
}

}  // namespace

Ldl ldl_factor(const TensorView& a, bool lower, bool hermitian, const LinalgOptions& options,
               Stream stream) {
  const char* op = "linalg.ldl";
  const int64_t n = detail::check_square(op, "a", a);
  hermitian = hermitian && is_complex(a.dtype);  // real: sytrf either way
  return detail::run_linalg(op, "a", a.device, options, stream, [&](LinalgExec& x) {
    if (x.exec().is_cuda() &&
        !x.backend(detail::cpu::ldl_backend, detail::cuda::ldl_backend).takes(a.dtype, hermitian)) {
      log(LogLevel::info,
          detail::cat("[", op, "] complex Hermitian a: factored on the host (cuSOLVER has no ",
                      "hetrf)"),
          options.logger);
      LinalgExec host(op, "a", a.device, options, stream, Device::cpu());
      return ldl_on(host, a, n, lower, hermitian);
    }
    return ldl_on(x, a, n, lower, hermitian);
  });
}

}  // namespace gpula::linalg
