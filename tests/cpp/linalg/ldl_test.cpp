// gpula::linalg::ldl_factor on the CPU backend: random symmetric, complex symmetric and
// Hermitian indefinite matrices over dtypes, batches, layouts and both triangles, rebuilt from
// LAPACK's packed form (support/ldl.h); a singular matrix (info > 0, no throw), n = 0, the input
// left alone, and argument errors.
#include <gpula/gpula.h>
#include <gpula/linalg.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

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

// Symmetric (herm: Hermitian) indefinite matrices: (M + M^T) / 2 or (M + M^H) / 2.
void fill(const HostTensor& h, bool herm, uint64_t seed) {
  core_test::Filler f(seed);
  const int64_t n = h.view.shape.back();
  const bool cplx = is_complex(h.view.dtype);
  const Shape batch(h.view.shape.begin(), h.view.shape.end() - 2);
  core_test::for_each_index(batch, [&](const Shape& b) {
    std::vector<core_test::cdouble> m(n * n);
    for (auto& x : m) x = f.uniform(cplx);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const core_test::cdouble t = herm ? std::conj(m[j * n + i]) : m[j * n + i];
        h.set(with(b, {i, j}), 0.5 * (m[i * n + j] + t));
      }
  });
}

class LdlCpu : public ::testing::TestWithParam<std::tuple<DType, Layout>> {};

TEST_P(LdlCpu, RebuildsEveryMatrix) {
  const auto [t, layout] = GetParam();
  uint64_t seed = 5;
  for (const Shape& batch : {Shape{}, Shape{3}, Shape{2, 2}})
    for (int64_t n : {1, 2, 7, 40})
      for (bool lower : {true, false})
        for (bool herm : {true, false}) {
          HostTensor a = make_host(with(batch, {n, n}), t, layout);
          fill(a, herm && is_complex(t), seed++);
          const Snapshot before(a);
          la::Ldl r = la::ldl_factor(a.view, lower, herm);
          ASSERT_EQ(r.ldu.shape(), a.view.shape);
          ASSERT_EQ(r.pivots.shape(), with(batch, {n}));
          ASSERT_EQ(r.info.shape(), batch);
          EXPECT_EQ(r.ldu.dtype(), t);
          EXPECT_EQ(r.pivots.dtype(), DType::i32);
          EXPECT_LE(ldl_test::ldl_error(a.view, lower, herm && is_complex(t), r.ldu.view(),
                                        r.pivots.view()),
                    tol(t, n))
              << "n " << n << " lower " << lower << " herm " << herm;
          EXPECT_TRUE(before.same(a));
        }
}

INSTANTIATE_TEST_SUITE_P(Types, LdlCpu,
                         ::testing::Combine(::testing::Values(DType::f32, DType::f64, DType::c64,
                                                              DType::c128),
                                            ::testing::Values(Layout::row, Layout::col,
                                                              Layout::strided)),
                         linalg_test::DTypeLayoutName{});

TEST(LdlCpuEdges, SingularZeroOrderAndErrors) {
  HostTensor z = make_host({4, 4}, DType::f64);  // all zeros: D(1, 1) = 0
  la::Ldl r = la::ldl_factor(z.view);
  EXPECT_GT(static_cast<int>(at(r.info.view(), {}).real()), 0);
  HostTensor e = make_host({2, 0, 0}, DType::f32);
  la::Ldl re = la::ldl_factor(e.view);
  EXPECT_EQ(re.ldu.shape(), (Shape{2, 0, 0}));
  EXPECT_EQ(re.pivots.shape(), (Shape{2, 0}));
  HostTensor rect = make_host({3, 4}, DType::f64);
  EXPECT_NE(test_support::msg_of([&] { la::ldl_factor(rect.view); })
                .find("[linalg.ldl] expected a square matrix"),
            std::string::npos);
  HostTensor ints = make_host({2, 2}, DType::i32);
  EXPECT_THROW(la::ldl_factor(ints.view), DTypeError);
}

}  // namespace
