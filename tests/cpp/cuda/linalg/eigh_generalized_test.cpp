// gpula::linalg::eigh_generalized on the CUDA backend, on device memory: cusolverDn<t>sygvd per
// matrix over dtypes, batches (also broadcast b), both triangles and the three problem types,
// checked by residual and b-orthonormality (support/ldl.h) and against the CPU backend's
// eigenvalues; b not positive definite, n = 0, host data run on the GPU.
//
// Built only with CUDA; run by scripts/gpu_check.sh on the lent GPU.
#include <cuda_runtime.h>
#include <gpula/gpula.h>
#include <gpula/linalg.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "support/eigh.h"
#include "support/ldl.h"
#include "support/linalg_cuda.h"

namespace {

using namespace gpula;
using core_test::at;
using core_test::HostTensor;
using core_test::make_host;
using linalg_test::with;
namespace la = gpula::linalg;

using linalg_cuda_test::DeviceTensor;
using linalg_cuda_test::host_of;
using linalg_cuda_test::to_device;
using linalg_cuda_test::tol;
using linalg_cuda_test::unchanged;

class CudaEighGeneralized : public linalg_cuda_test::GpuDTypeTest {};

TEST_P(CudaEighGeneralized, MatchesReconstructionAndCpu) {
  const DType t = GetParam();
  uint64_t seed = 31;
  struct Case {
    Shape a_batch, b_batch;
    int64_t n;
  };
  for (const Case& c : std::vector<Case>{{{}, {}, 1}, {{4}, {4}, 12}, {{2, 3}, {3}, 40},
                                         {{}, {}, 300}})
    for (int type : {1, 2, 3})
      for (bool lower : {true, false}) {
        HostTensor a = make_host(with(c.a_batch, {c.n, c.n}), t);
        HostTensor b = make_host(with(c.b_batch, {c.n, c.n}), t);
        eigh_test::fill_hermitian(a, seed++);
        linalg_test::fill_kind(b, linalg_test::Kind::spd, seed++);
        linalg_test::poison_triangle(a, lower, NAN);
        linalg_test::poison_triangle(b, lower, NAN);
        DeviceTensor da = to_device(a), db = to_device(b);
        la::Eigh r = la::eigh_generalized(da.view, db.view, type, lower);
        ASSERT_TRUE(r.w.device().is_cuda());
        HostTensor w = host_of(r.w), v = host_of(r.v);
        const ldl_test::GenErrors e = ldl_test::gen_errors(a.view, b.view, type, lower, w.view,
                                                           v.view);
        EXPECT_LE(e.residual, tol(t, c.n)) << "n " << c.n << " type " << type;
        EXPECT_LE(e.ortho, 10 * tol(t, c.n)) << "n " << c.n << " type " << type;
        EXPECT_TRUE(e.ascending);
        // Eigenvalues against the CPU backend on the same data.
        la::Eigh cpu = la::eigh_generalized(a.view, b.view, type, lower, true);
        const Shape wb(w.view.shape.begin(), w.view.shape.end() - 1);
        double worst = 0.0, scale = 1.0;
        core_test::for_each_index(wb, [&](const Shape& s) {
          for (int64_t j = 0; j < c.n; ++j) {
            const double x = at(cpu.w.view(), with(s, {j})).real();
            worst = std::max(worst, std::abs(at(w.view, with(s, {j})).real() - x));
            scale = std::max(scale, std::abs(x));
          }
        });
        EXPECT_LE(worst, tol(t, c.n) * scale) << "n " << c.n << " type " << type;
        EXPECT_TRUE(unchanged(da, a) && unchanged(db, b));
      }
}

TEST_P(CudaEighGeneralized, NotPositiveDefiniteZeroOrderAndHostData) {
  const DType t = GetParam();
  HostTensor a = make_host({2, 3, 3}, t), b = make_host({2, 3, 3}, t);
  eigh_test::fill_hermitian(a, 4);
  for (int64_t k = 0; k < 2; ++k)
    for (int64_t i = 0; i < 3; ++i) b.set({k, i, i}, k == 1 && i == 1 ? -1.0 : 1.0);
  DeviceTensor da = to_device(a), db = to_device(b);
  EXPECT_THROW(la::eigh_generalized(da.view, db.view), NotPositiveDefinite);
  la::Eigh r = la::eigh_generalized(da.view, db.view, 1, true, false, {.check_info = false});
  HostTensor info = host_of(r.info);
  EXPECT_EQ(static_cast<int>(at(info.view, {1}).real()), 3 + 2);
  HostTensor z = make_host({0, 4, 4}, t);
  DeviceTensor dz = to_device(z);
  EXPECT_EQ(la::eigh_generalized(dz.view, dz.view).w.shape(), (Shape{0, 4}));
  linalg_test::fill_kind(b, linalg_test::Kind::spd, 5);
  la::LinalgOptions o;
  o.device = Device::cuda(0);
  la::Eigh h = la::eigh_generalized(a.view, b.view, 2, true, false, o);
  ASSERT_FALSE(h.w.device().is_cuda());
  const ldl_test::GenErrors e = ldl_test::gen_errors(a.view, b.view, 2, true, h.w.view(),
                                                     h.v.view());
  EXPECT_LE(e.residual, tol(t, 3));
}

INSTANTIATE_TEST_SUITE_P(Types, CudaEighGeneralized,
                         ::testing::Values(DType::f32, DType::f64, DType::c64, DType::c128),
                         [](const auto& info) { return std::string(name(info.param)); });

}  // namespace
