// The device strided copy (backend/cuda/kernels/strided_copy.h): transposing copies (row-major
// <-> column-major, the tiled path) and general ones (the element-wise path), for every element
// size, sizes that are not multiples of the 32 x 32 tile, batches, and a batch dimension in the
// middle of the destination. Each result is compared element by element with the host.
//
// Built only with CUDA; run by scripts/gpu_check.sh on the lent GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "backend/cuda/kernels/strided_copy.h"

namespace {

using gpula::detail::cuda::CopyParams;
using gpula::detail::cuda::launch_strided_copy;

bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

struct Case {
  std::vector<int64_t> shape, src_strides, dst_strides;
};

int64_t extent(const std::vector<int64_t>& shape, const std::vector<int64_t>& strides) {
  int64_t e = 1;
  for (size_t d = 0; d < shape.size(); ++d) e += (shape[d] - 1) * strides[d];
  return e;
}

// Copies with the kernel and on the host; bytes of every element are distinct.
void check(const Case& c, int elem) {
  CopyParams p;
  p.ndim = static_cast<int>(c.shape.size());
  p.numel = 1;
  for (int d = 0; d < p.ndim; ++d) {
    p.shape[d] = c.shape[d];
    p.src_strides[d] = c.src_strides[d];
    p.dst_strides[d] = c.dst_strides[d];
    p.numel *= c.shape[d];
  }
  const int64_t ns = extent(c.shape, c.src_strides), nd = extent(c.shape, c.dst_strides);
  std::vector<uint8_t> hs(static_cast<size_t>(ns * elem)), hd(static_cast<size_t>(nd * elem), 0xAB);
  for (size_t i = 0; i < hs.size(); ++i) hs[i] = static_cast<uint8_t>((i * 131 + i / 251) & 0xFF);
  std::vector<uint8_t> want = hd;
  std::vector<int64_t> idx(c.shape.size(), 0);
  for (int64_t e = 0; e < p.numel; ++e) {
    int64_t rem = e, so = 0, dof = 0;
    for (int d = p.ndim - 1; d >= 0; --d) {
      const int64_t i = rem % c.shape[d];
      rem /= c.shape[d];
      so += i * c.src_strides[d];
      dof += i * c.dst_strides[d];
    }
    std::memcpy(&want[static_cast<size_t>(dof * elem)], &hs[static_cast<size_t>(so * elem)],
                static_cast<size_t>(elem));
  }
  void *ds = nullptr, *dd = nullptr;
  ASSERT_EQ(cudaMalloc(&ds, hs.size()), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dd, hd.size()), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(ds, hs.data(), hs.size(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(dd, hd.data(), hd.size(), cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(launch_strided_copy(ds, dd, elem, p, nullptr), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(hd.data(), dd, hd.size(), cudaMemcpyDeviceToHost), cudaSuccess);
  cudaFree(ds);
  cudaFree(dd);
  EXPECT_TRUE(hd == want) << "element size " << elem << ", ndim " << p.ndim << ", first dim "
                          << c.shape[0];
}

TEST(CudaStridedCopy, TransposesEveryElementSize) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  const int64_t r = 70, k = 45;
  // row-major r x k -> column-major r x k
  const Case t{{r, k}, {k, 1}, {1, r}};
  // batch 3 of 37 x 33, column-major source -> row-major destination
  const Case batched{{3, 37, 33}, {37 * 33, 1, 37}, {37 * 33, 33, 1}};
  // dims (b, i, j) = (4, 40, 50): source stored [b][j][i], destination [i][b][j]
  const Case middle{{4, 40, 50}, {40 * 50, 1, 40}, {50, 4 * 50, 1}};
  for (int elem : {1, 2, 4, 8, 16}) {
    check(t, elem);
    check(batched, elem);
    check(middle, elem);
  }
}

TEST(CudaStridedCopy, TileEdgesAndGeneralPath) {
  if (!have_gpu()) GTEST_SKIP() << "no GPU";
  for (int64_t n : {8, 31, 32, 33, 65, 257}) check(Case{{n, n}, {n, 1}, {1, n}}, 8);
  check(Case{{5, 7}, {7, 1}, {1, 5}}, 4);          // below the tiling threshold
  check(Case{{6, 9}, {18, 2}, {9, 1}}, 8);         // no unit source stride: element-wise
  check(Case{{1000, 3}, {3, 1}, {1, 1000}}, 4);    // one short side: element-wise
}

}  // namespace
