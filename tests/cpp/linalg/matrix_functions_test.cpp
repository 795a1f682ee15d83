// gpula::linalg::orthogonalize, inv_root and sqrtm_psd on the CPU backend, against float64
// references computed here: the Newton-Schulz iteration in float64 (over dtypes, batches,
// layouts, wide and tall matrices), the exact polar factor from the library's float64 eigh
// (a convergent iteration gives U^T U = I), R^p (A + eps I) = I for inv_root and S S = A for
// sqrtm_psd; the NotPositiveDefinite rule of python/gpula/linalg/_roots.py, empty input and
// argument errors; polar (u p = a, u's orthonormality, p Hermitian positive semidefinite and
// equal to V S V^H from the library's complex128 svd), both sides, batched, grouped.
#include <gpula/gpula.h>
#include <gpula/linalg.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "support/eigh.h"
#include "support/error.h"
#include "support/matrix_functions.h"

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
using test_support::msg_of;
namespace la = gpula::linalg;
using mf_test::random_matrix;

// A well-conditioned m x n matrix in every item of h: 3 [I 0] plus uniform noise of 0.3 (its
// singular values over ||G||_F lie in about [0.3, 0.5]).
void fill_well_conditioned(const HostTensor& h, uint64_t seed) {
  core_test::Filler f(seed);
  const int64_t m = h.view.shape[h.view.shape.size() - 2], n = h.view.shape.back();
  core_test::for_each_index(
      Shape(h.view.shape.begin(), h.view.shape.end() - 2), [&](const Shape& s) {
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j)
            h.set(with(s, {i, j}), (i == j ? 3.0 : 0.0) + 0.3 * f.uniform(false).real());
      });
}

using Sizes = std::vector<std::pair<int64_t, int64_t>>;  // (m, n)

// ---- orthogonalize -----------------------------------------------------------------------

using TypeLayout = std::tuple<DType, Layout>;
class LinalgOrthogonalizeCpu : public ::testing::TestWithParam<TypeLayout> {};

TEST_P(LinalgOrthogonalizeCpu, MatchesTheFloat64IterationOverShapesAndBatches) {
  const auto [t, layout] = GetParam();
  uint64_t seed = 1;
  for (const Shape& batch : {Shape{}, Shape{3}, Shape{2, 2}})
    for (const auto& [m, n] : Sizes{{5, 8}, {8, 5}, {6, 6}, {1, 4}, {33, 17}}) {
      HostTensor g = random_matrix(with(batch, {m, n}), t, seed++, layout);
      const Snapshot before(g);
      la::OrthogonalizeOptions o;
      o.dtype = std::nullopt;  // g's own (f16 and bf16 iterate in float32 on the CPU)
      const Tensor u = la::orthogonalize(g.view, o);
      ASSERT_EQ(u.shape(), g.view.shape);
      EXPECT_EQ(u.dtype(), t);
      EXPECT_TRUE(u.view().is_contiguous());
      const double err = mf_test::max_error(u.view(), [&](const Shape& s) {
        return mf_test::newton_schulz(g.view, s, o.steps, o.coefficients, o.eps);
      });
      // Entries are O(1); the float32 iteration of f16/bf16 data ends in one rounding to t.
      const double tol = t == DType::f64 ? 1e-12 : is_half(t) ? 2 * eps_of(t) : 1e-4;
      EXPECT_LE(err, tol) << "m " << m << " n " << n;
      EXPECT_TRUE(before.same(g));
    }
}

INSTANTIATE_TEST_SUITE_P(
    Types, LinalgOrthogonalizeCpu,
    ::testing::Combine(::testing::Values(DType::f16, DType::bf16, DType::f32, DType::f64),
                       ::testing::Values(Layout::row, Layout::col, Layout::strided)),
    linalg_test::DTypeLayoutName());

TEST(LinalgOrthogonalizeCpu, ConvergentCoefficientsGiveThePolarFactor) {
  // The classical quintic (15, -10, 3) / 8 converges to the orthogonal polar factor U = G (G^T
  // G)^(-1/2): U^T U = I (tall) or U U^T = I (wide) and U equals the factor formed from the
  // library's float64 eigh of G^T G.
  la::OrthogonalizeOptions o;
  o.steps = 10;
  o.coefficients = {15.0 / 8, -10.0 / 8, 3.0 / 8};
  o.dtype = DType::f64;
  uint64_t seed = 7;
  for (const auto& [m_, n_] : Sizes{{6, 9}, {9, 6}, {7, 7}}) {
    const int64_t m = m_, n = n_;
    HostTensor g = make_host({2, m, n}, DType::f64);
    fill_well_conditioned(g, seed++);
    const Tensor u = la::orthogonalize(g.view, o);
    const int64_t k = std::min(m, n);
    const double ortho = mf_test::worst_over(u.view(), [&](const Shape& s) {
      const mf_test::Mat x = mf_test::matrix_of(u.view(), s);
      const mf_test::Mat xt = mf_test::transpose(x, m, n);
      const mf_test::Mat p = m > n ? mf_test::mul(xt, x, n, m, n) : mf_test::mul(x, xt, m, n, m);
      return mf_test::max_abs_diff(p, mf_test::identity(k));
    });
    EXPECT_LE(ortho, 1e-13) << m << " x " << n;
    // U = G V diag(w^(-1/2)) V^T from eigh(G^T G).
    const double polar = mf_test::max_error(u.view(), [&](const Shape& s) {
      const mf_test::Mat gm = mf_test::matrix_of(g.view, s);
      const mf_test::Mat gtg = mf_test::mul(mf_test::transpose(gm, m, n), gm, n, m, n);
      HostTensor h = make_host({n, n}, DType::f64);
      for (int64_t i = 0; i < n * n; ++i) h.set({i / n, i % n}, gtg[i]);
      const la::Eigh e = la::eigh(h.view);
      mf_test::Mat r(n * n);  // (G^T G)^(-1/2), on the range of G where m < n
      for (int64_t j = 0; j < n; ++j) {
        const double w = at(e.w.view(), {j}).real();
        if (w < 1e-8) continue;
        for (int64_t i = 0; i < n; ++i)
          for (int64_t l = 0; l < n; ++l)
            r[i * n + l] += at(e.v.view(), {i, j}) * at(e.v.view(), {l, j}) / std::sqrt(w);
      }
      return mf_test::mul(gm, r, m, n, n);
    });
    EXPECT_LE(polar, 1e-12) << m << " x " << n;
  }
}

TEST(LinalgOrthogonalizeCpu, HalfComputeDtypesIterateInFloat32OnTheCpu) {
  HostTensor g = random_matrix({3, 10, 24}, DType::f32, 11);
  la::OrthogonalizeOptions f32;
  f32.dtype = DType::f32;
  const Tensor ref = la::orthogonalize(g.view, f32);
  for (DType half : {DType::bf16, DType::f16}) {
    la::OrthogonalizeOptions o;
    o.dtype = half;
    EXPECT_EQ(mf_test::max_diff(la::orthogonalize(g.view, o).view(), ref.view()), 0.0);
  }
  // The default is bf16 (Muon's): the same on the CPU.
  EXPECT_EQ(mf_test::max_diff(la::orthogonalize(g.view).view(), ref.view()), 0.0);
  // A float64 iteration of float32 data differs from it only by float32 rounding.
  la::OrthogonalizeOptions f64;
  f64.dtype = DType::f64;
  EXPECT_LE(mf_test::max_diff(la::orthogonalize(g.view, f64).view(), ref.view()), 1e-5);
}

TEST(LinalgOrthogonalizeCpu, SymmetricProductsAreTheSameIteration) {
  // The lower-triangle blocks of X X^T and A A (4 row blocks, mirrored) against the plain
  // products: wide, tall (iterated transposed) and batched.
  for (const Shape& shape : {Shape{16, 40}, Shape{40, 16}, Shape{3, 2, 8, 12}}) {
    HostTensor g = random_matrix(shape, DType::f64, 21);
    la::OrthogonalizeOptions plain;
    plain.dtype = DType::f64;
    plain.symmetric_products = false;
    la::OrthogonalizeOptions blocks = plain;
    blocks.symmetric_products = true;
    EXPECT_LE(mf_test::max_diff(la::orthogonalize(g.view, blocks).view(),
                                la::orthogonalize(g.view, plain).view()),
              1e-13);
  }
  HostTensor odd = random_matrix({6, 9}, DType::f64, 22);  // 6 rows: not 4 blocks
  la::OrthogonalizeOptions o;
  o.symmetric_products = true;
  EXPECT_THROW((void)la::orthogonalize(odd.view, o), InvalidArgument);
  const std::string m = msg_of([&] { (void)la::orthogonalize(odd.view, o); });
  EXPECT_NE(m.find("[linalg.orthogonalize] symmetric_products"), std::string::npos) << m;
}

TEST(LinalgOrthogonalizeCpu, StepsZeroIsTheNormalizedInputAndEmptyShapesPass) {
  HostTensor g = random_matrix({2, 4, 3}, DType::f64, 3);
  la::OrthogonalizeOptions o;
  o.steps = 0;
  o.eps = 0.5;
  o.dtype = std::nullopt;
  const Tensor u = la::orthogonalize(g.view, o);
  const double err = mf_test::max_error(u.view(), [&](const Shape& s) {
    mf_test::Mat x = mf_test::matrix_of(g.view, s);
    double fro = 0.0;
    for (const cdouble& v : x) fro += std::norm(v);
    for (cdouble& v : x) v /= std::sqrt(fro) + 0.5;
    return x;
  });
  EXPECT_LE(err, 1e-15);
  for (const Shape& shape : {Shape{0, 3, 4}, Shape{3, 0}, Shape{2, 5, 0}}) {
    HostTensor e = make_host(shape, DType::bf16);
    const Tensor r = la::orthogonalize(e.view);
    EXPECT_EQ(r.shape(), shape);
    EXPECT_EQ(r.dtype(), DType::bf16);
  }
  // A zero matrix stays zero (0 / eps).
  HostTensor z = make_host({3, 3}, DType::f32);
  EXPECT_EQ(mf_test::max_diff(la::orthogonalize(z.view).view(), z.view), 0.0);
}

TEST(LinalgOrthogonalizeCpu, ArgumentErrorsNameFunctionArgumentAndValue) {
  HostTensor c = make_host({3, 3}, DType::c64);
  EXPECT_THROW(la::orthogonalize(c.view), DTypeError);
  EXPECT_EQ(msg_of([&] { la::orthogonalize(c.view); }),
            "[linalg.orthogonalize] g has dtype complex64; orthogonalize takes float16, "
            "bfloat16, float32, float64");
  HostTensor i = make_host({3, 3}, DType::i32);
  EXPECT_THROW(la::orthogonalize(i.view), DTypeError);
  HostTensor v = make_host({3}, DType::f32);
  EXPECT_EQ(msg_of([&] { la::orthogonalize(v.view); }),
            "[linalg.orthogonalize] g must be a matrix (..., m, n), got shape (3,)");
  HostTensor g = random_matrix({3, 4}, DType::f32, 1);
  la::OrthogonalizeOptions o;
  o.steps = -1;
  EXPECT_EQ(msg_of([&] { la::orthogonalize(g.view, o); }),
            "[linalg.orthogonalize] steps must be >= 0, got -1");
  o = {};
  o.eps = -1e-3;
  EXPECT_THROW(la::orthogonalize(g.view, o), InvalidArgument);
  o.eps = NAN;
  EXPECT_THROW(la::orthogonalize(g.view, o), InvalidArgument);
  o = {};
  o.coefficients[2] = INFINITY;
  EXPECT_THROW(la::orthogonalize(g.view, o), InvalidArgument);
  o = {};
  o.dtype = DType::c64;
  EXPECT_THROW(la::orthogonalize(g.view, o), InvalidArgument);
  if (!cuda_compiled()) {
    o = {};
    o.device = Device::cuda(0);
    EXPECT_THROW(la::orthogonalize(g.view, o), NotCompiled);
  }
}

// ---- inv_root, sqrtm_psd -------------------------------------------------------------------

class LinalgRootsCpu : public ::testing::TestWithParam<DType> {};

TEST_P(LinalgRootsCpu, InvRootTimesItselfPTimesAIsIdentity) {
  const DType t = GetParam();
  uint64_t seed = 1;
  for (const Shape& batch : {Shape{}, Shape{3}, Shape{2, 2}})
    for (int64_t n : {1, 4, 17})
      for (int p : {1, 2, 4})
        for (double eps : {0.0, 0.25}) {
          HostTensor a = make_host(with(batch, {n, n}), t, n == 4 ? Layout::col : Layout::row);
          linalg_test::fill_kind(a, linalg_test::Kind::spd, seed++);
          linalg_test::poison_triangle(a, true, NAN);  // the upper triangle is not read
          const Snapshot before(a);
          const Tensor r = la::inv_root(a.view, p, eps);
          ASSERT_EQ(r.shape(), a.view.shape);
          EXPECT_EQ(r.dtype(), t);
          // B B^H / n + I: condition number below about 10.
          const double tol = 2e3 * static_cast<double>(n + 1) * eps_of(t);
          EXPECT_LE(mf_test::inv_root_error(a.view, r.view(), p, eps), tol)
              << "n " << n << " p " << p << " eps " << eps;
          EXPECT_LE(mf_test::hermitian_error(r.view()), tol);
          EXPECT_TRUE(before.same(a));
        }
}

TEST_P(LinalgRootsCpu, SqrtmPsdSquaresBackIncludingRankDeficientMatrices) {
  const DType t = GetParam();
  const bool cplx = is_complex(t);
  for (int64_t n : {1, 3, 12}) {
    // X X^H with X (n x 2): rank <= 2, eigenvalues 0 up to rounding (some slightly negative).
    HostTensor a = make_host({2, n, n}, t);
    core_test::Filler f(n);
    for (int64_t b = 0; b < 2; ++b) {
      mf_test::Mat x(n * 2);
      for (auto& v : x) v = f.uniform(cplx);
      const mf_test::Mat xx = mf_test::mul(x, mf_test::transpose(x, n, 2, true), n, 2, n);
      for (int64_t i = 0; i < n * n; ++i) a.set({b, i / n, i % n}, xx[i]);
    }
    const Tensor s = la::sqrtm_psd(a.view);
    EXPECT_EQ(s.dtype(), t);
    EXPECT_LE(mf_test::sqrtm_error(a.view, s.view()), 200.0 * n * eps_of(t)) << "n " << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Types, LinalgRootsCpu,
                         ::testing::Values(DType::f32, DType::f64, DType::c64, DType::c128),
                         [](const auto& info) { return std::string(name(info.param)); });

TEST(LinalgRootsCpu, KnownDiagonalValues) {
  HostTensor a = make_host({2, 2}, DType::f64);
  a.set({0, 0}, 16.0);
  a.set({1, 1}, 1.0);
  const Tensor r = la::inv_root(a.view, 4);
  EXPECT_NEAR(at(r.view(), {0, 0}).real(), 0.5, 1e-15);
  EXPECT_NEAR(at(r.view(), {1, 1}).real(), 1.0, 1e-15);
  EXPECT_EQ(at(r.view(), {0, 1}).real(), 0.0);
  HostTensor b = make_host({2, 2}, DType::f64);
  b.set({0, 0}, 4.0);
  b.set({1, 1}, 9.0);
  const Tensor s = la::sqrtm_psd(b.view);
  EXPECT_NEAR(at(s.view(), {0, 0}).real(), 2.0, 1e-15);
  EXPECT_NEAR(at(s.view(), {1, 1}).real(), 3.0, 1e-15);
}

TEST(LinalgRootsCpu, TheRoundingFloorRuleOfRootsPy) {
  // Item 1 of the batch is singular (eigenvalues 0, 1, 2): NotPositiveDefinite naming it.
  HostTensor a = make_host({3, 3, 3}, DType::f64);
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t i = 0; i < 3; ++i) a.set({b, i, i}, b == 1 ? double(i) : 1.0 + i);
  try {
    la::inv_root(a.view, 2);
    ADD_FAILURE() << "no NotPositiveDefinite";
  } catch (const NotPositiveDefinite& e) {
    EXPECT_EQ(e.batch_index(), 1);
    EXPECT_EQ(e.order(), 0);
    EXPECT_EQ(std::string(e.what()),
              "[linalg.inv_root] a (+ eps I) is not positive definite: smallest eigenvalue 0 "
              "(batch index 1); with clip, such eigenvalues are raised to the rounding floor");
  }
  // A single matrix names batch index 0, as the Python rule does.
  HostTensor one = make_host({3, 3}, DType::f64);
  for (int64_t i = 0; i < 3; ++i) one.set({i, i}, double(i) - 1.0);
  EXPECT_NE(
      msg_of([&] { la::inv_root(one.view, 1); }).find("smallest eigenvalue -1 (batch index 0)"),
      std::string::npos);
  // eps lifts it; clip raises the eigenvalue to the floor 3 eps64 * 2 instead.
  const Tensor lifted = la::inv_root(a.view, 2, 1e-3);
  EXPECT_LE(mf_test::inv_root_error(a.view, lifted.view(), 2, 1e-3), 1e-12);
  la::InvRootOptions clip;
  clip.clip = true;
  const Tensor clipped = la::inv_root(a.view, 2, 0.0, clip);
  const double floor = 3 * 2.220446049250313e-16 * 2.0;
  EXPECT_NEAR(at(clipped.view(), {1, 0, 0}).real(), 1.0 / std::sqrt(floor),
              1e-6 / std::sqrt(floor));
  EXPECT_NEAR(at(clipped.view(), {1, 2, 2}).real(), 1.0 / std::sqrt(2.0), 1e-15);
  // sqrtm_psd: a clearly negative eigenvalue raises only without clip; zero ones pass.
  HostTensor neg = make_host({3, 3}, DType::f32);
  for (int64_t i = 0; i < 3; ++i) neg.set({i, i}, -1.0);
  la::SqrtmPsdOptions strict;
  strict.clip = false;
  EXPECT_EQ(msg_of([&] { la::sqrtm_psd(neg.view, strict); }),
            "[linalg.sqrtm_psd] a is not positive semidefinite: smallest eigenvalue -1 (batch "
            "index 0); with clip, negative eigenvalues count as zero");
  EXPECT_EQ(mf_test::max_diff(la::sqrtm_psd(neg.view).view(), make_host({3, 3}, DType::f32).view),
            0.0);
  EXPECT_NO_THROW(la::sqrtm_psd(a.view, strict));  // eigenvalue exactly 0
}

TEST(LinalgRootsCpu, EmptyInputAndArgumentErrors) {
  for (const Shape& shape : {Shape{0, 0}, Shape{0, 3, 3}}) {
    HostTensor e = make_host(shape, DType::f32);
    EXPECT_EQ(la::inv_root(e.view, 2).shape(), shape);
    EXPECT_EQ(la::sqrtm_psd(e.view).shape(), shape);
  }
  HostTensor a = make_host({3, 3}, DType::f64);
  linalg_test::fill_kind(a, linalg_test::Kind::spd, 1);
  EXPECT_EQ(msg_of([&] { la::inv_root(a.view, 0); }),
            "[linalg.inv_root] p must be a positive int, got 0");
  EXPECT_THROW(la::inv_root(a.view, 2, -1.0), InvalidArgument);
  EXPECT_THROW(la::inv_root(a.view, 2, INFINITY), InvalidArgument);
  HostTensor r = make_host({3, 4}, DType::f64);
  EXPECT_EQ(msg_of([&] { la::inv_root(r.view, 2); }),
            "[linalg.inv_root] expected a square matrix for a, got shape (3, 4)");
  EXPECT_EQ(msg_of([&] { la::sqrtm_psd(r.view); }),
            "[linalg.sqrtm_psd] expected a square matrix for a, got shape (3, 4)");
  HostTensor h = make_host({3, 3}, DType::f16);
  EXPECT_THROW(la::inv_root(h.view, 2), DTypeError);
  EXPECT_THROW(la::sqrtm_psd(h.view), DTypeError);
}

// ---- polar -----------------------------------------------------------------------------------

class LinalgPolarCpu : public ::testing::TestWithParam<DType> {};

TEST_P(LinalgPolarCpu, UTimesPIsAWithOrthonormalUAndHermitianPsdP) {
  const DType t = GetParam();
  // Entries O(1), min(m, n) <= 9: f64 and c128 to 1e-12, f32 and c64 to 1e-4.
  const double tol = t == DType::f64 || t == DType::c128 ? 1e-12 : 1e-4;
  uint64_t seed = 1;
  for (const la::PolarSide side : {la::PolarSide::right, la::PolarSide::left})
    for (const Shape& batch : {Shape{}, Shape{3}, Shape{2, 2}})
      for (const auto& [m, n] : Sizes{{7, 4}, {4, 7}, {5, 5}, {1, 3}, {9, 1}}) {
        HostTensor a =
            random_matrix(with(batch, {m, n}), t, seed, seed % 2 ? Layout::row : Layout::col);
        ++seed;
        const Snapshot before(a);
        const la::Polar r = la::polar(a.view, side);
        const int64_t o = side == la::PolarSide::right ? n : m;
        ASSERT_EQ(r.u.shape(), a.view.shape);
        ASSERT_EQ(r.p.shape(), with(batch, {o, o}));
        EXPECT_EQ(r.u.dtype(), t);
        EXPECT_EQ(r.p.dtype(), t);
        const mf_test::PolarErrors e = mf_test::polar_errors(a.view, r.u.view(), r.p.view(), side);
        const std::string where = std::string(side == la::PolarSide::right ? "right " : "left ") +
                                  std::to_string(m) + " x " + std::to_string(n);
        EXPECT_LE(e.product, tol) << where;
        EXPECT_LE(e.ortho, tol) << where;
        EXPECT_EQ(e.herm, 0.0) << where;  // exactly Hermitian
        EXPECT_LE(e.ref, tol) << where;
        EXPECT_GE(e.min_eig, -tol) << where;
        EXPECT_TRUE(before.same(a));
      }
}

INSTANTIATE_TEST_SUITE_P(Types, LinalgPolarCpu,
                         ::testing::Values(DType::f32, DType::f64, DType::c64, DType::c128),
                         [](const auto& info) { return std::string(name(info.param)); });

TEST(LinalgPolarCpu, KnownFactorsAndRankDeficientInput) {
  // [[0, 2], [1, 0]] = [[0, 1], [1, 0]] diag(1, 2): the docstring example of gl.linalg.polar,
  // exact.
  HostTensor a = make_host({2, 2}, DType::f64);
  a.set({0, 1}, 2.0);
  a.set({1, 0}, 1.0);
  const la::Polar r = la::polar(a.view);
  const double u_want[4] = {0, 1, 1, 0}, p_want[4] = {1, 0, 0, 2};
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(at(r.u.view(), {i / 2, i % 2}).real(), u_want[i]) << i;
    EXPECT_EQ(at(r.p.view(), {i / 2, i % 2}).real(), p_want[i]) << i;
  }
  // Left: a = p u with p = diag(2, 1).
  const la::Polar l = la::polar(a.view, la::PolarSide::left);
  EXPECT_EQ(at(l.p.view(), {0, 0}).real(), 2.0);
  EXPECT_EQ(at(l.p.view(), {1, 1}).real(), 1.0);
  EXPECT_EQ(at(l.p.view(), {0, 1}).real(), 0.0);
  // Rank 1 (6 x 4, every column equal): u p = a, u still has orthonormal columns, p PSD.
  HostTensor z = make_host({6, 4}, DType::f64);
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = 0; j < 4; ++j) z.set({i, j}, 1.0 + 0.5 * static_cast<double>(i));
  for (const la::PolarSide side : {la::PolarSide::right, la::PolarSide::left}) {
    const la::Polar zp = la::polar(z.view, side);
    const mf_test::PolarErrors e = mf_test::polar_errors(z.view, zp.u.view(), zp.p.view(), side);
    EXPECT_LE(e.product, 1e-12);
    EXPECT_LE(e.ortho, 1e-12);
    EXPECT_LE(e.ref, 1e-12);
    EXPECT_GE(e.min_eig, -1e-12);
  }
  // A zero matrix: u orthonormal, p zero.
  HostTensor zero = make_host({3, 2}, DType::f32);
  const la::Polar zr = la::polar(zero.view);
  EXPECT_EQ(mf_test::max_diff(zr.p.view(), make_host({2, 2}, DType::f32).view), 0.0);
  EXPECT_LE(mf_test::polar_errors(zero.view, zr.u.view(), zr.p.view(), la::PolarSide::right).ortho,
            1e-6);
}

TEST(LinalgPolarCpu, EmptyShapesAsPythonGaveThem) {
  // u has a's shape; p is (..., n, n) (right) or (..., m, m) (left), zero.
  for (const auto& [shape, right_p, left_p] :
       std::vector<std::tuple<Shape, Shape, Shape>>{{{0, 3}, {3, 3}, {0, 0}},
                                                    {{3, 0}, {0, 0}, {3, 3}},
                                                    {{0, 0}, {0, 0}, {0, 0}},
                                                    {{2, 0, 3}, {2, 3, 3}, {2, 0, 0}},
                                                    {{0, 4, 2}, {0, 2, 2}, {0, 4, 4}}}) {
    HostTensor e = make_host(shape, DType::c64);
    for (const la::PolarSide side : {la::PolarSide::right, la::PolarSide::left}) {
      const la::Polar r = la::polar(e.view, side);
      const Shape& want = side == la::PolarSide::right ? right_p : left_p;
      EXPECT_EQ(r.u.shape(), shape);
      EXPECT_EQ(r.u.dtype(), DType::c64);
      ASSERT_EQ(r.p.shape(), want);
      EXPECT_EQ(r.p.dtype(), DType::c64);
      EXPECT_EQ(mf_test::max_diff(r.p.view(), make_host(want, DType::c64).view), 0.0);
    }
  }
}

TEST(LinalgPolarCpu, GroupedFormAndArgumentErrors) {
  std::vector<HostTensor> items;
  items.push_back(random_matrix({4, 3}, DType::f64, 1));
  items.push_back(random_matrix({6, 6}, DType::f64, 2));
  items.push_back(random_matrix({4, 3}, DType::f64, 3));
  std::vector<TensorView> views;
  for (const auto& h : items) views.push_back(h.view);
  const std::vector<la::Polar> r = la::polar(views, la::PolarSide::left);
  ASSERT_EQ(r.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    const la::Polar one = la::polar(views[i], la::PolarSide::left);
    EXPECT_LE(mf_test::max_diff(r[i].u.view(), one.u.view()), 1e-13) << i;
    EXPECT_LE(mf_test::max_diff(r[i].p.view(), one.p.view()), 1e-13) << i;
  }
  HostTensor v = make_host({3}, DType::f64);
  EXPECT_EQ(msg_of([&] { la::polar(v.view); }),
            "[linalg.polar] a must be a matrix (..., m, n), got shape (3,)");
  HostTensor h = make_host({3, 3}, DType::f16);
  EXPECT_THROW(la::polar(h.view), DTypeError);
  HostTensor i32 = make_host({3, 3}, DType::i32);
  EXPECT_THROW(la::polar(i32.view), DTypeError);
  EXPECT_THROW(la::polar(items[0].view, static_cast<la::PolarSide>(7)), InvalidArgument);
  std::vector<TensorView> bad{items[0].view, v.view};
  EXPECT_EQ(msg_of([&] { la::polar(bad); }),
            "[linalg.polar] a[1] must be a matrix (..., m, n), got shape (3,)");
  if (!cuda_compiled()) {
    CommonOptions o;
    o.device = Device::cuda(0);
    EXPECT_THROW(la::polar(items[0].view, la::PolarSide::right, o), NotCompiled);
  }
}

}  // namespace
