// QR and least squares on the CPU backend: QR properties (q^H q = I, q r = a, r upper
// triangular) over every mode, shape (m > n, m < n, m = n), dtype, batch and layout; least
// squares against a normal-equation reference with broadcasting; rank deficiency (gelsd's
// minimum-norm solution); empty dimensions, 1x1; errors.
#include <gpula/gpula.h>
#include <gpula/linalg.h>
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "support/qr.h"
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

HostTensor random(const Shape& shape, DType t, Layout layout, uint64_t seed) {
  HostTensor h = make_host(shape, t, layout);
  core_test::Filler(seed).fill(h.view);
  return h;
}

using test_support::msg_of;

const la::QrMode kModes[] = {la::QrMode::reduced, la::QrMode::complete, la::QrMode::r};

using QrParam = std::tuple<DType, Layout>;
class LinalgQrCpu : public ::testing::TestWithParam<QrParam> {};

TEST_P(LinalgQrCpu, EveryModeAndShape) {
  const auto [t, layout] = GetParam();
  const double tol = 100 * eps_of(t);
  // Past 8 rows and columns too, where the host copies take their run and tiled paths.
  const int64_t dims[][2] = {{6, 4}, {4, 6},   {5, 5},   {1, 1},  {7, 1},
                             {1, 7}, {40, 33}, {33, 40}, {37, 37}};
  for (const Shape& batch : {Shape{}, Shape{3}, Shape{2, 2}})
    for (const auto& d : dims) {
      const int64_t m = d[0], n = d[1], k = std::min(m, n);
      HostTensor a = random(with(batch, {m, n}), t, layout, 11 + m * 7 + n);
      Snapshot before(a);
      for (la::QrMode mode : kModes) {
        SCOPED_TRACE(testing::Message()
                     << name(t) << " " << core_test::layout_name(layout) << " batch "
                     << batch.size() << " " << m << "x" << n << " mode " << static_cast<int>(mode));
        la::QR f = la::qr(a.view, mode);
        const int64_t rk = mode == la::QrMode::complete ? m : k;
        EXPECT_EQ(f.r.shape(), with(batch, {rk, n}));
        EXPECT_EQ(f.r.dtype(), t);
        if (mode == la::QrMode::r) {
          EXPECT_FALSE(f.q.defined());
          // r agrees with the reduced r (same LAPACK factorization).
          la::QR full = la::qr(a.view);
          core_test::for_each_index(f.r.shape(), [&](const Shape& i) {
            EXPECT_EQ(at(f.r.view(), i), at(full.r.view(), i));
          });
          EXPECT_EQ(linalg_qr_test::qr_errors(a.view, nullptr, f.r.view()).lower, 0.0);
          continue;
        }
        EXPECT_EQ(f.q.shape(), with(batch, {m, mode == la::QrMode::complete ? m : k}));
        if (mode == la::QrMode::complete) {
          // Its first k rows are the reduced r (same factorization; r square or not).
          la::QR red = la::qr(a.view);
          core_test::for_each_index(red.r.shape(), [&](const Shape& i) {
            EXPECT_EQ(at(f.r.view(), i), at(red.r.view(), i));
          });
        }
        const TensorView qv = f.q.view();
        const auto e = linalg_qr_test::qr_errors(a.view, &qv, f.r.view());
        EXPECT_LT(e.orth, tol);
        EXPECT_LT(e.recon, tol);
        EXPECT_EQ(e.lower, 0.0);
      }
      EXPECT_TRUE(before.same(a));
    }
}

TEST_P(LinalgQrCpu, LstsqMatchesNormalEquations) {
  const auto [t, layout] = GetParam();
  const double tol = 1000 * eps_of(t);
  const int64_t dims[][2] = {{8, 3}, {3, 8}, {5, 5}, {1, 1}, {6, 1}, {1, 4}};
  for (const auto& d : dims) {
    const int64_t m = d[0], n = d[1];
    SCOPED_TRACE(testing::Message()
                 << name(t) << " " << core_test::layout_name(layout) << " " << m << "x" << n);
    // (a batch, b shape): plain, vector b, broadcasting both ways.
    const std::vector<std::pair<Shape, Shape>> cases = {
        {{}, {m, 2}}, {{}, {m}}, {{3}, {m}}, {{2}, {m, 3}}, {{}, {4, m, 2}}, {{2, 1}, {3, m, 1}}};
    for (const auto& [ab, bshape] : cases) {
      HostTensor a = random(with(ab, {m, n}), t, layout, 5 + m + 3 * n);
      for (int64_t i = 0; i < std::min(m, n); ++i)  // keep a well conditioned
        core_test::for_each_index(ab, [&](const Shape& s) {
          Shape idx = with(s, {i, i});
          a.set(idx, a.get(idx) + 3.0);
        });
      HostTensor b = random(bshape, t, bshape.size() >= 2 ? layout : Layout::row, 99 + m);
      Snapshot sa(a), sb(b);
      Tensor x = la::lstsq(a.view, b.view);
      EXPECT_EQ(x.dtype(), t);
      EXPECT_EQ(x.view().shape.back(), bshape.size() == 1 ? n : bshape.back());
      EXPECT_LT(linalg_qr_test::lstsq_error(a.view, b.view, x.view()), tol);
      EXPECT_TRUE(sa.same(a));
      EXPECT_TRUE(sb.same(b));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, LinalgQrCpu,
                         ::testing::Combine(::testing::ValuesIn(linalg_test::float_types()),
                                            ::testing::Values(Layout::row, Layout::col,
                                                              Layout::strided)),
                         linalg_test::DTypeLayoutName());

TEST(LinalgQrCpuEdge, LstsqShapes) {
  HostTensor a = random({2, 5, 3}, DType::f64, Layout::row, 1);
  EXPECT_EQ(la::lstsq(a.view, random({5}, DType::f64, Layout::row, 2).view).shape(), (Shape{2, 3}));
  EXPECT_EQ(la::lstsq(a.view, random({4, 1, 5, 2}, DType::f64, Layout::row, 3).view).shape(),
            (Shape{4, 2, 3, 2}));
}

TEST(LinalgQrCpuEdge, RankDeficientLstsqIsMinimumNorm) {
  for (DType t : linalg_test::float_types()) {
    HostTensor a = make_host({3, 2}, t);
    HostTensor b = make_host({3}, t);
    for (int64_t i = 0; i < 3; ++i) {
      a.set({i, 0}, 1.0);
      a.set({i, 1}, 1.0);
      b.set({i}, 2.0);
    }
    Tensor x = la::lstsq(a.view, b.view);
    EXPECT_NEAR(std::abs(at(x.view(), {0}) - 1.0), 0.0, 1e-5) << name(t);
    EXPECT_NEAR(std::abs(at(x.view(), {1}) - 1.0), 0.0, 1e-5) << name(t);
  }
}

TEST(LinalgQrCpuEdge, LstsqRankSingularValuesAndRcond) {
  for (DType t : linalg_test::float_types()) {
    // diag(2, 1e-3) on top of a zero row: rank 2 by default, 1 once rcond passes 1e-3 / 2.
    HostTensor a = make_host({3, 2}, t);
    HostTensor b = make_host({3}, t);
    for (int64_t i = 0; i < 3; ++i) {
      a.set({i, 0}, 0.0);
      a.set({i, 1}, 0.0);
      b.set({i}, 1.0);
    }
    a.set({0, 0}, 2.0);
    a.set({1, 1}, 1e-3);
    la::Lstsq r = la::lstsq_ex(a.view, b.view);
    EXPECT_EQ(r.rank.shape(), Shape{});
    EXPECT_EQ(r.rank.dtype(), DType::i32);
    EXPECT_EQ(at(r.rank.view(), {}).real(), 2.0) << name(t);
    ASSERT_EQ(r.s.shape(), (Shape{2}));
    EXPECT_EQ(r.s.dtype(), real_type(t));
    EXPECT_NEAR(at(r.s.view(), {0}).real(), 2.0, 1e-6);
    EXPECT_NEAR(at(r.s.view(), {1}).real(), 1e-3, 1e-6);
    EXPECT_NEAR(std::abs(at(r.x.view(), {1}) - 1e3), 0.0, 1e-1) << name(t);
    la::LstsqOptions o;
    o.rcond = 1e-2;
    la::Lstsq cut = la::lstsq_ex(a.view, b.view, o);
    EXPECT_EQ(at(cut.rank.view(), {}).real(), 1.0) << name(t);
    EXPECT_NEAR(std::abs(at(cut.x.view(), {0}) - 0.5), 0.0, 1e-6) << name(t);
    EXPECT_EQ(at(cut.x.view(), {1}), 0.0) << name(t);
    o.rcond = NAN;
    EXPECT_THROW(la::lstsq_ex(a.view, b.view, o), InvalidArgument);
  }
}

TEST(LinalgQrCpuEdge, LstsqRejectsInfAndNanInsteadOfHanging) {
  // gelsd never returned on an Inf in a, and printed LAPACK's xerbla text on a NaN.
  for (DType t : linalg_test::float_types()) {
    for (double bad : {static_cast<double>(INFINITY), static_cast<double>(NAN)}) {
      HostTensor a = random({2, 4, 3}, t, Layout::row, 7);
      HostTensor b = random({4}, t, Layout::row, 8);
      a.set({1, 2, 1}, bad);
      Snapshot sa(a);
      const std::string m = msg_of([&] { la::lstsq(a.view, b.view); });
      EXPECT_EQ(m, "[linalg.lstsq] a contains infs or NaNs (batch index 1); LAPACK's gelsd "
                   "cannot solve it")
          << name(t);
      EXPECT_THROW(la::lstsq(a.view, b.view), LinAlgError);
      EXPECT_TRUE(sa.same(a));
    }
  }
}

TEST(LinalgQrCpuEdge, KnownSmallCases) {
  for (DType t : linalg_test::float_types()) {
    HostTensor a = make_host({1, 1}, t);
    a.set({0, 0}, -2.0);
    la::QR f = la::qr(a.view, la::QrMode::complete);
    EXPECT_NEAR(std::abs(at(f.q.view(), {0, 0}) * at(f.r.view(), {0, 0}) + 2.0), 0.0, 1e-6);
    EXPECT_NEAR(std::abs(at(f.q.view(), {0, 0})), 1.0, 1e-6);
    HostTensor b = make_host({1}, t);
    b.set({0}, 4.0);
    EXPECT_NEAR(std::abs(at(la::lstsq(a.view, b.view).view(), {0}) + 2.0), 0.0, 1e-6);
  }
}

TEST(LinalgQrCpuEdge, EmptyDimensions) {
  const DType t = DType::f64;
  // m or n zero, an empty batch.
  for (const Shape& s : {Shape{0, 3}, Shape{3, 0}, Shape{0, 0}, Shape{0, 4, 2}, Shape{2, 3, 0}}) {
    HostTensor a = make_host(s, t);
    const int64_t m = s[s.size() - 2], n = s.back(), k = std::min(m, n);
    const Shape batch(s.begin(), s.end() - 2);
    la::QR red = la::qr(a.view);
    EXPECT_EQ(red.q.shape(), with(batch, {m, k}));
    EXPECT_EQ(red.r.shape(), with(batch, {k, n}));
    la::QR com = la::qr(a.view, la::QrMode::complete);
    EXPECT_EQ(com.q.shape(), with(batch, {m, m}));
    EXPECT_EQ(com.r.shape(), with(batch, {m, n}));
    core_test::for_each_index(com.q.shape(), [&](const Shape& i) {
      const int64_t r = i[i.size() - 2], c = i.back();
      EXPECT_EQ(at(com.q.view(), i), cdouble(r == c ? 1.0 : 0.0));
    });
    core_test::for_each_index(com.r.shape(),
                              [&](const Shape& i) { EXPECT_EQ(at(com.r.view(), i), 0.0); });
    EXPECT_EQ(la::qr(a.view, la::QrMode::r).r.shape(), with(batch, {k, n}));
    // lstsq: no equations give x = 0; no unknowns an empty x.
    HostTensor b = random(with(batch, {m, 2}), t, Layout::row, 4);
    la::Lstsq r = la::lstsq_ex(a.view, b.view);
    const Tensor& x = r.x;
    EXPECT_EQ(x.shape(), with(batch, {n, 2}));
    core_test::for_each_index(x.shape(), [&](const Shape& i) { EXPECT_EQ(at(x.view(), i), 0.0); });
    EXPECT_EQ(r.rank.shape(), batch);
    EXPECT_EQ(r.s.shape(), with(batch, {k}));
    core_test::for_each_index(batch, [&](const Shape& i) { EXPECT_EQ(at(r.rank.view(), i), 0.0); });
  }
}

TEST(LinalgQrCpuEdge, Errors) {
  HostTensor v = make_host({3}, DType::f64);
  EXPECT_NE(msg_of([&] { la::qr(v.view); }).find("[linalg.qr] expected a matrix"),
            std::string::npos);
  HostTensor ai = make_host({2, 2}, DType::i32);
  EXPECT_THROW(la::qr(ai.view), DTypeError);
  HostTensor a = make_host({4, 3}, DType::f64);
  HostTensor bad_b = make_host({3}, DType::f64);
  const std::string m1 = msg_of([&] { la::lstsq(a.view, bad_b.view); });
  EXPECT_NE(m1.find("[linalg.lstsq] b has shape (3,), expected (4,)"), std::string::npos) << m1;
  HostTensor bf = make_host({4, 1}, DType::f32);
  EXPECT_THROW(la::lstsq(a.view, bf.view), DTypeError);
  HostTensor ab = make_host({2, 4, 3}, DType::f64), bb = make_host({3, 4, 1}, DType::f64);
  EXPECT_NE(msg_of([&] { la::lstsq(ab.view, bb.view); }).find("do not broadcast"),
            std::string::npos);
  EXPECT_THROW(la::lstsq(v.view, v.view), InvalidArgument);
  EXPECT_THROW(la::qr(a.view, static_cast<la::QrMode>(7)), InvalidArgument);
}

}  // namespace
