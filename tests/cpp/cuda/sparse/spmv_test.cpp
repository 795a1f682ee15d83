// The cuSPARSE SpMV plan against gpula's CPU kernel: random CSR matrices of every value and
// index dtype, all three ops, alpha/beta, outputs poisoned first, the plan reused.
#include <cuda_runtime.h>
#include <gpula/sparse.h>
#include <gtest/gtest.h>

#include <complex>
#include <cstring>
#include <random>
#include <vector>

namespace {

using gpula::Device;
using gpula::DType;
using gpula::Tensor;
using namespace gpula::sparse;

bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

template <class T>
Tensor host(const std::vector<T>& v, DType dt) {
  Tensor t = Tensor::empty({static_cast<int64_t>(v.size())}, dt, {});
  if (!v.empty()) std::memcpy(t.data(), v.data(), v.size() * sizeof(T));
  return t;
}

Tensor to_gpu(const Tensor& h) {
  Tensor d = Tensor::empty(h.shape(), h.dtype(), gpula::Stream{Device::cuda(0), nullptr});
  if (h.shape()[0] > 0) gpula::copy(h.view(), d.view(), gpula::Stream{Device::cuda(0), nullptr});
  return d;
}

Tensor to_host(const Tensor& d) {
  Tensor h = Tensor::empty(d.shape(), d.dtype(), {});
  if (d.shape()[0] > 0) gpula::copy(d.view(), h.view(), gpula::Stream{Device::cuda(0), nullptr});
  return h;
}

template <class I, class V>
void compare_case(DType idt, DType vdt, Op op, int64_t m, int64_t n, double density,
                  uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<I> p{0}, ind;
  std::vector<V> val;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      if (u(rng) > density) continue;
      ind.push_back(static_cast<I>(j));
      if constexpr (std::is_floating_point_v<V>) {
        val.push_back(static_cast<V>(u(rng) - 0.5));
      } else {
        using R = typename V::value_type;
        val.push_back(V(static_cast<R>(u(rng) - 0.5), static_cast<R>(u(rng) - 0.5)));
      }
    }
    p.push_back(static_cast<I>(ind.size()));
  }
  const bool t = op != Op::none;
  const int64_t nx = t ? m : n, ny = t ? n : m;
  std::vector<V> x(nx), y0(ny);
  for (auto& e : x) e = static_cast<V>(u(rng) - 0.5);
  for (auto& e : y0) e = static_cast<V>(u(rng) - 0.5);
  Tensor hp = host(p, idt), hi = host(ind, idt), hv = host(val, vdt);
  CsrMatrix ha = CsrMatrix::from_csr(m, n, hp, hi, hv);
  CsrMatrix da = CsrMatrix::from_csr(m, n, to_gpu(hp), to_gpu(hi), to_gpu(hv));
  Tensor hx = host(x, vdt), hy = host(y0, vdt);
  Tensor dx = to_gpu(hx), dy = to_gpu(hy);
  SpMV cpu(ha.view(), op);
  SpMV gpu(da.view(), op);
  for (auto [alpha, beta] : {std::pair{1.0, 0.0}, std::pair{-0.5, 2.0}}) {
    if (beta == 0.0) {  // poisoned output: beta = 0 must not read it
      std::vector<V> nan(ny, V(std::numeric_limits<double>::quiet_NaN()));
      dy = to_gpu(host(nan, vdt));
      hy = host(nan, vdt);
    }
    cpu.execute(hx.view(), hy.view(), alpha, beta);
    gpu.execute(dx.view(), dy.view(), alpha, beta);
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    Tensor got = to_host(dy);
    const double tol = (vdt == DType::f32 || vdt == DType::c64) ? 1e-4 : 1e-11;
    for (int64_t r = 0; r < ny; ++r) {
      const auto g = std::complex<double>(static_cast<const V*>(got.data())[r]);
      const auto w = std::complex<double>(static_cast<const V*>(hy.data())[r]);
      ASSERT_LE(std::abs(g - w), tol * (1 + std::abs(w))) << "row " << r << " alpha " << alpha;
    }
  }
}

TEST(SparseSpMVCuda, MatchesCpuBackend) {
  if (!have_gpu()) GTEST_SKIP() << "no usable CUDA device";
  for (Op op : {Op::none, Op::transpose, Op::conjugate_transpose}) {
    compare_case<int32_t, float>(DType::i32, DType::f32, op, 301, 157, 0.05, 1);
    compare_case<int32_t, double>(DType::i32, DType::f64, op, 301, 157, 0.05, 2);
    compare_case<int64_t, double>(DType::i64, DType::f64, op, 120, 333, 0.1, 3);
    compare_case<int64_t, std::complex<float>>(DType::i64, DType::c64, op, 64, 64, 0.2, 4);
    compare_case<int32_t, std::complex<double>>(DType::i32, DType::c128, op, 77, 55, 0.2, 5);
  }
}

TEST(SparseSpMVCuda, EmptyMatrices) {
  if (!have_gpu()) GTEST_SKIP() << "no usable CUDA device";
  compare_case<int32_t, double>(DType::i32, DType::f64, Op::none, 40, 30, 0.0, 6);
  compare_case<int32_t, double>(DType::i32, DType::f64, Op::none, 40, 1, 0.5, 7);
}

}  // namespace
