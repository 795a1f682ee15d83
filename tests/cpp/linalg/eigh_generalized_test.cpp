// gpula::linalg::eigh_generalized on the CPU backend: random Hermitian a and positive definite b
// over dtypes, batches (also broadcast), layouts, both triangles and the three problem types,
// checked by residual and b-orthonormality (support/ldl.h) and against eigh for b = I; b not
// positive definite (NotPositiveDefinite, or info n + k), n = 0, and argument errors.
#include <gpula/gpula.h>
#include <gpula/linalg.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "support/eigh.h"
#include "support/error.h"
#include "support/ldl.h"

namespace {

using namespace gpula;
using core_test::at;
using core_test::eps_of;
using core_test::HostTensor;
using core_test::Layout;
using core_test::make_host;
using linalg_test::Snapshot;
using linalg_test::with;
namespace la = gpula::linalg;

double tol(DType t, int64_t n) {
  return 50.0 * static_cast<double>(std::max<int64_t>(n, 4)) * eps_of(t);
}

class EighGeneralizedCpu : public ::testing::TestWithParam<std::tuple<DType, Layout>> {};

TEST_P(EighGeneralizedCpu, ResidualAndNormalization) {
  const auto [t, layout] = GetParam();
  uint64_t seed = 9;
  struct Case {
    Shape a_batch, b_batch;
    int64_t n;
  };
  for (const Case& c : {Case{{}, {}, 1}, Case{{}, {}, 9}, Case{{3}, {3}, 6}, Case{{2, 3}, {3}, 5},
                        Case{{}, {4}, 30}})
    for (int type : {1, 2, 3})
      for (bool lower : {true, false}) {
        HostTensor a = make_host(with(c.a_batch, {c.n, c.n}), t, layout);
        HostTensor b = make_host(with(c.b_batch, {c.n, c.n}), t, layout);
        eigh_test::fill_hermitian(a, seed++);
        linalg_test::fill_kind(b, linalg_test::Kind::spd, seed++);
        linalg_test::poison_triangle(a, lower, NAN);
        linalg_test::poison_triangle(b, lower, NAN);
        const Snapshot sa(a), sb(b);
        la::Eigh r = la::eigh_generalized(a.view, b.view, type, lower);
        const ldl_test::GenErrors e =
            ldl_test::gen_errors(a.view, b.view, type, lower, r.w.view(), r.v.view());
        EXPECT_LE(e.residual, tol(t, c.n)) << "n " << c.n << " type " << type;
        EXPECT_LE(e.ortho, 10 * tol(t, c.n)) << "n " << c.n << " type " << type;
        EXPECT_TRUE(e.ascending);
        EXPECT_EQ(r.w.dtype(), real_type(t));
        EXPECT_TRUE(sa.same(a) && sb.same(b));
        // eigvals_only gives the same eigenvalues.
        la::Eigh wo = la::eigh_generalized(a.view, b.view, type, lower, true);
        EXPECT_FALSE(wo.v.defined());
        for (int64_t j = 0; j < c.n; ++j) {
          Shape idx(r.w.shape().size() - 1, 0);
          idx.push_back(j);
          EXPECT_NEAR(at(wo.w.view(), idx).real(), at(r.w.view(), idx).real(),
                      tol(t, c.n) * (1 + std::abs(at(r.w.view(), idx))));
        }
      }
}

INSTANTIATE_TEST_SUITE_P(Types, EighGeneralizedCpu,
                         ::testing::Combine(::testing::Values(DType::f32, DType::f64, DType::c64,
                                                              DType::c128),
                                            ::testing::Values(Layout::row, Layout::col,
                                                              Layout::strided)),
                         linalg_test::DTypeLayoutName{});

TEST(EighGeneralizedCpuEdges, IdentityBIsEigh) {
  HostTensor a = make_host({2, 8, 8}, DType::f64);
  eigh_test::fill_hermitian(a, 3);
  HostTensor b = make_host({8, 8}, DType::f64);
  for (int64_t i = 0; i < 8; ++i) b.set({i, i}, 1.0);
  la::Eigh g = la::eigh_generalized(a.view, b.view);
  la::Eigh s = la::eigh(a.view);
  for (int64_t k = 0; k < 2; ++k)
    for (int64_t j = 0; j < 8; ++j)
      EXPECT_NEAR(at(g.w.view(), {k, j}).real(), at(s.w.view(), {k, j}).real(), 1e-12);
}

TEST(EighGeneralizedCpuEdges, NotPositiveDefiniteAndErrors) {
  HostTensor a = make_host({2, 3, 3}, DType::f64);
  eigh_test::fill_hermitian(a, 4);
  HostTensor b = make_host({2, 3, 3}, DType::f64);
  for (int64_t k = 0; k < 2; ++k)
    for (int64_t i = 0; i < 3; ++i) b.set({k, i, i}, k == 1 && i == 1 ? -1.0 : 1.0);
  try {
    la::eigh_generalized(a.view, b.view);
    ADD_FAILURE() << "no throw";
  } catch (const NotPositiveDefinite& e) {
    EXPECT_NE(std::string(e.what()).find("b is not positive definite: leading minor of order 2"),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("batch index 1"), std::string::npos);
  }
  la::Eigh r = la::eigh_generalized(a.view, b.view, 1, true, false, {.check_info = false});
  EXPECT_EQ(static_cast<int>(at(r.info.view(), {0}).real()), 0);
  EXPECT_EQ(static_cast<int>(at(r.info.view(), {1}).real()), 3 + 2);
  HostTensor z = make_host({0, 4, 4}, DType::c64);
  la::Eigh rz = la::eigh_generalized(z.view, z.view);
  EXPECT_EQ(rz.w.shape(), (Shape{0, 4}));
  EXPECT_EQ(rz.v.shape(), (Shape{0, 4, 4}));
  HostTensor b4 = make_host({4, 4}, DType::f64), f32 = make_host({3, 3}, DType::f32);
  HostTensor b5 = make_host({5, 3, 3}, DType::f64);
  EXPECT_NE(test_support::msg_of([&] { la::eigh_generalized(a.view, b4.view); })
                .find("expected matrices of one order"),
            std::string::npos);
  EXPECT_THROW(la::eigh_generalized(a.view, f32.view), DTypeError);
  EXPECT_NE(test_support::msg_of([&] { la::eigh_generalized(a.view, b5.view); })
                .find("do not broadcast"),
            std::string::npos);
  EXPECT_NE(test_support::msg_of([&] { la::eigh_generalized(a.view, b.view, 4); })
                .find("[linalg.eigh] type must be 1, 2 or 3, got 4"),
            std::string::npos);
}

}  // namespace
