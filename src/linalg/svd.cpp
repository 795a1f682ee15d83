// SVD front: argument checks, layouts, dispatch to the backend where the work runs.
//
// Layout. A row-major m x n matrix a, read column-major (ld n), is a^T (n x m). Its SVD
// a^T = U' s VT' gives a = VT'^T s U'^T (transposes, no conjugation, for complex too). So a is
// copied as it is into a contiguous row-major workspace and the backend decomposes X = a^T with
// U' written straight into vh's memory and VT' into u's: read row-major they are vh = U'^T and
// u = VT'^T, and the results need no copy. Where the backend's routine needs rows >= cols and a
// is tall (n < m), a is copied transposed instead (X = a, column-major) and the column-major
// U and VT are copied into the row-major u and vh.
#include <gpula/linalg.h>

#include <algorithm>

#include "linalg/exec.h"
#include "linalg/svd_backend.h"

namespace gpula::linalg {

using detail::colmajor;
using detail::DenseBatch;
using detail::Failure;
using detail::LinalgExec;
using detail::product;
using detail::run_linalg;
using detail::SvdBatch;
using detail::throw_error;
using detail::with;

namespace {

Svd svd_impl(const char* op, const TensorView& a, bool full, bool compute_uv, SvdMethod method,
             const LinalgOptions& options, Stream stream) {
  detail::check_view(op, "a", a);
  detail::check_float(op, "a", a);
  if (a.ndim() < 2)
    throw_error<InvalidArgument>(op, "expected a matrix (..., m, n) for a, got shape ",
                                 a.shape_str());
  if (static_cast<uint8_t>(method) > static_cast<uint8_t>(SvdMethod::jacobi_batched))
    throw_error<InvalidArgument>(op, "unknown method ", static_cast<int>(method));
  const int64_t m = a.shape[a.ndim() - 2], n = a.shape[a.ndim() - 1], k = std::min(m, n);
  return run_linalg(op, "a", a.device, options, stream, [&](LinalgExec& x) {
    const Shape batch = detail::batch_of(a, 2);
    const int64_t count = product(batch);
    const DType t = a.dtype;
    Svd r;
    Tensor s = x.empty(with(batch, {k}), real_type(t));
    Tensor u = compute_uv ? x.empty(with(batch, {m, full ? m : k}), t) : Tensor{};
    Tensor vh = compute_uv ? x.empty(with(batch, {full ? n : k, n}), t) : Tensor{};
    Tensor info = x.empty(batch, DType::i32);
    if (count == 0 || k == 0) {
      x.zero(info.view());
      if (compute_uv && full && count > 0) {  // NumPy: identity u (n == 0) or vh (m == 0)
        x.set_identity(u);
        x.set_identity(vh);
      }
    } else {
      const auto& be = x.backend(detail::cpu::svd_backend, detail::cuda::svd_backend);
      const bool flip = n < m && be.needs_tall(method, m, n, count);
      const int64_t rows = flip ? m : n, cols = flip ? n : m;
      Tensor wa = x.empty({count * m * n}, t);
      if (flip)
        x.copy(a, colmajor(wa.data(), t, batch, m, n, x.exec()));
      else
        x.copy(a, TensorView{wa.data(), t, a.shape, contiguous_strides(a.shape), x.exec()});
      SvdBatch p{DenseBatch{wa.data(), t, rows, cols, count}, s.data(), nullptr, nullptr, full};
      Tensor wu, wvt;
      if (compute_uv && flip) {
        wu = x.empty({count * rows * p.ucols()}, t);
        wvt = x.empty({count * p.vrows() * cols}, t);
        p.u = wu.data();
        p.vt = wvt.data();
      } else if (compute_uv) {
        p.u = vh.data();
        p.vt = u.data();
      }
      be.gesvd(p, method, static_cast<int32_t*>(info.data()), x.call());
      if (compute_uv && flip) {
        x.copy(colmajor(wu.data(), t, batch, rows, p.ucols(), x.exec()), u.view());
        x.copy(colmajor(wvt.data(), t, batch, p.vrows(), cols, x.exec()), vh.view());
      }
      if (options.check_info) x.check(info, Failure::svd_not_converged);
    }
    r.s = x.result(s);
    if (compute_uv) {
      r.u = x.result(u);
      r.vh = x.result(vh);
    }
    r.info = x.result(info);
    return r;
  });
}

}  // namespace

Svd svd(const TensorView& a, bool full_matrices, bool compute_uv, SvdMethod method,
        const LinalgOptions& options, Stream stream) {
  return svd_impl("linalg.svd", a, full_matrices, compute_uv, method, options, stream);
}

Tensor svdvals(const TensorView& a, SvdMethod method, const LinalgOptions& options, Stream stream) {
  return svd_impl("linalg.svdvals", a, false, false, method, options, stream).s;
}

}  // namespace gpula::linalg
