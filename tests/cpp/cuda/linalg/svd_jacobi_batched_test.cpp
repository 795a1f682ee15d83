// The batched one-sided Jacobi SVD kernel (backend/cuda/kernels/svd_jacobi_batched.h) on its
// own: every item of a batch is checked as an SVD in float64 on the host (U^T U = I,
// V^T V = I, sigma descending and >= 0, ||M - U S V^T|| / ||M|| small), for row- and
// column-major inputs, odd and even column counts, tall matrices, rank-deficient and zero
// matrices (orthonormal completion of U), 1 x 1, and a NaN item next to good ones.
//
// Built only with CUDA; run by scripts/gpu_check.sh on the lent GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "backend/cuda/kernels/svd_jacobi_batched.h"

namespace {

using gpula::detail::cuda::Strided3;
using gpula::detail::cuda::svd_jacobi_batched;

template <class T>
T* dev_copy(const std::vector<T>& h) {
  T* d = nullptr;
  EXPECT_EQ(cudaMalloc(&d, std::max<size_t>(1, h.size()) * sizeof(T)), cudaSuccess);
  if (!h.empty()) {
    EXPECT_EQ(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), cudaSuccess);
  }
  return d;
}

template <class T>
std::vector<T> host_copy(const T* d, size_t n) {
  std::vector<T> h(n);
  EXPECT_EQ(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}

enum class Kind { random, rank_deficient, zero, last_column_dependent };

struct Result {
  std::vector<double> u, s, v;  // u: rows x cols row-major, v: cols x cols (v[i*cols+j] = V[i,j])
  std::vector<int32_t> info;
};

template <class T>
Result run(const std::vector<T>& m, int64_t count, int rows, int cols, bool row_major) {
  const int64_t sz = int64_t{rows} * cols;
  Strided3 m_st{sz, row_major ? cols : 1, row_major ? 1 : rows};
  Strided3 u_st{sz, cols, 1};
  Strided3 v_st{int64_t{cols} * cols, cols, 1};
  T* dm = dev_copy(m);
  std::vector<T> poison(static_cast<size_t>(count * sz), T(-7));
  T* du = dev_copy(poison);
  std::vector<T> poison_v(static_cast<size_t>(count * cols * cols), T(-7));
  T* dv = dev_copy(poison_v);
  T* ds = dev_copy(std::vector<T>(static_cast<size_t>(count * cols), T(-7)));
  int32_t* dinfo = dev_copy(std::vector<int32_t>(static_cast<size_t>(count), -7));
  svd_jacobi_batched<T>(dm, m_st, count, rows, cols, du, u_st, ds, dv, v_st, dinfo, 30, nullptr);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  Result r;
  for (T x : host_copy(du, poison.size())) r.u.push_back(double(x));
  for (T x : host_copy(ds, static_cast<size_t>(count * cols))) r.s.push_back(double(x));
  for (T x : host_copy(dv, poison_v.size())) r.v.push_back(double(x));
  r.info = host_copy(dinfo, static_cast<size_t>(count));
  const std::vector<T> after = host_copy(dm, m.size());
  EXPECT_EQ(std::memcmp(after.data(), m.data(), m.size() * sizeof(T)), 0) << "input modified";
  cudaFree(dm), cudaFree(du), cudaFree(dv), cudaFree(ds), cudaFree(dinfo);
  return r;
}

template <class T>
std::vector<T> make(int64_t count, int rows, int cols, bool row_major, Kind kind, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> nd;
  std::vector<T> m(static_cast<size_t>(count * rows * cols));
  for (int64_t b = 0; b < count; ++b)
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) {
        double x = nd(gen);
        if (kind == Kind::zero) x = 0;
        // rank deficient: column j copies column j % 3 (rank 3), made below by a fixed pattern
        if (kind == Kind::rank_deficient) x = std::sin(1.0 + i * (1 + j % 3)) * (1 + j % 3);
        const int64_t idx = row_major ? int64_t{i} * cols + j : int64_t{j} * rows + i;
        m[static_cast<size_t>(b * rows * cols + idx)] = T(x);
      }
  if (kind == Kind::last_column_dependent) {  // square rank n - 1: last column = col0 + col1
    auto at = [&](int64_t b, int i, int j) -> T& {
      const int64_t idx = row_major ? int64_t{i} * cols + j : int64_t{j} * rows + i;
      return m[static_cast<size_t>(b * rows * cols + idx)];
    };
    for (int64_t b = 0; b < count; ++b)
      for (int i = 0; i < rows; ++i) at(b, i, cols - 1) = at(b, i, 0) + at(b, i, 1);
  }
  return m;
}

template <class T>
void check(const std::vector<T>& m, const Result& r, int64_t count, int rows, int cols,
           bool row_major, double tol) {
  for (int64_t b = 0; b < count; ++b) {
    ASSERT_EQ(r.info[static_cast<size_t>(b)], 0) << "item " << b;
    auto M = [&](int i, int j) {
      const int64_t idx = row_major ? int64_t{i} * cols + j : int64_t{j} * rows + i;
      return double(m[static_cast<size_t>(b * rows * cols + idx)]);
    };
    auto U = [&](int i, int j) { return r.u[static_cast<size_t>(b * rows * cols + i * cols + j)]; };
    auto V = [&](int i, int j) { return r.v[static_cast<size_t>(b * cols * cols + i * cols + j)]; };
    auto S = [&](int j) { return r.s[static_cast<size_t>(b * cols + j)]; };
    double norm = 0;
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) norm += M(i, j) * M(i, j);
    norm = std::sqrt(norm);
    for (int j = 0; j < cols; ++j) {
      EXPECT_GE(S(j), 0.0);
      if (j > 0) {
        EXPECT_GE(S(j - 1), S(j)) << "item " << b << " sigma " << j;
      }
    }
    double rec = 0, ou = 0, ov = 0;
    for (int i = 0; i < rows; ++i)
      for (int j = 0; j < cols; ++j) {
        double x = 0;
        for (int k = 0; k < cols; ++k) x += U(i, k) * S(k) * V(j, k);
        rec = std::max(rec, std::abs(x - M(i, j)));
      }
    for (int p = 0; p < cols; ++p)
      for (int q = 0; q < cols; ++q) {
        double du = 0, dv = 0;
        for (int i = 0; i < rows; ++i) du += U(i, p) * U(i, q);
        for (int i = 0; i < cols; ++i) dv += V(i, p) * V(i, q);
        ou = std::max(ou, std::abs(du - (p == q)));
        ov = std::max(ov, std::abs(dv - (p == q)));
      }
    EXPECT_LE(rec, tol * std::max(norm, 1.0)) << "item " << b << " reconstruction";
    EXPECT_LE(ou, tol) << "item " << b << " U orthogonality";
    EXPECT_LE(ov, tol) << "item " << b << " V orthogonality";
  }
}

bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

template <class T>
void case_(int64_t count, int rows, int cols, bool row_major, Kind kind, double tol) {
  const auto m = make<T>(count, rows, cols, row_major, kind, 1234u + rows * 7u + cols);
  const Result r = run(m, count, rows, cols, row_major);
  check(m, r, count, rows, cols, row_major, tol);
}

constexpr double kF = 1e-4, kD = 1e-11;

TEST(CudaSvdJacobiBatched, Float128SquareRowMajor) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  case_<float>(24, 128, 128, true, Kind::random, kF);
}
TEST(CudaSvdJacobiBatched, FloatTallOddColumnMajor) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  case_<float>(9, 100, 33, false, Kind::random, kF);
}
TEST(CudaSvdJacobiBatched, DoubleSquareAndTall) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  case_<double>(7, 70, 70, true, Kind::random, kD);
  case_<double>(5, 90, 41, false, Kind::random, kD);
}
TEST(CudaSvdJacobiBatched, RankDeficientAndZeroCompleteU) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  case_<float>(3, 40, 40, true, Kind::rank_deficient, kF);
  case_<double>(3, 50, 37, true, Kind::rank_deficient, kD);
  case_<double>(2, 20, 20, true, Kind::zero, kD);
}
// One missing direction in a square matrix: no unit vector e_r is mostly uncovered by the other
// columns (each |U[r, missing]| is about 1/sqrt(n)), so the completion must pick the best row.
TEST(CudaSvdJacobiBatched, SquareRankOneShortCompletesU) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  case_<float>(4, 128, 128, true, Kind::last_column_dependent, kF);
  case_<double>(4, 96, 96, false, Kind::last_column_dependent, kD);
}
TEST(CudaSvdJacobiBatched, OneByOneAndOneColumn) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  case_<double>(4, 1, 1, true, Kind::random, kD);
  case_<float>(4, 65, 1, true, Kind::random, kF);
}
TEST(CudaSvdJacobiBatched, NanItemReportsInfoOthersExact) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const int rows = 48, cols = 48;
  auto m = make<float>(3, rows, cols, true, Kind::random, 99u);
  m[static_cast<size_t>(rows * cols + 5)] = std::numeric_limits<float>::quiet_NaN();
  const Result r = run(m, 3, rows, cols, true);
  EXPECT_EQ(r.info[0], 0);
  EXPECT_EQ(r.info[1], 1);
  EXPECT_EQ(r.info[2], 0);
  EXPECT_TRUE(std::isnan(r.s[cols]));
  EXPECT_TRUE(std::isnan(r.u[rows * cols]));
  std::vector<float> good(m.begin(), m.begin() + rows * cols);
  Result first{std::vector<double>(r.u.begin(), r.u.begin() + rows * cols),
               std::vector<double>(r.s.begin(), r.s.begin() + cols),
               std::vector<double>(r.v.begin(), r.v.begin() + cols * cols), {0}};
  check(good, first, 1, rows, cols, true, kF);
}
TEST(CudaSvdJacobiBatched, SharedMemoryLimit) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  EXPECT_GT(gpula::detail::cuda::svd_jacobi_shared_bytes(128, 128, sizeof(float), 0), 0u);
  EXPECT_EQ(gpula::detail::cuda::svd_jacobi_shared_bytes(512, 512, sizeof(double), 0), 0u);
  EXPECT_EQ(gpula::detail::cuda::svd_jacobi_shared_bytes(10, 20, sizeof(float), 0), 0u);  // wide
}

}  // namespace
