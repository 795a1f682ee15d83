#pragma once
// Helpers of the ldl_factor and eigh_generalized tests (CPU and CUDA): complex128 checks of a
// Bunch-Kaufman factor in LAPACK's packed form (rebuilt as X D X^T or X D X^H) and of a
// generalized eigendecomposition (residual and b-orthonormality of the eigenvectors).
#include <gpula/linalg.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "support/linalg.h"

namespace ldl_test {

using core_test::cdouble;
using gpula::Shape;
using gpula::TensorView;
using linalg_test::with;
using Mat = std::vector<cdouble>;  // row-major n x n

inline Mat matmul(const Mat& x, const Mat& y, int64_t n) {
  Mat r(n * n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t k = 0; k < n; ++k)
      for (int64_t j = 0; j < n; ++j) r[i * n + j] += x[i * n + k] * y[k * n + j];
  return r;
}

// max |a - X D X^T| / (||a||_inf n) over the batch, where X and D are rebuilt from sytrf's
// packed ldu and 1-based ipiv as LAPACK documents them (lower: L = P(1) L(1) P(2) L(2) ...,
// upper: U = P(n) U(n) ... P(1) U(1); ^H for Hermitian complex), and a is read through the
// triangle factored (conjugate-mirrored when `herm`).
inline double ldl_error(const TensorView& a, bool lower, bool herm, const TensorView& ldu,
                        const TensorView& piv) {
  const int64_t n = a.shape.back();
  const Shape batch(a.shape.begin(), a.shape.end() - 2);
  double worst = 0.0;
  core_test::for_each_index(batch, [&](const Shape& s) {
    auto f = [&](int64_t i, int64_t j) { return core_test::at(ldu, with(s, {i, j})); };
    auto p = [&](int64_t k) { return static_cast<int64_t>(core_test::at(piv, with(s, {k})).real()); };
    Mat x(n * n), d(n * n);
    for (int64_t i = 0; i < n; ++i) x[i * n + i] = 1.0;
    // Blocks in the order their factors multiply: (first row, size, row swapped with first/last).
    std::vector<std::pair<int64_t, int64_t>> blocks;
    for (int64_t k = 0; k < n;) {
      const bool two = p(k) < 0;
      blocks.push_back({k, two ? 2 : 1});
      k += two ? 2 : 1;
    }
    if (!lower) std::reverse(blocks.begin(), blocks.end());
    for (auto [k, size] : blocks) {
      // D's block.
      for (int64_t i = k; i < k + size; ++i) d[i * n + i] = f(i, i);
      if (size == 2) {
        const cdouble off = lower ? f(k + 1, k) : f(k, k + 1);
        d[(k + 1) * n + k] = lower ? off : (herm ? std::conj(off) : off);
        d[k * n + k + 1] = lower ? (herm ? std::conj(off) : off) : off;
      }
      // X = X P(k): swap columns (row k, or k + 1 for lower 2x2 blocks) with |ipiv| - 1.
      const int64_t r = lower ? (size == 2 ? k + 1 : k) : k;
      const int64_t q = std::abs(p(size == 2 && !lower ? k + 1 : k)) - 1;
      for (int64_t i = 0; i < n; ++i) std::swap(x[i * n + r], x[i * n + q]);
      // X = X E(k): E(k) is the identity with the block's multipliers in its columns.
      Mat e(n * n);
      for (int64_t i = 0; i < n; ++i) e[i * n + i] = 1.0;
      for (int64_t c = k; c < k + size; ++c)
        for (int64_t i = lower ? k + size : 0; i < (lower ? n : k); ++i) e[i * n + c] = f(i, c);
      x = matmul(x, e, n);
    }
    Mat xt(n * n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) xt[i * n + j] = herm ? std::conj(x[j * n + i]) : x[j * n + i];
    const Mat rec = matmul(matmul(x, d, n), xt, n);
    const Mat m = linalg_test::read_matrix(a, s, lower ? 1 : 0, herm);
    const double an = std::max(linalg_test::inf_norm(m, n), 1e-300);
    for (int64_t i = 0; i < n * n; ++i)
      worst = std::max(worst, std::abs(rec[i] - m[i]) / (an * static_cast<double>(n)));
  });
  return worst;
}

struct GenErrors {
  double residual = 0.0;  // max |lhs v_j - w_j rhs v_j| / ((||a|| ||b|| + ||a||) n)
  double ortho = 0.0;     // max |(v^H b v - I)_ij| (types 1, 2), |(v^H b^-1 v - I)| skipped (3)
  bool ascending = true;
};

// Checks w and v of eigh_generalized(a, b, type, lower) (a and b broadcast to w's batch).
inline GenErrors gen_errors(const TensorView& a, const TensorView& b, int type, bool lower,
                            const TensorView& w, const TensorView& v) {
  GenErrors e;
  const int64_t n = w.shape.back();
  const Shape batch(w.shape.begin(), w.shape.end() - 1);
  core_test::for_each_index(batch, [&](const Shape& s) {
    const int tri = lower ? 1 : 0;
    Mat am(n * n), bm(n * n), vm(n * n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        am[i * n + j] = linalg_test::mat(a, s, i, j, tri, true);
        bm[i * n + j] = linalg_test::mat(b, s, i, j, tri, true);
        vm[i * n + j] = core_test::at(v, with(s, {i, j}));
      }
    const double an = std::max(linalg_test::inf_norm(am, n), 1e-300);
    const double bn = linalg_test::inf_norm(bm, n);
    // type 1: a v = w b v; 2: a b v = w v; 3: b a v = w v.
    const Mat lhs = type == 1 ? matmul(am, vm, n)
                              : (type == 2 ? matmul(am, matmul(bm, vm, n), n)
                                           : matmul(bm, matmul(am, vm, n), n));
    const Mat rhs = type == 1 ? matmul(bm, vm, n) : vm;
    std::vector<double> wv(n);
    for (int64_t j = 0; j < n; ++j) wv[j] = core_test::at(w, with(s, {j})).real();
    for (int64_t j = 1; j < n; ++j) e.ascending = e.ascending && wv[j - 1] <= wv[j];
    const double scale = (an * std::max(bn, 1.0) + an) * static_cast<double>(n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        e.residual = std::max(e.residual, std::abs(lhs[i * n + j] - wv[j] * rhs[i * n + j]) / scale);
    if (type == 3) return;
    const Mat bv = matmul(bm, vm, n);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        cdouble g = i == j ? -1.0 : 0.0;
        for (int64_t k = 0; k < n; ++k) g += std::conj(vm[k * n + i]) * bv[k * n + j];
        e.ortho = std::max(e.ortho, std::abs(g));
      }
  });
  return e;
}

}  // namespace ldl_test
