// Matrix functions for second-order optimizers (issue 20): orthogonalize (Muon's Newton-Schulz
// iteration), the roots of symmetric positive (semi)definite matrices, inv_root and
// sqrtm_psd (Shampoo's preconditioners, by eigh), and the exact polar decomposition (polar, by
// svd). Compositions of the library's own fronts (gpula::matmul, linalg::eigh, linalg::svd)
// and the element-wise passes of matrix_functions_backend.h, all
// where the work runs (LinalgExec: options.device, the CPU fallback on OutOfMemory).
#include <gpula/linalg.h>
#include <gpula/matmul.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "core/dtype_dispatch.h"
#include "linalg/exec.h"
#include "linalg/matrix_functions_backend.h"
#include "linalg/rethrow.h"

namespace gpula::linalg {

using detail::DenseBatch;
using detail::LinalgExec;
using detail::product;
using detail::run_linalg;
using detail::throw_error;
using detail::transposed;
using detail::with;

namespace {

const detail::MatrixFunctionsBackend& backend_of(const LinalgExec& x) {
  return x.backend(detail::cpu::matrix_functions_backend, detail::cuda::matrix_functions_backend);
}

// The LinalgOptions run_linalg takes, from an operation's CommonOptions.
LinalgOptions linalg_options(const CommonOptions& o) {
  LinalgOptions r;
  static_cast<CommonOptions&>(r) = o;
  return r;
}

// alpha a b, or alpha a b + beta c: one gpula::matmul where the work runs, on its stream.
Tensor product_of(const LinalgExec& x, const TensorView& a, const TensorView& b, double alpha = 1.0,
                  const std::optional<TensorView>& c = {}, double beta = 0.0) {
  MatmulOptions o;
  o.memory_limit = x.options().memory_limit;
  o.logger = x.options().logger;
  const auto beta_c = c ? std::optional<std::complex<double>>(beta) : std::nullopt;
  return matmul(a, b, c, alpha, beta_c, Epilog::DEFAULT, {}, o, x.call().stream).result;
}

// v where the work runs: v itself (borrowed) when it is there and, if `contiguous` is asked
// for, contiguous; else a contiguous copy.
Tensor on_exec(const LinalgExec& x, const TensorView& v, bool contiguous) {
  if (v.device == x.exec() && (!contiguous || v.is_contiguous())) return Tensor(v, nullptr);
  Tensor t = x.empty(v.shape, v.dtype);
  x.copy(v, t.view());
  return t;
}

void check_eps(const char* op, double eps) {
  if (!(std::isfinite(eps) && eps >= 0.0))
    throw_error<InvalidArgument>(op, "eps must be a finite number >= 0, got ", eps);
}

bool newton_schulz_dtype(DType t) {
  return t == DType::f16 || t == DType::bf16 || t == DType::f32 || t == DType::f64;
}

// fn, with the errors of the library calls it makes (eigh, matmul) named after `op`.
template <class Fn>
auto as_op(const char* op, Fn fn) {
  return [op, fn](LinalgExec& x) {
    try {
      return fn(x);
    } catch (const Error&) {
      detail::rethrow_as(op);
    }
  };
}

// ---- symmetric products (orthogonalize of large iterates) -------------------------------------------

// X X^T and A A of the Newton-Schulz step are symmetric: only the blocks of their lower
// triangle are computed (kSymBlocks row blocks: 10 of 16 blocks, 62.5% of the FLOPs; see
// lower_blocks for the matmul calls) and mirrored into the full matrix by strided copies
// (OrthogonalizeOptions::symmetric_products).
constexpr int64_t kSymBlocks = 4;
constexpr int64_t kSymMinRows = 2048;

bool symmetric_route(const LinalgExec& x, const std::optional<bool>& asked, int64_t rows) {
  if (asked) {
    if (*asked && rows % kSymBlocks != 0)
      throw_error<InvalidArgument>("linalg.orthogonalize",
                                   "symmetric_products=true needs the iterate's rows (min(m, n)) "
                                   "to be a multiple of ", kSymBlocks, ", got ", rows);
    return *asked;
  }
  return x.exec().is_cuda() && rows >= kSymMinRows && rows % (16 * kSymBlocks) == 0;
}

// A view of contiguous memory at element `offset`: shape (count, cnt, h, w) with `strides`.
TensorView blocks_view(const TensorView& v, int64_t offset, Shape shape, Shape strides) {
  TensorView r = v;
  r.data = static_cast<char*>(v.data) + offset * static_cast<int64_t>(size_of(v.dtype));
  r.shape = std::move(shape);
  r.strides = std::move(strides);
  return r;
}

// A computed run of the lower triangle: the blocks (first + d + j, first + j), j < cnt, as a
// (count, cnt, h, h) tensor.
struct BlockRun {
  int64_t d, first, cnt;
  Tensor t;
};

// For contiguous p and q (count matrices of rows x k): the lower-triangle blocks of alpha p q^T
// (+ beta c, runs of the same structure). A block diagonal is one strided-batched matmul where
// its row blocks form one batch stride (the main diagonal; any diagonal of a single matrix);
// below the main diagonal of a stack, one matmul per block with the stack as its batch, since a
// matmul takes one batch stride and anything else would be staged (copied).
std::vector<BlockRun> lower_blocks(const LinalgExec& x, const TensorView& p, const TensorView& q,
                                   int64_t count, double alpha = 1.0,
                                   const std::vector<BlockRun>* c = nullptr, double beta = 0.0) {
  const int64_t rows = p.shape[p.ndim() - 2], k = p.shape[p.ndim() - 1], h = rows / kSymBlocks;
  const Shape strides{rows * k, h * k, k, 1};
  std::vector<BlockRun> out;
  for (int64_t d = 0; d < kSymBlocks; ++d) {
    const int64_t cnt = count == 1 || d == 0 ? kSymBlocks - d : 1;
    for (int64_t first = 0; first < kSymBlocks - d; first += cnt) {
      const TensorView ps = blocks_view(p, (first + d) * h * k, {count, cnt, h, k}, strides);
      const TensorView qs = blocks_view(q, first * h * k, {count, cnt, h, k}, strides);
      out.push_back({d, first, cnt,
                     c ? product_of(x, ps, transposed(qs), alpha, (*c)[out.size()].t.view(), beta)
                       : product_of(x, ps, transposed(qs), alpha)});
    }
  }
  return out;
}

// The symmetric (count, n, n) matrices whose lower-triangle blocks are `runs`: each run written
// once, and once transposed above the diagonal.
Tensor mirrored(const LinalgExec& x, const std::vector<BlockRun>& runs, int64_t count) {
  const int64_t h = runs[0].t.shape().back(), n = h * kSymBlocks;
  Tensor out = x.empty({count, n, n}, runs[0].t.dtype());
  for (const BlockRun& r : runs) {
    const Shape shape{count, r.cnt, h, h};
    const int64_t row = (r.first + r.d) * h, col = r.first * h;
    x.copy(r.t.view(), blocks_view(out.view(), row * n + col, shape, {n * n, h * n + h, n, 1}));
    if (r.d > 0)
      x.copy(r.t.view(), blocks_view(out.view(), col * n + row, shape, {n * n, h * n + h, 1, n}));
  }
  return out;
}

// ---- roots by eigh -----------------------------------------------------------------------

struct Root {
  const char* op;
  int p;       // inv_root: w^(-1/p); 0: sqrtm_psd, sqrt(w)
  double eps;  // added to every eigenvalue (a + eps I)
  bool clip;
};

std::string g3(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// f(w) in place for each matrix's ascending eigenvalues w[b * n .. b * n + n), with
// python/gpula/linalg/_roots.py's rule (_floor): the floor n eps_R max(max|w|, tiny); inv_root
// raises NotPositiveDefinite where w[0] <= floor (clip: w = max(w, floor)), sqrtm_psd where
// w[0] < -floor (clip: none) and takes max(w, 0).
template <class R>
void apply_root(const Root& s, R* w, int64_t count, int64_t n) {
  const double eps_r = std::numeric_limits<R>::epsilon();
  const bool inverse = s.p > 0;
  for (int64_t b = 0; b < count; ++b) {
    R* wb = w + b * n;
    double big = std::numeric_limits<R>::min();
    for (int64_t j = 0; j < n; ++j) {
      wb[j] = static_cast<R>(wb[j] + s.eps);
      big = std::max(big, std::abs(static_cast<double>(wb[j])));
    }
    const double floor = static_cast<double>(n) * eps_r * big;
    const double lo = wb[0];
    if (!s.clip && (inverse ? lo <= floor : lo < -floor))
      throw NotPositiveDefinite(
          detail::cat(
              "[", s.op, "] ",
              inverse ? "a (+ eps I) is not positive definite" : "a is not positive semidefinite",
              ": smallest eigenvalue ", g3(lo), " (batch index ", b, "); ",
              inverse ? "with clip, such eigenvalues are raised to the rounding floor"
                      : "with clip, negative eigenvalues count as zero"),
          0, b);
    for (int64_t j = 0; j < n; ++j) {
      const double v = wb[j];
      wb[j] = static_cast<R>(inverse ? std::pow(s.clip ? std::max(v, floor) : v, -1.0 / s.p)
                                     : std::sqrt(std::max(v, 0.0)));
    }
  }
}

// V diag(f(w)) V^H from eigh of the lower triangle: V (conj(V) diag(f(w)))^T.
Tensor matrix_root(const Root& s, const TensorView& a, const CommonOptions& options,
                   Stream stream) {
  const int64_t n = detail::check_square(s.op, "a", a);
  const LinalgOptions lo = linalg_options(options);
  return run_linalg(s.op, "a", a.device, lo, stream, as_op(s.op, [&](LinalgExec& x) {
    if (a.numel() == 0) return x.result(x.empty(a.shape, a.dtype));
    const int64_t count = product(detail::batch_of(a, 2));
    const Tensor on = on_exec(x, a, false);
    LinalgOptions eo = lo;  // eigh where the work runs; its failures are checked here
    eo.device.reset();
    eo.fallback = Fallback::none;
    eo.blocking = false;
    eo.check_info = false;
    const Eigh e = eigh(on.view(), true, false, eo, x.call().stream);
    x.check(e.info, detail::Failure::eig_not_converged);
    // The eigenvalues on the host (one synchronization), f(w) there, and back.
    const Tensor wh = Tensor::empty(e.w.shape(), e.w.dtype(), Stream{});
    x.copy(e.w.view(), wh.view());
    detail::visit_float(e.w.dtype(), [&](auto zero) {
      if constexpr (!detail::is_complex_v<decltype(zero)>)
        apply_root(s, static_cast<decltype(zero)*>(wh.data()), count, n);
    });
    const Tensor f = on_exec(x, wh.view(), false);
    const Tensor scaled = x.empty(a.shape, a.dtype);
    backend_of(x).scale_columns(DenseBatch{e.v.data(), a.dtype, n, n, count}, f.data(), true,
                                scaled.data(), x.call());
    return x.result(product_of(x, e.v.view(), transposed(scaled.view())));
  }));
}

}  // namespace

Tensor orthogonalize(const TensorView& g, const OrthogonalizeOptions& options, Stream stream) {
  const char* op = "linalg.orthogonalize";
  detail::check_view(op, "g", g);
  if (!newton_schulz_dtype(g.dtype))
    throw_error<DTypeError>(op, "g has dtype ", name(g.dtype),
                            "; orthogonalize takes float16, bfloat16, float32, float64");
  if (g.ndim() < 2)
    throw_error<InvalidArgument>(op, "g must be a matrix (..., m, n), got shape ", g.shape_str());
  if (options.steps < 0)
    throw_error<InvalidArgument>(op, "steps must be >= 0, got ", options.steps);
  const auto [ca, cb, cc] = options.coefficients;
  if (!(std::isfinite(ca) && std::isfinite(cb) && std::isfinite(cc)))
    throw_error<InvalidArgument>(op, "coefficients must be finite, got (", ca, ", ", cb, ", ", cc,
                                 ")");
  if (options.dtype && !newton_schulz_dtype(*options.dtype))
    throw_error<InvalidArgument>(op,
                                 "dtype must be float16, bfloat16, float32 or float64 (or "
                                 "none: g's own), got ",
                                 name(*options.dtype));
  check_eps(op, options.eps);
  const LinalgOptions lo = linalg_options(options);
  return run_linalg(op, "g", g.device, lo, stream, as_op(op, [&](LinalgExec& x) {
    if (g.numel() == 0) return x.result(x.empty(g.shape, g.dtype));
    const int64_t m = g.shape[g.shape.size() - 2], n = g.shape[g.shape.size() - 1];
    const bool tall = m > n;  // iterate on the wide side: X X^T is the smaller square
    const int64_t rows = tall ? n : m, cols = tall ? m : n;
    const int64_t count = product(detail::batch_of(g, 2));
    DType work = options.dtype.value_or(g.dtype);
    if (!x.exec().is_cuda() && is_half(work)) work = DType::f32;
    const Tensor src = on_exec(x, tall ? transposed(g) : g, true);
    Tensor it = x.empty(src.shape(), work);
    const auto& be = backend_of(x);
    be.frobenius_normalize(DenseBatch{src.data(), g.dtype, rows, cols, count},
                           DenseBatch{it.data(), work, rows, cols, count}, options.eps, x.call());
    const bool symmetric = symmetric_route(x, options.symmetric_products, rows);
    if (symmetric) it = it.alias(blocks_view(it.view(), 0, {count, rows, cols}, {rows * cols, cols, 1}));
    for (int step = 0; step < options.steps; ++step) {
      Tensor b;
      if (symmetric) {
        const std::vector<BlockRun> a_blocks = lower_blocks(x, it.view(), it.view(), count);
        const Tensor s = mirrored(x, a_blocks, count);                           // A = X X^T
        b = mirrored(x, lower_blocks(x, s.view(), s.view(), count, cc, &a_blocks, cb), count);
      } else {
        const Tensor s = product_of(x, it.view(), transposed(it.view()));      // A = X X^T
        b = product_of(x, s.view(), s.view(), cc, s.view(), cb);               // c A A + b A
      }
      it = product_of(x, b.view(), it.view(), 1.0, it.view(), ca);           // B X + a X
    }
    if (symmetric) it = it.alias(blocks_view(it.view(), 0, src.shape(), contiguous_strides(src.shape())));
    if (work != g.dtype) {
      Tensor y = x.empty(src.shape(), g.dtype);
      be.convert(DenseBatch{it.data(), work, rows, cols, count},
                 DenseBatch{y.data(), g.dtype, rows, cols, count}, x.call());
      it = y;
    }
    if (tall) {
      Tensor out = x.empty(g.shape, g.dtype);
      x.copy(transposed(it.view()), out.view());
      it = out;
    }
    return x.result(it);
  }));
}

Tensor inv_root(const TensorView& a, int p, double eps, const InvRootOptions& options,
                Stream stream) {
  const char* op = "linalg.inv_root";
  if (p < 1) throw_error<InvalidArgument>(op, "p must be a positive int, got ", p);
  check_eps(op, eps);
  return matrix_root(Root{op, p, eps, options.clip}, a, options, stream);
}

Tensor sqrtm_psd(const TensorView& a, const SqrtmPsdOptions& options, Stream stream) {
  return matrix_root(Root{"linalg.sqrtm_psd", 0, 0.0, options.clip}, a, options, stream);
}

Polar polar(const TensorView& a, PolarSide side, const CommonOptions& options, Stream stream) {
  const char* op = "linalg.polar";
  detail::check_view(op, "a", a);
  detail::check_float(op, "a", a);
  if (a.ndim() < 2)
    throw_error<InvalidArgument>(op, "a must be a matrix (..., m, n), got shape ", a.shape_str());
  if (side != PolarSide::right && side != PolarSide::left)
    throw_error<InvalidArgument>(op, "side must be PolarSide::right or PolarSide::left, got ",
                                 static_cast<int>(side));
  const LinalgOptions lo = linalg_options(options);
  return run_linalg(op, "a", a.device, lo, stream, as_op(op, [&](LinalgExec& x) {
    const int64_t m = a.shape[a.shape.size() - 2], n = a.shape[a.shape.size() - 1];
    const bool right = side == PolarSide::right;
    const int64_t order = right ? n : m;  // p's
    const Shape batch = detail::batch_of(a, 2);
    const Shape p_shape = with(batch, {order, order});
    // Empty a: u of a's shape, p zero (the thin SVD has no singular triplets).
    if (a.numel() == 0)
      return Polar{x.result(x.empty(a.shape, a.dtype)), x.filled(p_shape, a.dtype, 0.0)};
    const int64_t count = product(batch), k = std::min(m, n);
    LinalgOptions so = lo;  // svd where the work runs; its failure is checked here
    so.device.reset();
    so.fallback = Fallback::none;
    so.blocking = false;
    so.check_info = false;
    const Tensor on = on_exec(x, a, false);
    const Svd d = svd(on.view(), false, true, SvdMethod::automatic, so, x.call().stream);
    x.check(d.info, detail::Failure::svd_not_converged);
    const Tensor u = product_of(x, d.u.view(), d.vh.view());  // W V^H
    const Tensor s = on_exec(x, d.s.view(), true);
    // right: p = (V S) V^H, V S = conj(vh^T) diag(s); left: p = W (conj(W) diag(s))^T = W S W^H.
    const Tensor v = on_exec(x, right ? transposed(d.vh.view()) : d.u.view(), true);
    const Tensor scaled = x.empty(v.shape(), a.dtype);
    const auto& be = backend_of(x);
    be.scale_columns(DenseBatch{v.data(), a.dtype, order, k, count}, s.data(), true, scaled.data(),
                     x.call());
    Tensor p = right ? product_of(x, scaled.view(), d.vh.view())
                     : product_of(x, v.view(), transposed(scaled.view()));
    if (!p.view().is_contiguous()) p = on_exec(x, p.view(), true);  // a copy: p stays alive
    be.hermitian_part(detail::SquareBatch{p.data(), a.dtype, order, count}, x.call());
    return Polar{x.result(u), x.result(p)};
  }));
}

}  // namespace gpula::linalg
