// The dense solvers on the CPU backend: hand-checked small cases, randomized cases against a
// complex128 reference (backward errors, reconstructions), over dtypes, batch shapes, layouts
// and broadcasting; edge cases (n = 0, empty batches, 1x1, NaN); errors and info.
#include <gpula/gpula.h>
#include <gpula/linalg.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>

#include "support/linalg.h"
#include "support/error.h"

namespace {

using namespace gpula;
using core_test::at;
using core_test::cdouble;
using core_test::eps_of;
using core_test::HostTensor;
using core_test::Layout;
using core_test::make_host;
using linalg_test::Kind;
using linalg_test::Snapshot;
using linalg_test::with;
namespace la = gpula::linalg;

HostTensor from_rows(const std::vector<std::vector<cdouble>>& rows, DType t,
                     Layout layout = Layout::row) {
  const int64_t r = static_cast<int64_t>(rows.size()), c = static_cast<int64_t>(rows[0].size());
  HostTensor h = make_host({r, c}, t, layout);
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) h.set({i, j}, rows[i][j]);
  return h;
}

HostTensor random_kind(const Shape& shape, DType t, Kind kind, Layout layout, uint64_t seed) {
  HostTensor h = make_host(shape, t, layout);
  linalg_test::fill_kind(h, kind, seed);
  return h;
}

HostTensor random_b(const Shape& shape, DType t, Layout layout, uint64_t seed) {
  HostTensor h = make_host(shape, t, layout);
  core_test::Filler(seed).fill(h.view);
  return h;
}

using test_support::msg_of;

// ---- hand-checked cases ----------------------------------------------------------------------

TEST(LinalgCpu, CholeskyKnownFactor) {
  for (DType t : linalg_test::float_types()) {
    HostTensor a = from_rows({{4, 12, -16}, {12, 37, -43}, {-16, -43, 98}}, t);
    Snapshot before(a);
    la::Factor lo = la::cholesky(a.view);
    la::Factor up = la::cholesky(a.view, false);
    const double want[3][3] = {{2, 0, 0}, {6, 1, 0}, {-8, 5, 3}};
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 3; ++j) {
        EXPECT_NEAR(std::abs(at(lo.value.view(), {i, j}) - want[i][j]), 0.0, 1e-5) << i << j;
        EXPECT_NEAR(std::abs(at(up.value.view(), {j, i}) - want[i][j]), 0.0, 1e-5) << i << j;
      }
    EXPECT_EQ(lo.info.shape(), Shape{});
    EXPECT_EQ(*static_cast<int32_t*>(lo.info.data()), 0);
    EXPECT_TRUE(before.same(a));
  }
}

TEST(LinalgCpu, CholeskyComplexHermitian) {
  for (DType t : {DType::c64, DType::c128}) {
    const cdouble i1(0, 1);
    HostTensor a = from_rows({{4.0, 2.0 * i1}, {-2.0 * i1, 5.0}}, t, Layout::col);
    la::Factor lo = la::cholesky(a.view);  // L = [[2, 0], [-i, 2]]
    EXPECT_NEAR(std::abs(at(lo.value.view(), {0, 0}) - 2.0), 0.0, 1e-6);
    EXPECT_NEAR(std::abs(at(lo.value.view(), {1, 0}) + i1), 0.0, 1e-6);
    EXPECT_NEAR(std::abs(at(lo.value.view(), {1, 1}) - 2.0), 0.0, 1e-6);
    EXPECT_EQ(at(lo.value.view(), {0, 1}), 0.0);
    la::Factor up = la::cholesky(a.view, false);  // U = L^H = [[2, i], [0, 2]]
    EXPECT_NEAR(std::abs(at(up.value.view(), {0, 1}) - i1), 0.0, 1e-6);
    EXPECT_EQ(at(up.value.view(), {1, 0}), 0.0);
  }
}

TEST(LinalgCpu, LuFactorMatchesScipy) {
  for (DType t : linalg_test::float_types()) {
    HostTensor a = from_rows({{1, 2}, {3, 4}}, t);
    la::LU r = la::lu_factor(a.view);  // scipy: lu [[3, 4], [1/3, 2/3]], piv [1, 1]
    EXPECT_EQ(r.lu.view().strides, (Shape{1, 2}));  // column-major, as scipy returns it
    EXPECT_NEAR(std::abs(at(r.lu.view(), {0, 0}) - 3.0), 0.0, 1e-6);
    EXPECT_NEAR(std::abs(at(r.lu.view(), {0, 1}) - 4.0), 0.0, 1e-6);
    EXPECT_NEAR(std::abs(at(r.lu.view(), {1, 0}) - 1.0 / 3), 0.0, 1e-6);
    EXPECT_NEAR(std::abs(at(r.lu.view(), {1, 1}) - 2.0 / 3), 0.0, 1e-6);
    EXPECT_EQ(r.pivots.dtype(), DType::i32);
    EXPECT_EQ(r.pivots.shape(), Shape{2});
    EXPECT_EQ(static_cast<int32_t*>(r.pivots.data())[0], 1);
    EXPECT_EQ(static_cast<int32_t*>(r.pivots.data())[1], 1);
    // Row 0 kept: scipy's pivot 0 is valid (it once became 1 when shifting to 0-based).
    HostTensor k = from_rows({{4, 2}, {1, 3}}, t);
    la::LU rk = la::lu_factor(k.view);  // scipy: lu [[4, 2], [1/4, 5/2]], piv [0, 1]
    EXPECT_EQ(static_cast<int32_t*>(rk.pivots.data())[0], 0);
    EXPECT_EQ(static_cast<int32_t*>(rk.pivots.data())[1], 1);
    EXPECT_NEAR(std::abs(at(rk.lu.view(), {1, 0}) - 0.25), 0.0, 1e-6);
    HostTensor b2 = from_rows({{8}, {7}}, t);  // x = [1, 2]
    Tensor x2 = la::lu_solve(rk.lu.view(), rk.pivots.view(), b2.view);
    EXPECT_NEAR(std::abs(at(x2.view(), {0, 0}) - 1.0), 0.0, 1e-5);
    EXPECT_NEAR(std::abs(at(x2.view(), {1, 0}) - 2.0), 0.0, 1e-5);
    // n = 1: the only pivot is 0.
    HostTensor one = from_rows({{5}}, t);
    la::LU r1 = la::lu_factor(one.view);
    EXPECT_EQ(static_cast<int32_t*>(r1.pivots.data())[0], 0);
    HostTensor b1 = from_rows({{10}}, t);
    Tensor x1 = la::lu_solve(r1.lu.view(), r1.pivots.view(), b1.view);
    EXPECT_NEAR(std::abs(at(x1.view(), {0, 0}) - 2.0), 0.0, 1e-6);
  }
}

TEST(LinalgCpu, InvDetSlogdetKnown) {
  for (DType t : linalg_test::float_types()) {
    HostTensor a = from_rows({{1, 2}, {3, 4}}, t, Layout::col);
    Tensor inv = la::inv(a.view);
    const double want[2][2] = {{-2, 1}, {1.5, -0.5}};
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < 2; ++j)
        EXPECT_NEAR(std::abs(at(inv.view(), {i, j}) - want[i][j]), 0.0, 1e-5);
    EXPECT_NEAR(std::abs(at(la::det(a.view).view(), {}) + 2.0), 0.0, 1e-5);
    la::Slogdet s = la::slogdet(a.view);
    EXPECT_NEAR(std::abs(at(s.sign.view(), {}) + 1.0), 0.0, 1e-6);
    EXPECT_NEAR(at(s.logabsdet.view(), {}).real(), std::log(2.0), 1e-5);
    EXPECT_EQ(s.logabsdet.dtype(), real_type(t));
  }
  const cdouble i1(0, 1);
  HostTensor c = from_rows({{i1, 0.0}, {0.0, 2.0}}, DType::c128);
  EXPECT_NEAR(std::abs(at(la::det(c.view).view(), {}) - 2.0 * i1), 0.0, 1e-12);
  la::Slogdet s = la::slogdet(c.view);
  EXPECT_NEAR(std::abs(at(s.sign.view(), {}) - i1), 0.0, 1e-12);
  EXPECT_NEAR(at(s.logabsdet.view(), {}).real(), std::log(2.0), 1e-12);
}

TEST(LinalgCpu, OneByOne) {
  HostTensor a = from_rows({{4}}, DType::f64);
  HostTensor b = from_rows({{2}}, DType::f64);
  EXPECT_DOUBLE_EQ(at(la::cholesky(a.view).value.view(), {0, 0}).real(), 2.0);
  EXPECT_DOUBLE_EQ(at(la::solve(a.view, b.view).view(), {0, 0}).real(), 0.5);
  EXPECT_DOUBLE_EQ(at(la::inv(a.view).view(), {0, 0}).real(), 0.25);
  EXPECT_DOUBLE_EQ(at(la::det(a.view).view(), {}).real(), 4.0);
}

// ---- randomized against the reference --------------------------------------------------------

using TypeLayout = std::tuple<DType, Layout>;
class LinalgCpuRandom : public ::testing::TestWithParam<TypeLayout> {};

double tol(DType t, int64_t n) {
  return 30.0 * static_cast<double>(std::max<int64_t>(n, 4)) * eps_of(t);
}

TEST_P(LinalgCpuRandom, Cholesky) {
  const auto [t, layout] = GetParam();
  uint64_t seed = 1;
  for (const Shape& batch : {Shape{}, Shape{3}, Shape{2, 2}})
    for (int64_t n : {1, 5, 33, 70})
      for (bool lower : {true, false}) {
        HostTensor a = random_kind(with(batch, {n, n}), t, Kind::spd, layout, seed++);
        linalg_test::poison_triangle(a, lower, NAN);  // the triangle that must not be read
        Snapshot before(a);
        la::Factor f = la::cholesky(a.view, lower);
        bool other_zero = false;
        const double err = linalg_test::cholesky_error(a.view, f.value.view(), lower, &other_zero);
        EXPECT_LE(err, tol(t, n)) << "n " << n << " lower " << lower;
        EXPECT_TRUE(other_zero);
        EXPECT_TRUE(f.value.view().is_contiguous());
        EXPECT_EQ(f.info.shape(), batch);
        EXPECT_TRUE(before.same(a));
      }
}

TEST_P(LinalgCpuRandom, SolveAllKindsAndBroadcasts) {
  const auto [t, layout] = GetParam();
  struct Case {
    Shape a_batch, b_shape;  // b_shape relative: n substituted for -1
  };
  const int64_t n = 37;
  const std::vector<Case> cases = {
      {{}, {-1}},
      {{}, {-1, 3}},
      {{3}, {-1}},
      {{3}, {3, -1, 2}},
      {{}, {4, -1, 2}},
      {{}, {2, 2, -1, 1}},
      {{2, 1}, {1, 3, -1, 2}},
      {{1}, {-1, 2}},
      {{2, 3}, {3, -1, 1}},
  };
  uint64_t seed = 100;
  for (la::Assume kind : {la::Assume::gen, la::Assume::pos, la::Assume::sym})
    for (bool lower : {false, true})
      for (const Case& c : cases) {
        if (kind == la::Assume::gen && lower) continue;
        const Kind k = kind == la::Assume::pos   ? Kind::spd
                       : kind == la::Assume::sym ? Kind::symmetric
                                                 : Kind::general;
        HostTensor a = random_kind(with(c.a_batch, {n, n}), t, k, layout, seed++);
        if (kind != la::Assume::gen) linalg_test::poison_triangle(a, lower, 1e6);
        Shape bs = c.b_shape;
        for (auto& d : bs) d = d < 0 ? n : d;
        HostTensor b = random_b(bs, t, bs.size() >= 2 ? layout : Layout::row, seed++);
        Snapshot sa(a), sb(b);
        la::SolveOptions o;
        o.assume_a = kind;
        o.lower = lower;
        la::Factor r = la::solve_ex(a.view, b.view, o);
        const int tri = kind == la::Assume::gen ? -1 : lower;
        const double err = linalg_test::backward_error(a.view, b.view, r.value.view(), tri,
                                                       kind == la::Assume::pos);
        EXPECT_LE(err, tol(t, n)) << "assume " << int(kind) << " lower " << lower << " a batch "
                                  << core_test::product(c.a_batch) << " b " << b.view.shape_str();
        EXPECT_TRUE(sa.same(a) && sb.same(b));
        EXPECT_TRUE(r.value.view().is_contiguous());
      }
}

TEST_P(LinalgCpuRandom, ChoSolveAndLuSolve) {
  const auto [t, layout] = GetParam();
  const int64_t n = 29;
  uint64_t seed = 500;
  for (const Shape& batch : {Shape{}, Shape{3}})
    for (const Shape& bshape : {Shape{n}, Shape{n, 4}, Shape{2, 3, n, 2}}) {
      if (batch.empty() == false && bshape.size() == 4) continue;
      HostTensor spd = random_kind(with(batch, {n, n}), t, Kind::spd, layout, seed++);
      HostTensor gen = random_kind(with(batch, {n, n}), t, Kind::general, layout, seed++);
      HostTensor b = random_b(bshape, t, bshape.size() >= 2 ? layout : Layout::row, seed++);
      for (bool lower : {true, false}) {
        Tensor c = la::cholesky(spd.view, lower).value;
        Tensor x = la::cho_solve(c.view(), b.view, lower);
        EXPECT_LE(linalg_test::backward_error(spd.view, b.view, x.view()), tol(t, n))
            << "cho_solve lower " << lower << " b " << b.view.shape_str();
        // A strided view of the factor takes the staging path.
        HostTensor cs = make_host(c.shape(), t, Layout::strided);
        core_test::for_each_index(c.shape(), [&](const Shape& i) { cs.set(i, at(c.view(), i)); });
        Tensor x2 = la::cho_solve(cs.view, b.view, lower);
        EXPECT_LE(linalg_test::backward_error(spd.view, b.view, x2.view()), tol(t, n));
      }
      la::LU f = la::lu_factor(gen.view);
      EXPECT_LE(linalg_test::lu_reconstruction_error(gen.view, f.lu.view(), f.pivots.view()),
                tol(t, n));
      Snapshot sl(gen);
      Tensor x = la::lu_solve(f.lu.view(), f.pivots.view(), b.view);
      EXPECT_LE(linalg_test::backward_error(gen.view, b.view, x.view()), tol(t, n))
          << "lu_solve b " << b.view.shape_str();
      EXPECT_TRUE(sl.same(gen));
    }
}

TEST_P(LinalgCpuRandom, InvDetSlogdet) {
  const auto [t, layout] = GetParam();
  uint64_t seed = 900;
  for (const Shape& batch : {Shape{}, Shape{4}, Shape{2, 3}})
    for (int64_t n : {1, 3, 17, 80}) {
      HostTensor a = random_kind(with(batch, {n, n}), t, Kind::general, layout, seed++);
      Snapshot sa(a);
      Tensor inv = la::inv(a.view);
      EXPECT_LE(linalg_test::inverse_error(a.view, inv.view()), tol(t, n)) << "n " << n;
      Tensor d = la::det(a.view);
      la::Slogdet s = la::slogdet(a.view);
      ASSERT_EQ(d.shape(), batch);
      core_test::for_each_index(batch, [&](const Shape& i) {
        const cdouble want = linalg_test::reference_det(a.view, i);
        const double rt = 50.0 * n * eps_of(t);
        const bool single = t == DType::f32 || t == DType::c64;
        if (single && std::abs(want) > 3e38)  // past float32's range: inf, as numpy
          EXPECT_TRUE(std::isinf(std::abs(at(d.view(), i))));
        else
          EXPECT_LE(std::abs(at(d.view(), i) - want), rt * std::abs(want)) << "det n " << n;
        EXPECT_NEAR(at(s.logabsdet.view(), i).real(), std::log(std::abs(want)), rt * 10);
        EXPECT_LE(std::abs(at(s.sign.view(), i) - want / std::abs(want)), rt * 10);
      });
      EXPECT_TRUE(sa.same(a));
    }
}

INSTANTIATE_TEST_SUITE_P(Types, LinalgCpuRandom,
                         ::testing::Combine(::testing::Values(DType::f32, DType::f64, DType::c64,
                                                              DType::c128),
                                            ::testing::Values(Layout::row, Layout::col,
                                                              Layout::padded, Layout::strided)),
                         linalg_test::DTypeLayoutName());

TEST(LinalgCpu, SlogdetPastOverflow) {
  const int64_t n = 120;
  HostTensor a = random_kind({n, n}, DType::f64, Kind::general, Layout::row, 7);
  const cdouble base = linalg_test::reference_det(a.view, {});
  core_test::for_each_index(a.view.shape, [&](const Shape& i) { a.set(i, a.get(i) * 1e6); });
  la::Slogdet s = la::slogdet(a.view);
  EXPECT_NEAR(at(s.logabsdet.view(), {}).real(), std::log(std::abs(base)) + n * std::log(1e6),
              1e-8 * n * std::log(1e6));
  EXPECT_TRUE(std::isinf(at(la::det(a.view).view(), {}).real()));  // 1e720 overflows
}

TEST(LinalgCpu, RefineIsAcceptedAndSolvesPlainly) {
  HostTensor a = random_kind({2, 20, 20}, DType::f64, Kind::general, Layout::col, 3);
  HostTensor b = random_b({20, 3}, DType::f64, Layout::row, 4);
  for (la::Refine r : {la::Refine::automatic, la::Refine::f32, la::Refine::tf32, la::Refine::f16,
                       la::Refine::bf16}) {
    la::SolveOptions o;
    o.refine = r;
    Tensor x = la::solve(a.view, b.view, o);
    EXPECT_LE(linalg_test::backward_error(a.view, b.view, x.view()), tol(DType::f64, 20));
  }
}

// ---- edge cases ------------------------------------------------------------------------------

TEST(LinalgCpu, EmptyBatchesAndZeroOrder) {
  HostTensor e = make_host({0, 3, 3}, DType::f64);
  EXPECT_EQ(la::cholesky(e.view).value.shape(), (Shape{0, 3, 3}));
  EXPECT_EQ(la::cholesky(e.view).info.shape(), (Shape{0}));
  EXPECT_EQ(la::inv(e.view).shape(), (Shape{0, 3, 3}));
  EXPECT_EQ(la::det(e.view).shape(), (Shape{0}));
  HostTensor eb = make_host({0, 3}, DType::f64);
  HostTensor b3 = make_host({3}, DType::f64);
  EXPECT_EQ(la::solve(e.view, b3.view).shape(), (Shape{0, 3}));

  HostTensor z = make_host({2, 0, 0}, DType::c64);
  la::Factor c = la::cholesky(z.view);
  EXPECT_EQ(c.value.shape(), (Shape{2, 0, 0}));
  ASSERT_EQ(c.info.shape(), (Shape{2}));
  EXPECT_EQ(static_cast<int32_t*>(c.info.data())[1], 0);
  Tensor d = la::det(z.view);
  EXPECT_EQ(at(d.view(), {1}), cdouble(1.0));
  la::Slogdet s = la::slogdet(z.view);
  EXPECT_EQ(at(s.sign.view(), {0}), cdouble(1.0));
  EXPECT_EQ(at(s.logabsdet.view(), {0}).real(), 0.0);
  HostTensor zb = make_host({2, 0, 4}, DType::c64);
  EXPECT_EQ(la::solve(z.view, zb.view).shape(), (Shape{2, 0, 4}));
  la::LU lu = la::lu_factor(z.view);
  EXPECT_EQ(lu.pivots.shape(), (Shape{2, 0}));
  HostTensor bk0 = make_host({3, 0}, DType::f64);
  HostTensor a3 = random_kind({3, 3}, DType::f64, Kind::general, Layout::row, 1);
  EXPECT_EQ(la::solve(a3.view, bk0.view).shape(), (Shape{3, 0}));
  (void)eb;
}

TEST(LinalgCpu, SingularRaisesWithIndexAndBatchIndex) {
  HostTensor a = make_host({3, 4, 4}, DType::f64, Layout::col);
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t i = 0; i < 4; ++i) a.set({b, i, i}, b == 1 && i == 2 ? 0.0 : 1.0 + i);
  HostTensor rhs = random_b({4}, DType::f64, Layout::row, 2);
  for (auto call : std::vector<std::function<void()>>{[&] { la::solve(a.view, rhs.view); },
                                                      [&] { la::inv(a.view); },
                                                      [&] { la::lu_factor(a.view); }}) {
    try {
      call();
      ADD_FAILURE() << "no SingularMatrix";
    } catch (const SingularMatrix& e) {
      EXPECT_EQ(e.index(), 2);
      EXPECT_EQ(e.batch_index(), 1);
      EXPECT_NE(std::string(e.what()).find("singular: U[2,2] is exactly zero (batch index 1)"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_NE(msg_of([&] { la::solve(a.view, rhs.view); }).find("[linalg.solve]"), std::string::npos);
  // Not an error for det and slogdet.
  Tensor d = la::det(a.view);
  EXPECT_EQ(at(d.view(), {1}), cdouble(0.0));
  EXPECT_EQ(at(d.view(), {0}), cdouble(24.0));
  la::Slogdet s = la::slogdet(a.view);
  EXPECT_EQ(at(s.sign.view(), {1}), cdouble(0.0));
  EXPECT_TRUE(std::isinf(at(s.logabsdet.view(), {1}).real()));
  EXPECT_LT(at(s.logabsdet.view(), {1}).real(), 0.0);
  // One matrix: no batch index.
  HostTensor one = from_rows({{1, 0}, {0, 0}}, DType::f32);
  try {
    la::inv(one.view);
    ADD_FAILURE() << "no SingularMatrix";
  } catch (const SingularMatrix& e) {
    EXPECT_EQ(e.batch_index(), -1);
    EXPECT_EQ(std::string(e.what()), "[linalg.inv] a is singular: U[1,1] is exactly zero");
  }
  // sym on the CPU reports D.
  la::SolveOptions o;
  o.assume_a = la::Assume::sym;
  EXPECT_NE(msg_of([&] { la::solve(a.view, rhs.view, o); }).find("D[2,2] is exactly zero"),
            std::string::npos);
}

TEST(LinalgCpu, NotPositiveDefiniteRaisesWithOrder) {
  HostTensor a = make_host({2, 3, 4, 4}, DType::c64);
  for (int64_t p = 0; p < 2; ++p)
    for (int64_t q = 0; q < 3; ++q)
      for (int64_t i = 0; i < 4; ++i)
        a.set({p, q, i, i}, (p == 1 && q == 2 && i == 2) ? -1.0 : 2.0);
  try {
    la::cholesky(a.view);
    ADD_FAILURE() << "no NotPositiveDefinite";
  } catch (const NotPositiveDefinite& e) {
    EXPECT_EQ(e.order(), 3);
    EXPECT_EQ(e.batch_index(), 5);
    EXPECT_EQ(
        std::string(e.what()),
        "[linalg.cholesky] a is not positive definite: leading minor of order 3 (batch index 5)");
  }
  la::SolveOptions o;
  o.assume_a = la::Assume::pos;
  HostTensor b = random_b({4, 1}, DType::c64, Layout::row, 1);
  EXPECT_THROW(la::solve(a.view, b.view, o), NotPositiveDefinite);
  EXPECT_THROW(la::solve(a.view, b.view, o), LinAlgError);
}

TEST(LinalgCpu, CheckInfoFalseReturnsInfo) {
  HostTensor a = make_host({3, 3, 3}, DType::f32);
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t i = 0; i < 3; ++i) a.set({b, i, i}, b == 2 && i == 1 ? -4.0 : 4.0);
  la::LinalgOptions o;
  o.check_info = false;
  la::Factor c = la::cholesky(a.view, true, o);
  ASSERT_EQ(c.info.shape(), (Shape{3}));
  const auto* info = static_cast<const int32_t*>(c.info.data());
  EXPECT_EQ(info[0], 0);
  EXPECT_EQ(info[1], 0);
  EXPECT_EQ(info[2], 2);
  a.set({0, 0, 0}, 0.0);
  la::Factor iv = la::inv_ex(a.view, o);
  EXPECT_EQ(static_cast<const int32_t*>(iv.info.data())[0], 1);
  la::LU lu = la::lu_factor(a.view, o);
  EXPECT_EQ(static_cast<const int32_t*>(lu.info.data())[0], 1);
  la::SolveOptions so;
  so.check_info = false;
  HostTensor b = random_b({4, 3, 3, 1}, DType::f32, Layout::row, 1);
  la::Factor s = la::solve_ex(a.view, b.view, so);
  ASSERT_EQ(s.info.shape(), (Shape{4, 3}));
  EXPECT_EQ(static_cast<const int32_t*>(s.info.data())[3], 1);  // (1, 0): matrix 0 again
  EXPECT_EQ(static_cast<const int32_t*>(s.info.data())[4], 0);
}

TEST(LinalgCpu, NanInputNeverCrashes) {
  for (DType t : linalg_test::float_types()) {
    HostTensor a = random_kind({2, 6, 6}, t, Kind::spd, Layout::row, 9);
    a.set({1, 3, 3}, NAN);
    HostTensor b = random_b({6}, t, Layout::row, 10);
    // Cholesky: LinAlgError or NaN in the result; LU-based: NaN in the results.
    try {
      Tensor l = la::cholesky(a.view).value;
      EXPECT_TRUE(std::isnan(std::abs(at(l.view(), {1, 3, 3}))));
    } catch (const LinAlgError&) {
    }
    Tensor x = la::solve(a.view, b.view);
    EXPECT_TRUE(std::isnan(std::abs(at(x.view(), {1, 0}))));
    EXPECT_TRUE(std::isnan(std::abs(at(la::det(a.view).view(), {1}))));
    EXPECT_FALSE(std::isnan(std::abs(at(la::det(a.view).view(), {0}))));
    EXPECT_NO_FATAL_FAILURE(la::inv_ex(a.view, {.check_info = false}));
  }
}

TEST(LinalgCpu, ArgumentErrorsNameFunctionArgumentAndShape) {
  HostTensor r = make_host({3, 4}, DType::f64);
  EXPECT_THROW(la::cholesky(r.view), InvalidArgument);
  EXPECT_EQ(msg_of([&] { la::cholesky(r.view); }),
            "[linalg.cholesky] expected a square matrix for a, got shape (3, 4)");
  EXPECT_NE(msg_of([&] { la::det(r.view); }).find("[linalg.det]"), std::string::npos);
  HostTensor v = make_host({3}, DType::f64);
  EXPECT_THROW(la::inv(v.view), InvalidArgument);

  HostTensor i = make_host({3, 3}, DType::i32);
  EXPECT_THROW(la::cholesky(i.view), DTypeError);
  EXPECT_EQ(msg_of([&] { la::slogdet(i.view); }),
            "[linalg.slogdet] unsupported dtype int32 for a; linalg takes float32, float64, "
            "complex64, complex128");
  HostTensor h = make_host({3, 3}, DType::f16);
  EXPECT_THROW(la::solve(h.view, v.view), DTypeError);

  HostTensor a = random_kind({2, 3, 3}, DType::f64, Kind::general, Layout::row, 1);
  HostTensor b4 = make_host({4}, DType::f64);
  EXPECT_EQ(msg_of([&] { la::solve(a.view, b4.view); }),
            "[linalg.solve] b has shape (4,), expected (3,) to match a of shape (2, 3, 3)");
  HostTensor b42 = make_host({4, 2}, DType::f64);
  EXPECT_THROW(la::solve(a.view, b42.view), InvalidArgument);
  HostTensor bb = make_host({5, 3, 1}, DType::f64);
  EXPECT_EQ(msg_of([&] { la::solve(a.view, bb.view); }),
            "[linalg.solve] batch dimensions of a (2,) and b (5,) do not broadcast");
  HostTensor bf = make_host({3}, DType::f32);
  EXPECT_THROW(la::solve(a.view, bf.view), DTypeError);
  EXPECT_NE(msg_of([&] { la::cho_solve(a.view, bf.view); }).find("c is float64, b is float32"),
            std::string::npos);

  la::LU f = la::lu_factor(a.view);
  HostTensor b3 = random_b({3}, DType::f64, Layout::row, 2);
  HostTensor p64 = make_host({2, 3}, DType::i64);
  EXPECT_THROW(la::lu_solve(f.lu.view(), p64.view, b3.view), DTypeError);
  HostTensor p1 = make_host({3}, DType::i32);
  EXPECT_NE(msg_of([&] {
              la::lu_solve(f.lu.view(), p1.view, b3.view);
            }).find("piv has shape (3,), expected (2, 3)"),
            std::string::npos);
  HostTensor bad = make_host({2, 3}, DType::i32);
  static_cast<int32_t*>(bad.view.data)[4] = 7;
  EXPECT_NE(msg_of([&] {
              la::lu_solve(f.lu.view(), bad.view, b3.view);
            }).find("1 pivots are outside [0, 3)"),
            std::string::npos);
  la::LinalgOptions o;
  o.device = Device::cuda(0);
  if (!cuda_compiled()) {
    EXPECT_THROW(la::cholesky(a.view, true, o), NotCompiled);
    try {
      la::cholesky(a.view, true, o);
    } catch (const NotCompiled& e) {
      EXPECT_STREQ(e.what(), "[linalg.cholesky] device: gpula was built without its cuda backend");
    }
  }
}

TEST(LinalgCpu, BlockingAndLoggerOptionsAreHarmless) {
  HostTensor a = random_kind({8, 8}, DType::f64, Kind::spd, Layout::row, 5);
  la::LinalgOptions o;
  o.blocking = true;
  o.logger = [](LogLevel, const std::string&) {};
  EXPECT_NO_THROW(la::cholesky(a.view, true, o));
}

}  // namespace
