// QR and least-squares front: argument checks, layouts, dispatch to the QR backend.
//
// Layouts. The input is copied transposed into a column-major workspace (count items of m x n,
// ld = m), so the backend factors a itself. R is the upper triangle of the factored workspace's
// first k rows (k = min(m, n)). Where r is square (n = k = rows of r) it is copied straight into
// the result and zeroed below the diagonal there; otherwise its leading k x k block goes through a
// square workspace zeroed there, the rest is copied (and zero rows appended in complete mode).
// Where q has a's shape, Q is generated in place of the reflectors in the factored workspace;
// otherwise in its own column-major workspace (m x k, or m x m in complete mode). Either is
// copied to the row-major result. Least-squares right-hand sides are staged
// column-major with ld = max(m, n), so the backend writes x over b.
#include <gpula/linalg.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "linalg/exec.h"
#include "linalg/qr_backend.h"

namespace gpula::linalg {

using detail::check_float;
using detail::check_view;
using detail::colmajor;
using detail::DenseBatch;
using detail::LinalgExec;
using detail::product;
using detail::run_linalg;
using detail::SquareBatch;
using detail::throw_error;
using detail::with;

namespace {

void check_matrix_args(const char* op, const char* arg, const TensorView& v) {
  check_view(op, arg, v);
  check_float(op, arg, v);
}

// batch + (rows, cols) window at (row0, col0) of a contiguous row-major result of shape
// batch + (R, C).
TensorView window(const Tensor& r, int64_t row0, int64_t col0, int64_t rows, int64_t cols) {
  TensorView v = r.view();
  const std::size_t nd = v.shape.size();
  v.data = static_cast<char*>(v.data) + (row0 * v.strides[nd - 2] + col0 * v.strides[nd - 1]) *
                                            static_cast<int64_t>(size_of(v.dtype));
  v.shape[nd - 2] = rows;
  v.shape[nd - 1] = cols;
  return v;
}

}  // namespace

// ---- QR --------------------------------------------------------------------------------------

QR qr(const TensorView& a, QrMode mode, const LinalgOptions& options, Stream stream) {
  constexpr const char* op = "linalg.qr";
  check_matrix_args(op, "a", a);
  if (a.ndim() < 2)
    throw_error<InvalidArgument>(op, "expected a matrix (..., m, n) for a, got shape ",
                                 a.shape_str());
  if (mode != QrMode::reduced && mode != QrMode::complete && mode != QrMode::r)
    throw_error<InvalidArgument>(op, "unknown mode ", static_cast<int>(mode));
  const int64_t m = a.shape[a.ndim() - 2], n = a.shape[a.ndim() - 1], k = std::min(m, n);
  return run_linalg(op, "a", a.device, options, stream, [&](LinalgExec& x) {
    const Shape batch = detail::batch_of(a, 2);
    const int64_t count = product(batch);
    const DType t = a.dtype;
    const bool complete = mode == QrMode::complete, want_q = mode != QrMode::r;
    const int64_t rk = complete ? m : k, qc = complete ? m : k;
    Tensor r = x.empty(with(batch, {rk, n}), t);
    Tensor q = want_q ? x.empty(with(batch, {m, qc}), t) : Tensor{};
    if (count == 0) return QR{want_q ? x.result(q) : Tensor{}, x.result(r)};
    if (k == 0) {
      // r is empty; complete q with n == 0 is the identity, reduced q is empty.
      if (want_q && qc > 0) x.set_identity(q);
      return QR{want_q ? x.result(q) : Tensor{}, x.result(r)};
    }
    const auto& be = x.backend(detail::cpu::qr_backend, detail::cuda::qr_backend);
    const auto call = x.call();
    // a, factored in place.
    Tensor wa = x.empty({count * m * n}, t);
    x.copy(a, colmajor(wa.data(), t, batch, m * n, m, 0, 0, m, n, x.exec()));
    Tensor tau = x.empty({count * k}, t);
    be.geqrf(DenseBatch{wa.data(), t, m, n, count}, tau.data(), call);
    if (rk == n) {
      // r is square (n = k = rk): copied straight from the factored workspace, then zeroed
      // below the diagonal (its upper triangle when read column-major).
      x.copy(colmajor(wa.data(), t, batch, m * n, m, 0, 0, n, n, x.exec()), r.view());
      x.zero_triangle(SquareBatch{r.data(), t, n, count}, true);
    } else {
      // r: the leading k x k block through a square workspace, zeroed below the diagonal.
      Tensor wr = x.empty({count * k * k}, t);
      const TensorView sq = colmajor(wr.data(), t, batch, k * k, k, 0, 0, k, k, x.exec());
      x.copy(colmajor(wa.data(), t, batch, m * n, m, 0, 0, k, k, x.exec()), sq);
      x.zero_triangle(SquareBatch{wr.data(), t, k, count}, false);
      x.copy(sq, window(r, 0, 0, k, k));
      if (n > k)
        x.copy(colmajor(wa.data(), t, batch, m * n, m, 0, k, k, n - k, x.exec()),
               window(r, 0, k, k, n - k));
      if (rk > k) x.zero(window(r, k, 0, rk - k, n));
    }
    if (want_q && qc == n) {
      // q has a's shape (reduced with m >= n, or square a): generated in place of the reflectors.
      be.orgqr(DenseBatch{wa.data(), t, m, n, count}, k, tau.data(), call);
      x.copy(colmajor(wa.data(), t, batch, m * n, m, 0, 0, m, n, x.exec()), q.view());
    } else if (want_q) {
      Tensor wq = x.empty({count * m * qc}, t);
      x.copy(colmajor(wa.data(), t, batch, m * n, m, 0, 0, m, k, x.exec()),
             colmajor(wq.data(), t, batch, m * qc, m, 0, 0, m, k, x.exec()));
      be.orgqr(DenseBatch{wq.data(), t, m, qc, count}, k, tau.data(), call);
      x.copy(colmajor(wq.data(), t, batch, m * qc, m, 0, 0, m, qc, x.exec()), q.view());
    }
    return QR{want_q ? x.result(q) : Tensor{}, x.result(r)};
  });
}

// ---- least squares ---------------------------------------------------------------------------

Lstsq lstsq_ex(const TensorView& a, const TensorView& b, const LstsqOptions& options,
               Stream stream) {
  constexpr const char* op = "linalg.lstsq";
  check_matrix_args(op, "a", a);
  check_matrix_args(op, "b", b);
  if (a.ndim() < 2)
    throw_error<InvalidArgument>(op, "expected a matrix (..., m, n) for a, got shape ",
                                 a.shape_str());
  if (a.device != b.device)
    throw_error<InvalidArgument>(op, "operands on different devices: a on ", to_string(a.device),
                                 ", b on ", to_string(b.device));
  if (a.dtype != b.dtype)
    throw_error<DTypeError>(op, "dtype mismatch: a is ", name(a.dtype), ", b is ", name(b.dtype));
  if (options.rcond && std::isnan(*options.rcond))
    throw_error<InvalidArgument>(op, "rcond must be a number, got nan");
  const int64_t m = a.shape[a.ndim() - 2], n = a.shape[a.ndim() - 1], k = std::min(m, n);
  const Shape ab = detail::batch_of(a, 2);
  Shape bb;
  int64_t nrhs = 1;
  if (b.ndim() == 1) {
    if (b.shape[0] != m)
      throw_error<InvalidArgument>(op, "b has shape ", b.shape_str(), ", expected (", m,
                                   ",) to match a of shape ", a.shape_str());
  } else if (b.ndim() == 0 || b.shape[b.ndim() - 2] != m) {
    throw_error<InvalidArgument>(op, "b has shape ", b.shape_str(), ", expected (", m,
                                 ",) or (..., ", m, ", k) to match a of shape ", a.shape_str());
  } else {
    bb = detail::batch_of(b, 2);
    nrhs = b.shape[b.ndim() - 1];
  }
  const auto bs = detail::broadcast_batch(ab, bb);
  if (!bs)
    throw_error<InvalidArgument>(op, "batch dimensions of a ", detail::shape_str(ab), " and b ",
                                 detail::shape_str(bb), " do not broadcast");
  const Shape batch = *bs;
  return run_linalg(op, "a", a.device, options, stream, [&](LinalgExec& x) {
    const DType t = a.dtype;
    const int64_t count = product(batch);
    // The CPU's gelsd gives each item's rank and singular values; a GPU's QR does not.
    const bool svd = !x.exec().is_cuda();
    Lstsq r;
    Tensor xt = x.empty(b.ndim() == 1 ? with(batch, {n}) : with(batch, {n, nrhs}), t);
    Tensor rank = svd ? x.empty(batch, DType::i32) : Tensor{};
    Tensor s = svd ? x.empty(with(batch, {k}), real_type(t)) : Tensor{};
    const auto done = [&] {
      r.x = x.result(xt);
      if (svd) {
        r.rank = x.result(rank);
        r.s = x.result(s);
      }
      return r;
    };
    const TensorView xv{xt.data(), t, with(batch, {n, nrhs}),
                        contiguous_strides(with(batch, {n, nrhs})), x.exec()};
    if (count * m * n == 0 || (!svd && nrhs == 0)) {
      // No equations (m = 0): the minimum-norm solution is 0; no unknowns: x is empty. Rank 0.
      x.zero(xv);
      if (svd) x.zero(rank.view());
      return done();
    }
    TensorView b_full;
    if (b.ndim() == 1) {
      b_full = TensorView{b.data, t, with(batch, {m, 1}), Shape(batch.size(), 0), b.device};
      b_full.strides.push_back(b.strides[0]);
      b_full.strides.push_back(0);
    } else {
      b_full = detail::expand_batch(b, batch, 2);
    }
    const int64_t ldb = std::max(m, n);
    Tensor wa = x.empty({count * m * n}, t);
    x.copy(detail::expand_batch(a, batch, 2),
           colmajor(wa.data(), t, batch, m * n, m, 0, 0, m, n, x.exec()));
    // ?gelsd takes nrhs >= 1: an empty b (k = 0, CPU) solves one zero column, which still
    // gives each item's rank and singular values, as NumPy returns them.
    const int64_t wrhs = std::max<int64_t>(nrhs, 1);
    Tensor wb = x.empty({count * ldb * wrhs}, t);
    if (nrhs == 0) x.zero(wb.view());
    x.copy(b_full, colmajor(wb.data(), t, batch, ldb * wrhs, ldb, 0, 0, m, nrhs, x.exec()));
    // NumPy's default: singular values below eps * max(m, n) * s_max count as zero.
    const double eps = t == DType::f32 || t == DType::c64 ? std::numeric_limits<float>::epsilon()
                                                          : std::numeric_limits<double>::epsilon();
    const double rcond = options.rcond.value_or(eps * static_cast<double>(std::max(m, n)));
    x.backend(detail::cpu::qr_backend, detail::cuda::qr_backend)
        .lstsq(DenseBatch{wa.data(), t, m, n, count}, DenseBatch{wb.data(), t, ldb, wrhs, count},
               rcond, svd ? s.data() : nullptr, svd ? static_cast<int32_t*>(rank.data()) : nullptr,
               x.call());
    x.copy(colmajor(wb.data(), t, batch, ldb * wrhs, ldb, 0, 0, n, nrhs, x.exec()), xv);
    return done();
  });
}

Tensor lstsq(const TensorView& a, const TensorView& b, const LstsqOptions& options, Stream stream) {
  return lstsq_ex(a, b, options, stream).x;
}

}  // namespace gpula::linalg
