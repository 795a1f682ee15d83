// gpula::linalg::svd / svdvals on the CUDA backend, on device memory: every method (gesvd,
// gesvdj, gesvdjBatched through gesvdj/automatic on batches of m, n <= 32, gesvdp, gesvda) on
// tall, wide and square matrices past 32, batches of 40 x 33x33 (looped) and 50 x 16x16
// (gesvdjBatched), all dtypes; checked by reconstruction and orthonormality and against the CPU
// backend's singular values on the same data; full and economy, values only, empty, NaN, host
// data run on the GPU, gesvda's economy limit.
//
// Built only with CUDA; run by scripts/gpu_check.sh on the lent GPU.
#include <cuda_runtime.h>
#include <gpula/gpula.h>
#include <gpula/linalg.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "support/svd.h"
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

const char* method_name(la::SvdMethod m) {
  switch (m) {
    case la::SvdMethod::gesvd:
      return "gesvd";
    case la::SvdMethod::gesvdj:
      return "gesvdj";
    case la::SvdMethod::gesvdp:
      return "gesvdp";
    case la::SvdMethod::gesvda:
      return "gesvda";
    case la::SvdMethod::jacobi_batched:
      return "jacobi_batched";
    default:
      return "automatic";
  }
}

struct Size {
  Shape batch;
  int64_t m, n;
};
std::vector<Size> sizes() {
  if (under_sanitizer()) return {{{}, 40, 33}, {{4}, 16, 16}, {{2}, 20, 36}};
  return {{{}, 64, 48}, {{}, 48, 64}, {{}, 70, 20}, {{}, 20, 70}, {{}, 1, 1},  {{}, 300, 257},
          {{40}, 33, 33}, {{50}, 16, 16}, {{6}, 32, 9}, {{6}, 9, 32}, {{3}, 40, 50}};
}

// Tolerance of a method: gesvda works on a^H a (approximate), gesvdp perturbs tiny singular
// values; random matrices are well conditioned, so both stay within a small multiple.
double method_tol(la::SvdMethod m, DType t, int64_t n) {
  // gesvda is approximate (through a^H a): about single precision also for double data.
  if (m == la::SvdMethod::gesvda) return std::max(300.0 * tol(t, n), 1e-8);
  if (m == la::SvdMethod::gesvdp) return 10.0 * tol(t, n);
  return tol(t, n);
}

struct MethodType {
  la::SvdMethod method;
  DType dtype;
};
class CudaSvd : public ::testing::TestWithParam<MethodType> {
 protected:
  void SetUp() override { linalg_cuda_test::skip_without_gpu(); }
};

TEST_P(CudaSvd, MatchesReconstructionAndCpu) {
  const auto [method, t] = GetParam();
  uint64_t seed = 1;
  for (const Size& s : sizes())
    for (bool full : {false, true}) {
      if (method == la::SvdMethod::gesvda && full && s.m != s.n) continue;  // economy only
      if (method == la::SvdMethod::jacobi_batched && full && s.m != s.n) continue;  // likewise
      if (method == la::SvdMethod::jacobi_batched && std::max(s.m, s.n) > 128) continue;
      const int64_t k = std::min(s.m, s.n);
      HostTensor a = make_host(with(s.batch, {s.m, s.n}), t, full ? Layout::col : Layout::row);
      core_test::Filler(seed++).fill(a.view);
      DeviceTensor d = to_device(a);
      const std::string what = std::string(method_name(method)) + " " + core_test::str(t) + " batch " +
                               std::to_string(s.batch.empty() ? 1 : s.batch[0]) + " x " +
                               std::to_string(s.m) + "x" + std::to_string(s.n) +
                               (full ? " full" : " economy");
      la::Svd r = la::svd(d.view, full, true, method);
      ASSERT_TRUE(r.s.device().is_cuda()) << what;
      ASSERT_EQ(r.u.shape(), with(s.batch, {s.m, full ? s.m : k})) << what;
      ASSERT_EQ(r.vh.shape(), with(s.batch, {full ? s.n : k, s.n})) << what;
      HostTensor sv = host_of(r.s), u = host_of(r.u), vh = host_of(r.vh);
      const double tl = method_tol(method, t, std::max(s.m, s.n));
      // Singular values against the CPU backend on the same data.
      Tensor sc = la::svdvals(a.view);
      const TensorView scv = sc.view();
      const svd_test::Errors e = svd_test::check(a.view, sv.view, &u.view, &vh.view, &scv);
      EXPECT_LE(e.recon, tl) << what;
      EXPECT_LE(e.ortho_u, tl) << what;
      EXPECT_LE(e.ortho_v, tl) << what;
      EXPECT_LE(e.s_vs_ref, tl) << what;
      EXPECT_TRUE(e.descending) << what;
      // Values only on the GPU.
      HostTensor so = host_of(la::svdvals(d.view, method));
      EXPECT_LE(svd_test::check(a.view, so.view, nullptr, nullptr, &scv).s_vs_ref, tl) << what;
      la::Svd only = la::svd(d.view, full, false, method);
      EXPECT_FALSE(only.u.defined());
      HostTensor info = host_of(r.info);
      for (int64_t b = 0; b < info.view.numel(); ++b)
        EXPECT_EQ(static_cast<const int32_t*>(info.view.data)[b], 0) << what;
      EXPECT_TRUE(unchanged(d, a)) << what;
    }
}

std::vector<MethodType> method_types() {
  std::vector<MethodType> r;
  for (la::SvdMethod m : {la::SvdMethod::automatic, la::SvdMethod::gesvd, la::SvdMethod::gesvdj,
                          la::SvdMethod::gesvdp, la::SvdMethod::gesvda})
    for (DType t : {DType::f32, DType::f64, DType::c64, DType::c128}) r.push_back({m, t});
  for (DType t : {DType::f32, DType::f64}) r.push_back({la::SvdMethod::jacobi_batched, t});
  return r;
}

INSTANTIATE_TEST_SUITE_P(Methods, CudaSvd, ::testing::ValuesIn(method_types()),
                         [](const auto& info) {
                           return std::string(method_name(info.param.method)) + "_" +
                                  core_test::str(info.param.dtype);
                         });

class CudaSvdMisc : public linalg_cuda_test::GpuTest {};

TEST_F(CudaSvdMisc, ChoiceIsLogged) {
  // automatic on a batch of 16x16 is gesvdjBatched, on one matrix gesvdj, on 40 x 33x33 the
  // gesvdj loop; gesvda on a batch is gesvdaStridedBatched.
  std::vector<std::string> lines;
  la::LinalgOptions o;
  o.logger = [&](LogLevel, const std::string& s) { lines.push_back(s); };
  auto routine = [&](const Shape& shape, la::SvdMethod m) {
    lines.clear();
    HostTensor a = make_host(shape, DType::f64);
    core_test::Filler(3).fill(a.view);
    DeviceTensor d = to_device(a);
    la::svd(d.view, false, true, m, o);
    for (const std::string& l : lines)
      if (l.find("svd: ") != std::string::npos) return l;
    return std::string("(none)");
  };
  EXPECT_NE(routine({50, 16, 16}, la::SvdMethod::automatic).find("gesvdjBatched"),
            std::string::npos);
  const std::string one = routine({40, 40}, la::SvdMethod::automatic);
  EXPECT_NE(one.find("gesvdj"), std::string::npos) << one;
  EXPECT_EQ(one.find("Batched"), std::string::npos) << one;
  EXPECT_NE(routine({4, 33, 33}, la::SvdMethod::gesvda).find("gesvdaStridedBatched"),
            std::string::npos);
  EXPECT_NE(routine({4, 33, 20}, la::SvdMethod::gesvd).find("cusolverDnXgesvd"),
            std::string::npos);
  // Batches past 32 that fit one block: gpula's Jacobi kernel (tall and wide).
  EXPECT_NE(routine({4, 40, 40}, la::SvdMethod::automatic).find("Jacobi kernel"),
            std::string::npos);
  EXPECT_NE(routine({3, 50, 70}, la::SvdMethod::automatic).find("Jacobi kernel"),
            std::string::npos);
}

TEST_F(CudaSvdMisc, JacobiBatchedTakesRealMatricesThatFit) {
  HostTensor c = make_host({3, 40, 40}, DType::c64);
  core_test::Filler(5).fill(c.view);
  DeviceTensor dc = to_device(c);
  EXPECT_THROW(la::svd(dc.view, false, true, la::SvdMethod::jacobi_batched), NotSupported);
  HostTensor big = make_host({2, 600, 600}, DType::f64);  // 5.8 MB: past shared memory
  DeviceTensor db = to_device(big);
  EXPECT_THROW(la::svd(db.view, false, true, la::SvdMethod::jacobi_batched), NotSupported);
  HostTensor a = make_host({3, 40, 20}, DType::f32);
  core_test::Filler(6).fill(a.view);
  DeviceTensor da = to_device(a);
  EXPECT_THROW(la::svd(da.view, true, true, la::SvdMethod::jacobi_batched), NotSupported);
  HostTensor f = make_host({3, 40, 40}, DType::f32);  // square: full is economy
  core_test::Filler(7).fill(f.view);
  DeviceTensor df = to_device(f);
  la::Svd r = la::svd(df.view, true, true, la::SvdMethod::jacobi_batched);
  HostTensor s = host_of(r.s), u = host_of(r.u), vh = host_of(r.vh);
  const svd_test::Errors e = svd_test::check(f.view, s.view, &u.view, &vh.view);
  EXPECT_LE(e.recon, tol(DType::f32, 40));
}

TEST_F(CudaSvdMisc, GesvdaIsEconomyOnly) {
  HostTensor a = make_host({40, 20}, DType::f32);
  core_test::Filler(5).fill(a.view);
  DeviceTensor d = to_device(a);
  EXPECT_THROW(la::svd(d.view, true, true, la::SvdMethod::gesvda), NotSupported);
  EXPECT_NO_THROW(la::svd(d.view, true, false, la::SvdMethod::gesvda));  // values only is fine
}

TEST_F(CudaSvdMisc, HostDataRunsOnTheGpuAndComesBack) {
  for (DType t : {DType::f64, DType::c64}) {
    HostTensor a = make_host({4, 9, 6}, t, Layout::strided);
    core_test::Filler(11).fill(a.view);
    la::LinalgOptions o;
    o.device = Device::cuda(0);
    la::Svd r = la::svd(a.view, false, true, la::SvdMethod::automatic, o);
    ASSERT_FALSE(r.s.device().is_cuda());
    const svd_test::Errors e = svd_test::check(a.view, r.s.view(), &r.u.view(), &r.vh.view());
    EXPECT_LE(e.recon, tol(t, 9));
    EXPECT_LE(e.ortho_u, tol(t, 9));
    EXPECT_LE(e.s_vs_ref, tol(t, 9));
  }
}

TEST_F(CudaSvdMisc, EmptyAndNanNeverCrash) {
  HostTensor z = make_host({3, 5, 0}, DType::f32);
  DeviceTensor dz = to_device(z);
  la::Svd r = la::svd(dz.view, true);
  ASSERT_EQ(r.u.shape(), (Shape{3, 5, 5}));
  HostTensor u = host_of(r.u);
  EXPECT_EQ(at(u.view, {2, 4, 4}).real(), 1.0);
  EXPECT_EQ(at(u.view, {2, 4, 3}).real(), 0.0);
  for (la::SvdMethod m : {la::SvdMethod::automatic, la::SvdMethod::gesvd, la::SvdMethod::gesvdj,
                          la::SvdMethod::gesvdp, la::SvdMethod::gesvda})
    for (const Size& s : std::vector<Size>{{{4}, 6, 5}, {{}, 40, 36}}) {
      HostTensor a = make_host(with(s.batch, {s.m, s.n}), DType::f64);
      core_test::Filler(3).fill(a.view);
      a.set(with(Shape(s.batch.size(), 0), {2, 1}), NAN);
      DeviceTensor d = to_device(a);
      try {
        la::Svd n = la::svd(d.view, false, true, m);
        HostTensor sv = host_of(n.s);
        (void)sv;
      } catch (const LinAlgError&) {
      }
      EXPECT_NO_THROW(la::svd(d.view, false, true, m, {.check_info = false}))
          << method_name(m);
    }
}

}  // namespace
