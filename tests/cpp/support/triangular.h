#pragma once
// Helpers of the solve_triangular tests (CPU and CUDA): random triangular matrices whose unread
// parts are poisoned, and the dense op(a) a solve is checked against.
#include <gpula/linalg.h>

#include <limits>

#include "support/linalg.h"

namespace triangular_test {

using core_test::cdouble;
using core_test::HostTensor;
using linalg_test::with;

// A random well-conditioned triangular batch (diagonal of magnitude >= 2) of the given layout;
// the triangle not read is NaN, and so is the diagonal with `unit`.
inline HostTensor random_triangular(const gpula::Shape& shape, gpula::DType t, bool lower,
                                    bool unit, core_test::Layout layout, uint64_t seed) {
  HostTensor a = core_test::make_host(shape, t, layout);
  core_test::Filler(seed).fill(a.view);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  linalg_test::poison_triangle(a, lower, nan);
  const int64_t n = shape.back();
  const gpula::Shape batch(shape.begin(), shape.end() - 2);
  core_test::for_each_index(batch, [&](const gpula::Shape& b) {
    for (int64_t i = 0; i < n; ++i) {
      const gpula::Shape d = with(b, {i, i});
      a.set(d, unit ? cdouble(nan) : a.get(d) + (a.get(d).real() < 0 ? -2.0 : 2.0));
    }
  });
  return a;
}

// op(a) as the solver reads it, dense and row-major (float64/complex128): the triangle `lower`
// (else upper) of a, ones on the diagonal with `unit`, zeros elsewhere; transposed and conjugated
// as `trans` says.
inline HostTensor op_matrix(const gpula::TensorView& a, bool lower, gpula::linalg::Trans trans,
                            bool unit) {
  const bool cplx = gpula::is_complex(a.dtype);
  HostTensor r = core_test::make_host(a.shape, cplx ? gpula::DType::c128 : gpula::DType::f64);
  const int64_t n = a.shape.back();
  const gpula::Shape batch(a.shape.begin(), a.shape.end() - 2);
  core_test::for_each_index(batch, [&](const gpula::Shape& b) {
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const bool keep = lower ? j <= i : j >= i;
        cdouble v = i == j && unit ? 1.0 : keep ? core_test::at(a, with(b, {i, j})) : 0.0;
        if (trans == gpula::linalg::Trans::none) {
          r.set(with(b, {i, j}), v);
        } else {
          r.set(with(b, {j, i}), trans == gpula::linalg::Trans::conj_transpose ? std::conj(v) : v);
        }
      }
  });
  return r;
}

}  // namespace triangular_test
