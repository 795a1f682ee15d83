// gpula::linalg::eigh / eigvalsh on the CUDA backend, on device memory: both GPU paths
// (cusolverDn<t>syevjBatched for batches of order <= 32, cusolverDnXsyevd otherwise), checked
// by reconstruction (a v = v diag(w), v^H v = I) and against the CPU backend's eigenvalues on
// the same data; triangles, layouts, n = 0, NaN, host data run on the GPU.
//
// Built only with CUDA; run by scripts/gpu_check.sh on the lent GPU.
#include <cuda_runtime.h>
#include <gpula/gpula.h>
#include <gpula/linalg.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "support/eigh.h"
#include "support/linalg_cuda.h"

namespace {

using namespace gpula;
using core_test::at;
using core_test::eps_of;
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

class CudaEigh : public linalg_cuda_test::GpuDTypeTest {};

using linalg_cuda_test::Size;
// Batched small (syevjBatched), n = 1 batched, a small batch past the Jacobi limit (looped
// Xsyevd), one large matrix (Xsyevd). {37}, 100: the batched path for order > 32
// (cusolverDnXsyevBatched).
std::vector<Size> sizes() {
  if (under_sanitizer()) return {{{20}, 32}, {{2}, 40}, {{}, 64}};
  return {{{500}, 32}, {{7}, 1}, {{2, 3}, 5}, {{3}, 100}, {{}, 384}, {{}, 1}, {{37}, 100}};
}

TEST_P(CudaEigh, BothPathsMatchReconstructionAndCpu) {
  const DType t = GetParam();
  uint64_t seed = 1;
  for (const Size& s : sizes())
    for (bool lower : {true, false}) {
      HostTensor a = make_host(with(s.batch, {s.n, s.n}), t, lower ? Layout::row : Layout::col);
      eigh_test::fill_hermitian(a, seed++);
      linalg_test::poison_triangle(a, lower, NAN);
      DeviceTensor d = to_device(a);
      la::Eigh r = la::eigh(d.view, lower);
      ASSERT_TRUE(r.w.device().is_cuda());
      HostTensor w = host_of(r.w), v = host_of(r.v);
      const eigh_test::Errors e = eigh_test::check(a.view, lower ? 1 : 0, w.view, &v.view);
      EXPECT_LE(e.residual, tol(t, s.n)) << "n " << s.n << " lower " << lower;
      EXPECT_LE(e.ortho, tol(t, s.n)) << "n " << s.n << " lower " << lower;
      EXPECT_TRUE(e.ascending) << "n " << s.n;
      // Eigenvalues against the CPU backend on the same data.
      Tensor wc = la::eigvalsh(a.view, lower);
      const TensorView wcv = wc.view();
      const eigh_test::Errors ec = eigh_test::check(a.view, lower ? 1 : 0, w.view, nullptr, &wcv);
      EXPECT_LE(ec.w_vs_ref, tol(t, s.n)) << "n " << s.n;
      // eigvals_only on the GPU.
      HostTensor wo = host_of(la::eigvalsh(d.view, lower));
      const eigh_test::Errors eo = eigh_test::check(a.view, lower ? 1 : 0, wo.view, nullptr, &wcv);
      EXPECT_LE(eo.w_vs_ref, tol(t, s.n)) << "n " << s.n;
      EXPECT_TRUE(unchanged(d, a));
    }
}

TEST_P(CudaEigh, HostDataRunsOnTheGpuAndComesBack) {
  const DType t = GetParam();
  HostTensor a = make_host({4, 6, 6}, t, Layout::strided);
  eigh_test::fill_hermitian(a, 11);
  la::LinalgOptions o;
  o.device = Device::cuda(0);
  la::Eigh r = la::eigh(a.view, true, false, o);
  ASSERT_FALSE(r.w.device().is_cuda());
  const eigh_test::Errors e = eigh_test::check(a.view, 1, r.w.view(), &r.v.view());
  EXPECT_LE(e.residual, tol(t, 6));
  EXPECT_LE(e.ortho, tol(t, 6));
}

TEST_P(CudaEigh, ZeroOrderAndNanNeverCrash) {
  const DType t = GetParam();
  HostTensor z = make_host({3, 0, 0}, t);
  DeviceTensor dz = to_device(z);
  la::Eigh r = la::eigh(dz.view);
  EXPECT_EQ(r.w.shape(), (Shape{3, 0}));
  for (const Size& s : std::vector<Size>{{{4}, 6}, {{}, 40}}) {
    HostTensor a = make_host(with(s.batch, {s.n, s.n}), t);
    eigh_test::fill_hermitian(a, 3);
    a.set(with(Shape(s.batch.size(), 0), {2, 1}), NAN);
    DeviceTensor d = to_device(a);
    try {
      la::Eigh n = la::eigh(d.view);
      HostTensor w = host_of(n.w);
      (void)w;
    } catch (const LinAlgError&) {
    }
    EXPECT_NO_THROW(la::eigh(d.view, true, false, {.check_info = false}));
  }
}

INSTANTIATE_TEST_SUITE_P(Types, CudaEigh,
                         ::testing::Values(DType::f32, DType::f64, DType::c64, DType::c128),
                         [](const auto& info) { return std::string(name(info.param)); });

}  // namespace
