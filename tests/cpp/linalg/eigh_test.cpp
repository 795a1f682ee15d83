// gpula::linalg::eigh / eigvalsh on the CPU backend: a hand-checked 2x2, random Hermitian
// matrices over dtypes, batch shapes and layouts checked by reconstruction (a v = v diag(w),
// v^H v = I, ascending w), triangle selection, n = 0, 1x1, NaN, and argument errors.
#include <gpula/gpula.h>
#include <gpula/linalg.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <tuple>

#include "support/eigh.h"
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

TEST(LinalgEighCpu, KnownTwoByTwo) {
  // [[2, 1], [1, 2]]: w = (1, 3), v = (1, -1)/sqrt2, (1, 1)/sqrt2 up to sign.
  for (DType t : linalg_test::float_types()) {
    HostTensor a = make_host({2, 2}, t);
    a.set({0, 0}, 2.0);
    a.set({0, 1}, 1.0);
    a.set({1, 0}, 1.0);
    a.set({1, 1}, 2.0);
    la::Eigh r = la::eigh(a.view);
    ASSERT_EQ(r.w.shape(), (Shape{2}));
    ASSERT_EQ(r.v.shape(), (Shape{2, 2}));
    EXPECT_EQ(r.w.dtype(), real_type(t));
    EXPECT_EQ(r.v.dtype(), t);
    EXPECT_EQ(r.info.shape(), Shape{});
    EXPECT_NEAR(at(r.w.view(), {0}).real(), 1.0, 1e-6);
    EXPECT_NEAR(at(r.w.view(), {1}).real(), 3.0, 1e-6);
    const double s = 1.0 / std::sqrt(2.0);
    // column 0 is +-(1, -1)/sqrt2 (times a phase for complex): |v00| = |v10| = s, v00 = -v10.
    EXPECT_NEAR(std::abs(at(r.v.view(), {0, 0})), s, 1e-6);
    EXPECT_NEAR(std::abs(at(r.v.view(), {0, 0}) + at(r.v.view(), {1, 0})), 0.0, 1e-6);
    EXPECT_NEAR(std::abs(at(r.v.view(), {0, 1}) - at(r.v.view(), {1, 1})), 0.0, 1e-6);
    Tensor w = la::eigvalsh(a.view);
    EXPECT_NEAR(at(w.view(), {1}).real(), 3.0, 1e-6);
  }
  // Hermitian [[1, -i], [i, 1]]: w = (0, 2).
  HostTensor c = make_host({2, 2}, DType::c128);
  c.set({0, 0}, 1.0);
  c.set({0, 1}, cdouble(0, -1));
  c.set({1, 0}, cdouble(0, 1));
  c.set({1, 1}, 1.0);
  la::Eigh r = la::eigh(c.view);
  EXPECT_NEAR(at(r.w.view(), {0}).real(), 0.0, 1e-12);
  EXPECT_NEAR(at(r.w.view(), {1}).real(), 2.0, 1e-12);
  const eigh_test::Errors e = eigh_test::check(c.view, 1, r.w.view(), &r.v.view());
  EXPECT_LE(e.residual, 1e-14);
  EXPECT_LE(e.ortho, 1e-14);
}

using TypeLayout = std::tuple<DType, Layout>;
class LinalgEighCpuRandom : public ::testing::TestWithParam<TypeLayout> {};

TEST_P(LinalgEighCpuRandom, ReconstructsOverBatchesAndTriangles) {
  const auto [t, layout] = GetParam();
  uint64_t seed = 1;
  for (const Shape& batch : {Shape{}, Shape{3}, Shape{2, 2}})
    for (int64_t n : {1, 2, 5, 33, 70})
      for (bool lower : {true, false}) {
        HostTensor a = make_host(with(batch, {n, n}), t, layout);
        eigh_test::fill_hermitian(a, seed++);
        linalg_test::poison_triangle(a, lower, NAN);  // the triangle that must not be read
        Snapshot before(a);
        la::Eigh r = la::eigh(a.view, lower);
        ASSERT_EQ(r.w.shape(), with(batch, {n}));
        ASSERT_EQ(r.v.shape(), with(batch, {n, n}));
        EXPECT_TRUE(r.w.view().is_contiguous());
        EXPECT_TRUE(r.v.view().is_contiguous());
        const eigh_test::Errors e = eigh_test::check(a.view, lower ? 1 : 0, r.w.view(),
                                                     &r.v.view());
        EXPECT_LE(e.residual, tol(t, n)) << "n " << n << " lower " << lower;
        EXPECT_LE(e.ortho, tol(t, n)) << "n " << n << " lower " << lower;
        EXPECT_TRUE(e.ascending);
        Tensor w = la::eigvalsh(a.view, lower);
        const TensorView wr = r.w.view();
        const eigh_test::Errors ev = eigh_test::check(a.view, lower ? 1 : 0, w.view(), nullptr, &wr);
        EXPECT_LE(ev.w_vs_ref, tol(t, n));
        la::Eigh only = la::eigh(a.view, lower, true);
        EXPECT_FALSE(only.v.defined());
        EXPECT_EQ(only.w.shape(), with(batch, {n}));
        EXPECT_TRUE(before.same(a));
      }
}

INSTANTIATE_TEST_SUITE_P(
    Types, LinalgEighCpuRandom,
    ::testing::Combine(::testing::Values(DType::f32, DType::f64, DType::c64, DType::c128),
                       ::testing::Values(Layout::row, Layout::col, Layout::col_padded,
                                         Layout::strided)),
    linalg_test::DTypeLayoutName());

TEST(LinalgEighCpu, TransposedInputIsReadAsGiven) {
  // A transposed view of a Hermitian matrix is its conjugate: same eigenvalues, conjugate
  // eigenvectors; check by reconstruction against what the view holds.
  HostTensor a = make_host({4, 9, 9}, DType::c128, Layout::col);
  eigh_test::fill_hermitian(a, 77);
  la::Eigh r = la::eigh(a.view);
  const eigh_test::Errors e = eigh_test::check(a.view, 1, r.w.view(), &r.v.view());
  EXPECT_LE(e.residual, 1e-13);
  EXPECT_LE(e.ortho, 1e-13);
}

TEST(LinalgEighCpu, ZeroOrderEmptyBatchAndOneByOne) {
  HostTensor z = make_host({3, 0, 0}, DType::f64);
  la::Eigh r = la::eigh(z.view);
  EXPECT_EQ(r.w.shape(), (Shape{3, 0}));
  EXPECT_EQ(r.v.shape(), (Shape{3, 0, 0}));
  EXPECT_EQ(r.info.shape(), (Shape{3}));
  HostTensor e = make_host({0, 4, 4}, DType::c64);
  la::Eigh re = la::eigh(e.view);
  EXPECT_EQ(re.w.shape(), (Shape{0, 4}));
  EXPECT_EQ(re.w.dtype(), DType::f32);
  EXPECT_EQ(la::eigvalsh(e.view).shape(), (Shape{0, 4}));

  HostTensor one = make_host({1, 1}, DType::c128);
  one.set({0, 0}, cdouble(-2.5, 0.0));
  la::Eigh r1 = la::eigh(one.view);
  EXPECT_DOUBLE_EQ(at(r1.w.view(), {0}).real(), -2.5);
  EXPECT_NEAR(std::abs(at(r1.v.view(), {0, 0})), 1.0, 1e-15);
}

TEST(LinalgEighCpu, NanInputNeverCrashes) {
  for (DType t : linalg_test::float_types()) {
    HostTensor a = make_host({2, 6, 6}, t);
    eigh_test::fill_hermitian(a, 9);
    a.set({1, 3, 2}, NAN);  // lower triangle of matrix 1
    la::Eigh r;
    ASSERT_NO_THROW(r = la::eigh(a.view));
    EXPECT_TRUE(std::isnan(at(r.w.view(), {1, 0}).real()));
    EXPECT_TRUE(std::isnan(std::abs(at(r.v.view(), {1, 0, 0}))));
    EXPECT_FALSE(std::isnan(at(r.w.view(), {0, 0}).real()));
    // The upper triangle does not hold the NaN.
    la::Eigh u = la::eigh(a.view, false);
    EXPECT_FALSE(std::isnan(at(u.w.view(), {1, 0}).real()));
    HostTensor inf = make_host({3, 3}, t);
    eigh_test::fill_hermitian(inf, 3);
    inf.set({2, 2}, INFINITY);
    EXPECT_NO_THROW(la::eigvalsh(inf.view));
  }
}

TEST(LinalgEighCpu, ArgumentErrorsNameFunctionArgumentAndShape) {
  HostTensor r = make_host({3, 4}, DType::f64);
  EXPECT_THROW(la::eigh(r.view), InvalidArgument);
  EXPECT_EQ(msg_of([&] { la::eigh(r.view); }),
            "[linalg.eigh] expected a square matrix for a, got shape (3, 4)");
  EXPECT_EQ(msg_of([&] { la::eigvalsh(r.view); }),
            "[linalg.eigvalsh] expected a square matrix for a, got shape (3, 4)");
  HostTensor v = make_host({3}, DType::f64);
  EXPECT_THROW(la::eigvalsh(v.view), InvalidArgument);
  HostTensor i = make_host({3, 3}, DType::i32);
  EXPECT_THROW(la::eigh(i.view), DTypeError);
  EXPECT_EQ(msg_of([&] { la::eigh(i.view); }),
            "[linalg.eigh] unsupported dtype int32 for a; linalg takes float32, float64, "
            "complex64, complex128");
  HostTensor h = make_host({3, 3}, DType::f16);
  EXPECT_THROW(la::eigvalsh(h.view), DTypeError);
  HostTensor a = make_host({3, 3}, DType::f64);
  eigh_test::fill_hermitian(a, 1);
  la::LinalgOptions o;
  o.device = Device::cuda(0);
  if (!cuda_compiled()) {
    EXPECT_THROW(la::eigh(a.view, true, false, o), NotCompiled);
  }
}

TEST(LinalgEighCpu, BlockingAndLoggerOptionsAreHarmless) {
  HostTensor a = make_host({8, 8}, DType::f64);
  eigh_test::fill_hermitian(a, 5);
  la::LinalgOptions o;
  o.blocking = true;
  o.logger = [](LogLevel, const std::string&) {};
  EXPECT_NO_THROW(la::eigh(a.view, true, false, o));
}

}  // namespace
