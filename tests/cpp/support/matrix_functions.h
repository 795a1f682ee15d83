#pragma once
// Helpers of the matrix-function tests (CPU and CUDA: orthogonalize, inv_root, sqrtm_psd, polar
// and the grouped forms): complex128 matrix arithmetic, the Newton-Schulz iteration of linalg.h
// in float64, residuals of the roots and of the polar decomposition.
#include <gpula/linalg.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

#include "support/linalg.h"

namespace mf_test {

using core_test::cdouble;
using gpula::Shape;
using gpula::TensorView;
using linalg_test::with;
using Mat = std::vector<cdouble>;  // row-major

// A host tensor of uniform [-1, 1) values in the given layout.
inline core_test::HostTensor random_matrix(const Shape& shape, gpula::DType t, uint64_t seed,
                                           core_test::Layout layout = core_test::Layout::row) {
  core_test::HostTensor h = core_test::make_host(shape, t, layout);
  core_test::Filler(seed).fill(h.view);
  return h;
}

// a (m x k) b (k x n).
inline Mat mul(const Mat& a, const Mat& b, int64_t m, int64_t k, int64_t n) {
  Mat r(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t p = 0; p < k; ++p)
      for (int64_t j = 0; j < n; ++j) r[i * n + j] += a[i * k + p] * b[p * n + j];
  return r;
}

// The (conjugate, with `conj`) transpose of a (m x n).
inline Mat transpose(const Mat& a, int64_t m, int64_t n, bool conj = false) {
  Mat r(m * n);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) r[j * m + i] = conj ? std::conj(a[i * n + j]) : a[i * n + j];
  return r;
}

// linalg.h's orthogonalize of the matrix of g at batch index s, in float64: X = G / (||G||_F +
// eps), transposed when m > n, then `steps` times A = X X^T, B = b A + c A A, X = a X + B X.
inline Mat newton_schulz(const TensorView& g, const Shape& s, int steps,
                         const std::array<double, 3>& coef, double eps) {
  const int64_t m = g.shape[g.shape.size() - 2], n = g.shape.back();
  const bool tall = m > n;
  const int64_t r = tall ? n : m, c = tall ? m : n;
  Mat x = linalg_test::read_result(g, s, m, n, false);
  if (tall) x = transpose(x, m, n);
  double fro = 0.0;
  for (const cdouble& v : x) fro += std::norm(v);
  for (cdouble& v : x) v /= std::sqrt(fro) + eps;
  for (int step = 0; step < steps; ++step) {
    const Mat a = mul(x, transpose(x, r, c), r, c, r);
    Mat b = mul(a, a, r, r, r);
    for (int64_t i = 0; i < r * r; ++i) b[i] = coef[1] * a[i] + coef[2] * b[i];
    const Mat bx = mul(b, x, r, r, c);
    for (int64_t i = 0; i < r * c; ++i) x[i] = coef[0] * x[i] + bx[i];
  }
  return tall ? transpose(x, r, c) : x;
}

inline Mat identity(int64_t n) {
  Mat r(n * n);
  for (int64_t i = 0; i < n; ++i) r[i * n + i] = 1.0;
  return r;
}

// max |x - y| (inf where it is NaN).
inline double max_abs_diff(const Mat& x, const Mat& y) {
  double worst = 0.0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double e = std::abs(x[i] - y[i]);
    worst = std::isnan(e) ? INFINITY : std::max(worst, e);
  }
  return worst;
}

// max over the batch indices s of t's batch (t: batch + (m, n)) of f(s).
template <class F>
double worst_over(const TensorView& t, F&& f) {
  double worst = 0.0;
  core_test::for_each_index(Shape(t.shape.begin(), t.shape.end() - 2),
                            [&](const Shape& s) { worst = std::max(worst, f(s)); });
  return worst;
}

// The matrix of t (batch + (m, n)) at batch index s.
inline Mat matrix_of(const TensorView& t, const Shape& s) {
  return linalg_test::read_result(t, s, t.shape[t.shape.size() - 2], t.shape.back(), false);
}

// max |got[s] - want(s)| over got's batch.
template <class F>
double max_error(const TensorView& got, F&& want) {
  return worst_over(got, [&](const Shape& s) { return max_abs_diff(matrix_of(got, s), want(s)); });
}

// max |g - h| over every element of two tensors of one shape (any rank); inf where the shapes
// differ or a difference is NaN.
inline double max_diff(const TensorView& g, const TensorView& h) {
  if (g.shape != h.shape) return INFINITY;
  double worst = 0.0;
  core_test::for_each_index(g.shape, [&](const Shape& i) {
    const double e = std::abs(core_test::at(g, i) - core_test::at(h, i));
    worst = std::isnan(e) ? INFINITY : std::max(worst, e);
  });
  return worst;
}

// max |R^p (A + eps I) - I| over the batch: inv_root's residual (A read from its lower
// triangle, Hermitian).
inline double inv_root_error(const TensorView& a, const TensorView& r, int p, double eps) {
  const int64_t n = a.shape.back();
  return worst_over(r, [&](const Shape& s) {
    Mat x = linalg_test::read_matrix(a, s, 1, true);
    for (int64_t i = 0; i < n; ++i) x[i * n + i] += eps;
    const Mat root = matrix_of(r, s);
    for (int q = 0; q < p; ++q) x = mul(root, x, n, n, n);
    return max_abs_diff(x, identity(n));
  });
}

// max |S S - A| / max|A| over the batch: sqrtm_psd's residual (A read from its lower triangle).
inline double sqrtm_error(const TensorView& a, const TensorView& sq) {
  const int64_t n = a.shape.back();
  return worst_over(sq, [&](const Shape& s) {
    const Mat x = linalg_test::read_matrix(a, s, 1, true), root = matrix_of(sq, s);
    double amax = 1e-300;
    for (const cdouble& v : x) amax = std::max(amax, std::abs(v));
    return max_abs_diff(mul(root, root, n, n, n), x) / amax;
  });
}

// max |R - R^H| over the batch.
inline double hermitian_error(const TensorView& r) {
  const int64_t n = r.shape.back();
  return max_error(r, [&](const Shape& s) { return transpose(matrix_of(r, s), n, n, true); });
}

// Over the batch of a: |u p - a| (|p u - a|, left), |u^H u - I| (|u u^H - I| where m < n),
// |p - p^H|, p's smallest eigenvalue (from the library's eigh) and |p - V S V^H| (W S W^H,
// left), the reference from the library's svd of the item in complex128.
struct PolarErrors {
  double product = 0.0, ortho = 0.0, herm = 0.0, ref = 0.0, min_eig = INFINITY;
};
inline PolarErrors polar_errors(const TensorView& a, const TensorView& u_t, const TensorView& p_t,
                                gpula::linalg::PolarSide side) {
  namespace la = gpula::linalg;
  using core_test::at;
  using core_test::HostTensor;
  using core_test::make_host;
  const int64_t m = a.shape[a.shape.size() - 2], n = a.shape.back(), k = std::min(m, n);
  const bool right = side == la::PolarSide::right;
  const int64_t o = right ? n : m;
  PolarErrors e;
  core_test::for_each_index(Shape(a.shape.begin(), a.shape.end() - 2), [&](const Shape& s) {
    const Mat am = matrix_of(a, s);
    const Mat u = matrix_of(u_t, s);
    const Mat p = matrix_of(p_t, s);
    const Mat up = right ? mul(u, p, m, n, n) : mul(p, u, m, m, n);
    e.product = std::max(e.product, max_abs_diff(up, am));
    const Mat uh = transpose(u, m, n, true);
    const Mat g = m >= n ? mul(uh, u, n, m, n) : mul(u, uh, m, n, m);
    e.ortho = std::max(e.ortho, max_abs_diff(g, identity(k)));
    e.herm = std::max(e.herm, max_abs_diff(p, transpose(p, o, o, true)));
    HostTensor h = make_host({m, n}, gpula::DType::c128);
    HostTensor ph = make_host({o, o}, gpula::DType::c128);
    for (int64_t i = 0; i < m * n; ++i) h.set({i / n, i % n}, am[i]);
    for (int64_t i = 0; i < o * o; ++i) ph.set({i / o, i % o}, p[i]);
    const la::Eigh pe = la::eigh(ph.view, true, true);
    if (o > 0) e.min_eig = std::min(e.min_eig, at(pe.w.view(), {0}).real());
    const la::Svd d = la::svd(h.view, false);
    Mat ref(o * o);
    for (int64_t i = 0; i < o; ++i)
      for (int64_t j = 0; j < o; ++j)
        for (int64_t l = 0; l < k; ++l) {
          const double sl = at(d.s.view(), {l}).real();
          ref[i * o + j] += right
                                ? std::conj(at(d.vh.view(), {l, i})) * sl * at(d.vh.view(), {l, j})
                                : at(d.u.view(), {i, l}) * sl * std::conj(at(d.u.view(), {j, l}));
        }
    e.ref = std::max(e.ref, max_abs_diff(p, ref));
  });
  return e;
}

}  // namespace mf_test
