// gpula::distributed over cusolverMg on one device (and on every visible device), against the
// single-GPU gpula::linalg results on the same host inputs. Several column blocks per device
// (block_size below n) exercise the block-cyclic copies.
#include <gpula/gpula.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "support/linalg_cuda.h"

namespace {

namespace dist = gpula::distributed;
using linalg_cuda_test::GpuTest;

struct HostMatrix {
  std::vector<double> v;
  int64_t r, c;
  gpula::TensorView view() {
    return {v.data(), gpula::DType::f64, {r, c}, {c, 1}, gpula::Device{}};
  }
};

HostMatrix random_matrix(int64_t r, int64_t c, unsigned seed, bool spd) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  HostMatrix m{std::vector<double>(r * c), r, c};
  for (auto& x : m.v) x = u(rng);
  if (spd) {  // a a^T + n I
    std::vector<double> s(r * r, 0.0);
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < r; ++j) {
        for (int64_t k = 0; k < c; ++k) s[i * r + j] += m.v[i * c + k] * m.v[j * c + k];
        if (i == j) s[i * r + j] += static_cast<double>(r);
      }
    return {s, r, r};
  }
  return m;
}

double max_diff(const gpula::Tensor& x, const gpula::Tensor& y) {
  EXPECT_EQ(x.shape(), y.shape());
  const auto hx = linalg_cuda_test::host_of(x), hy = linalg_cuda_test::host_of(y);
  const auto* px = static_cast<const double*>(hx.view.data);
  const auto* py = static_cast<const double*>(hy.view.data);
  double d = 0;
  for (int64_t i = 0; i < x.view().numel(); ++i) d = std::max(d, std::abs(px[i] - py[i]));
  return d;
}

gpula::linalg::LinalgOptions on_gpu() {
  gpula::linalg::LinalgOptions o;
  o.device = gpula::Device::cuda(0);
  o.blocking = true;
  return o;
}

const dist::MgOptions kOneDevice{.devices = {0}, .block_size = 64};

class DistributedMgCuda : public GpuTest {};

TEST_F(DistributedMgCuda, CholeskyMatchesSingleGpu) {
  for (bool lower : {true, false}) {
    HostMatrix a = random_matrix(300, 300, 1, true);
    const std::vector<double> before = a.v;
    const gpula::Tensor l = dist::cholesky(a.view(), lower, kOneDevice);
    const gpula::Tensor ref = gpula::linalg::cholesky(a.view(), lower, on_gpu()).value;
    EXPECT_LT(max_diff(l, ref), 1e-10 * 300);
    EXPECT_EQ(a.v, before);
  }
}

TEST_F(DistributedMgCuda, SolveGenAndPosMatchSingleGpu) {
  HostMatrix g = random_matrix(300, 300, 2, false);
  HostMatrix p = random_matrix(300, 300, 3, true);
  HostMatrix b = random_matrix(300, 5, 4, false);
  gpula::linalg::SolveOptions o;
  o.device = gpula::Device::cuda(0);
  o.blocking = true;
  const gpula::Tensor xg =
      dist::solve(g.view(), b.view(), gpula::linalg::Assume::gen, false, kOneDevice);
  EXPECT_LT(max_diff(xg, gpula::linalg::solve(g.view(), b.view(), o)), 1e-8);
  o.assume_a = gpula::linalg::Assume::pos;
  for (bool lower : {true, false}) {
    o.lower = lower;
    const gpula::Tensor xp =
        dist::solve(p.view(), b.view(), gpula::linalg::Assume::pos, lower, kOneDevice);
    EXPECT_LT(max_diff(xp, gpula::linalg::solve(p.view(), b.view(), o)), 1e-10);
  }
  // A 1-D right-hand side gives a 1-D x.
  gpula::TensorView b1{b.v.data(), gpula::DType::f64, {300}, {5}, gpula::Device{}};
  const gpula::Tensor x1 = dist::solve(g.view(), b1, gpula::linalg::Assume::gen, false, kOneDevice);
  EXPECT_EQ(x1.shape(), (gpula::Shape{300}));
}

TEST_F(DistributedMgCuda, EighMatchesSingleGpu) {
  HostMatrix a = random_matrix(200, 200, 5, false);
  for (int64_t i = 0; i < 200; ++i)  // symmetrize
    for (int64_t j = 0; j < i; ++j) a.v[j * 200 + i] = a.v[i * 200 + j];
  for (bool lower : {true, false}) {
    const gpula::linalg::Eigh r = dist::eigh(a.view(), lower, false, kOneDevice);
    const gpula::linalg::Eigh ref = gpula::linalg::eigh(a.view(), lower, false, on_gpu());
    EXPECT_LT(max_diff(r.w, ref.w), 1e-10 * 200);
    // a v = v diag(w), column by column.
    const auto* v = static_cast<const double*>(r.v.data());
    const auto* w = static_cast<const double*>(r.w.data());
    double res = 0;
    for (int64_t i = 0; i < 200; ++i)
      for (int64_t j = 0; j < 200; ++j) {
        double av = 0;
        for (int64_t k = 0; k < 200; ++k) av += a.v[i * 200 + k] * v[k * 200 + j];
        res = std::max(res, std::abs(av - v[i * 200 + j] * w[j]));
      }
    EXPECT_LT(res, 1e-9 * 200);
  }
  const gpula::linalg::Eigh wo = dist::eigh(a.view(), true, true, kOneDevice);
  EXPECT_FALSE(wo.v.defined());
}

TEST_F(DistributedMgCuda, EveryVisibleDevice) {
  HostMatrix p = random_matrix(257, 257, 6, true);
  HostMatrix b = random_matrix(257, 3, 7, false);
  const gpula::Tensor x =
      dist::solve(p.view(), b.view(), gpula::linalg::Assume::pos, true, {.block_size = 32});
  gpula::linalg::SolveOptions o;
  o.assume_a = gpula::linalg::Assume::pos;
  o.lower = true;
  EXPECT_LT(max_diff(x, gpula::linalg::solve(p.view(), b.view(), o)), 1e-10);
}

TEST_F(DistributedMgCuda, FailuresRaiseTypedErrors) {
  HostMatrix a = random_matrix(100, 100, 8, true);
  a.v[50 * 100 + 50] = -1e6;  // not positive definite
  // cusolverMgPotrf answers a matrix that is not positive definite with
  // CUSOLVER_STATUS_INTERNAL_ERROR rather than an info value (seen on the H200): a typed
  // CusolverError naming the call, never a crash or a silent result.
  EXPECT_THROW(dist::cholesky(a.view(), true, kOneDevice), gpula::Error);
  HostMatrix s = random_matrix(100, 100, 9, false);
  for (int64_t j = 0; j < 100; ++j) s.v[10 * 100 + j] = 0.0;  // a zero row: singular
  HostMatrix b = random_matrix(100, 1, 10, false);
  EXPECT_THROW(dist::solve(s.view(), b.view(), gpula::linalg::Assume::gen, false, kOneDevice),
               gpula::SingularMatrix);
  EXPECT_THROW(dist::cholesky(a.view(), true, {.devices = {4096}}), gpula::InvalidArgument);
}

}  // namespace
