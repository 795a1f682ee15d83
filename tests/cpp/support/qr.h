#pragma once
// Checks of the QR and least-squares tests (CPU and CUDA): QR properties (orthonormal q, q r = a,
// r upper triangular) and a float64/complex128 normal-equation reference for least squares.
#include <algorithm>
#include <cmath>
#include <vector>

#include "support/linalg.h"

namespace linalg_qr_test {

using core_test::cdouble;
using gpula::Shape;
using gpula::TensorView;
using linalg_test::elem;

// Max deviations of q^H q from I, of q r from a (relative to max |a|) and of r below the
// diagonal, over the batch. q may be empty (mode r), then only r's triangle is checked.
struct QrErrors {
  double orth = 0, recon = 0, lower = 0;
};
inline QrErrors qr_errors(const TensorView& a, const TensorView* q, const TensorView& r) {
  QrErrors e;
  const int64_t m = a.shape[a.ndim() - 2], n = a.shape[a.ndim() - 1];
  const int64_t rk = r.shape[r.ndim() - 2];
  const Shape batch(a.shape.begin(), a.shape.end() - 2);
  core_test::for_each_index(batch, [&](const Shape& s) {
    for (int64_t i = 0; i < rk; ++i)
      for (int64_t j = 0; j < std::min(i, n); ++j)
        e.lower = std::max(e.lower, std::abs(elem(r, s, i, j)));
    if (!q) return;
    const int64_t qc = q->shape[q->ndim() - 1];
    double amax = 1e-300;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) amax = std::max(amax, std::abs(elem(a, s, i, j)));
    for (int64_t i = 0; i < qc; ++i)
      for (int64_t j = 0; j < qc; ++j) {
        cdouble d = 0.0;
        for (int64_t p = 0; p < m; ++p) d += std::conj(elem(*q, s, p, i)) * elem(*q, s, p, j);
        e.orth = std::max(e.orth, std::abs(d - (i == j ? 1.0 : 0.0)));
      }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        cdouble d = 0.0;
        for (int64_t p = 0; p < qc; ++p) d += elem(*q, s, i, p) * elem(r, s, p, j);
        e.recon = std::max(e.recon, std::abs(d - elem(a, s, i, j)) / amax);
      }
  });
  return e;
}

// Solves g y = h in place (g: p x p, h: p x k, row-major) by Gaussian elimination with partial
// pivoting.
inline void gauss(std::vector<cdouble>& g, std::vector<cdouble>& h, int64_t p, int64_t k) {
  for (int64_t c = 0; c < p; ++c) {
    int64_t piv = c;
    for (int64_t i = c + 1; i < p; ++i)
      if (std::abs(g[i * p + c]) > std::abs(g[piv * p + c])) piv = i;
    for (int64_t j = 0; j < p; ++j) std::swap(g[c * p + j], g[piv * p + j]);
    for (int64_t j = 0; j < k; ++j) std::swap(h[c * k + j], h[piv * k + j]);
    for (int64_t i = c + 1; i < p; ++i) {
      const cdouble f = g[i * p + c] / g[c * p + c];
      for (int64_t j = c; j < p; ++j) g[i * p + j] -= f * g[c * p + j];
      for (int64_t j = 0; j < k; ++j) h[i * k + j] -= f * h[c * k + j];
    }
  }
  for (int64_t c = p - 1; c >= 0; --c)
    for (int64_t j = 0; j < k; ++j) {
      cdouble s = h[c * k + j];
      for (int64_t i = c + 1; i < p; ++i) s -= g[c * p + i] * h[i * k + j];
      h[c * k + j] = s / g[c * p + c];
    }
}

// Largest |x - x_ref| / max |x_ref| over the broadcast batch, with x_ref the full-rank
// least-squares solution from the normal equations (m >= n: a^H a x = a^H b; m < n:
// x = a^H (a a^H)^-1 b). b is (m,) or (..., m, k); x is (..., n) or (..., n, k).
inline double lstsq_error(const TensorView& a, const TensorView& b, const TensorView& x) {
  const int64_t m = a.shape[a.ndim() - 2], n = a.shape[a.ndim() - 1];
  const bool vec = b.ndim() == 1;
  const int64_t k = vec ? 1 : b.shape.back();
  const Shape batch(x.shape.begin(), x.shape.end() - (vec ? 1 : 2));
  double err = 0, ref_max = 1e-300;
  core_test::for_each_index(batch, [&](const Shape& s) {
    auto A = [&](int64_t i, int64_t j) { return elem(a, s, i, j); };
    auto B = [&](int64_t i, int64_t j) { return vec ? elem(b, s, i) : elem(b, s, i, j); };
    std::vector<cdouble> ref(n * k);
    if (m >= n) {
      std::vector<cdouble> g(n * n), h(n * k);
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < n; ++j)
          for (int64_t p = 0; p < m; ++p) g[i * n + j] += std::conj(A(p, i)) * A(p, j);
        for (int64_t j = 0; j < k; ++j)
          for (int64_t p = 0; p < m; ++p) h[i * k + j] += std::conj(A(p, i)) * B(p, j);
      }
      gauss(g, h, n, k);
      ref = h;
    } else {
      std::vector<cdouble> g(m * m), h(m * k);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < m; ++j)
          for (int64_t p = 0; p < n; ++p) g[i * m + j] += A(i, p) * std::conj(A(j, p));
        for (int64_t j = 0; j < k; ++j) h[i * k + j] = B(i, j);
      }
      gauss(g, h, m, k);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < k; ++j)
          for (int64_t p = 0; p < m; ++p) ref[i * k + j] += std::conj(A(p, i)) * h[p * k + j];
    }
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < k; ++j) {
        Shape idx = s;
        idx.push_back(i);
        if (!vec) idx.push_back(j);
        err = std::max(err, std::abs(core_test::at(x, idx) - ref[i * k + j]));
        ref_max = std::max(ref_max, std::abs(ref[i * k + j]));
      }
  });
  return err / ref_max;
}

}  // namespace linalg_qr_test
