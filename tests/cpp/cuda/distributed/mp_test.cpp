// gpula::distributed's multi-process engines (cuSOLVERMp / cuBLASMp over NCCL) with a 1-rank
// communicator on one GPU (a 1x1 grid: the local piece is the whole column-major matrix), on
// n = 300 with 64 x 64 blocks, against the single-GPU gpula::linalg / gpula::matmul results.
// Skipped where the build has no Mp engines (dist::has_mp() false).
#include <gpula/gpula.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "support/linalg_cuda.h"

namespace {

namespace dist = gpula::distributed;
using gpula::DType;
using linalg_cuda_test::GpuTest;

// One communicator per process (cuSOLVERMp allows one handle per process and GPU).
const dist::Communicator& comm() {
  static const dist::Communicator c =
      dist::Communicator::create(0, 1, dist::Communicator::unique_id(), 0);
  return c;
}

class DistributedMpCuda : public GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    if (!dist::has_mp()) GTEST_SKIP() << "built without cuSOLVERMp / cuBLASMp";
  }
};

// Row-major host matrix of doubles.
struct Host {
  int64_t r = 0, c = 0;
  std::vector<double> v;
  double& at(int64_t i, int64_t j) { return v[i * c + j]; }
  double at(int64_t i, int64_t j) const { return v[i * c + j]; }
  gpula::TensorView view() { return {v.data(), DType::f64, {r, c}, {c, 1}, gpula::Device{}}; }
};

Host random(int64_t r, int64_t c, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  Host h{r, c, std::vector<double>(r * c)};
  for (auto& x : h.v) x = u(rng);
  return h;
}

Host spd(int64_t n, unsigned seed) {
  const Host x = random(n, n, seed);
  Host s{n, n, std::vector<double>(n * n, 0.0)};
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t k = 0; k < n; ++k) s.at(i, j) += x.at(i, k) * x.at(j, k);
      if (i == j) s.at(i, j) += static_cast<double>(n);
    }
  return s;
}

uint16_t to_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);  // round to nearest even
  return static_cast<uint16_t>(u >> 16);
}
float from_bf16(uint16_t b) {
  const uint32_t u = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// A device column-major copy of h in dtype t with leading dimension ld (>= rows).
struct DevCM {
  std::shared_ptr<void> mem;
  int64_t r, c, ld;
  DType t;
  gpula::TensorView view() const {
    return {mem.get(), t, {r, c}, {1, ld}, gpula::Device::cuda(0)};
  }
};

DevCM upload(const Host& h, DType t, int64_t pad = 0) {
  const int64_t ld = std::max<int64_t>(1, h.r + pad);
  const std::size_t es = gpula::size_of(t);
  std::vector<std::byte> buf(static_cast<std::size_t>(ld * std::max<int64_t>(h.c, 1)) * es);
  for (int64_t j = 0; j < h.c; ++j)
    for (int64_t i = 0; i < h.r; ++i) {
      std::byte* p = buf.data() + static_cast<std::size_t>(i + j * ld) * es;
      const double x = h.at(i, j);
      if (t == DType::f64) {
        std::memcpy(p, &x, 8);
      } else if (t == DType::f32) {
        const float f = static_cast<float>(x);
        std::memcpy(p, &f, 4);
      } else {
        const uint16_t b = to_bf16(static_cast<float>(x));
        std::memcpy(p, &b, 2);
      }
    }
  void* d = nullptr;
  CUDA_OK(cudaMalloc(&d, buf.size()));
  CUDA_OK(cudaMemcpy(d, buf.data(), buf.size(), cudaMemcpyHostToDevice));
  return {std::shared_ptr<void>(d, [](void* q) { cudaFree(q); }), h.r, h.c, ld, t};
}

Host download(const DevCM& d) {
  const std::size_t es = gpula::size_of(d.t);
  std::vector<std::byte> buf(static_cast<std::size_t>(d.ld * std::max<int64_t>(d.c, 1)) * es);
  CUDA_OK(cudaMemcpy(buf.data(), d.mem.get(), buf.size(), cudaMemcpyDeviceToHost));
  Host h{d.r, d.c, std::vector<double>(d.r * d.c)};
  for (int64_t j = 0; j < d.c; ++j)
    for (int64_t i = 0; i < d.r; ++i) {
      const std::byte* p = buf.data() + static_cast<std::size_t>(i + j * d.ld) * es;
      if (d.t == DType::f64) {
        std::memcpy(&h.at(i, j), p, 8);
      } else if (d.t == DType::f32) {
        float f;
        std::memcpy(&f, p, 4);
        h.at(i, j) = f;
      } else {
        uint16_t b;
        std::memcpy(&b, p, 2);
        h.at(i, j) = from_bf16(b);
      }
    }
  return h;
}

// A row-major double copy of a (host or device) gpula result Tensor of dtype f32/f64.
Host host_doubles(const gpula::Tensor& t) {
  const auto h = linalg_cuda_test::host_of(t);
  const int64_t r = t.shape()[0], c = t.shape().size() > 1 ? t.shape()[1] : 1;
  Host out{r, c, std::vector<double>(r * c)};
  for (int64_t i = 0; i < r * c; ++i)
    out.v[i] = t.dtype() == DType::f64 ? static_cast<const double*>(h.view.data)[i]
                                        : static_cast<const float*>(h.view.data)[i];
  return out;
}

double max_diff(const Host& x, const Host& y) {
  EXPECT_EQ(x.r, y.r);
  EXPECT_EQ(x.c, y.c);
  double d = 0;
  for (std::size_t i = 0; i < x.v.size(); ++i) d = std::max(d, std::abs(x.v[i] - y.v[i]));
  return d;
}

gpula::linalg::LinalgOptions on_gpu() {
  gpula::linalg::LinalgOptions o;
  o.device = gpula::Device::cuda(0);
  o.blocking = true;
  return o;
}

constexpr int64_t kN = 300;
const dist::BlockCyclic kLayout{.m = kN, .n = kN, .mb = 64, .nb = 64};

double tol_of(DType t) { return t == DType::f64 ? 1e-10 : 2e-3; }

TEST_F(DistributedMpCuda, CommunicatorOfOneRank) {
  EXPECT_TRUE(comm().defined());
  EXPECT_EQ(comm().rank(), 0);
  EXPECT_EQ(comm().size(), 1);
  EXPECT_EQ(comm().device(), 0);
  // A 2x1 grid does not fit 1 process.
  const dist::BlockCyclic two{.m = kN, .n = kN, .mb = 64, .nb = 64, .nprow = 2};
  const DevCM a = upload(spd(8, 1), DType::f64);
  EXPECT_THROW(dist::cholesky(comm(), a.view(), two), gpula::InvalidArgument);
}

TEST_F(DistributedMpCuda, CholeskyMatchesSingleGpu) {
  Host a = spd(kN, 2);
  for (DType t : {DType::f64, DType::f32})
    for (bool lower : {true, false}) {
      DevCM d = upload(a, t, /*pad=*/lower ? 0 : 8);  // a padded leading dimension too
      dist::cholesky(comm(), d.view(), kLayout, lower);
      Host l = download(d);
      for (int64_t i = 0; i < kN; ++i)  // the other triangle keeps its input: zero it here
        for (int64_t j = 0; j < kN; ++j)
          if (lower ? j > i : j < i) l.at(i, j) = 0.0;
      const Host ref = host_doubles(gpula::linalg::cholesky(a.view(), lower, on_gpu()).value);
      EXPECT_LT(max_diff(l, ref), tol_of(t) * kN) << "lower " << lower;
    }
}

TEST_F(DistributedMpCuda, SolveGenAndPosMatchSingleGpu) {
  Host g = random(kN, kN, 3), p = spd(kN, 4), b = random(kN, 5, 5);
  const dist::BlockCyclic lb{.m = kN, .n = 5, .mb = 64, .nb = 64};
  gpula::linalg::SolveOptions o;
  o.device = gpula::Device::cuda(0);
  o.blocking = true;
  for (DType t : {DType::f64, DType::f32}) {
    DevCM dg = upload(g, t), db = upload(b, t);
    dist::solve(comm(), dg.view(), kLayout, db.view(), lb, gpula::linalg::Assume::gen);
    const Host ref = host_doubles(gpula::linalg::solve(g.view(), b.view(), o));
    EXPECT_LT(max_diff(download(db), ref), tol_of(t) * 1e3);
    for (bool lower : {true, false}) {
      DevCM dp = upload(p, t), dbp = upload(b, t);
      dist::solve(comm(), dp.view(), kLayout, dbp.view(), lb, gpula::linalg::Assume::pos, lower);
      gpula::linalg::SolveOptions op = o;
      op.assume_a = gpula::linalg::Assume::pos;
      op.lower = lower;
      const Host refp = host_doubles(gpula::linalg::solve(p.view(), b.view(), op));
      EXPECT_LT(max_diff(download(dbp), refp), tol_of(t)) << "lower " << lower;
    }
  }
}

TEST_F(DistributedMpCuda, EighMatchesSingleGpu) {
  Host a = random(kN, kN, 6);
  for (int64_t i = 0; i < kN; ++i)
    for (int64_t j = 0; j < i; ++j) a.at(j, i) = a.at(i, j);
  const gpula::linalg::Eigh ref = gpula::linalg::eigh(a.view(), true, false, on_gpu());
  const Host wref = host_doubles(ref.w);
  for (DType t : {DType::f64, DType::f32}) {
    DevCM d = upload(a, t);
    const gpula::linalg::Eigh r = dist::eigh(comm(), d.view(), kLayout);
    EXPECT_TRUE(r.w.device().is_cuda());
    EXPECT_EQ(r.v.shape(), (gpula::Shape{kN, kN}));
    EXPECT_EQ(*static_cast<const int32_t*>(r.info.data()), 0);
    EXPECT_LT(max_diff(host_doubles(r.w), wref), tol_of(t) * kN);
    // a v = v diag(w), v column-major (ld n) on the device.
    const DevCM v{std::shared_ptr<void>(r.v.data(), [](void*) {}), kN, kN, kN, t};
    const Host hv = download(v);
    const Host hw = host_doubles(r.w);
    double res = 0;
    for (int64_t i = 0; i < kN; ++i)
      for (int64_t j = 0; j < kN; ++j) {
        double av = 0;
        for (int64_t k = 0; k < kN; ++k) av += a.at(i, k) * hv.at(k, j);
        res = std::max(res, std::abs(av - hv.at(i, j) * hw.v[j]));
      }
    EXPECT_LT(res, tol_of(t) * kN * 10);
    DevCM d2 = upload(a, t);
    const gpula::linalg::Eigh wo = dist::eigh(comm(), d2.view(), kLayout, true, true);
    EXPECT_FALSE(wo.v.defined());
    EXPECT_LT(max_diff(host_doubles(wo.w), wref), tol_of(t) * kN);
  }
}

TEST_F(DistributedMpCuda, MatmulMatchesSingleGpu) {
  const int64_t m = 300, k = 200, n = 100;
  const Host a = random(m, k, 7), b = random(k, n, 8), c0 = random(m, n, 9);
  const dist::BlockCyclic da{.m = m, .n = k, .mb = 64, .nb = 64};
  const dist::BlockCyclic db{.m = k, .n = n, .mb = 64, .nb = 64};
  const dist::BlockCyclic dc{.m = m, .n = n, .mb = 64, .nb = 64};
  for (DType t : {DType::f64, DType::f32, DType::bf16}) {
    DevCM dA = upload(a, t), dB = upload(b, t), dC = upload(c0, t);
    // The inputs as stored (bf16-rounded), for the reference.
    const Host ha = download(dA), hb = download(dB), hc = download(dC);
    dist::matmul(comm(), dA.view(), da, dB.view(), db, dC.view(), dc, 2.0, 0.5);
    Host ref{m, n, std::vector<double>(m * n)};
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t q = 0; q < k; ++q) s += ha.at(i, q) * hb.at(q, j);
        ref.at(i, j) = 2.0 * s + 0.5 * hc.at(i, j);
      }
    const double tol = t == DType::f64 ? 1e-11 : t == DType::f32 ? 1e-3 : 0.25;
    EXPECT_LT(max_diff(download(dC), ref), tol) << gpula::name(t);
    if (t != DType::bf16) {  // and against the single-GPU gpula::matmul (beta = 0)
      DevCM dC2 = upload(c0, t);
      dist::matmul(comm(), dA.view(), da, dB.view(), db, dC2.view(), dc);
      // gpula::matmul takes row-major views: a column-major (m, k) is the transpose of a
      // row-major (k, m), so c^T = b^T a^T there.
      gpula::TensorView at = dA.view(), bt = dB.view();
      at.shape = {k, m};
      at.strides = {m, 1};
      bt.shape = {n, k};
      bt.strides = {k, 1};
      const gpula::Tensor ct = gpula::matmul(bt, at).result;  // (n, m) row-major = c col-major
      const Host hct = host_doubles(ct);
      Host c2 = download(dC2), cref{m, n, std::vector<double>(m * n)};
      for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) cref.at(i, j) = hct.at(j, i);
      EXPECT_LT(max_diff(c2, cref), t == DType::f64 ? 1e-11 : 1e-3);
    }
  }
}

TEST_F(DistributedMpCuda, FailuresRaiseTypedErrors) {
  Host a = spd(128, 10);
  a.at(70, 70) = -1e6;  // not positive definite
  DevCM d = upload(a, DType::f64);
  try {
    dist::cholesky(comm(), d.view(), {.m = 128, .n = 128, .mb = 64, .nb = 64});
    ADD_FAILURE() << "expected NotPositiveDefinite";
  } catch (const gpula::NotPositiveDefinite& e) {
    EXPECT_GT(e.order(), 0);
  }
  Host s = random(128, 128, 11);
  for (int64_t j = 0; j < 128; ++j) s.at(10, j) = 0.0;  // a zero row: singular
  DevCM ds = upload(s, DType::f64), db = upload(random(128, 1, 12), DType::f64);
  EXPECT_THROW(dist::solve(comm(), ds.view(), {.m = 128, .n = 128, .mb = 64, .nb = 64}, db.view(),
                           {.m = 128, .n = 1, .mb = 64, .nb = 64}),
               gpula::SingularMatrix);
  // check_info = false: no throw, the factor is left as computed.
  DevCM d2 = upload(a, DType::f64);
  EXPECT_NO_THROW(dist::cholesky(comm(), d2.view(), {.m = 128, .n = 128, .mb = 64, .nb = 64}, true,
                                 {.check_info = false}));
}

}  // namespace
