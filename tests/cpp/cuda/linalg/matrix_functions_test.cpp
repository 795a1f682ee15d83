// gpula::linalg::orthogonalize, inv_root, sqrtm_psd and the grouped forms on the CUDA backend,
// on device memory: the Newton-Schulz iteration against its float64 reference (bf16 by default,
// f32 and f64 on request; the normalisation kernel over several blocks per matrix and more
// matrices than a grid's y dimension), the roots by their residuals and against the CPU
// backend, the NotPositiveDefinite rule, host data run on the GPU, grouped calls on device items;
// polar (both sides, batched, every dtype) by its residuals and against the CPU backend, the
// Hermitian-part kernel over more elements than one grid pass, empty input.
//
// Built only with CUDA; run by scripts/gpu_check.sh on the lent GPU.
#include <cuda_runtime.h>
#include <gpula/gpula.h>
#include <gpula/linalg.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "support/linalg_cuda.h"
#include "support/matrix_functions.h"

namespace {

using namespace gpula;
using core_test::eps_of;
using core_test::HostTensor;
using core_test::Layout;
using core_test::make_host;
using linalg_test::with;
namespace la = gpula::linalg;
using mf_test::random_matrix;

using linalg_cuda_test::DeviceTensor;
using linalg_cuda_test::host_of;
using linalg_cuda_test::to_device;
using linalg_cuda_test::unchanged;

using Sizes = std::vector<std::pair<int64_t, int64_t>>;  // (m, n)

class CudaOrthogonalize : public linalg_cuda_test::GpuDTypeTest {};

TEST_P(CudaOrthogonalize, MatchesTheFloat64IterationInEachComputeDtype) {
  const DType t = GetParam();
  uint64_t seed = 1;
  for (const Shape& batch : {Shape{}, Shape{3}})
    for (const auto& [m, n] : Sizes{{64, 128}, {128, 64}, {96, 96}, {5, 8}}) {
      HostTensor g =
          random_matrix(with(batch, {m, n}), t, seed++, m == n ? Layout::col : Layout::row);
      const DeviceTensor d = to_device(g);
      // (compute dtype, tolerance on the O(1) entries): bf16 rounds every product.
      std::vector<std::pair<std::optional<DType>, double>> runs = {{DType::bf16, 5e-2},
                                                                   {DType::f32, 1e-4}};
      if (t == DType::f64) runs.push_back({DType::f64, 1e-12});
      for (const auto& [dtype, tol] : runs) {
        la::OrthogonalizeOptions o;
        o.dtype = dtype;
        const Tensor u = la::orthogonalize(d.view, o);
        ASSERT_TRUE(u.device().is_cuda());
        ASSERT_EQ(u.shape(), g.view.shape);
        EXPECT_EQ(u.dtype(), t);
        const HostTensor h = host_of(u);
        const double err = mf_test::max_error(h.view, [&](const Shape& s) {
          return mf_test::newton_schulz(g.view, s, o.steps, o.coefficients, o.eps);
        });
        EXPECT_LE(err, std::max(tol, 2 * eps_of(t))) << name(*dtype) << " m " << m << " n " << n;
      }
      EXPECT_TRUE(unchanged(d, g));
    }
}

INSTANTIATE_TEST_SUITE_P(Types, CudaOrthogonalize,
                         ::testing::Values(DType::f16, DType::bf16, DType::f32, DType::f64),
                         [](const auto& info) { return std::string(name(info.param)); });

class CudaMatrixFunctions : public linalg_cuda_test::GpuTest {};

TEST_F(CudaMatrixFunctions, NormalisationOverManyBlocksAndManyMatrices) {
  // steps = 0 leaves G / (||G||_F + eps): 20000 elements a matrix (several blocks fold into one
  // norm), then 70000 matrices of 2 x 2 (past the grid's 65535 in y).
  la::OrthogonalizeOptions o;
  o.steps = 0;
  o.dtype = DType::f32;
  for (const Shape& shape : {Shape{3, 100, 200}, Shape{70000, 2, 2}}) {
    HostTensor g = random_matrix(shape, DType::f32, 5);
    const DeviceTensor d = to_device(g);
    const HostTensor u = host_of(la::orthogonalize(d.view, o));
    const double err = mf_test::max_error(u.view, [&](const Shape& s) {
      return mf_test::newton_schulz(g.view, s, 0, o.coefficients, o.eps);
    });
    EXPECT_LE(err, 1e-6) << shape[0] << " matrices";
  }
}

TEST_F(CudaMatrixFunctions, SymmetricProductsOnLargeIteratesMatchThePlainProducts) {
  // 2048 rows (tall input: iterated transposed): the default takes the lower-triangle blocks;
  // it must agree with symmetric_products = false, in f32 and in bf16.
  HostTensor g = random_matrix({4096, 2048}, DType::f32, 31);
  const DeviceTensor d = to_device(g);
  for (const auto& [dtype, tol] : {std::pair{DType::f32, 1e-4}, std::pair{DType::bf16, 3e-2}}) {
    la::OrthogonalizeOptions o;
    o.dtype = dtype;
    la::OrthogonalizeOptions plain = o;
    plain.symmetric_products = false;
    const HostTensor a = host_of(la::orthogonalize(d.view, o));
    const HostTensor b = host_of(la::orthogonalize(d.view, plain));
    EXPECT_LE(mf_test::max_diff(a.view, b.view), tol) << name(dtype);
  }
  EXPECT_TRUE(unchanged(d, g));
}

TEST_F(CudaMatrixFunctions, HostDataRunsOnTheGpuAndComesBack) {
  HostTensor g = random_matrix({2, 16, 40}, DType::f32, 9);
  la::OrthogonalizeOptions o;
  o.dtype = DType::f32;
  o.device = Device::cuda(0);
  const Tensor u = la::orthogonalize(g.view, o);
  ASSERT_FALSE(u.device().is_cuda());
  EXPECT_LE(mf_test::max_error(u.view(),
                               [&](const Shape& s) {
                                 return mf_test::newton_schulz(g.view, s, o.steps, o.coefficients,
                                                               o.eps);
                               }),
            1e-4);
  HostTensor a = make_host({3, 20, 20}, DType::f64);
  linalg_test::fill_kind(a, linalg_test::Kind::spd, 2);
  la::InvRootOptions ro;
  ro.device = Device::cuda(0);
  const Tensor r = la::inv_root(a.view, 2, 0.0, ro);
  ASSERT_FALSE(r.device().is_cuda());
  EXPECT_LE(mf_test::inv_root_error(a.view, r.view(), 2, 0.0), 1e-11);
}

class CudaRoots : public linalg_cuda_test::GpuDTypeTest {};

TEST_P(CudaRoots, ResidualsAndTheCpuBackendAgree) {
  const DType t = GetParam();
  uint64_t seed = 1;
  for (const linalg_cuda_test::Size& s :
       std::vector<linalg_cuda_test::Size>{{{7}, 16}, {{}, 100}, {{3}, 40}})
    for (int p : {1, 2, 4}) {
      HostTensor a = make_host(with(s.batch, {s.n, s.n}), t);
      linalg_test::fill_kind(a, linalg_test::Kind::spd, seed++);
      linalg_test::poison_triangle(a, true, NAN);
      const DeviceTensor d = to_device(a);
      const HostTensor r = host_of(la::inv_root(d.view, p, 0.1));
      const double tol = 2e3 * static_cast<double>(s.n + 1) * eps_of(t);
      EXPECT_LE(mf_test::inv_root_error(a.view, r.view, p, 0.1), tol) << "n " << s.n << " p " << p;
      EXPECT_LE(mf_test::max_diff(r.view, la::inv_root(a.view, p, 0.1).view()), tol);
      const HostTensor q = host_of(la::sqrtm_psd(d.view));
      EXPECT_LE(mf_test::sqrtm_error(a.view, q.view), tol) << "n " << s.n;
      EXPECT_TRUE(unchanged(d, a));
    }
}

TEST_P(CudaRoots, NotPositiveDefiniteNamesTheBatchItem) {
  const DType t = GetParam();
  HostTensor a = make_host({3, 4, 4}, t);
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t i = 0; i < 4; ++i) a.set({b, i, i}, b == 2 ? double(i) - 1.0 : 1.0 + i);
  const DeviceTensor d = to_device(a);
  try {
    la::inv_root(d.view, 2);
    ADD_FAILURE() << "no NotPositiveDefinite";
  } catch (const NotPositiveDefinite& e) {
    EXPECT_EQ(e.batch_index(), 2);
  }
  la::SqrtmPsdOptions strict;
  strict.clip = false;
  EXPECT_THROW(la::sqrtm_psd(d.view, strict), NotPositiveDefinite);
  la::InvRootOptions clip;
  clip.clip = true;
  const HostTensor r = host_of(la::inv_root(d.view, 2, 0.0, clip));
  EXPECT_TRUE(std::isfinite(core_test::at(r.view, {2, 0, 0}).real()));
}

INSTANTIATE_TEST_SUITE_P(Types, CudaRoots,
                         ::testing::Values(DType::f32, DType::f64, DType::c64, DType::c128),
                         [](const auto& info) { return std::string(name(info.param)); });

TEST_F(CudaMatrixFunctions, GroupedCallsEqualPerItemCalls) {
  std::vector<HostTensor> hosts;
  std::vector<DeviceTensor> devs;
  std::vector<TensorView> views;
  for (const Shape& shape :
       {Shape{8, 8}, Shape{40, 40}, Shape{8, 8}, Shape{2, 40, 40}, Shape{8, 8}}) {
    hosts.push_back(make_host(shape, DType::f32));
    linalg_test::fill_kind(hosts.back(), linalg_test::Kind::spd, hosts.size());
    devs.push_back(to_device(hosts.back()));
    views.push_back(devs.back().view);
  }
  // Stacked and lone items may take different GPU paths (syevjBatched or Xsyevd, batched or
  // single cuBLASLt kernels): equal to float32 rounding; eigenvalues only (eigenvector signs are
  // the solver's).
  la::OrthogonalizeOptions f32;
  f32.dtype = DType::f32;
  const std::vector<la::Eigh> e = la::eigh(views);
  const std::vector<la::Factor> c = la::cholesky(views);
  const std::vector<Tensor> r = la::inv_root(views, 4);
  const std::vector<Tensor> u = la::orthogonalize(views, f32);
  auto diff = [](const Tensor& x, const Tensor& y) {
    return mf_test::max_diff(host_of(x).view, host_of(y).view);
  };
  for (std::size_t i = 0; i < views.size(); ++i) {
    ASSERT_TRUE(e[i].w.device().is_cuda());
    EXPECT_EQ(e[i].v.shape(), views[i].shape);
    EXPECT_LE(diff(e[i].w, la::eigh(views[i]).w), 1e-4) << "item " << i;
    EXPECT_LE(diff(c[i].value, la::cholesky(views[i]).value), 1e-4) << "item " << i;
    EXPECT_LE(diff(r[i], la::inv_root(views[i], 4)), 1e-4) << "item " << i;
    EXPECT_LE(diff(u[i], la::orthogonalize(views[i], f32)), 1e-4) << "item " << i;
  }
}

class CudaPolar : public linalg_cuda_test::GpuDTypeTest {};

TEST_P(CudaPolar, ResidualsAndTheCpuBackendAgree) {
  const DType t = GetParam();
  const bool dbl = t == DType::f64 || t == DType::c128;
  uint64_t seed = 1;
  for (const la::PolarSide side : {la::PolarSide::right, la::PolarSide::left})
    for (const Shape& batch : {Shape{}, Shape{5}})
      for (const auto& [m, n] : Sizes{{40, 24}, {24, 40}, {33, 33}, {1, 6}}) {
        HostTensor a =
            random_matrix(with(batch, {m, n}), t, seed, seed % 2 ? Layout::row : Layout::col);
        ++seed;
        const DeviceTensor d = to_device(a);
        const la::Polar r = la::polar(d.view, side);
        ASSERT_TRUE(r.u.device().is_cuda());
        ASSERT_TRUE(r.p.device().is_cuda());
        const HostTensor u = host_of(r.u), p = host_of(r.p);
        const mf_test::PolarErrors e = mf_test::polar_errors(a.view, u.view, p.view, side);
        const double tol = dbl ? 1e-11 : 2e-4;
        const std::string where = std::string(side == la::PolarSide::right ? "right " : "left ") +
                                  std::to_string(m) + " x " + std::to_string(n);
        EXPECT_LE(e.product, tol) << where;
        EXPECT_LE(e.ortho, tol) << where;
        EXPECT_EQ(e.herm, 0.0) << where;
        EXPECT_LE(e.ref, tol) << where;
        EXPECT_GE(e.min_eig, -tol) << where;
        const la::Polar c = la::polar(a.view, side);
        EXPECT_LE(mf_test::max_diff(p.view, c.p.view()), tol) << where;
        EXPECT_TRUE(unchanged(d, a));
      }
}

INSTANTIATE_TEST_SUITE_P(Types, CudaPolar,
                         ::testing::Values(DType::f32, DType::f64, DType::c64, DType::c128),
                         [](const auto& info) { return std::string(name(info.param)); });

TEST_F(CudaMatrixFunctions, PolarOfManyMatricesEmptyInputAndHostData) {
  // 3000 matrices of 4 x 3 (the batched SVD; the Hermitian-part kernel over 27000 elements).
  HostTensor a = random_matrix({3000, 4, 3}, DType::f64, 3);
  const DeviceTensor d = to_device(a);
  const la::Polar r = la::polar(d.view);
  const HostTensor u = host_of(r.u), p = host_of(r.p);
  const mf_test::PolarErrors e =
      mf_test::polar_errors(a.view, u.view, p.view, la::PolarSide::right);
  EXPECT_LE(e.product, 1e-11);
  EXPECT_EQ(e.herm, 0.0);
  for (const Shape& shape : {Shape{0, 3}, Shape{2, 0, 3}, Shape{0, 4, 4}}) {
    HostTensor h = make_host(shape, DType::f32);
    const DeviceTensor z = to_device(h);
    const la::Polar zr = la::polar(z.view);
    EXPECT_EQ(zr.u.shape(), shape);
    EXPECT_EQ(zr.p.shape(),
              with(Shape(shape.begin(), shape.end() - 2), {shape.back(), shape.back()}));
    EXPECT_EQ(mf_test::max_diff(host_of(zr.p).view, make_host(zr.p.shape(), DType::f32).view), 0.0);
  }
  HostTensor b = random_matrix({3, 12, 7}, DType::c128, 4);
  CommonOptions o;
  o.device = Device::cuda(0);
  const la::Polar hr = la::polar(b.view, la::PolarSide::left, o);
  ASSERT_FALSE(hr.u.device().is_cuda());
  const mf_test::PolarErrors he =
      mf_test::polar_errors(b.view, hr.u.view(), hr.p.view(), la::PolarSide::left);
  EXPECT_LE(he.product, 1e-11);
  EXPECT_LE(he.ortho, 1e-11);
}

}  // namespace
