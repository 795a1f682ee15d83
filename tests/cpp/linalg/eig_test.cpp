// gpula::linalg::eig / eigvals on the CPU backend: known spectra (rotation, triangular,
// diagonal, complex triangular, a defective Jordan block), random general matrices over dtypes,
// batch shapes and layouts checked by residual (a v = v diag(w)), unit columns, exact conjugate
// pairs for real input and eigenvalues against a complex128 solve; n = 0, 1x1, NaN/Inf, info
// without check_info, and argument errors.
#include <gpula/gpula.h>
#include <gpula/linalg.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "support/eig.h"
#include "support/error.h"

namespace {

using namespace gpula;
using core_test::at;
using core_test::cdouble;
using core_test::eps_of;
using core_test::HostTensor;
using core_test::Layout;
using core_test::make_host;
using linalg_test::Snapshot;
using linalg_test::with;
namespace la = gpula::linalg;

using test_support::msg_of;

double tol(DType t, int64_t n) {
  return 30.0 * static_cast<double>(std::max<int64_t>(n, 4)) * eps_of(t);
}

DType complex_of(DType t) { return t == DType::f32 || t == DType::c64 ? DType::c64 : DType::c128; }

// The eigenvalues of a 1-D complex result.
std::vector<cdouble> values(const Tensor& w) {
  std::vector<cdouble> r;
  for (int64_t j = 0; j < w.shape().back(); ++j) r.push_back(at(w.view(), {j}));
  return r;
}

// The eigenvalues of a 1-D complex result of a real spectrum, sorted.
std::vector<cdouble> sorted_w(const Tensor& w) {
  std::vector<cdouble> r = values(w);
  std::sort(r.begin(), r.end(), [](cdouble x, cdouble y) { return x.real() < y.real(); });
  return r;
}

HostTensor matrix(DType t, int64_t n, const std::vector<cdouble>& rows) {
  HostTensor a = make_host({n, n}, t);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) a.set({i, j}, rows[i * n + j]);
  return a;
}

TEST(LinalgEigCpu, RotationGivesAConjugatePair) {
  // [[0, -1], [1, 0]]: w = +-i; v = (1, -+i)/sqrt2 up to phase.
  for (DType t : linalg_test::float_types()) {
    HostTensor a = matrix(t, 2, {0.0, -1.0, 1.0, 0.0});
    la::Eig r = la::eig(a.view);
    ASSERT_EQ(r.w.shape(), (Shape{2}));
    ASSERT_EQ(r.v.shape(), (Shape{2, 2}));
    EXPECT_EQ(r.w.dtype(), complex_of(t));
    EXPECT_EQ(r.v.dtype(), complex_of(t));
    EXPECT_EQ(r.info.shape(), Shape{});
    EXPECT_EQ(r.info.dtype(), DType::i32);
    EXPECT_LE(eig_test::match_distance(values(r.w), {cdouble(0, 1), cdouble(0, -1)}), 1e-6)
        << name(t);
    const eig_test::Errors e =
        eig_test::check(a.view, r.w.view(), &r.v.view(), nullptr, !is_complex(t));
    EXPECT_LE(e.residual, tol(t, 2));
    EXPECT_LE(e.unit, tol(t, 2));
    EXPECT_EQ(e.bad_pairs, 0);
    if (!is_complex(t)) {  // LAPACK's order: positive imaginary part first
      EXPECT_GT(at(r.w.view(), {0}).imag(), 0.0);
      EXPECT_EQ(at(r.w.view(), {1}), std::conj(at(r.w.view(), {0})));
    }
    const double s = 1.0 / std::sqrt(2.0);
    EXPECT_NEAR(std::abs(at(r.v.view(), {0, 0})), s, 1e-6);
    EXPECT_NEAR(std::abs(at(r.v.view(), {1, 0})), s, 1e-6);
  }
}

TEST(LinalgEigCpu, TriangularAndDiagonalGiveTheirDiagonal) {
  for (DType t : linalg_test::float_types()) {
    HostTensor u = matrix(t, 4,
                          {1.0, 2.0, -1.0, 0.5,  //
                           0.0, -2.0, 3.0, 1.0,  //
                           0.0, 0.0, 3.0, 4.0,   //
                           0.0, 0.0, 0.0, 0.5});
    la::Eig r = la::eig(u.view);
    const std::vector<cdouble> w = sorted_w(r.w);
    const double want[] = {-2.0, 0.5, 1.0, 3.0};
    for (int j = 0; j < 4; ++j) EXPECT_NEAR(std::abs(w[j] - want[j]), 0.0, 1e-5) << name(t);
    const eig_test::Errors e = eig_test::check(u.view, r.w.view(), &r.v.view());
    EXPECT_LE(e.residual, tol(t, 4));
    EXPECT_LE(e.unit, tol(t, 4));

    HostTensor d = matrix(t, 3, {5.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 2.5});
    la::Eig rd = la::eig(d.view);
    const std::vector<cdouble> wd = sorted_w(rd.w);
    EXPECT_EQ(wd[0], cdouble(-1.0));
    EXPECT_EQ(wd[1], cdouble(2.5));
    EXPECT_EQ(wd[2], cdouble(5.0));
    // Eigenvectors of a diagonal matrix are unit coordinate vectors.
    for (int64_t j = 0; j < 3; ++j) {
      double big = 0.0;
      for (int64_t i = 0; i < 3; ++i) big = std::max(big, std::abs(at(rd.v.view(), {i, j})));
      EXPECT_NEAR(big, 1.0, 1e-6);
    }
  }
  // Complex upper triangular: [[1, 2i], [0, 3 - i]].
  HostTensor c = matrix(DType::c128, 2, {1.0, cdouble(0, 2), 0.0, cdouble(3, -1)});
  la::Eig rc = la::eig(c.view);
  const std::vector<cdouble> wc = sorted_w(rc.w);
  EXPECT_NEAR(std::abs(wc[0] - 1.0), 0.0, 1e-14);
  EXPECT_NEAR(std::abs(wc[1] - cdouble(3, -1)), 0.0, 1e-14);
  const eig_test::Errors e = eig_test::check(c.view, rc.w.view(), &rc.v.view());
  EXPECT_LE(e.residual, 1e-14);
  EXPECT_LE(e.unit, 1e-14);
}

TEST(LinalgEigCpu, DefectiveJordanBlockGivesFiniteResults) {
  // A 4x4 Jordan block of eigenvalue 2: one eigenvector only; the solver returns (nearly)
  // parallel columns. Only finiteness and the eigenvalue (to eps^(1/4)) are promised.
  for (DType t : linalg_test::float_types()) {
    HostTensor j = make_host({4, 4}, t);
    for (int64_t i = 0; i < 4; ++i)
      for (int64_t k = 0; k < 4; ++k) j.set({i, k}, i == k ? 2.0 : (k == i + 1 ? 1.0 : 0.0));
    la::Eig r;
    ASSERT_NO_THROW(r = la::eig(j.view));
    for (int64_t k = 0; k < 4; ++k) {
      const cdouble w = at(r.w.view(), {k});
      EXPECT_TRUE(std::isfinite(w.real()) && std::isfinite(w.imag()));
      EXPECT_LE(std::abs(w - 2.0), 0.1);
      for (int64_t i = 0; i < 4; ++i) EXPECT_TRUE(std::isfinite(std::abs(at(r.v.view(), {i, k}))));
    }
    const eig_test::Errors e = eig_test::check(j.view, r.w.view(), &r.v.view());
    EXPECT_LE(e.unit, tol(t, 4));
  }
}

using TypeLayout = std::tuple<DType, Layout>;
class LinalgEigCpuRandom : public ::testing::TestWithParam<TypeLayout> {};

TEST_P(LinalgEigCpuRandom, ResidualsUnitColumnsAndEigenvalues) {
  const auto [t, layout] = GetParam();
  uint64_t seed = 1;
  for (const Shape& batch : {Shape{}, Shape{3}, Shape{2, 2}})
    for (int64_t n : {1, 2, 5, 33, 70}) {
      HostTensor a = make_host(with(batch, {n, n}), t, layout);
      linalg_test::fill_kind(a, linalg_test::Kind::general, seed++);
      Snapshot before(a);
      la::Eig r = la::eig(a.view);
      ASSERT_EQ(r.w.shape(), with(batch, {n}));
      ASSERT_EQ(r.v.shape(), with(batch, {n, n}));
      ASSERT_EQ(r.info.shape(), batch);
      EXPECT_EQ(r.w.dtype(), complex_of(t));
      EXPECT_TRUE(r.w.view().is_contiguous());
      EXPECT_TRUE(r.v.view().is_contiguous());
      const Tensor ref = eig_test::reference_w(a.view);
      const TensorView refv = ref.view();
      const eig_test::Errors e =
          eig_test::check(a.view, r.w.view(), &r.v.view(), &refv, !is_complex(t));
      EXPECT_LE(e.residual, tol(t, n)) << "n " << n;
      EXPECT_LE(e.unit, tol(t, n)) << "n " << n;
      EXPECT_LE(e.w_vs_ref, 10 * tol(t, n)) << "n " << n;
      EXPECT_EQ(e.bad_pairs, 0) << "n " << n;
      Tensor w = la::eigvals(a.view);
      ASSERT_EQ(w.shape(), with(batch, {n}));
      const TensorView wr = r.w.view();
      const eig_test::Errors ev = eig_test::check(a.view, w.view(), nullptr, &wr, !is_complex(t));
      EXPECT_LE(ev.w_vs_ref, 10 * tol(t, n)) << "n " << n;
      EXPECT_EQ(ev.bad_pairs, 0);
      la::Eig only = la::eig(a.view, true);
      EXPECT_FALSE(only.v.defined());
      EXPECT_EQ(only.w.shape(), with(batch, {n}));
      EXPECT_TRUE(before.same(a));
    }
}

INSTANTIATE_TEST_SUITE_P(Types, LinalgEigCpuRandom,
                         ::testing::Combine(::testing::Values(DType::f32, DType::f64, DType::c64,
                                                              DType::c128),
                                            ::testing::Values(Layout::row, Layout::col,
                                                              Layout::col_padded, Layout::strided)),
                         linalg_test::DTypeLayoutName());

TEST(LinalgEigCpu, RealInputHasComplexPairs) {
  // Random real matrices of even order have complex eigenvalues with probability ~1: check that
  // some appear and that every one is paired exactly (w and v), positive imaginary part first.
  for (DType t : {DType::f32, DType::f64}) {
    HostTensor a = make_host({4, 12, 12}, t);
    linalg_test::fill_kind(a, linalg_test::Kind::general, 42);
    la::Eig r = la::eig(a.view);
    int complex_count = 0;
    core_test::for_each_index(r.w.shape(), [&](const Shape& i) {
      if (at(r.w.view(), i).imag() != 0.0) ++complex_count;
    });
    EXPECT_GT(complex_count, 0);
    EXPECT_EQ(complex_count % 2, 0);
    const eig_test::Errors e = eig_test::check(a.view, r.w.view(), &r.v.view(), nullptr, true);
    EXPECT_EQ(e.bad_pairs, 0);
    EXPECT_LE(e.residual, tol(t, 12));
  }
}

TEST(LinalgEigCpu, BroadcastBatchStridesAreRead) {
  // A batch dimension of stride 0 (one matrix repeated): every item gets the same result.
  HostTensor a = make_host({1, 6, 6}, DType::f64);
  linalg_test::fill_kind(a, linalg_test::Kind::general, 3);
  const TensorView b = core_test::broadcast_dim(a.view, 0, 3);
  la::Eig r = la::eig(b);
  ASSERT_EQ(r.w.shape(), (Shape{3, 6}));
  for (int64_t k = 1; k < 3; ++k)
    for (int64_t j = 0; j < 6; ++j) EXPECT_EQ(at(r.w.view(), {k, j}), at(r.w.view(), {0, j}));
  const eig_test::Errors e = eig_test::check(b, r.w.view(), &r.v.view());
  EXPECT_LE(e.residual, 1e-13);
}

TEST(LinalgEigCpu, ZeroOrderEmptyBatchAndOneByOne) {
  HostTensor z = make_host({3, 0, 0}, DType::f64);
  la::Eig r = la::eig(z.view);
  EXPECT_EQ(r.w.shape(), (Shape{3, 0}));
  EXPECT_EQ(r.w.dtype(), DType::c128);
  EXPECT_EQ(r.v.shape(), (Shape{3, 0, 0}));
  EXPECT_EQ(r.info.shape(), (Shape{3}));
  for (int64_t b = 0; b < 3; ++b) EXPECT_EQ(at(r.info.view(), {b}).real(), 0.0);
  HostTensor e = make_host({0, 4, 4}, DType::f32);
  la::Eig re = la::eig(e.view);
  EXPECT_EQ(re.w.shape(), (Shape{0, 4}));
  EXPECT_EQ(re.w.dtype(), DType::c64);
  EXPECT_EQ(re.v.shape(), (Shape{0, 4, 4}));
  EXPECT_EQ(la::eigvals(e.view).shape(), (Shape{0, 4}));

  for (DType t : linalg_test::float_types()) {
    HostTensor one = make_host({1, 1}, t);
    one.set({0, 0}, is_complex(t) ? cdouble(-2.5, 1.0) : cdouble(-2.5));
    la::Eig r1 = la::eig(one.view);
    EXPECT_EQ(at(r1.w.view(), {0}), one.get({0, 0}));
    EXPECT_NEAR(std::abs(at(r1.v.view(), {0, 0})), 1.0, 1e-6);
  }
}

TEST(LinalgEigCpu, NanAndInfNeverCrash) {
  for (DType t : linalg_test::float_types()) {
    HostTensor a = make_host({3, 6, 6}, t);
    linalg_test::fill_kind(a, linalg_test::Kind::general, 9);
    a.set({1, 3, 2}, NAN);
    a.set({2, 0, 5}, INFINITY);
    la::Eig r;
    ASSERT_NO_THROW(r = la::eig(a.view));
    for (int64_t b : {1, 2}) {
      EXPECT_TRUE(std::isnan(at(r.w.view(), {b, 0}).real()));
      EXPECT_TRUE(std::isnan(std::abs(at(r.v.view(), {b, 4, 1}))));
      EXPECT_EQ(at(r.info.view(), {b}).real(), 0.0);
    }
    // Matrix 0 is unaffected: its results match a solve of it alone.
    HostTensor first = make_host({6, 6}, t);
    core_test::for_each_index(first.view.shape, [&](const Shape& i) {
      first.set(i, a.get({0, i[0], i[1]}));
    });
    const Tensor alone = la::eigvals(first.view);
    for (int64_t j = 0; j < 6; ++j) EXPECT_EQ(at(r.w.view(), {0, j}), at(alone.view(), {j}));
    EXPECT_NO_THROW(la::eigvals(a.view));
  }
}

TEST(LinalgEigCpu, InfoWithoutCheckInfo) {
  HostTensor a = make_host({2, 3, 5, 5}, DType::c64);
  linalg_test::fill_kind(a, linalg_test::Kind::general, 4);
  la::LinalgOptions o;
  o.check_info = false;
  la::Eig r = la::eig(a.view, false, o);
  ASSERT_EQ(r.info.shape(), (Shape{2, 3}));
  core_test::for_each_index(r.info.shape(),
                            [&](const Shape& i) { EXPECT_EQ(at(r.info.view(), i).real(), 0.0); });
  const la::Factor f = la::eigvals_ex(a.view, o);
  ASSERT_EQ(f.info.shape(), (Shape{2, 3}));
  ASSERT_EQ(f.value.shape(), (Shape{2, 3, 5}));
  EXPECT_EQ(f.value.dtype(), DType::c64);
  const TensorView wr = r.w.view();
  EXPECT_LE(eig_test::check(a.view, f.value.view(), nullptr, &wr).w_vs_ref, tol(DType::c64, 5));
}

TEST(LinalgEigCpu, ArgumentErrorsNameFunctionArgumentAndShape) {
  HostTensor r = make_host({3, 4}, DType::f64);
  EXPECT_THROW(la::eig(r.view), InvalidArgument);
  EXPECT_EQ(msg_of([&] { la::eig(r.view); }),
            "[linalg.eig] expected a square matrix for a, got shape (3, 4)");
  EXPECT_EQ(msg_of([&] { la::eigvals(r.view); }),
            "[linalg.eigvals] expected a square matrix for a, got shape (3, 4)");
  EXPECT_EQ(msg_of([&] { la::eigvals_ex(r.view); }),
            "[linalg.eigvals] expected a square matrix for a, got shape (3, 4)");
  HostTensor v = make_host({3}, DType::f64);
  EXPECT_THROW(la::eigvals(v.view), InvalidArgument);
  HostTensor i = make_host({3, 3}, DType::i32);
  EXPECT_THROW(la::eig(i.view), DTypeError);
  EXPECT_EQ(msg_of([&] { la::eig(i.view); }),
            "[linalg.eig] unsupported dtype int32 for a; linalg takes float32, float64, "
            "complex64, complex128");
  HostTensor h = make_host({3, 3}, DType::f16);
  EXPECT_THROW(la::eigvals(h.view), DTypeError);
  HostTensor a = make_host({3, 3}, DType::f64);
  linalg_test::fill_kind(a, linalg_test::Kind::general, 1);
  la::LinalgOptions o;
  o.device = Device::cuda(0);
  if (!cuda_compiled()) {
    EXPECT_THROW(la::eig(a.view, false, o), NotCompiled);
  }
}

TEST(LinalgEigCpu, BlockingAndLoggerOptionsAreHarmless) {
  HostTensor a = make_host({8, 8}, DType::f64);
  linalg_test::fill_kind(a, linalg_test::Kind::general, 5);
  la::LinalgOptions o;
  o.blocking = true;
  o.logger = [](LogLevel, const std::string&) {};
  EXPECT_NO_THROW(la::eig(a.view, false, o));
}

}  // namespace
