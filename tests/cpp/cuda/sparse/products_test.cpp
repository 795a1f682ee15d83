// cuSPARSE SpMM / SDDMM / SpGEMM against gpula's CPU kernels: every value and index dtype, all
// ops, row-major / padded / column-major operands, alpha/beta, poisoned (NaN) outputs where
// beta = 0, plans reused with new operand buffers, empty and 0-size shapes.
#include <cuda_runtime.h>
#include <gpula/sparse.h>
#include <gtest/gtest.h>

#include <complex>
#include <limits>
#include <vector>

#include "support/sparse_products.h"

namespace {

using namespace sparse_products_test;
using gpula::Device;
using gpula::Stream;
using namespace gpula::sparse;

bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

const Stream kGpu{Device::cuda(0), nullptr};

// A device copy of a host buffer, viewed with the same shape and strides as `v`.
struct OnGpu {
  Tensor buffer;
  TensorView view;
  explicit OnGpu(const Tensor& host_buffer, const TensorView& v) {
    buffer = Tensor::empty(host_buffer.shape(), host_buffer.dtype(), kGpu);
    if (host_buffer.view().numel() > 0) gpula::copy(host_buffer.view(), buffer.view(), kGpu);
    view = v;
    view.data = buffer.data();
    view.device = Device::cuda(0);
  }
  Tensor to_host() const {
    Tensor h = Tensor::empty(buffer.shape(), buffer.dtype(), {});
    if (buffer.view().numel() > 0) gpula::copy(buffer.view(), h.view(), kGpu);
    return h;
  }
};

CsrMatrix to_gpu(const CsrMatrix& h) {
  auto up = [](const Tensor& t) { return OnGpu(t, t.view()).buffer; };
  return CsrMatrix::from_csr(h.rows(), h.cols(), up(h.indptr()), up(h.indices()),
                             up(h.values()));
}

template <class V>
void expect_close(const V* got, const V* want, size_t n, const char* what) {
  for (size_t e = 0; e < n; ++e) {
    const cd g(got[e]), w(want[e]);
    ASSERT_LE(std::abs(g - w), tolerance<V>() * (1 + std::abs(w))) << what << " element " << e;
  }
}

template <class I, class V>
void spmm_case(Op op, int64_t m, int64_t k, int64_t n, int b_layout, int c_layout, uint32_t seed) {
  RandomCsr<I, V> a(m, k, 0.2, seed);
  CsrMatrix ha = a.matrix(), da = to_gpu(ha);
  const bool t = op != Op::none;
  const int64_t rows = t ? k : m, inner = t ? m : k;
  SpMM cpu(ha.view(), op), gpu(da.view(), op);
  for (int round = 0; round < 2; ++round) {  // the plan reused with fresh B and C buffers
    for (auto [alpha, beta] : {std::pair{1.0, 0.0}, std::pair{-0.5, 2.0}}) {
      Dense<V> b(inner, n, b_layout, seed + 10 * round + 1);
      Dense<V> hc(rows, n, c_layout, seed + 10 * round + 2);
      if (beta == 0.0) {
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < n; ++j) hc.at(i, j) = V(std::numeric_limits<double>::quiet_NaN());
      }
      OnGpu db(b.buffer, b.view), dc(hc.buffer, hc.view);
      cpu.execute(b.view, hc.view, alpha, beta);
      gpu.execute(db.view, dc.view, alpha, beta);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      Tensor got = dc.to_host();
      // Compare the addressed elements only (padding is not written).
      for (int64_t i = 0; i < rows; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          const V g = static_cast<const V*>(got.data())[i * hc.s0 + j * hc.s1];
          const V w = hc.at(i, j);
          ASSERT_LE(std::abs(cd(g) - cd(w)), tolerance<V>() * (1 + std::abs(cd(w))))
              << "C[" << i << ", " << j << "] op " << static_cast<int>(op) << " alpha " << alpha;
        }
      }
    }
  }
}

TEST(SparseProductsCuda, SpMMMatchesCpu) {
  if (!have_gpu()) GTEST_SKIP() << "no usable CUDA device";
  uint32_t seed = 1;
  for (Op op : {Op::none, Op::transpose, Op::conjugate_transpose}) {
    for (int bl : {0, 1, 2}) {
      const int cl = bl == 2 ? 0 : bl;  // row-major C, padded C, and a column-major B
      spmm_case<int32_t, float>(op, 301, 157, 64, bl, cl, ++seed);
      spmm_case<int32_t, double>(op, 301, 157, 7, bl, cl, ++seed);
      spmm_case<int64_t, double>(op, 120, 333, 16, bl, cl, ++seed);
      spmm_case<int64_t, std::complex<float>>(op, 64, 64, 5, bl, cl, ++seed);
      spmm_case<int32_t, std::complex<double>>(op, 77, 55, 3, bl, cl, ++seed);
    }
  }
  spmm_case<int32_t, double>(Op::none, 50, 40, 8, 0, 2, 99);  // column-major C
}

TEST(SparseProductsCuda, SpMMEdgeShapes) {
  if (!have_gpu()) GTEST_SKIP() << "no usable CUDA device";
  spmm_case<int32_t, double>(Op::none, 40, 30, 1, 0, 0, 200);  // n = 1
  spmm_case<int32_t, double>(Op::none, 0, 30, 4, 0, 0, 201);   // no rows
  spmm_case<int32_t, double>(Op::none, 40, 0, 4, 0, 0, 202);   // k = 0: C = beta C
  spmm_case<int32_t, double>(Op::none, 40, 30, 0, 0, 0, 203);  // n = 0
  RandomCsr<int32_t, double> z(20, 10, 0.0, 204);               // nnz = 0
  CsrMatrix dz = to_gpu(z.matrix());
  Dense<double> b(10, 3, 0, 205), c(20, 3, 0, 206);
  for (int64_t i = 0; i < 20; ++i)
    for (int64_t j = 0; j < 3; ++j) c.at(i, j) = std::numeric_limits<double>::quiet_NaN();
  OnGpu db(b.buffer, b.view), dc(c.buffer, c.view);
  SpMM(dz.view()).execute(db.view, dc.view);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (double v : read<double>(dc.to_host())) EXPECT_EQ(v, 0.0);
}

template <class I, class V>
void sddmm_case(int64_t m, int64_t k, int64_t n, int a_layout, int b_layout, uint32_t seed) {
  RandomCsr<I, V> mask(m, n, 0.1, seed);
  CsrMatrix hc = mask.matrix(), dc = to_gpu(hc);
  SDDMM cpu(hc.view()), gpu(dc.view());
  for (int round = 0; round < 2; ++round) {  // the plan reused with fresh A and B buffers
    for (auto [alpha, beta] : {std::pair{1.0, 0.0}, std::pair{0.5, -2.0}}) {
      Dense<V> a(m, k, a_layout, seed + 10 * round + 1), b(k, n, b_layout, seed + 10 * round + 2);
      OnGpu da(a.buffer, a.view), db(b.buffer, b.view);
      if (beta == 0.0) {  // poison C's values on both sides
        std::vector<V> nan(static_cast<size_t>(hc.nnz()), V(std::numeric_limits<double>::quiet_NaN()));
        Tensor hn = host(nan);
        if (!nan.empty()) {
          gpula::copy(hn.view(), hc.values().view(), {});
          gpula::copy(hn.view(), dc.values().view(), kGpu);
        }
      }
      cpu.execute(a.view, b.view, alpha, beta);
      gpu.execute(da.view, db.view, alpha, beta);
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      Tensor got = OnGpu(dc.values(), dc.values().view()).to_host();
      const auto g = read<V>(got), w = read<V>(hc.values());
      expect_close(g.data(), w.data(), g.size(), "SDDMM value");
    }
  }
}

TEST(SparseProductsCuda, SDDMMMatchesCpu) {
  if (!have_gpu()) GTEST_SKIP() << "no usable CUDA device";
  uint32_t seed = 300;
  for (int al : {0, 1, 2}) {
    const int bl = (al + 1) % 3;
    sddmm_case<int32_t, float>(200, 64, 150, al, bl, ++seed);
    sddmm_case<int64_t, double>(200, 17, 150, al, bl, ++seed);
    sddmm_case<int32_t, std::complex<float>>(60, 8, 70, al, bl, ++seed);
    sddmm_case<int64_t, std::complex<double>>(60, 8, 70, al, bl, ++seed);
  }
  sddmm_case<int32_t, double>(50, 0, 40, 0, 0, 350);  // k = 0
}

template <class I, class V>
void spgemm_case(int64_t m, int64_t k, int64_t n, double da, double db, uint32_t seed) {
  RandomCsr<I, V> a(m, k, da, seed), b(k, n, db, seed + 1, 5);
  CsrMatrix ha = a.matrix(), hb = b.matrix();
  CsrMatrix want = spgemm(ha.view(), hb.view());
  CsrMatrix got = spgemm(to_gpu(ha).view(), to_gpu(hb).view());
  ASSERT_EQ(got.rows(), m);
  ASSERT_EQ(got.cols(), n);
  ASSERT_EQ(got.nnz(), want.nnz());
  auto down = [](const Tensor& t) { return OnGpu(t, t.view()).to_host(); };
  EXPECT_EQ(read<I>(down(got.indptr())), read<I>(want.indptr()));
  EXPECT_EQ(read<I>(down(got.indices())), read<I>(want.indices()));
  const auto g = read<V>(down(got.values())), w = read<V>(want.values());
  expect_close(g.data(), w.data(), g.size(), "SpGEMM value");
}

TEST(SparseProductsCuda, SpGEMMMatchesCpu) {
  if (!have_gpu()) GTEST_SKIP() << "no usable CUDA device";
  spgemm_case<int32_t, float>(300, 200, 250, 0.02, 0.03, 1);
  spgemm_case<int32_t, double>(300, 200, 250, 0.02, 0.03, 3);
  spgemm_case<int64_t, double>(120, 90, 60, 0.05, 0.05, 5);
  spgemm_case<int32_t, std::complex<float>>(50, 40, 30, 0.1, 0.1, 7);
  spgemm_case<int64_t, std::complex<double>>(50, 40, 30, 0.1, 0.1, 9);
  spgemm_case<int32_t, double>(40, 30, 20, 0.0, 0.2, 11);  // A has no nonzeros
  spgemm_case<int32_t, double>(0, 30, 20, 0.1, 0.2, 12);   // no rows
}

}  // namespace
