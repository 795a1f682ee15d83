#pragma once
// Grouped matmul tests: random MoE problems and the float64 reference (a loop over groups).
#include <gpula/grouped_matmul.h>

#include <cmath>
#include <random>
#include <vector>

#include "support/common.h"

namespace grouped_test {

using core_test::HostTensor;
using core_test::Layout;
using gpula::DType;
using gpula::Epilog;
using gpula::Shape;
using gpula::TensorView;

inline HostTensor random(const Shape& s, DType t, Layout l, uint64_t seed) {
  HostTensor h = core_test::make_host(s, t, l);
  core_test::Filler(seed).fill(h.view);
  return h;
}

// Group sizes summing to at most `total` (the rest of the rows belong to no group), some empty.
inline std::vector<int64_t> random_ends(int64_t groups, int64_t total, uint64_t seed,
                                        bool fill_all = true) {
  std::mt19937_64 rng(seed);
  std::vector<int64_t> ends(groups);
  const int64_t used = fill_all ? total : total * 3 / 4;
  std::uniform_int_distribution<int64_t> u(0, used);
  for (auto& e : ends) e = u(rng);
  std::sort(ends.begin(), ends.end());
  if (groups > 0 && fill_all) ends.back() = total;
  return ends;
}

inline HostTensor offsets_tensor(const std::vector<int64_t>& ends, DType t) {
  HostTensor h = core_test::make_host({static_cast<int64_t>(ends.size())}, t);
  for (std::size_t i = 0; i < ends.size(); ++i) h.set({static_cast<int64_t>(i)}, double(ends[i]));
  return h;
}

inline double act(Epilog e, double x) {
  if (e == Epilog::RELU || e == Epilog::RELU_BIAS) return x > 0 ? x : 0;
  if (e == Epilog::GELU || e == Epilog::GELU_BIAS) {
    const double u = std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
    return 0.5 * x * (1.0 + std::tanh(u));
  }
  return x;
}

// (T, N) float64, row-major: rows of group g are act(A[rows] @ B[g] + bias[g]); others zero.
inline std::vector<double> reference(const TensorView& a, const TensorView& b,
                                     const std::vector<int64_t>& ends, Epilog e,
                                     const TensorView* bias) {
  const int64_t t = a.shape[0], k = a.shape[1], n = b.shape[2];
  std::vector<double> d(t * n, 0.0);
  for (std::size_t g = 0; g < ends.size(); ++g) {
    const int64_t start = g == 0 ? 0 : ends[g - 1];
    for (int64_t i = start; i < ends[g]; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t l = 0; l < k; ++l)
          s += core_test::at(a, {i, l}).real() *
               core_test::at(b, {static_cast<int64_t>(g), l, j}).real();
        if (bias) s += core_test::at(*bias, {static_cast<int64_t>(g), j}).real();
        d[i * n + j] = act(e, s);
      }
  }
  return d;
}

// The same for one pair of the list form.
inline std::vector<double> reference_pair(const TensorView& a, const TensorView& b, Epilog e,
                                          const TensorView* bias) {
  const int64_t m = a.shape[0], k = a.shape[1], n = b.shape[1];
  std::vector<double> d(m * n, 0.0);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t l = 0; l < k; ++l)
        s += core_test::at(a, {i, l}).real() * core_test::at(b, {l, j}).real();
      if (bias) s += core_test::at(*bias, {j}).real();
      d[i * n + j] = act(e, s);
    }
  return d;
}

// Max |got - want| / (1 + max |want|), got a contiguous host view.
inline double rel_error(const TensorView& got, const std::vector<double>& want) {
  double err = 0, scale = 1;
  for (double w : want) scale = std::max(scale, std::abs(w));
  for (std::size_t i = 0; i < want.size(); ++i) {
    const double g = core_test::load(got.dtype, got.data, static_cast<int64_t>(i)).real();
    if (std::isnan(g)) return INFINITY;
    err = std::max(err, std::abs(g - want[i]));
  }
  return err / scale;
}

inline double tol_of(DType t) {
  switch (t) {
    case DType::f64: return 1e-12;
    case DType::f32: return 1e-5;
    case DType::f16: return 5e-3;
    case DType::bf16: return 3e-2;
    default: return 1e-1;  // float8
  }
}

}  // namespace grouped_test
