#pragma once
// Helpers of the linalg tests (CPU and CUDA): random matrices of a kind, element access with
// numpy broadcasting, and float64/complex128 reference checks (residuals, reconstructions).
#include <gpula/linalg.h>
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "support/common.h"

namespace linalg_test {

using core_test::cdouble;
using core_test::HostTensor;
using core_test::Layout;
using gpula::DType;
using gpula::Shape;
using gpula::TensorView;

enum class Kind { general, spd, symmetric };

// Test names "f32_row" for (dtype, layout) parameters.
struct DTypeLayoutName {
  template <class P>
  std::string operator()(const ::testing::TestParamInfo<P>& info) const {
    return std::string(gpula::name(std::get<0>(info.param))) + "_" +
           core_test::layout_name(std::get<1>(info.param));
  }
};

inline Shape with(Shape s, std::initializer_list<int64_t> tail) {
  s.insert(s.end(), tail);
  return s;
}

// Element (i, j) of the matrix (or element i of the vector) of v at broadcast batch index s.
inline cdouble elem(const TensorView& v, const Shape& s, int64_t i, int64_t j = 0) {
  if (v.ndim() == 1) return core_test::at(v, {i});
  const std::size_t vb = v.shape.size() - 2;
  Shape idx;
  for (std::size_t d = 0; d < vb; ++d) idx.push_back(v.shape[d] == 1 ? 0 : s[s.size() - vb + d]);
  idx.push_back(i);
  idx.push_back(j);
  return core_test::at(v, idx);
}

// Fills every matrix of h (shape (..., n, n)) with a random matrix of the kind. spd matrices are
// B B^H / n + I; symmetric ones (B + B^T) / 2 (complex symmetric: no conjugation).
inline void fill_kind(const HostTensor& h, Kind kind, uint64_t seed) {
  core_test::Filler f(seed);
  const TensorView& v = h.view;
  const bool cplx = gpula::is_complex(v.dtype);
  const int64_t n = v.shape.back();
  const Shape batch(v.shape.begin(), v.shape.end() - 2);
  core_test::for_each_index(batch, [&](const Shape& b) {
    std::vector<cdouble> m(n * n);
    for (auto& x : m) x = f.uniform(cplx);
    std::vector<cdouble> out(n * n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        if (kind == Kind::general) {
          out[i * n + j] = m[i * n + j];
        } else if (kind == Kind::symmetric) {
          out[i * n + j] = 0.5 * (m[i * n + j] + m[j * n + i]);
        } else {
          cdouble s = 0.0;
          for (int64_t p = 0; p < n; ++p) s += m[i * n + p] * std::conj(m[j * n + p]);
          out[i * n + j] = s / static_cast<double>(n) + (i == j ? 1.0 : 0.0);
        }
      }
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        Shape idx = with(b, {i, j});
        h.set(idx, out[i * n + j]);
      }
  });
}

// Sets the strict upper (or lower) triangle of every matrix to `value` (a triangle that must
// not be read).
inline void poison_triangle(const HostTensor& h, bool upper, cdouble value) {
  const int64_t n = h.view.shape.back();
  const Shape batch(h.view.shape.begin(), h.view.shape.end() - 2);
  core_test::for_each_index(batch, [&](const Shape& b) {
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        if (upper ? j > i : j < i) h.set(with(b, {i, j}), value);
  });
}

// A copy of the whole storage, to check that a call left its input alone.
struct Snapshot {
  std::vector<std::byte> bytes;
  explicit Snapshot(const HostTensor& h) : bytes(h.mem.get(), h.mem.get() + h.storage_bytes()) {}
  bool same(const HostTensor& h) const {
    return std::equal(bytes.begin(), bytes.end(), h.mem.get());
  }
};

// Reads the matrix operand a (..., n, n) as seen by the solver: with `tri` >= 0 only the lower
// (tri == 1) or upper (tri == 0) triangle is read and mirrored (conjugated when `herm`).
inline cdouble mat(const TensorView& a, const Shape& s, int64_t i, int64_t j, int tri, bool herm) {
  if (tri < 0) return elem(a, s, i, j);
  const bool stored = tri == 1 ? i >= j : i <= j;
  if (stored) return elem(a, s, i, j);
  const cdouble v = elem(a, s, j, i);
  return herm ? std::conj(v) : v;
}

// The n x n matrix of `a` at broadcast batch index s, row-major, as the solver sees it (mat()).
inline std::vector<cdouble> read_matrix(const TensorView& a, const Shape& s, int tri = -1,
                                        bool herm = false) {
  const int64_t n = a.shape.back();
  std::vector<cdouble> m(n * n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) m[i * n + j] = mat(a, s, i, j, tri, herm);
  return m;
}

// The (rows x cols) trailing matrix of a result x (shape batch + (rows, cols), or batch + (rows)
// when `vec`) at batch index s, row-major.
inline std::vector<cdouble> read_result(const TensorView& x, const Shape& s, int64_t rows,
                                        int64_t cols, bool vec) {
  std::vector<cdouble> m(rows * cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      m[i * cols + j] = core_test::at(x, vec ? with(s, {i}) : with(s, {i, j}));
  return m;
}

inline double inf_norm(const std::vector<cdouble>& m, int64_t n) {
  double r = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    double row = 0.0;
    for (int64_t j = 0; j < n; ++j) row += std::abs(m[i * n + j]);
    r = std::max(r, row);
  }
  return r;
}

// max over columns of ||a x - b||_inf / (||a||_inf ||x||_inf + ||b||_inf): the backward error.
// x is the result (contiguous, shape batch + (n) or batch + (n, k)); a and b the inputs.
inline double backward_error(const TensorView& a, const TensorView& b, const TensorView& x,
                             int tri = -1, bool herm = false) {
  const int64_t n = a.shape.back();
  const bool vec = b.ndim() == 1;
  const int64_t k = vec ? 1 : b.shape.back();
  const Shape batch(x.shape.begin(), x.shape.end() - (vec ? 1 : 2));
  double worst = 0.0;
  core_test::for_each_index(batch, [&](const Shape& s) {
    const std::vector<cdouble> am = read_matrix(a, s, tri, herm);
    const std::vector<cdouble> xm = read_result(x, s, n, k, vec);
    const double anorm = inf_norm(am, n);
    for (int64_t c = 0; c < k; ++c) {
      double xn = 0.0, bn = 0.0, rn = 0.0;
      for (int64_t i = 0; i < n; ++i) {
        xn = std::max(xn, std::abs(xm[i * k + c]));
        const cdouble bi = vec ? elem(b, s, i) : elem(b, s, i, c);
        bn = std::max(bn, std::abs(bi));
        cdouble r = -bi;
        for (int64_t j = 0; j < n; ++j) r += am[i * n + j] * xm[j * k + c];
        rn = std::max(rn, std::abs(r));
      }
      const double e = rn / (anorm * xn + bn);
      worst = std::isnan(e) ? INFINITY : std::max(worst, e);
    }
  });
  return worst;
}

// Reference det (complex128) of the matrix at batch index s by Gaussian elimination.
inline cdouble reference_det(const TensorView& a, const Shape& s) {
  const int64_t n = a.shape.back();
  std::vector<cdouble> m = read_matrix(a, s);
  cdouble d = 1.0;
  for (int64_t c = 0; c < n; ++c) {
    int64_t p = c;
    for (int64_t r = c + 1; r < n; ++r)
      if (std::abs(m[r * n + c]) > std::abs(m[p * n + c])) p = r;
    if (m[p * n + c] == 0.0) return 0.0;
    if (p != c) {
      for (int64_t j = 0; j < n; ++j) std::swap(m[p * n + j], m[c * n + j]);
      d = -d;
    }
    d *= m[c * n + c];
    for (int64_t r = c + 1; r < n; ++r) {
      const cdouble f = m[r * n + c] / m[c * n + c];
      for (int64_t j = c; j < n; ++j) m[r * n + j] -= f * m[c * n + j];
    }
  }
  return d;
}

// max |(P a)[i, j] - (L U)[i, j]| / max |a| over the batch, for scipy-style (lu, piv).
inline double lu_reconstruction_error(const TensorView& a, const TensorView& lu,
                                      const TensorView& piv) {
  const int64_t n = a.shape.back();
  const Shape batch(a.shape.begin(), a.shape.end() - 2);
  double worst = 0.0;
  core_test::for_each_index(batch, [&](const Shape& s) {
    std::vector<cdouble> pa = read_matrix(a, s);
    const std::vector<cdouble> f = read_matrix(lu, s);
    double amax = 0.0;
    for (const cdouble& v : pa) amax = std::max(amax, std::abs(v));
    for (int64_t i = 0; i < n; ++i) {
      const int64_t p = static_cast<int64_t>(core_test::at(piv, with(s, {i})).real());
      if (p < i || p >= n) {
        worst = INFINITY;
        return;
      }
      for (int64_t j = 0; j < n; ++j) std::swap(pa[i * n + j], pa[p * n + j]);
    }
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        cdouble r = 0.0;
        for (int64_t q = 0; q <= std::min(i, j); ++q)
          r += (q == i ? cdouble(1.0) : f[i * n + q]) * f[q * n + j];
        worst = std::max(worst, std::abs(r - pa[i * n + j]) / std::max(amax, 1e-300));
      }
  });
  return worst;
}

// max |L[i, j]| (i > j) of packed L\U factors over the batch (1 when n <= 1): partial pivoting
// keeps it at 1 (real) or sqrt(2) (complex, pivots chosen by |re| + |im|).
inline double max_abs_l(const TensorView& lu) {
  const int64_t n = lu.shape.back();
  const Shape batch(lu.shape.begin(), lu.shape.end() - 2);
  double worst = 1.0;
  core_test::for_each_index(batch, [&](const Shape& s) {
    for (int64_t i = 1; i < n; ++i)
      for (int64_t j = 0; j < i; ++j) {
        const double v = std::abs(elem(lu, s, i, j));
        worst = std::isnan(v) ? INFINITY : std::max(worst, v);
      }
  });
  return worst;
}

// max |L L^H - a| / max |a| (lower) or |U^H U - a| / max |a| (upper), and whether the other
// triangle of the factor is exactly zero. `a`'s triangle `lower` is the one that counts.
inline double cholesky_error(const TensorView& a, const TensorView& c, bool lower,
                             bool* other_zero) {
  const int64_t n = a.shape.back();
  const Shape batch(a.shape.begin(), a.shape.end() - 2);
  double worst = 0.0;
  *other_zero = true;
  core_test::for_each_index(batch, [&](const Shape& s) {
    const std::vector<cdouble> am = read_matrix(a, s, lower, true);
    const std::vector<cdouble> f = read_matrix(c, s);
    double amax = 0.0;
    for (const cdouble& v : am) amax = std::max(amax, std::abs(v));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        if ((lower ? j > i : j < i) && f[i * n + j] != 0.0) *other_zero = false;
        cdouble r = 0.0;
        for (int64_t q = 0; q < n; ++q)
          r += lower ? f[i * n + q] * std::conj(f[j * n + q])
                     : std::conj(f[q * n + i]) * f[q * n + j];
        worst = std::max(worst, std::abs(r - am[i * n + j]) / amax);
      }
  });
  return worst;
}

// max |a inv - I| over the batch, relative to ||a||_inf ||inv||_inf.
inline double inverse_error(const TensorView& a, const TensorView& inv) {
  const int64_t n = a.shape.back();
  const Shape batch(a.shape.begin(), a.shape.end() - 2);
  double worst = 0.0;
  core_test::for_each_index(batch, [&](const Shape& s) {
    const std::vector<cdouble> am = read_matrix(a, s), im = read_matrix(inv, s);
    const double an = inf_norm(am, n), in = inf_norm(im, n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        cdouble r = i == j ? -1.0 : 0.0;
        for (int64_t q = 0; q < n; ++q) r += am[i * n + q] * im[q * n + j];
        worst = std::max(worst, std::abs(r) / (an * in));
      }
  });
  return worst;
}

// ||a||_inf ||inv(a)||_inf of each matrix of a (batch order), the inverse taken in complex128 by
// the CPU backend; inf where a is singular.
inline std::vector<double> cond_inf(const TensorView& a) {
  const int64_t n = a.shape.back();
  const Shape batch(a.shape.begin(), a.shape.end() - 2);
  HostTensor z = core_test::make_host(a.shape, DType::c128);
  core_test::for_each_index(a.shape, [&](const Shape& i) { z.set(i, core_test::at(a, i)); });
  gpula::linalg::LinalgOptions o;
  o.check_info = false;
  o.device = gpula::Device::cpu();
  const gpula::linalg::Factor f = gpula::linalg::inv_ex(z.view, o);
  const TensorView iv = f.value.view(), info = f.info.view();
  std::vector<double> r;
  core_test::for_each_index(batch, [&](const Shape& s) {
    const double singular = core_test::at(info, s).real();
    const double c = inf_norm(read_matrix(a, s), n) * inf_norm(read_matrix(iv, s), n);
    r.push_back(singular != 0.0 || !std::isfinite(c) ? INFINITY : c);
  });
  return r;
}

inline std::vector<DType> float_types() {
  return {DType::f32, DType::f64, DType::c64, DType::c128};
}

}  // namespace linalg_test
