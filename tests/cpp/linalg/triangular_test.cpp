// gpula::linalg::solve_triangular on the CPU backend: random triangular batches over dtypes,
// layouts (read in place row- and column-major, copied otherwise), trans, triangles and unit
// diagonals, checked by backward error against the dense op(a) (the unread parts are NaN); a
// single matrix against a batch of b (folded), broadcast batches, the zero-diagonal check,
// empty shapes and argument errors.
#include <gpula/gpula.h>
#include <gpula/linalg.h>
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "support/error.h"
#include "support/triangular.h"

namespace {

using namespace gpula;
using core_test::at;
using core_test::eps_of;
using core_test::HostTensor;
using core_test::Layout;
using core_test::make_host;
using linalg_test::backward_error;
using linalg_test::Snapshot;
using test_support::msg_of;
using triangular_test::op_matrix;
using triangular_test::random_triangular;
namespace la = gpula::linalg;

double tol(DType t, int64_t n) {
  return 30.0 * static_cast<double>(std::max<int64_t>(n, 4)) * eps_of(t);
}

constexpr la::Trans kTrans[] = {la::Trans::none, la::Trans::transpose, la::Trans::conj_transpose};

class TriangularCpu : public ::testing::TestWithParam<std::tuple<DType, Layout>> {};

TEST_P(TriangularCpu, MatchesDenseOpOverTransTrianglesAndUnit) {
  const auto [t, layout] = GetParam();
  uint64_t seed = 1;
  for (la::Trans trans : kTrans)
    for (bool lower : {false, true})
      for (bool unit : {false, true}) {
        for (const auto& [shape, bshape] :
             {std::pair<Shape, Shape>{{2, 3, 7, 7}, {2, 3, 7, 4}}, {{7, 7}, {7}},
              {{3, 70, 70}, {3, 70, 2}}, {{5, 5}, {2, 3, 5, 2}}, {{3, 1, 6, 6}, {2, 6, 1}}}) {
          HostTensor a = random_triangular(shape, t, lower, unit, layout, seed++);
          HostTensor b = make_host(bshape, t);
          core_test::Filler(seed++).fill(b.view);
          const Snapshot sa(a), sb(b);
          la::Factor r = la::solve_triangular_ex(
              a.view, b.view, {.lower = lower, .trans = trans, .unit_diagonal = unit});
          const HostTensor ref = op_matrix(a.view, lower, trans, unit);
          EXPECT_LT(backward_error(ref.view, b.view, r.value.view()), tol(t, shape.back()))
              << "trans " << static_cast<int>(trans) << " lower " << lower << " unit " << unit
              << " a " << core_test::str(t);
          EXPECT_EQ(r.value.dtype(), t);
          EXPECT_TRUE(sa.same(a) && sb.same(b));
          for (int64_t i = 0; i < r.info.view().numel(); ++i)
            EXPECT_EQ(static_cast<const int32_t*>(r.info.data())[i], 0);
        }
      }
}

INSTANTIATE_TEST_SUITE_P(All, TriangularCpu,
                         ::testing::Combine(::testing::ValuesIn(linalg_test::float_types()),
                                            ::testing::Values(Layout::row, Layout::col,
                                                              Layout::padded)),
                         linalg_test::DTypeLayoutName());

TEST(TriangularCpuShapes, ResultShapesFollowB) {
  HostTensor a = random_triangular({2, 4, 4}, DType::f64, true, false, Layout::row, 3);
  HostTensor v = make_host({4}, DType::f64);
  core_test::Filler(4).fill(v.view);
  EXPECT_EQ(la::solve_triangular(a.view, v.view, {.lower = true}).shape(), (Shape{2, 4}));
  HostTensor m = make_host({3, 1, 4, 5}, DType::f64);
  core_test::Filler(5).fill(m.view);
  const la::Factor r = la::solve_triangular_ex(a.view, m.view, {.lower = true});
  EXPECT_EQ(r.value.shape(), (Shape{3, 2, 4, 5}));
  EXPECT_EQ(r.info.shape(), (Shape{3, 2}));
}

TEST(TriangularCpuSingular, ZeroDiagonalRaisesOrReportsInfo) {
  HostTensor a = random_triangular({3, 4, 4}, DType::f64, false, false, Layout::row, 6);
  a.set({1, 2, 2}, 0.0);
  HostTensor b = make_host({4}, DType::f64);
  core_test::Filler(7).fill(b.view);
  try {
    la::solve_triangular(a.view, b.view);
    ADD_FAILURE() << "no SingularMatrix";
  } catch (const SingularMatrix& e) {
    EXPECT_EQ(e.index(), 2);
    EXPECT_EQ(e.batch_index(), 1);
    EXPECT_NE(std::string(e.what()).find("a[2,2] is exactly zero"), std::string::npos) << e.what();
  }
  la::TriangularOptions o;
  o.check_info = false;
  const la::Factor r = la::solve_triangular_ex(a.view, b.view, o);
  EXPECT_EQ(at(r.info.view(), {0}).real(), 0.0);
  EXPECT_EQ(at(r.info.view(), {1}).real(), 3.0);
  // A single matrix for a batch of b: its info spread over the batch.
  HostTensor one = random_triangular({4, 4}, DType::c64, true, false, Layout::col, 8);
  one.set({0, 0}, 0.0);
  HostTensor bb = make_host({2, 4, 1}, DType::c64);
  core_test::Filler(9).fill(bb.view);
  o.lower = true;
  const la::Factor f = la::solve_triangular_ex(one.view, bb.view, o);
  EXPECT_EQ(at(f.info.view(), {1}).real(), 1.0);
  // unit_diagonal never reads the diagonal: no error.
  o.check_info = true;
  o.unit_diagonal = true;
  EXPECT_NO_THROW(la::solve_triangular(one.view, bb.view, o));
}

TEST(TriangularCpuEmpty, EmptyShapes) {
  for (const auto& [shape, bshape] : {std::pair<Shape, Shape>{{0, 0}, {0}}, {{3, 3}, {3, 0}},
                                      {{0, 3, 3}, {3, 2}}, {{2, 0, 0}, {2, 0, 4}}}) {
    HostTensor a = make_host(shape, DType::f32);
    core_test::Filler(1).fill(a.view);
    HostTensor b = make_host(bshape, DType::f32);
    const la::Factor r = la::solve_triangular_ex(a.view, b.view);
    EXPECT_EQ(r.value.view().numel(), 0);
  }
}

TEST(TriangularCpuErrors, ArgumentErrorsNameTheOperand) {
  HostTensor a = make_host({3, 4}, DType::f64);
  HostTensor b = make_host({3}, DType::f64);
  EXPECT_NE(msg_of([&] { la::solve_triangular(a.view, b.view); }).find("[linalg.solve_triangular]"),
            std::string::npos);
  HostTensor sq = make_host({2, 3, 3}, DType::f64);
  core_test::Filler(2).fill(sq.view);
  HostTensor wrong = make_host({4}, DType::f64);
  EXPECT_THROW(la::solve_triangular(sq.view, wrong.view), InvalidArgument);
  HostTensor f32 = make_host({3}, DType::f32);
  EXPECT_THROW(la::solve_triangular(sq.view, f32.view), DTypeError);
  HostTensor batch = make_host({3, 3, 1}, DType::f64);
  EXPECT_NE(msg_of([&] { la::solve_triangular(sq.view, batch.view); }).find("do not broadcast"),
            std::string::npos);
}

}  // namespace
