// Dense linalg front: argument checks, layouts, dispatch to the backend where the work runs.
//
// Layouts. Results are row-major; LAPACK, cuSOLVER and cuBLAS are column-major, and a row-major
// buffer read column-major is the transpose. So:
//  - cholesky: a row-major Hermitian a read column-major is conj(a) = a^T; its column-major
//    Cholesky with the opposite triangle, read row-major, is the factor we want (no conjugation).
//  - solve(gen), inv, det factor a^T in place of a plain copy (LU of a^T serves: op(A) = A^T in
//    getrs, inv(A^T)^T = inv(A), det(A^T) = det(A)); lu_factor copies transposed, since
//    scipy's (lu, piv) are the LU of a itself, and returns lu column-major per matrix as scipy
//    does (the one result that is not row-major); lu_solve copies lu into column-major order
//    (a plain copy for lu_factor's own); IRS has no transpose option and copies transposed too.
//  - Cholesky solves run on the right: x^T a^T = b^T, where row-major x is column-major x^T, so
//    no right-hand side is ever transposed.
//  - LU solves take column-major right-hand sides: a copy transposes b (and x back) unless
//    k == 1, where both layouts are the same.
// A matrix operand whose batch is a single matrix is factored once and the right-hand sides
// of the whole batch are solved together as one n x (batch * k) block ("folded").
#include <gpula/linalg.h>

#include <utility>

#include "linalg/exec.h"
#include "linalg/solve_backend.h"

namespace gpula::linalg {

using detail::broadcast_batch;
using detail::DenseBatch;
using detail::expand_batch;
using detail::Failure;
using detail::LinalgExec;
using detail::product;
using detail::run_linalg;
using detail::square_dst;
using detail::SquareBatch;
using detail::throw_error;
using detail::with;

using detail::check_float;
using detail::check_pair;
using detail::check_square;
using detail::check_view;

namespace {

const detail::SolveBackend& backend_of(const LinalgExec& x) {
  return x.backend(detail::cpu::solve_backend, detail::cuda::solve_backend);
}

// ---- solves: how the batch of matrices meets the batch of right-hand sides --------------------

enum class Map : uint8_t { same, fold, expand };

struct SolvePlan {
  int64_t n = 0, k = 1;
  Shape batch;        // broadcast batch
  int64_t count = 0;  // its number of items
  Shape x_shape;      // the result's shape
  TensorView b_full;  // b as batch + (n, k)
  Map map = Map::same;
  TensorView m_src;  // the matrix operand to copy: batch + (n, n), or (n, n) when folded
  Shape m_batch;     // batch, or () when folded
  int64_t mats = 0;  // matrices in the workspace
};

SolvePlan plan_solve(const char* op, const char* m_arg, const TensorView& m, int64_t n,
                     const TensorView& b) {
  check_view(op, "b", b);
  check_float(op, "b", b);
  check_pair(op, m_arg, m, "b", b);
  SolvePlan p;
  p.n = n;
  const Shape mb = detail::batch_of(m, 2);
  Shape bb;
  if (b.ndim() == 1) {
    if (b.shape[0] != n)
      throw_error<InvalidArgument>(op, "b has shape ", b.shape_str(), ", expected (", n,
                                   ",) to match ", m_arg, " of shape ", m.shape_str());
  } else if (b.ndim() == 0 || b.shape[b.ndim() - 2] != n) {
    throw_error<InvalidArgument>(op, "b has shape ", b.shape_str(), ", expected (", n,
                                 ",) or (..., ", n, ", k) to match ", m_arg, " of shape ",
                                 m.shape_str());
  } else {
    bb = detail::batch_of(b, 2);
    p.k = b.shape[b.ndim() - 1];
  }
  const auto s = broadcast_batch(mb, bb);
  if (!s)
    throw_error<InvalidArgument>(op, "batch dimensions of ", m_arg, " ", detail::shape_str(mb),
                                 " and b ", detail::shape_str(bb), " do not broadcast");
  p.batch = *s;
  p.count = product(p.batch);
  p.x_shape = b.ndim() == 1 ? with(p.batch, {n}) : with(p.batch, {n, p.k});
  if (b.ndim() == 1) {
    p.b_full =
        TensorView{b.data, b.dtype, with(p.batch, {n, 1}), Shape(p.batch.size(), 0), b.device};
    p.b_full.strides.push_back(b.strides[0]);
    p.b_full.strides.push_back(0);
  } else {
    p.b_full = expand_batch(b, p.batch, 2);
  }
  const int64_t cm = product(mb);
  if (cm == p.count) {
    p.map = Map::same;
  } else if (cm == 1) {
    p.map = Map::fold;
  } else {
    p.map = Map::expand;
  }
  if (p.map == Map::fold) {
    p.m_src = m;
    p.m_src.shape = {n, n};
    p.m_src.strides = {m.strides[m.ndim() - 2], m.strides[m.ndim() - 1]};
    p.mats = 1;
  } else {
    p.m_src = expand_batch(m, p.batch, 2);
    p.m_batch = p.batch;
    p.mats = p.count;
  }
  return p;
}

// Right-hand sides during a solve: `lapack` order is column-major n x k per item (n x batch*k
// when folded); `right` order is column-major k x n per item (batch*k x n when folded), which
// is the row-major result itself.
enum class Order : uint8_t { lapack, right };

struct Rhs {
  TensorView work;  // batch + (n, k) view of where the solve runs
  DenseBatch desc;  // the same memory, as the backend sees it
  Tensor owner;     // a workspace, when the solve does not run in x itself
};

Rhs stage_rhs(const LinalgExec& x, const SolvePlan& p, const Tensor& xt, Order order,
              bool separate) {
  const int64_t n = p.n, k = p.k, c = p.count;
  const bool fold = p.map == Map::fold;
  const DType t = xt.dtype();
  Rhs r;
  Shape shape = with(p.batch, {n, k});
  Shape strides = contiguous_strides(shape);
  const std::size_t nb = p.batch.size();
  bool in_x;
  if (order == Order::lapack) {
    strides[nb] = 1;  // batch strides stay n * k per item
    strides[nb + 1] = n;
    r.desc = fold ? DenseBatch{nullptr, t, n, c * k, 1} : DenseBatch{nullptr, t, n, k, c};
    in_x = k == 1;
  } else {
    if (fold) {
      const Shape bs = contiguous_strides(p.batch);
      for (std::size_t d = 0; d < nb; ++d) strides[d] = bs[d] * k;
      strides[nb] = c * k;
      strides[nb + 1] = 1;
    }
    r.desc = fold ? DenseBatch{nullptr, t, c * k, n, 1} : DenseBatch{nullptr, t, k, n, c};
    in_x = !fold || c == 1;
  }
  void* mem = xt.data();
  if (separate || !in_x) {
    r.owner = x.empty({c * n * k}, t);
    mem = r.owner.data();
  }
  r.desc.data = mem;
  r.work = TensorView{mem, t, shape, strides, x.exec()};
  return r;
}

TensorView full_view(const Tensor& xt, const SolvePlan& p) {
  Shape shape = with(p.batch, {p.n, p.k});
  return TensorView{xt.data(), xt.dtype(), shape, contiguous_strides(shape), xt.device()};
}

void unstage(const LinalgExec& x, const Rhs& r, const Tensor& xt, const SolvePlan& p) {
  if (r.owner.defined() && r.work.data == r.owner.data()) x.copy(r.work, full_view(xt, p));
}

// Per-factorization info (one entry when folded) spread over the broadcast batch.
void spread_info(const LinalgExec& x, const SolvePlan& p, const Tensor& finfo, const Tensor& info) {
  if (finfo.data() == info.data()) return;
  TensorView src{finfo.data(), DType::i32, p.batch, Shape(p.batch.size(), 0), x.exec()};
  x.copy(src, info.view());
}

SquareBatch stage_matrices(const LinalgExec& x, const SolvePlan& p, DType t, bool col_major,
                           Tensor& owner) {
  owner = x.empty({p.mats * p.n * p.n}, t);
  x.copy(p.m_src, square_dst(owner.data(), t, p.m_batch, p.n, col_major, x.exec()));
  return SquareBatch{owner.data(), t, p.n, p.mats};
}

int32_t* ints(const Tensor& t) { return static_cast<int32_t*>(t.data()); }

Factor solve_impl(LinalgExec& x, const TensorView& a, int64_t n, const TensorView& b,
                  const SolveOptions& o) {
  const SolvePlan p = plan_solve(x.op(), "a", a, n, b);
  const DType t = a.dtype;
  Tensor xt = x.empty(p.x_shape, t);
  Tensor info = x.empty(p.batch, DType::i32);
  if (p.count * n * p.k == 0) {
    x.zero(info.view());
    return {x.result(xt), x.result(info)};
  }
  const auto& be = backend_of(x);
  const auto call = x.call();
  // Refinement: the RBT solve where asked for, or chosen by automatic where the backend prefers
  // it at this order; else IRS where it factors in a precision below the data's. automatic
  // otherwise, and f32 for float32/complex64 data, are the plain solve (see Refine in linalg.h).
  const bool gen = o.assume_a == Assume::gen;
  const bool single = t == DType::f32 || t == DType::c64;
  const bool rbt = gen && (o.refine == Refine::rbt ||
                           (o.refine == Refine::automatic && be.solve_prefers_rbt(n)));
  const bool refine = rbt || (gen && o.refine != Refine::none && o.refine != Refine::automatic &&
                              !(o.refine == Refine::f32 && single));
  if (gen && o.refine != Refine::none && !refine) {
    log(LogLevel::debug,
        detail::cat("[", x.op(), "] refine: the plain LU solve in working precision"), o.logger);
  }
  Tensor wa;
  const SquareBatch A = stage_matrices(x, p, t, refine, wa);
  Tensor finfo = p.map == Map::fold ? x.empty({1}, DType::i32) : info;
  Failure failure = Failure::singular_u;
  switch (o.assume_a) {
    case Assume::gen:
      if (refine) {
        Rhs rb = stage_rhs(x, p, xt, Order::lapack, true);
        Rhs rx = stage_rhs(x, p, xt, Order::lapack, false);
        x.copy(p.b_full, rb.work);
        be.gesv_refined(A, rb.desc, rx.desc, rbt ? Refine::rbt : o.refine, ints(finfo), call);
        unstage(x, rx, xt, p);
      } else {
        Tensor ipiv = x.empty({p.mats * n}, DType::i32);
        be.getrf(A, ints(ipiv), ints(finfo), call);
        Rhs r = stage_rhs(x, p, xt, Order::lapack, false);
        x.copy(p.b_full, r.work);
        be.getrs(A, ints(ipiv), true, r.desc, call);
        unstage(x, r, xt, p);
      }
      break;
    case Assume::pos: {
      // Row-major lower of a = column-major upper of a^T.
      be.potrf(A, o.lower, ints(finfo), call);
      Rhs r = stage_rhs(x, p, xt, Order::right, false);
      x.copy(p.b_full, r.work);
      be.potrs_right(A, o.lower, r.desc, call);
      unstage(x, r, xt, p);
      failure = Failure::not_positive_definite;
      break;
    }
    case Assume::sym: {
      Rhs r = stage_rhs(x, p, xt, Order::lapack, false);
      x.copy(p.b_full, r.work);
      be.sysv(A, o.lower, r.desc, ints(finfo), call);
      unstage(x, r, xt, p);
      failure = x.exec().is_cuda() ? Failure::singular_u : Failure::singular_d;
      break;
    }
  }
  spread_info(x, p, finfo, info);
  if (o.check_info) x.check(info, failure);
  return {x.result(xt), x.result(info)};
}

}  // namespace

// ---- Cholesky --------------------------------------------------------------------------------

Factor cholesky(const TensorView& a, bool lower, const LinalgOptions& options, Stream stream) {
  constexpr const char* op = "linalg.cholesky";
  const int64_t n = check_square(op, "a", a);
  return run_linalg(op, "a", a.device, options, stream, [&](LinalgExec& x) {
    const Shape batch = detail::batch_of(a, 2);
    const int64_t count = product(batch);
    Tensor out = x.empty(a.shape, a.dtype);
    Tensor info = x.empty(batch, DType::i32);
    if (count * n == 0) {
      x.zero(info.view());
      return Factor{x.result(out), x.result(info)};
    }
    if (!x.exec().is_cuda() || backend_of(x).potrf_any_triangle(count, n)) {
      // Row-major lower of a = column-major upper of a^T: LAPACK (or the GPU's batched_small
      // kernel) factors the copy in place.
      x.copy(a, out.view());
      const SquareBatch f{out.data(), a.dtype, n, count};
      backend_of(x).potrf(f, lower, ints(info), x.call());
      backend_of(x).zero_triangle(f, !lower, x.call());
    } else {
      // cuSOLVER's potrf is about twice as fast on the lower triangle as on the upper one
      // (n = 8192 fp64 on an H200: 7.3 vs 13.8 ms; potrfBatched 10000 x 32: 0.20 vs 0.30 ms),
      // so a is copied transposed into a column-major workspace, factored there in the
      // requested triangle, and copied back transposed. Batches the backend factors as fast on
      // either triangle take the branch above: one plain copy.
      Tensor work = x.empty(a.shape, a.dtype);
      const SquareBatch f{work.data(), a.dtype, n, count};
      if (a.is_contiguous() && a.device == x.exec()) {
        // Only the triangle travels in: half the reads of a full transposing copy.
        backend_of(x).transpose_triangle({a.data, a.dtype, n, count}, work.data(), !lower, false,
                                         x.call());
      } else {
        TensorView col = work.view();
        std::swap(col.strides[col.strides.size() - 1], col.strides[col.strides.size() - 2]);
        x.copy(a, col);
      }
      backend_of(x).potrf(f, !lower, ints(info), x.call());
      // The factor's triangle travels back and the other one is written as zeros: no zeroing
      // pass (n = 8192 fp64 on the H200: 8.70 ms with full copies and a zeroing pass, 7.75-8.14
      // with triangle-only copies).
      backend_of(x).transpose_triangle(f, out.data(), lower, true, x.call());
    }
    if (options.check_info) x.check(info, Failure::not_positive_definite);
    return Factor{x.result(out), x.result(info)};
  });
}

Tensor cho_solve(const TensorView& c, const TensorView& b, bool lower, const LinalgOptions& options,
                 Stream stream) {
  constexpr const char* op = "linalg.cho_solve";
  const int64_t n = check_square(op, "c", c);
  const SolvePlan p0 = plan_solve(op, "c", c, n, b);  // argument errors before any work
  return run_linalg(op, "c", c.device, options, stream, [&](LinalgExec& x) {
    const SolvePlan& p = p0;
    Tensor xt = x.empty(p.x_shape, c.dtype);
    if (p.count * n * p.k == 0) return x.result(xt);
    // The factor is only read: use it in place where it is already contiguous and local.
    Tensor wc;
    SquareBatch f{p.m_src.data, c.dtype, n, p.mats};
    if (p.map == Map::expand || !p.m_src.is_contiguous() || c.device != x.exec())
      f = stage_matrices(x, p, c.dtype, false, wc);
    Rhs r = stage_rhs(x, p, xt, Order::right, false);
    x.copy(p.b_full, r.work);
    backend_of(x).potrs_right(f, lower, r.desc, x.call());
    unstage(x, r, xt, p);
    return x.result(xt);
  });
}

// ---- LU --------------------------------------------------------------------------------------

LU lu_factor(const TensorView& a, const LinalgOptions& options, Stream stream) {
  constexpr const char* op = "linalg.lu_factor";
  const int64_t n = check_square(op, "a", a);
  return run_linalg(op, "a", a.device, options, stream, [&](LinalgExec& x) {
    const Shape batch = detail::batch_of(a, 2);
    const int64_t count = product(batch);
    Tensor piv = x.empty(with(batch, {n}), DType::i32);
    Tensor info = x.empty(batch, DType::i32);
    if (count * n == 0) {
      x.zero(info.view());
      return LU{x.result(x.empty(a.shape, a.dtype)), x.result(piv), x.result(info)};
    }
    // The factor stays where LAPACK / cuSOLVER left it, column-major per matrix (Fortran order
    // for one matrix), as scipy.linalg.lu_factor returns it: one transposing copy in, none out.
    Tensor ws = x.empty({count * n * n}, a.dtype);
    const TensorView cm = square_dst(ws.data(), a.dtype, batch, n, true, x.exec());
    x.copy(a, cm);
    const SquareBatch A{ws.data(), a.dtype, n, count};
    backend_of(x).getrf(A, ints(piv), ints(info), x.call());
    Tensor lu = ws.alias(cm);
    Tensor bad = x.empty({1}, DType::i32);
    x.zero(bad.view());
    backend_of(x).shift_pivots(ints(piv), count * n, n, -1, ints(bad), x.call());
    if (options.check_info) x.check(info, Failure::singular_u);
    return LU{x.result(lu), x.result(piv), x.result(info)};
  });
}

Tensor lu_solve(const TensorView& lu, const TensorView& pivots, const TensorView& b,
                const LinalgOptions& options, Stream stream) {
  constexpr const char* op = "linalg.lu_solve";
  const int64_t n = check_square(op, "lu", lu);
  // The pivots are SciPy's piv (lu_factor's second result): messages use that name.
  check_view(op, "piv", pivots);
  if (pivots.dtype != DType::i32)
    throw_error<DTypeError>(op, "piv must be int32, got ", name(pivots.dtype));
  if (pivots.device != lu.device)
    throw_error<InvalidArgument>(op, "operands on different devices: lu on ", to_string(lu.device),
                                 ", piv on ", to_string(pivots.device));
  const Shape want = with(detail::batch_of(lu, 2), {n});
  if (pivots.shape != want)
    throw_error<InvalidArgument>(op, "piv has shape ", pivots.shape_str(), ", expected ",
                                 detail::shape_str(want), " to match lu of shape ", lu.shape_str());
  const SolvePlan p0 = plan_solve(op, "lu", lu, n, b);
  return run_linalg(op, "lu", lu.device, options, stream, [&](LinalgExec& x) {
    const SolvePlan& p = p0;
    const DType t = lu.dtype;
    Tensor xt = x.empty(p.x_shape, t);
    if (p.count * n * p.k == 0) return x.result(xt);
    // scipy's lu is the LU of a itself: transpose it into LAPACK's order.
    Tensor wlu;
    const SquareBatch A = stage_matrices(x, p, t, true, wlu);
    Tensor wp = x.empty({p.mats * n}, DType::i32);
    TensorView piv_src =
        p.map == Map::fold
            ? TensorView{pivots.data, DType::i32, {n}, {pivots.strides.back()}, pivots.device}
            : expand_batch(pivots, p.batch, 1);
    Shape pshape = with(p.m_batch, {n});
    x.copy(piv_src,
           TensorView{wp.data(), DType::i32, pshape, contiguous_strides(pshape), x.exec()});
    Tensor bad = x.empty({1}, DType::i32);
    x.zero(bad.view());
    backend_of(x).shift_pivots(ints(wp), p.mats * n, n, 1, ints(bad), x.call());
    Rhs r = stage_rhs(x, p, xt, Order::lapack, false);
    x.copy(p.b_full, r.work);
    backend_of(x).getrs(A, ints(wp), false, r.desc, x.call());
    unstage(x, r, xt, p);
    if (options.check_info || !x.exec().is_cuda()) {
      const int32_t nbad = x.read_int(bad.data());
      if (nbad > 0)
        throw_error<InvalidArgument>(op, "piv: ", nbad, " pivots are outside [0, ", n, ")");
    }
    return x.result(xt);
  });
}

// ---- solve, inv, det -------------------------------------------------------------------------

Factor solve_ex(const TensorView& a, const TensorView& b, const SolveOptions& options,
                Stream stream) {
  constexpr const char* op = "linalg.solve";
  const int64_t n = check_square(op, "a", a);
  plan_solve(op, "a", a, n, b);  // argument errors before any work
  return run_linalg(op, "a", a.device, options, stream,
                    [&](LinalgExec& x) { return solve_impl(x, a, n, b, options); });
}

Tensor solve(const TensorView& a, const TensorView& b, const SolveOptions& options, Stream stream) {
  return solve_ex(a, b, options, stream).value;
}

Factor inv_ex(const TensorView& a, const LinalgOptions& options, Stream stream) {
  constexpr const char* op = "linalg.inv";
  const int64_t n = check_square(op, "a", a);
  return run_linalg(op, "a", a.device, options, stream, [&](LinalgExec& x) {
    const Shape batch = detail::batch_of(a, 2);
    const int64_t count = product(batch);
    Tensor out = x.empty(a.shape, a.dtype);
    Tensor info = x.empty(batch, DType::i32);
    if (count * n == 0) {
      x.zero(info.view());
      return Factor{x.result(out), x.result(info)};
    }
    // Column-major, the plain copy is a^T, and inv(a^T) read row-major is inv(a).
    x.copy(a, out.view());
    backend_of(x).inv(SquareBatch{out.data(), a.dtype, n, count}, ints(info), x.call());
    if (options.check_info) x.check(info, Failure::singular_u);
    return Factor{x.result(out), x.result(info)};
  });
}

Tensor inv(const TensorView& a, const LinalgOptions& options, Stream stream) {
  return inv_ex(a, options, stream).value;
}

namespace {

// det(a^T) = det(a): factor a plain copy.
void det_impl(LinalgExec& x, const TensorView& a, int64_t n, int64_t count, void* det_or_sign,
              void* logabs) {
  Tensor ws = x.empty({count * n * n}, a.dtype);
  x.copy(a, square_dst(ws.data(), a.dtype, detail::batch_of(a, 2), n, false, x.exec()));
  backend_of(x).det(SquareBatch{ws.data(), a.dtype, n, count}, det_or_sign, logabs, x.call());
}

}  // namespace

Tensor det(const TensorView& a, const LinalgOptions& options, Stream stream) {
  constexpr const char* op = "linalg.det";
  const int64_t n = check_square(op, "a", a);
  return run_linalg(op, "a", a.device, options, stream, [&](LinalgExec& x) {
    const Shape batch = detail::batch_of(a, 2);
    const int64_t count = product(batch);
    if (n == 0 || count == 0) return x.filled(batch, a.dtype, 1.0);
    Tensor d = x.empty(batch, a.dtype);
    det_impl(x, a, n, count, d.data(), nullptr);
    return x.result(d);
  });
}

Slogdet slogdet(const TensorView& a, const LinalgOptions& options, Stream stream) {
  constexpr const char* op = "linalg.slogdet";
  const int64_t n = check_square(op, "a", a);
  return run_linalg(op, "a", a.device, options, stream, [&](LinalgExec& x) {
    const Shape batch = detail::batch_of(a, 2);
    const int64_t count = product(batch);
    if (n == 0 || count == 0)
      return Slogdet{x.filled(batch, a.dtype, 1.0), x.filled(batch, real_type(a.dtype), 0.0)};
    Tensor sign = x.empty(batch, a.dtype);
    Tensor logabs = x.empty(batch, real_type(a.dtype));
    det_impl(x, a, n, count, sign.data(), logabs.data());
    return Slogdet{x.result(sign), x.result(logabs)};
  });
}

}  // namespace gpula::linalg
