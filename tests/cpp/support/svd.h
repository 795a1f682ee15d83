#pragma once
// Helpers of the SVD tests (CPU and CUDA): reference singular values by one-sided Jacobi in
// long double, and complex128 checks of a decomposition (reconstruction ||a - u s vh||_F /
// ||a||_F, orthonormality of u's columns and vh's rows, s descending and non-negative).
#include <gpula/linalg.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>

#include "support/linalg.h"

namespace svd_test {

using core_test::cdouble;
using gpula::Shape;
using gpula::TensorView;
using linalg_test::with;
using cld = std::complex<long double>;

// The singular values (descending) of the m x n row-major matrix a, by one-sided Jacobi
// (Hestenes) on the columns of a (or of a^H when m < n), in long double until every pair of
// columns is orthogonal to 1e-18 relative.
inline std::vector<double> reference_values(const std::vector<cdouble>& a, int64_t m, int64_t n) {
  const bool wide = m < n;
  const int64_t r = wide ? n : m, c = wide ? m : n;  // work on the tall r x c matrix
  std::vector<cld> w(r * c);                          // column-major
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const cld v(a[i * n + j].real(), a[i * n + j].imag());
      if (wide)
        w[j + i * r] = std::conj(v);
      else
        w[i + j * r] = v;
    }
  for (int sweep = 0; sweep < 60; ++sweep) {
    bool rotated = false;
    for (int64_t p = 0; p < c; ++p)
      for (int64_t q = p + 1; q < c; ++q) {
        long double alpha = 0, beta = 0;
        cld gamma = 0;
        for (int64_t i = 0; i < r; ++i) {
          alpha += std::norm(w[i + p * r]);
          beta += std::norm(w[i + q * r]);
          gamma += std::conj(w[i + p * r]) * w[i + q * r];
        }
        const long double g = std::abs(gamma);
        if (g == 0 || g <= 1e-18L * std::sqrt(alpha * beta)) continue;
        rotated = true;
        // Rotate columns p, q so that they become orthogonal.
        const cld phase = gamma / g;
        const long double zeta = (beta - alpha) / (2 * g);
        const long double t =
            (zeta >= 0 ? 1 : -1) / (std::fabs(zeta) + std::sqrt(1 + zeta * zeta));
        const long double cs = 1 / std::sqrt(1 + t * t), sn = cs * t;
        for (int64_t i = 0; i < r; ++i) {
          const cld x = w[i + p * r], y = w[i + q * r];
          w[i + p * r] = cs * x - sn * std::conj(phase) * y;
          w[i + q * r] = sn * phase * x + cs * y;
        }
      }
    if (!rotated) break;
  }
  std::vector<double> s(c);
  for (int64_t j = 0; j < c; ++j) {
    long double nrm = 0;
    for (int64_t i = 0; i < r; ++i) nrm += std::norm(w[i + j * r]);
    s[j] = static_cast<double>(std::sqrt(nrm));
  }
  std::sort(s.begin(), s.end(), [](double x, double y) { return x > y; });
  return s;
}

struct Errors {
  double recon = 0.0;   // max ||a - u[:, :K] diag(s) vh[:K, :]||_F / ||a||_F
  double ortho_u = 0.0; // max |(u^H u - I)_ij|
  double ortho_v = 0.0; // max |(vh vh^H - I)_ij|
  double s_vs_ref = 0.0;  // max |s - s_ref| / max(s_ref[0], tiny)
  bool descending = true;
};

// The m x n matrix of v at batch index b, row-major.
inline std::vector<cdouble> matrix(const TensorView& v, const Shape& b, int64_t rows,
                                   int64_t cols) {
  std::vector<cdouble> r(rows * cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) r[i * cols + j] = core_test::at(v, with(b, {i, j}));
  return r;
}

// Checks s (batch + (K)) against reference values of a (batch + (m, n)), and when u and vh are
// given, the reconstruction and orthonormality. `ref` (batch + (K), optional) replaces the
// Jacobi reference (for comparing against another backend).
inline Errors check(const TensorView& a, const TensorView& s, const TensorView* u,
                    const TensorView* vh, const TensorView* ref = nullptr) {
  Errors e;
  const int64_t m = a.shape[a.ndim() - 2], n = a.shape.back(), k = std::min(m, n);
  const Shape batch(a.shape.begin(), a.shape.end() - 2);
  core_test::for_each_index(batch, [&](const Shape& b) {
    const std::vector<cdouble> am = matrix(a, b, m, n);
    std::vector<double> sv(k), sr(k);
    for (int64_t j = 0; j < k; ++j) sv[j] = core_test::at(s, with(b, {j})).real();
    if (ref) {
      for (int64_t j = 0; j < k; ++j) sr[j] = core_test::at(*ref, with(b, {j})).real();
    } else {
      sr = reference_values(am, m, n);
    }
    const double s0 = std::max(k ? sr[0] : 0.0, 1e-300);
    for (int64_t j = 0; j < k; ++j) {
      if (!(sv[j] >= 0) || (j > 0 && !(sv[j - 1] >= sv[j]))) e.descending = false;
      const double d = std::abs(sv[j] - sr[j]) / s0;
      e.s_vs_ref = std::isnan(d) ? INFINITY : std::max(e.s_vs_ref, d);
    }
    if (!u) return;
    const int64_t uc = u->shape.back(), vr = vh->shape[vh->ndim() - 2];
    const std::vector<cdouble> um = matrix(*u, b, m, uc), vm = matrix(*vh, b, vr, n);
    double num = 0, den = 0;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        cdouble x = am[i * n + j];
        for (int64_t q = 0; q < k; ++q) x -= um[i * uc + q] * sv[q] * vm[q * n + j];
        num += std::norm(x);
        den += std::norm(am[i * n + j]);
      }
    const double rec = den > 0 ? std::sqrt(num / den) : std::sqrt(num);
    e.recon = std::isnan(rec) ? INFINITY : std::max(e.recon, rec);
    for (int64_t i = 0; i < uc; ++i)
      for (int64_t j = 0; j < uc; ++j) {
        cdouble d = i == j ? -1.0 : 0.0;
        for (int64_t q = 0; q < m; ++q) d += std::conj(um[q * uc + i]) * um[q * uc + j];
        e.ortho_u = std::isnan(std::abs(d)) ? INFINITY : std::max(e.ortho_u, std::abs(d));
      }
    for (int64_t i = 0; i < vr; ++i)
      for (int64_t j = 0; j < vr; ++j) {
        cdouble d = i == j ? -1.0 : 0.0;
        for (int64_t q = 0; q < n; ++q) d += vm[i * n + q] * std::conj(vm[j * n + q]);
        e.ortho_v = std::isnan(std::abs(d)) ? INFINITY : std::max(e.ortho_v, std::abs(d));
      }
  });
  return e;
}

}  // namespace svd_test
