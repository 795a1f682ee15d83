// gpula::linalg::eig / eigvals on the CUDA backend (cusolverDnXgeev), on device memory: checked
// by residual (a v = v diag(w)), unit columns, exact conjugate pairs for real input, and
// eigenvalues matched against the CPU backend's on the same data (order-free); orders past 32
// (67), batches (5 x 40), layouts, n = 0, NaN/Inf screening, host data run on the GPU.
//
// Built only with CUDA; run by scripts/gpu_check.sh on the lent GPU.
#include <cuda_runtime.h>
#include <gpula/gpula.h>
#include <gpula/linalg.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "support/eig.h"
#include "support/linalg_cuda.h"

namespace {

using namespace gpula;
using core_test::at;
using core_test::HostTensor;
using core_test::Layout;
using core_test::make_host;
using linalg_test::with;
namespace la = gpula::linalg;

using linalg_cuda_test::DeviceTensor;
using linalg_cuda_test::host_of;
using linalg_cuda_test::to_device;
using linalg_cuda_test::tol;
using linalg_cuda_test::unchanged;
using linalg_cuda_test::under_sanitizer;

class CudaEig : public linalg_cuda_test::GpuDTypeTest {};

DType complex_of(DType t) { return t == DType::f32 || t == DType::c64 ? DType::c64 : DType::c128; }

using linalg_cuda_test::Size;
std::vector<Size> sizes() {
  if (under_sanitizer()) return {{{2}, 20}, {{}, 40}};
  return {{{}, 1}, {{7}, 1}, {{}, 2}, {{2, 3}, 5}, {{}, 67}, {{5}, 40}, {{}, 200}};
}

TEST_P(CudaEig, MatchesResidualsAndCpuEigenvalues) {
  const DType t = GetParam();
  uint64_t seed = 1;
  for (const Size& s : sizes())
    for (Layout layout : {Layout::row, Layout::col}) {
      HostTensor a = make_host(with(s.batch, {s.n, s.n}), t, layout);
      linalg_test::fill_kind(a, linalg_test::Kind::general, seed++);
      DeviceTensor d = to_device(a);
      la::Eig r = la::eig(d.view);
      ASSERT_TRUE(r.w.device().is_cuda());
      ASSERT_EQ(r.w.shape(), with(s.batch, {s.n}));
      ASSERT_EQ(r.v.shape(), with(s.batch, {s.n, s.n}));
      EXPECT_EQ(r.w.dtype(), complex_of(t));
      EXPECT_EQ(r.v.dtype(), complex_of(t));
      HostTensor w = host_of(r.w), v = host_of(r.v), info = host_of(r.info);
      core_test::for_each_index(s.batch,
                                [&](const Shape& i) { EXPECT_EQ(info.get(i).real(), 0.0); });
      // Eigenvalues against the CPU backend on the same data (same dtype).
      const Tensor wc = la::eigvals(a.view);
      const TensorView wcv = wc.view();
      const eig_test::Errors e = eig_test::check(a.view, w.view, &v.view, &wcv, !is_complex(t));
      EXPECT_LE(e.residual, tol(t, s.n)) << "n " << s.n;
      EXPECT_LE(e.unit, tol(t, s.n)) << "n " << s.n;
      EXPECT_LE(e.w_vs_ref, 10 * tol(t, s.n)) << "n " << s.n;
      EXPECT_EQ(e.bad_pairs, 0) << "n " << s.n;
      // eigvals_only on the GPU.
      HostTensor wo = host_of(la::eigvals(d.view));
      const eig_test::Errors eo = eig_test::check(a.view, wo.view, nullptr, &wcv, !is_complex(t));
      EXPECT_LE(eo.w_vs_ref, 10 * tol(t, s.n)) << "n " << s.n;
      EXPECT_EQ(eo.bad_pairs, 0);
      EXPECT_TRUE(unchanged(d, a));
    }
}

TEST_P(CudaEig, HostDataRunsOnTheGpuAndComesBack) {
  const DType t = GetParam();
  HostTensor a = make_host({4, 6, 6}, t, Layout::strided);
  linalg_test::fill_kind(a, linalg_test::Kind::general, 11);
  la::LinalgOptions o;
  o.device = Device::cuda(0);
  la::Eig r = la::eig(a.view, false, o);
  ASSERT_FALSE(r.w.device().is_cuda());
  const eig_test::Errors e =
      eig_test::check(a.view, r.w.view(), &r.v.view(), nullptr, !is_complex(t));
  EXPECT_LE(e.residual, tol(t, 6));
  EXPECT_LE(e.unit, tol(t, 6));
  EXPECT_EQ(e.bad_pairs, 0);
}

TEST_P(CudaEig, ZeroOrderAndNanInfNeverCrash) {
  const DType t = GetParam();
  HostTensor z = make_host({3, 0, 0}, t);
  DeviceTensor dz = to_device(z);
  la::Eig r = la::eig(dz.view);
  EXPECT_EQ(r.w.shape(), (Shape{3, 0}));
  EXPECT_EQ(r.v.shape(), (Shape{3, 0, 0}));
  // Items 1 (NaN) and 2 (Inf) are screened out: NaN results, info 0; item 0 is solved.
  HostTensor a = make_host({3, 40, 40}, t);
  linalg_test::fill_kind(a, linalg_test::Kind::general, 3);
  a.set({1, 2, 1}, NAN);
  a.set({2, 39, 0}, INFINITY);
  DeviceTensor d = to_device(a);
  la::Eig n;
  ASSERT_NO_THROW(n = la::eig(d.view));
  HostTensor w = host_of(n.w), v = host_of(n.v), info = host_of(n.info);
  for (int64_t b : {1, 2}) {
    EXPECT_TRUE(std::isnan(w.get({b, 0}).real()));
    EXPECT_TRUE(std::isnan(std::abs(v.get({b, 5, 7}))));
    EXPECT_EQ(info.get({b}).real(), 0.0);
  }
  EXPECT_FALSE(std::isnan(w.get({0, 0}).real()));
  EXPECT_TRUE(unchanged(d, a));  // the screening zeroed the workspace copy, not the input
  EXPECT_NO_THROW(la::eigvals(d.view, {.check_info = false}));
}

INSTANTIATE_TEST_SUITE_P(Types, CudaEig,
                         ::testing::Values(DType::f32, DType::f64, DType::c64, DType::c128),
                         [](const auto& info) { return std::string(name(info.param)); });

}  // namespace
