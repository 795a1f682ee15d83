// Block-cyclic distribution helpers (host): numroc against a brute-force count, the index maps
// against each other, and scatter/gather round trips over several grids.
#include <gpula/gpula.h>
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace dist = gpula::distributed;

namespace {

gpula::TensorView host_view(std::vector<double>& v, int64_t r, int64_t c, bool col_major) {
  gpula::TensorView t{v.data(), gpula::DType::f64, {r, c}, {c, 1}, gpula::Device{}};
  if (col_major) t.strides = {1, std::max<int64_t>(1, r)};
  return t;
}

}  // namespace

TEST(DistributedBlockCyclic, NumrocMatchesBruteForce) {
  for (int64_t n : {0, 1, 7, 64, 65, 200})
    for (int64_t nb : {1, 3, 16, 64})
      for (int64_t np : {1, 2, 3, 4})
        for (int64_t src = 0; src < np; ++src) {
          int64_t total = 0;
          for (int64_t p = 0; p < np; ++p) {
            int64_t count = 0;
            for (int64_t g = 0; g < n; ++g) count += dist::owner(g, nb, src, np) == p;
            EXPECT_EQ(dist::numroc(n, nb, p, src, np), count)
                << "n=" << n << " nb=" << nb << " p=" << p << " src=" << src << " np=" << np;
            total += count;
          }
          EXPECT_EQ(total, n);
        }
}

TEST(DistributedBlockCyclic, IndexMapsRoundTrip) {
  for (int64_t nb : {1, 4, 5})
    for (int64_t np : {1, 2, 3})
      for (int64_t src = 0; src < np; ++src)
        for (int64_t g = 0; g < 50; ++g) {
          const int64_t p = dist::owner(g, nb, src, np);
          const int64_t l = dist::global_to_local(g, nb, np);
          EXPECT_EQ(dist::local_to_global(l, nb, p, src, np), g);
          EXPECT_LT(l, dist::numroc(50, nb, p, src, np));
        }
  // ScaLAPACK's example: 10 items, blocks of 2, 3 processes -> 4, 4, 2.
  EXPECT_EQ(dist::numroc(10, 2, 0, 0, 3), 4);
  EXPECT_EQ(dist::numroc(10, 2, 1, 0, 3), 4);
  EXPECT_EQ(dist::numroc(10, 2, 2, 0, 3), 2);
  EXPECT_EQ(dist::owner(6, 2, 0, 3), 0);
  EXPECT_EQ(dist::global_to_local(6, 2, 3), 2);
}

TEST(DistributedBlockCyclic, ScatterGatherRoundTrip) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto [m, n, mb, nb, pr, pc] : std::vector<std::array<int64_t, 6>>{
           {1, 1, 1, 1, 1, 1}, {13, 9, 4, 2, 2, 3}, {8, 8, 8, 8, 2, 2}, {5, 17, 3, 5, 3, 1}}) {
    const dist::BlockCyclic d{m, n, mb, nb, pr, pc, pr - 1, 0};
    std::vector<double> g(m * n), back(m * n, -7.0);
    for (auto& x : g) x = u(rng);
    int64_t covered = 0;
    for (int64_t p = 0; p < pr; ++p)
      for (int64_t q = 0; q < pc; ++q) {
        const gpula::Shape ls = dist::local_shape(d, p, q);
        EXPECT_EQ(dist::local_ld(d, p, q), std::max<int64_t>(1, ls[0]));
        std::vector<double> loc(std::max<int64_t>(1, ls[0] * ls[1]), 99.0);
        auto lv = host_view(loc, ls[0], ls[1], true);
        dist::scatter(host_view(g, m, n, false), d, p, q, lv);
        // Local (li, lj) holds global (local_to_global(li), local_to_global(lj)).
        for (int64_t lj = 0; lj < ls[1]; ++lj)
          for (int64_t li = 0; li < ls[0]; ++li) {
            const int64_t gi = dist::local_to_global(li, mb, p, d.rsrc, pr);
            const int64_t gj = dist::local_to_global(lj, nb, q, d.csrc, pc);
            ASSERT_EQ(loc[lj * ls[0] + li], g[gi * n + gj]);
          }
        dist::gather(lv, d, p, q, host_view(back, m, n, false));
        covered += ls[0] * ls[1];
      }
    EXPECT_EQ(covered, m * n);
    EXPECT_EQ(back, g);
  }
}

TEST(DistributedBlockCyclic, Errors) {
  EXPECT_THROW(dist::numroc(-1, 2, 0, 0, 1), gpula::InvalidArgument);
  EXPECT_THROW(dist::numroc(4, 0, 0, 0, 1), gpula::InvalidArgument);
  EXPECT_THROW(dist::numroc(4, 2, 2, 0, 2), gpula::InvalidArgument);
  EXPECT_THROW(dist::owner(-1, 2, 0, 2), gpula::InvalidArgument);
  EXPECT_THROW(dist::local_to_global(0, 2, 0, 3, 2), gpula::InvalidArgument);
  EXPECT_THROW(dist::local_shape({4, 4, 2, 2, 0, 1}, 0, 0), gpula::InvalidArgument);
  EXPECT_THROW(dist::local_shape({4, 4, 2, 2, 1, 1}, 1, 0), gpula::InvalidArgument);
  std::vector<double> g(16), l(16);
  const dist::BlockCyclic d{4, 4, 2, 2, 2, 1};
  EXPECT_THROW(dist::scatter(host_view(g, 4, 4, false), d, 0, 0, host_view(l, 4, 4, true)),
               gpula::InvalidArgument);
  std::vector<float> f(16);
  gpula::TensorView fv{f.data(), gpula::DType::f32, {2, 4}, {1, 2}, gpula::Device{}};
  EXPECT_THROW(dist::scatter(host_view(g, 4, 4, false), d, 0, 0, fv), gpula::DTypeError);
}

// Near INT64_MAX the maps neither wrap nor overflow; a global index past int64 is an error.
TEST(DistributedBlockCyclic, Int64Edge) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  constexpr int64_t kBig = int64_t{1} << 62;
  EXPECT_EQ(dist::global_to_local(10, 3, kBig), 1);
  EXPECT_EQ(dist::owner(kMax, 1, kMax - 1, kMax), kMax - 1);  // (kMax - 1 + kMax) % kMax
  EXPECT_EQ(dist::numroc(kMax, 1, 0, kMax - 1, kMax), 1);
  EXPECT_EQ(dist::local_to_global(kBig - 1, 1, 1, 0, 2), 2 * (kBig - 1) + 1);
  EXPECT_THROW(dist::local_to_global(kBig, 3, 1, 0, 2), gpula::InvalidArgument);
  EXPECT_THROW(dist::local_to_global(4, 3, 1, 0, kBig), gpula::InvalidArgument);
}

TEST(DistributedMg, HostChecksBeforeAnyDevice) {
  std::vector<double> a(6);
  gpula::TensorView av{a.data(), gpula::DType::f64, {2, 3}, {3, 1}, gpula::Device{}};
  EXPECT_THROW(dist::cholesky(av), gpula::InvalidArgument);
  std::vector<int32_t> ai(4);
  gpula::TensorView iv{ai.data(), gpula::DType::i32, {2, 2}, {2, 1}, gpula::Device{}};
  EXPECT_THROW(dist::eigh(iv), gpula::DTypeError);
  gpula::TensorView sq{a.data(), gpula::DType::f64, {2, 2}, {2, 1}, gpula::Device{}};
  EXPECT_THROW(dist::cholesky(sq, true, {.devices = {0, 0}}), gpula::InvalidArgument);
  EXPECT_THROW(dist::cholesky(sq, true, {.block_size = 0}), gpula::InvalidArgument);
  gpula::TensorView b{a.data(), gpula::DType::f64, {3}, {1}, gpula::Device{}};
  EXPECT_THROW(dist::solve(sq, b), gpula::InvalidArgument);
  gpula::TensorView b2{a.data(), gpula::DType::f64, {2}, {1}, gpula::Device{}};
  EXPECT_THROW(dist::solve(sq, b2, gpula::linalg::Assume::sym), gpula::NotSupported);
  // Empty input needs no device.
  gpula::TensorView e{a.data(), gpula::DType::f64, {0, 0}, {0, 1}, gpula::Device{}};
  EXPECT_EQ(dist::cholesky(e).shape(), (gpula::Shape{0, 0}));
  EXPECT_EQ(dist::eigh(e).w.shape(), (gpula::Shape{0}));
}
