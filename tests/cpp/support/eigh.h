#pragma once
// Helpers of the eigh tests (CPU and CUDA): random Hermitian matrices and complex128 checks of
// an eigendecomposition (residual a v - v diag(w), orthonormality v^H v - I, ascending w).
#include <gpula/linalg.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "support/linalg.h"

namespace eigh_test {

using core_test::cdouble;
using core_test::HostTensor;
using gpula::Shape;
using gpula::TensorView;
using linalg_test::with;

// Fills every matrix of h (shape (..., n, n)) with (M + M^H) / 2 for a random M, scaled by
// `scale` (real symmetric for real dtypes).
inline void fill_hermitian(const HostTensor& h, uint64_t seed, double scale = 1.0) {
  core_test::Filler f(seed);
  const TensorView& v = h.view;
  const bool cplx = gpula::is_complex(v.dtype);
  const int64_t n = v.shape.back();
  const Shape batch(v.shape.begin(), v.shape.end() - 2);
  core_test::for_each_index(batch, [&](const Shape& b) {
    std::vector<cdouble> m(n * n);
    for (auto& x : m) x = f.uniform(cplx);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        h.set(with(b, {i, j}), scale * 0.5 * (m[i * n + j] + std::conj(m[j * n + i])));
  });
}

struct Errors {
  double residual = 0.0;  // max ||a v_j - w_j v_j||_inf / (||a||_inf n)
  double ortho = 0.0;     // max |(v^H v - I)_ij|
  double w_vs_ref = 0.0;  // max |w - w_ref| / (||a||_inf) when a reference is given
  bool ascending = true;
};

// Checks w (batch + (n)) and, when v is given, v (batch + (n, n)) against the input a as read
// through triangle `tri` (1: lower, 0: upper) mirrored with conjugation.
inline Errors check(const TensorView& a, int tri, const TensorView& w, const TensorView* v,
                    const TensorView* w_ref = nullptr) {
  Errors e;
  const int64_t n = a.shape.back();
  const Shape batch(a.shape.begin(), a.shape.end() - 2);
  core_test::for_each_index(batch, [&](const Shape& s) {
    const std::vector<cdouble> m = linalg_test::read_matrix(a, s, tri, true);
    const double an = std::max(linalg_test::inf_norm(m, n), 1e-300);
    std::vector<double> wv(n);
    for (int64_t j = 0; j < n; ++j) wv[j] = core_test::at(w, with(s, {j})).real();
    for (int64_t j = 1; j < n; ++j)
      if (!(wv[j - 1] <= wv[j])) e.ascending = false;
    if (w_ref)
      for (int64_t j = 0; j < n; ++j)
        e.w_vs_ref =
            std::max(e.w_vs_ref, std::abs(wv[j] - core_test::at(*w_ref, with(s, {j})).real()) / an);
    if (!v) return;
    std::vector<cdouble> vm(n * n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) vm[i * n + j] = core_test::at(*v, with(s, {i, j}));
    for (int64_t j = 0; j < n; ++j)
      for (int64_t i = 0; i < n; ++i) {
        cdouble r = -wv[j] * vm[i * n + j];
        for (int64_t k = 0; k < n; ++k) r += m[i * n + k] * vm[k * n + j];
        e.residual = std::max(e.residual, std::abs(r) / (an * static_cast<double>(n)));
      }
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        cdouble d = i == j ? -1.0 : 0.0;
        for (int64_t k = 0; k < n; ++k) d += std::conj(vm[k * n + i]) * vm[k * n + j];
        e.ortho = std::max(e.ortho, std::abs(d));
      }
  });
  return e;
}

}  // namespace eigh_test
