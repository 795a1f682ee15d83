// gpula::linalg::svd / svdvals on the CPU backend: hand-checked matrices, random matrices over
// dtypes, shapes (tall, wide, square, past 32), batch shapes and layouts checked by
// reconstruction, orthonormality and against long-double Jacobi singular values; full and
// economy u/vh, values only, every method (ignored on the CPU), empty dimensions, 1x1,
// broadcast batches, rank deficiency, NaN, and argument errors.
#include <gpula/gpula.h>
#include <gpula/linalg.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <tuple>

#include "support/svd.h"
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

void expect_good(const svd_test::Errors& e, double tl, const std::string& what) {
  EXPECT_LE(e.recon, tl) << what;
  EXPECT_LE(e.ortho_u, tl) << what;
  EXPECT_LE(e.ortho_v, tl) << what;
  EXPECT_LE(e.s_vs_ref, tl) << what;
  EXPECT_TRUE(e.descending) << what;
}

TEST(LinalgSvdCpu, KnownMatrices) {
  // [[3, 0], [4, 5]]: a^T a = [[25, 20], [20, 25]], s = (3 sqrt5, sqrt5).
  for (DType t : linalg_test::float_types()) {
    HostTensor a = make_host({2, 2}, t);
    a.set({0, 0}, 3.0);
    a.set({0, 1}, 0.0);
    a.set({1, 0}, 4.0);
    a.set({1, 1}, 5.0);
    la::Svd r = la::svd(a.view);
    ASSERT_EQ(r.u.shape(), (Shape{2, 2}));
    ASSERT_EQ(r.s.shape(), (Shape{2}));
    ASSERT_EQ(r.vh.shape(), (Shape{2, 2}));
    EXPECT_EQ(r.s.dtype(), real_type(t));
    EXPECT_EQ(r.u.dtype(), t);
    EXPECT_EQ(r.info.shape(), Shape{});
    EXPECT_NEAR(at(r.s.view(), {0}).real(), 3.0 * std::sqrt(5.0), 1e-5);
    EXPECT_NEAR(at(r.s.view(), {1}).real(), std::sqrt(5.0), 1e-5);
    Tensor s = la::svdvals(a.view);
    EXPECT_NEAR(at(s.view(), {1}).real(), std::sqrt(5.0), 1e-5);
  }
  // Tall [[1, 0], [0, 2], [0, 0]]: s = (2, 1), u's columns e2, e1 and vh's rows e2, e1 up to
  // sign; full u is 3 x 3.
  HostTensor b = make_host({3, 2}, DType::f64);
  core_test::Filler().fill(b.view);
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 2; ++j) b.set({i, j}, 0.0);
  b.set({0, 0}, 1.0);
  b.set({1, 1}, 2.0);
  la::Svd rb = la::svd(b.view, true);
  ASSERT_EQ(rb.u.shape(), (Shape{3, 3}));
  ASSERT_EQ(rb.vh.shape(), (Shape{2, 2}));
  EXPECT_DOUBLE_EQ(at(rb.s.view(), {0}).real(), 2.0);
  EXPECT_DOUBLE_EQ(at(rb.s.view(), {1}).real(), 1.0);
  EXPECT_NEAR(std::abs(at(rb.u.view(), {1, 0})), 1.0, 1e-15);
  EXPECT_NEAR(std::abs(at(rb.vh.view(), {0, 1})), 1.0, 1e-15);
  EXPECT_NEAR(std::abs(at(rb.u.view(), {2, 2})), 1.0, 1e-15);
  // Hermitian [[1, -i], [i, 1]]: eigenvalues (0, 2), so s = (2, 0).
  HostTensor c = make_host({2, 2}, DType::c128);
  c.set({0, 0}, 1.0);
  c.set({0, 1}, cdouble(0, -1));
  c.set({1, 0}, cdouble(0, 1));
  c.set({1, 1}, 1.0);
  la::Svd rc = la::svd(c.view);
  EXPECT_NEAR(at(rc.s.view(), {0}).real(), 2.0, 1e-14);
  EXPECT_NEAR(at(rc.s.view(), {1}).real(), 0.0, 1e-14);
  const svd_test::Errors e = svd_test::check(c.view, rc.s.view(), &rc.u.view(), &rc.vh.view());
  expect_good(e, 1e-14, "hermitian 2x2");
}

TEST(LinalgSvdCpu, ReferenceValuesOfTheTestAreRight) {
  // The Jacobi reference itself, on a matrix with known singular values: diag(4, 3, 1) with
  // its rows and columns permuted and a sign flipped.
  const std::vector<cdouble> a = {0, -3, 0, 0, 0, 1, 4, 0, 0, 0, 0, 0};  // 4 x 3
  const std::vector<double> s = svd_test::reference_values(a, 4, 3);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_NEAR(s[0], 4.0, 1e-15);
  EXPECT_NEAR(s[1], 3.0, 1e-15);
  EXPECT_NEAR(s[2], 1.0, 1e-15);
  std::vector<cdouble> at3(12);  // its transpose, 3 x 4 (the wide path)
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 3; ++j) at3[j * 4 + i] = a[i * 3 + j];
  EXPECT_NEAR(svd_test::reference_values(at3, 3, 4)[1], 3.0, 1e-15);
}

using TypeLayout = std::tuple<DType, Layout>;
class LinalgSvdCpuRandom : public ::testing::TestWithParam<TypeLayout> {};

TEST_P(LinalgSvdCpuRandom, ReconstructsOverShapesBatchesAndModes) {
  const auto [t, layout] = GetParam();
  core_test::Filler f(static_cast<uint64_t>(t) * 31 + static_cast<uint64_t>(layout));
  struct Mn {
    int64_t m, n;
  };
  for (const Shape& batch : {Shape{}, Shape{3}, Shape{2, 2}})
    for (Mn mn : {Mn{1, 1}, Mn{5, 5}, Mn{7, 3}, Mn{3, 7}, Mn{40, 33}, Mn{33, 45}})
      for (bool full : {false, true}) {
        if (batch.size() == 2 && mn.m * mn.n > 100) continue;  // keep the run short
        const int64_t m = mn.m, n = mn.n, k = std::min(m, n);
        HostTensor a = make_host(with(batch, {m, n}), t, layout);
        f.fill(a.view);
        Snapshot before(a);
        const std::string what = std::string(name(t)) + " " + std::to_string(m) + "x" +
                                 std::to_string(n) + (full ? " full" : " economy") + " batch " +
                                 std::to_string(batch.size());
        la::Svd r = la::svd(a.view, full);
        ASSERT_EQ(r.s.shape(), with(batch, {k})) << what;
        ASSERT_EQ(r.u.shape(), with(batch, {m, full ? m : k})) << what;
        ASSERT_EQ(r.vh.shape(), with(batch, {full ? n : k, n})) << what;
        ASSERT_EQ(r.info.shape(), batch);
        EXPECT_TRUE(r.u.view().is_contiguous());
        EXPECT_TRUE(r.vh.view().is_contiguous());
        EXPECT_TRUE(r.s.view().is_contiguous());
        const svd_test::Errors e = svd_test::check(a.view, r.s.view(), &r.u.view(), &r.vh.view());
        expect_good(e, tol(t, std::max(m, n)), what);
        // Values only (svdvals and compute_uv = false) agree with the full decomposition.
        const TensorView sref = r.s.view();
        Tensor s = la::svdvals(a.view);
        EXPECT_LE(svd_test::check(a.view, s.view(), nullptr, nullptr, &sref).s_vs_ref,
                  tol(t, std::max(m, n)))
            << what;
        la::Svd only = la::svd(a.view, full, false);
        EXPECT_FALSE(only.u.defined());
        EXPECT_FALSE(only.vh.defined());
        EXPECT_EQ(only.s.shape(), with(batch, {k}));
        EXPECT_TRUE(before.same(a)) << what;
      }
}

INSTANTIATE_TEST_SUITE_P(
    Types, LinalgSvdCpuRandom,
    ::testing::Combine(::testing::Values(DType::f32, DType::f64, DType::c64, DType::c128),
                       ::testing::Values(Layout::row, Layout::col, Layout::col_padded,
                                         Layout::strided)),
    linalg_test::DTypeLayoutName());

TEST(LinalgSvdCpu, EveryMethodRunsGesddOnTheCpu) {
  HostTensor a = make_host({3, 9, 6}, DType::c128);
  core_test::Filler(4).fill(a.view);
  const la::Svd ref = la::svd(a.view);
  for (la::SvdMethod m : {la::SvdMethod::gesvd, la::SvdMethod::gesvdj, la::SvdMethod::gesvdp,
                          la::SvdMethod::gesvda}) {
    const la::Svd r = la::svd(a.view, true, true, m);  // gesvda's economy limit is the GPU's
    ASSERT_EQ(r.u.shape(), (Shape{3, 9, 9}));
    const svd_test::Errors e = svd_test::check(a.view, r.s.view(), &r.u.view(), &r.vh.view());
    expect_good(e, 1e-13, "method " + std::to_string(static_cast<int>(m)));
    for (int64_t j = 0; j < 6; ++j)
      EXPECT_EQ(at(r.s.view(), {1, j}), at(ref.s.view(), {1, j}));
  }
}

TEST(LinalgSvdCpu, BroadcastBatchAndTransposedViews) {
  // A batch dimension of stride 0 (one matrix seen 4 times) and a transposed view.
  HostTensor a = make_host({1, 6, 4}, DType::f64);
  core_test::Filler(8).fill(a.view);
  const TensorView b = core_test::broadcast_dim(a.view, 0, 4);
  la::Svd r = la::svd(b);
  ASSERT_EQ(r.s.shape(), (Shape{4, 4}));
  ASSERT_EQ(r.u.shape(), (Shape{4, 6, 6}));
  expect_good(svd_test::check(b, r.s.view(), &r.u.view(), &r.vh.view()), 1e-13, "broadcast");
  for (int64_t j = 0; j < 4; ++j) EXPECT_EQ(at(r.s.view(), {3, j}), at(r.s.view(), {0, j}));
  TensorView tv = a.view;  // (1, 4, 6): the transpose
  std::swap(tv.shape[1], tv.shape[2]);
  std::swap(tv.strides[1], tv.strides[2]);
  la::Svd rt = la::svd(tv, true);
  ASSERT_EQ(rt.u.shape(), (Shape{1, 4, 4}));
  ASSERT_EQ(rt.vh.shape(), (Shape{1, 6, 6}));
  expect_good(svd_test::check(tv, rt.s.view(), &rt.u.view(), &rt.vh.view()), 1e-13, "transposed");
  for (int64_t j = 0; j < 4; ++j)
    EXPECT_NEAR(at(rt.s.view(), {0, j}).real(), at(r.s.view(), {0, j}).real(), 1e-13);
}

TEST(LinalgSvdCpu, RankDeficientAndZeroMatrices) {
  HostTensor z = make_host({2, 5, 3}, DType::c64);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t i = 0; i < 5; ++i)
      for (int64_t j = 0; j < 3; ++j) z.set({b, i, j}, b == 0 ? cdouble(0) : cdouble(i + 1, j));
  // Matrix 1: (i + 1) + j i = outer sum, rank 2.
  la::Svd r = la::svd(z.view, true);
  for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(at(r.s.view(), {0, j}).real(), 0.0);
  EXPECT_LE(at(r.s.view(), {1, 2}).real(), 1e-5 * at(r.s.view(), {1, 0}).real());
  const svd_test::Errors e = svd_test::check(z.view, r.s.view(), &r.u.view(), &r.vh.view());
  expect_good(e, tol(DType::c64, 5), "rank deficient");
}

TEST(LinalgSvdCpu, EmptyDimensionsFollowNumpy) {
  HostTensor tall = make_host({3, 0}, DType::f64);
  la::Svd r = la::svd(tall.view, true);
  EXPECT_EQ(r.s.shape(), (Shape{0}));
  ASSERT_EQ(r.u.shape(), (Shape{3, 3}));
  EXPECT_EQ(r.vh.shape(), (Shape{0, 0}));
  for (int64_t i = 0; i < 3; ++i)
    for (int64_t j = 0; j < 3; ++j) EXPECT_EQ(at(r.u.view(), {i, j}).real(), i == j ? 1.0 : 0.0);
  EXPECT_EQ(la::svd(tall.view).u.shape(), (Shape{3, 3}));  // full_matrices by default, as NumPy
  la::Svd re = la::svd(tall.view, false);
  EXPECT_EQ(re.u.shape(), (Shape{3, 0}));
  EXPECT_EQ(re.vh.shape(), (Shape{0, 0}));
  HostTensor wide = make_host({2, 0, 4}, DType::c64);
  la::Svd rw = la::svd(wide.view, true);
  EXPECT_EQ(rw.u.shape(), (Shape{2, 0, 0}));
  ASSERT_EQ(rw.vh.shape(), (Shape{2, 4, 4}));
  EXPECT_EQ(at(rw.vh.view(), {1, 2, 2}), cdouble(1.0));
  EXPECT_EQ(at(rw.vh.view(), {1, 2, 3}), cdouble(0.0));
  EXPECT_EQ(rw.s.dtype(), DType::f32);
  EXPECT_EQ(rw.info.shape(), (Shape{2}));
  HostTensor none = make_host({0, 4, 5}, DType::f32);
  la::Svd rn = la::svd(none.view, true);
  EXPECT_EQ(rn.s.shape(), (Shape{0, 4}));
  EXPECT_EQ(rn.u.shape(), (Shape{0, 4, 4}));
  EXPECT_EQ(rn.vh.shape(), (Shape{0, 5, 5}));
  EXPECT_EQ(la::svdvals(none.view).shape(), (Shape{0, 4}));
}

TEST(LinalgSvdCpu, OneByOne) {
  HostTensor one = make_host({1, 1}, DType::c128);
  one.set({0, 0}, cdouble(0.0, -2.5));
  la::Svd r = la::svd(one.view);
  EXPECT_DOUBLE_EQ(at(r.s.view(), {0}).real(), 2.5);
  const cdouble p = at(r.u.view(), {0, 0}) * 2.5 * at(r.vh.view(), {0, 0});
  EXPECT_NEAR(std::abs(p - cdouble(0.0, -2.5)), 0.0, 1e-15);
  HostTensor neg = make_host({1, 1}, DType::f32);
  neg.set({0, 0}, -3.0);
  EXPECT_EQ(at(la::svdvals(neg.view).view(), {0}).real(), 3.0);
}

TEST(LinalgSvdCpu, NanInputNeverCrashes) {
  for (DType t : linalg_test::float_types()) {
    HostTensor a = make_host({2, 6, 4}, t);
    core_test::Filler(9).fill(a.view);
    a.set({1, 3, 2}, NAN);
    la::Svd r;
    ASSERT_NO_THROW(r = la::svd(a.view));
    EXPECT_TRUE(std::isnan(at(r.s.view(), {1, 0}).real()));
    EXPECT_TRUE(std::isnan(std::abs(at(r.u.view(), {1, 0, 0}))));
    EXPECT_TRUE(std::isnan(std::abs(at(r.vh.view(), {1, 0, 0}))));
    EXPECT_FALSE(std::isnan(at(r.s.view(), {0, 0}).real()));
    EXPECT_EQ(at(r.info.view(), {1}).real(), 0.0);
    HostTensor inf = make_host({3, 5}, t);
    core_test::Filler(3).fill(inf.view);
    inf.set({2, 2}, INFINITY);
    EXPECT_NO_THROW(la::svdvals(inf.view));
  }
}

TEST(LinalgSvdCpu, InfoWithoutCheck) {
  HostTensor a = make_host({3, 4, 4}, DType::f64);
  core_test::Filler(2).fill(a.view);
  la::LinalgOptions o;
  o.check_info = false;
  la::Svd r = la::svd(a.view, false, true, la::SvdMethod::automatic, o);
  ASSERT_EQ(r.info.shape(), (Shape{3}));
  EXPECT_EQ(r.info.dtype(), DType::i32);
  for (int64_t b = 0; b < 3; ++b) EXPECT_EQ(at(r.info.view(), {b}).real(), 0.0);
}

TEST(LinalgSvdCpu, ArgumentErrorsNameFunctionArgumentAndValue) {
  HostTensor v = make_host({3}, DType::f64);
  EXPECT_THROW(la::svd(v.view), InvalidArgument);
  EXPECT_EQ(msg_of([&] { la::svd(v.view); }),
            "[linalg.svd] expected a matrix (..., m, n) for a, got shape (3,)");
  EXPECT_EQ(msg_of([&] { la::svdvals(v.view); }),
            "[linalg.svdvals] expected a matrix (..., m, n) for a, got shape (3,)");
  HostTensor i = make_host({3, 3}, DType::i32);
  EXPECT_THROW(la::svd(i.view), DTypeError);
  EXPECT_EQ(msg_of([&] { la::svd(i.view); }),
            "[linalg.svd] unsupported dtype int32 for a; linalg takes float32, float64, "
            "complex64, complex128");
  HostTensor h = make_host({3, 3}, DType::f16);
  EXPECT_THROW(la::svdvals(h.view), DTypeError);
  HostTensor a = make_host({3, 3}, DType::f64);
  core_test::Filler(1).fill(a.view);
  EXPECT_THROW(la::svd(a.view, false, true, static_cast<la::SvdMethod>(9)), InvalidArgument);
  EXPECT_EQ(msg_of([&] { la::svd(a.view, false, true, static_cast<la::SvdMethod>(9)); }),
            "[linalg.svd] unknown method 9");
  la::LinalgOptions o;
  o.device = Device::cuda(0);
  if (!cuda_compiled()) {
    EXPECT_THROW(la::svd(a.view, false, true, la::SvdMethod::automatic, o), NotCompiled);
  }
}

TEST(LinalgSvdCpu, BlockingAndLoggerOptionsAreHarmless) {
  HostTensor a = make_host({8, 5}, DType::f64);
  core_test::Filler(5).fill(a.view);
  la::LinalgOptions o;
  o.blocking = true;
  o.logger = [](LogLevel, const std::string&) {};
  EXPECT_NO_THROW(la::svd(a.view, true, true, la::SvdMethod::automatic, o));
}

}  // namespace
