#pragma once
// Helpers of the general eigensolver tests (CPU and CUDA): complex128 checks of an
// eigendecomposition (residual a v - v diag(w), unit columns, eigenvalues matched against a
// reference, exact conjugate pairs for real input) and a complex128 CPU reference.
#include <gpula/linalg.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "support/linalg.h"

namespace eig_test {

using core_test::cdouble;
using core_test::HostTensor;
using gpula::Shape;
using gpula::TensorView;
using linalg_test::with;

struct Errors {
  double residual = 0.0;  // max_j ||a v_j - w_j v_j||_inf / ||a||_inf
  double unit = 0.0;      // max_j | ||v_j||_2 - 1 |
  double w_vs_ref = 0.0;  // max over matched pairs |w - w_ref| / ||a||_inf (w_ref given)
  int bad_pairs = 0;      // real input: non-real w_j not followed by exactly conj(w_j), conj(v_j)
};

// Greedy matching of each reference eigenvalue to the nearest unused computed one; the largest
// distance. Order-free (the solvers need not agree on an order).
inline double match_distance(const std::vector<cdouble>& w, const std::vector<cdouble>& ref) {
  std::vector<bool> used(w.size(), false);
  double worst = 0.0;
  for (const cdouble& r : ref) {
    double best = std::numeric_limits<double>::infinity();
    std::size_t at = 0;
    for (std::size_t k = 0; k < w.size(); ++k)
      if (!used[k] && std::abs(w[k] - r) < best) best = std::abs(w[k] - r), at = k;
    if (!(best < std::numeric_limits<double>::infinity())) return INFINITY;  // NaN or none
    used[at] = true;
    worst = std::max(worst, best);
  }
  return worst;
}

// Checks w (batch + (n)) and, when v is given, v (batch + (n, n)) against the input a; with
// `real_pairs` also the conjugate-pair structure expected for real a.
inline Errors check(const TensorView& a, const TensorView& w, const TensorView* v,
                    const TensorView* w_ref = nullptr, bool real_pairs = false) {
  Errors e;
  const int64_t n = a.shape.back();
  const Shape batch(a.shape.begin(), a.shape.end() - 2);
  core_test::for_each_index(batch, [&](const Shape& s) {
    const std::vector<cdouble> m = linalg_test::read_matrix(a, s);
    const double an = std::max(linalg_test::inf_norm(m, n), 1e-300);
    std::vector<cdouble> wv(n);
    for (int64_t j = 0; j < n; ++j) wv[j] = core_test::at(w, with(s, {j}));
    if (w_ref) {
      std::vector<cdouble> rv(n);
      for (int64_t j = 0; j < n; ++j) rv[j] = core_test::at(*w_ref, with(s, {j}));
      e.w_vs_ref = std::max(e.w_vs_ref, match_distance(wv, rv) / an);
    }
    std::vector<cdouble> vm;
    if (v) {
      vm.resize(n * n);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) vm[i * n + j] = core_test::at(*v, with(s, {i, j}));
      for (int64_t j = 0; j < n; ++j) {
        double norm2 = 0.0, res = 0.0;
        for (int64_t i = 0; i < n; ++i) {
          norm2 += std::norm(vm[i * n + j]);
          cdouble r = -wv[j] * vm[i * n + j];
          for (int64_t k = 0; k < n; ++k) r += m[i * n + k] * vm[k * n + j];
          res = std::max(res, std::abs(r));
        }
        const double u = std::abs(std::sqrt(norm2) - 1.0);
        e.unit = std::isnan(u) ? INFINITY : std::max(e.unit, u);
        e.residual = std::isnan(res) ? INFINITY : std::max(e.residual, res / an);
      }
    }
    if (real_pairs)
      for (int64_t j = 0; j < n; ++j) {
        if (wv[j].imag() == 0.0) continue;
        bool ok = wv[j].imag() > 0.0 && j + 1 < n && wv[j + 1] == std::conj(wv[j]);
        if (ok && v)
          for (int64_t i = 0; i < n; ++i) ok = ok && vm[i * n + j + 1] == std::conj(vm[i * n + j]);
        if (!ok) ++e.bad_pairs;
        ++j;  // the conjugate partner
      }
  });
  return e;
}

// Eigenvalues of a computed in complex128 on the CPU (the reference), batch + (n).
inline gpula::Tensor reference_w(const TensorView& a) {
  HostTensor z = core_test::make_host(a.shape, gpula::DType::c128);
  core_test::for_each_index(a.shape, [&](const Shape& i) { z.set(i, core_test::at(a, i)); });
  gpula::linalg::LinalgOptions o;
  o.device = gpula::Device::cpu();
  return gpula::linalg::eigvals(z.view, o);
}

}  // namespace eig_test
