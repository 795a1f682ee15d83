// The recursive Cholesky of one large matrix (backend/cuda/cholesky_recursive.h: cuBLAS trsm
// and syrk/herk between Xpotrf leaves, from order kRecursiveCholeskyMinN) through the public
// API: both triangles, every dtype, an order that is no multiple of the 256-row split, a batch of
// two that loops, and LAPACK's info when the leading minor that fails lies in the first leaf, a
// later leaf, or a later matrix of the batch.
//
// The factor is checked by its action on random vectors, O(n^2) on the host: for x random,
// F (F^H x) (lower) or F^H (F x) (upper) against a x, relative to ||a||_inf ||x||_inf.
// Built only with CUDA; run by scripts/gpu_check.sh on the lent GPU.
#include <cuda_runtime.h>
#include <gpula/gpula.h>
#include <gpula/linalg.h>
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <random>
#include <string>
#include <vector>

#include "linalg_cuda_support.h"

namespace {

using namespace gpula;
using core_test::HostTensor;
using linalg_cuda_test::DeviceTensor;
using linalg_cuda_test::host_of;
using linalg_cuda_test::to_device;
using linalg_cuda_test::tol;
using linalg_cuda_test::unchanged;
using linalg_cuda_test::under_sanitizer;
namespace la = gpula::linalg;
using cd = std::complex<double>;

constexpr int64_t kOrder = 4100;  // >= kRecursiveCholeskyMinN, splits into uneven halves

template <class T>
constexpr bool is_cplx = false;
template <class R>
constexpr bool is_cplx<std::complex<R>> = true;

template <class T>
T from(cd v) {
  if constexpr (is_cplx<T>)
    return T(static_cast<typename T::value_type>(v.real()),
             static_cast<typename T::value_type>(v.imag()));
  else
    return static_cast<T>(v.real());
}

// Row-major n x n: a_ij = conj(a_ji) uniform in [-1, 1] (imaginary part too, for complex) off
// the diagonal, a_ii = n: Hermitian and strictly diagonally dominant, so positive definite.
// The triangle that must not be read holds NaN.
template <class T>
void fill_hpd(T* a, int64_t n, bool lower, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j <= i; ++j) {
      cd v = i == j ? cd(static_cast<double>(n), 0.0) : cd(u(g), is_cplx<T> ? u(g) : 0.0);
      const int64_t r = lower ? i : j, c = lower ? j : i;  // the triangle that is read
      a[r * n + c] = from<T>(lower ? v : std::conj(v));
      if (i != j) a[c * n + r] = from<T>(cd(NAN, 0.0));
    }
}

template <class T>
cd get(const T* a, int64_t k) {
  if constexpr (is_cplx<T>)
    return cd(a[k].real(), a[k].imag());
  else
    return cd(static_cast<double>(a[k]), 0.0);
}

// max |F op (x) - a x| / (||a||_inf ||x||_inf) over three random x; `a` read on its triangle.
template <class T>
double factor_residual(const T* a, const T* f, int64_t n, bool lower) {
  auto A = [&](int64_t i, int64_t j) {
    const bool stored = lower ? j <= i : j >= i;
    return stored ? get(a, i * n + j) : std::conj(get(a, j * n + i));
  };
  double anorm = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    double s = 0.0;
    for (int64_t j = 0; j < n; ++j) s += std::abs(A(i, j));
    anorm = std::max(anorm, s);
  }
  std::mt19937_64 g(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  double worst = 0.0;
  for (int rep = 0; rep < 3; ++rep) {
    std::vector<cd> x(n), y(n, 0.0), z(n, 0.0), ax(n, 0.0);
    for (cd& v : x) v = cd(u(g), u(g));
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) ax[i] += A(i, j) * x[j];
    if (lower) {  // y = L^H x, z = L y
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = 0; i <= j; ++i) y[i] += std::conj(get(f, j * n + i)) * x[j];
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j <= i; ++j) z[i] += get(f, i * n + j) * y[j];
    } else {  // y = U x, z = U^H y
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = i; j < n; ++j) y[i] += get(f, i * n + j) * x[j];
      for (int64_t j = 0; j < n; ++j)
        for (int64_t i = j; i < n; ++i) z[i] += std::conj(get(f, j * n + i)) * y[j];
    }
    double r = 0.0, xn = 0.0;
    for (int64_t i = 0; i < n; ++i) {
      r = std::isnan(std::abs(z[i] - ax[i])) ? INFINITY : std::max(r, std::abs(z[i] - ax[i]));
      xn = std::max(xn, std::abs(x[i]));
    }
    worst = std::max(worst, r / (anorm * xn));
  }
  return worst;
}

// Whether the triangle that is not the factor's is zero.
template <class T>
bool other_triangle_zero(const T* f, int64_t n, bool lower) {
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j)
      if ((lower ? j > i : j < i) && get(f, i * n + j) != cd(0.0, 0.0)) return false;
  return true;
}

struct Notes {
  std::vector<std::string> lines;
  LogSink sink() {
    return [this](LogLevel, const std::string& m) { lines.push_back(m); };
  }
  bool has(const std::string& what) const {
    for (const std::string& l : lines)
      if (l.find(what) != std::string::npos) return true;
    return false;
  }
};

template <class T>
void check_factor(DType t, bool lower) {
  const int64_t n = kOrder;
  const std::string where = std::string(name(t)) + (lower ? " lower" : " upper");
  HostTensor a = core_test::make_host({n, n}, t);
  fill_hpd(static_cast<T*>(a.view.data), n, lower, lower ? 11 : 12);
  DeviceTensor d = to_device(a);
  Notes notes;
  la::LinalgOptions o;
  o.logger = notes.sink();
  la::Factor f = la::cholesky(d.view, lower, o);
  HostTensor c = host_of(f.value);
  const auto* fa = static_cast<const T*>(c.view.data);
  EXPECT_LE(factor_residual(static_cast<const T*>(a.view.data), fa, n, lower), tol(t, n)) << where;
  EXPECT_TRUE(other_triangle_zero(fa, n, lower)) << where;
  EXPECT_EQ(host_of(f.info).get({}), core_test::cdouble(0.0)) << where;
  EXPECT_TRUE(notes.has("gpula recursive potrf")) << where;
  EXPECT_TRUE(unchanged(d, a)) << where;
}

class CholeskyRecursive : public linalg_cuda_test::GpuDTypeTest {};

TEST_P(CholeskyRecursive, FactorsBothTriangles) {
  const DType t = GetParam();
  if (under_sanitizer() && t != DType::f64) GTEST_SKIP() << "float64 only under the sanitizer";
  for (bool lower : {true, false}) {
    switch (t) {
      case DType::f32:
        check_factor<float>(t, lower);
        break;
      case DType::f64:
        check_factor<double>(t, lower);
        break;
      case DType::c64:
        check_factor<std::complex<float>>(t, lower);
        break;
      default:
        check_factor<std::complex<double>>(t, lower);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, CholeskyRecursive,
                         ::testing::Values(DType::f32, DType::f64, DType::c64, DType::c128),
                         [](const auto& info) { return core_test::str(info.param); });

class CholeskyRecursiveInfo : public linalg_cuda_test::GpuTest {};

// A diagonal entry of -n at 0-based position k: the leading minor of order k + 1 is the first
// one that is not positive definite. k = 100 lies in the first leaf, 3000 in the last one.
TEST_F(CholeskyRecursiveInfo, FirstFailingMinorOfTheWhole) {
  const int64_t n = kOrder;
  for (bool lower : {true, false})
    for (int64_t k : {int64_t{100}, int64_t{3000}}) {
      const std::string where = (lower ? "lower k " : "upper k ") + std::to_string(k);
      HostTensor a = core_test::make_host({n, n}, DType::f64);
      auto* p = static_cast<double*>(a.view.data);
      fill_hpd(p, n, lower, 21);
      p[k * n + k] = -static_cast<double>(n);
      DeviceTensor d = to_device(a);
      la::LinalgOptions o;
      o.check_info = false;
      EXPECT_EQ(host_of(la::cholesky(d.view, lower, o).info).get({}),
                core_test::cdouble(static_cast<double>(k + 1)))
          << where;
      try {
        la::cholesky(d.view, lower);
        ADD_FAILURE() << "no NotPositiveDefinite, " << where;
      } catch (const NotPositiveDefinite& e) {
        EXPECT_EQ(e.order(), k + 1) << where;
        const std::string want = "[linalg.cholesky] not positive definite: leading minor of order " +
                                 std::to_string(k + 1);
        EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
      }
      EXPECT_TRUE(unchanged(d, a)) << where;
    }
}

// Two matrices of order 4096 (a batch above the batched routines' orders loops over items):
// the second fails at order 2501, the first factors.
TEST_F(CholeskyRecursiveInfo, BatchLoopsAndReportsTheItem) {
  if (under_sanitizer()) GTEST_SKIP() << "covered by FirstFailingMinorOfTheWhole there";
  const int64_t n = 4096;
  HostTensor a = core_test::make_host({2, n, n}, DType::f64);
  auto* p = static_cast<double*>(a.view.data);
  fill_hpd(p, n, true, 31);
  fill_hpd(p + n * n, n, true, 32);
  p[n * n + 2500 * n + 2500] = -1.0e9;
  DeviceTensor d = to_device(a);
  la::LinalgOptions o;
  o.check_info = false;
  la::Factor f = la::cholesky(d.view, true, o);
  HostTensor info = host_of(f.info);
  EXPECT_EQ(info.get({0}), core_test::cdouble(0.0));
  EXPECT_EQ(info.get({1}), core_test::cdouble(2501.0));
  HostTensor c = host_of(f.value);
  EXPECT_LE(factor_residual(p, static_cast<const double*>(c.view.data), n, true),
            tol(DType::f64, n));
  try {
    la::cholesky(d.view, true);
    ADD_FAILURE() << "no NotPositiveDefinite";
  } catch (const NotPositiveDefinite& e) {
    EXPECT_EQ(e.order(), 2501);
    EXPECT_EQ(e.batch_index(), 1);
  }
}

// NaN on the diagonal never crashes; the call returns (info is cuSOLVER's business there).
TEST_F(CholeskyRecursiveInfo, NanInputReturns) {
  const int64_t n = kOrder;
  HostTensor a = core_test::make_host({n, n}, DType::f64);
  auto* p = static_cast<double*>(a.view.data);
  fill_hpd(p, n, true, 41);
  p[2600 * n + 2600] = NAN;
  DeviceTensor d = to_device(a);
  la::LinalgOptions o;
  o.check_info = false;
  la::Factor f = la::cholesky(d.view, true, o);
  EXPECT_NO_THROW(host_of(f.info));
  EXPECT_TRUE(unchanged(d, a));
}

}  // namespace
