// fp8 matmuls with scale tensors (per-tensor, row-wise, 1x128 and 128x128 blocks) and amax on the
// GPU, against a float64 reference computed from the dequantized operands; quantize_fp8 on the GPU
// against the CPU's bits. A is (M, K) row-major, B = W^T with W (N, K) row-major (as a weight).
//
// Built only with CUDA; run by scripts/gpu_check.sh on the lent GPU.
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <gpula/matmul.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "matmul/fp8_codec.h"

namespace {

using namespace gpula;

const Device kGpu = Device::cuda(0);

std::shared_ptr<void> dalloc(std::size_t bytes) {
  void* p = nullptr;
  EXPECT_EQ(cudaMalloc(&p, bytes ? bytes : 1), cudaSuccess);
  return {p, [](void* q) { cudaFree(q); }};
}

template <class T>
std::vector<T> to_host_vec(const void* d, std::size_t n) {
  std::vector<T> h(n);
  EXPECT_EQ(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}

// Storage size (elements) of a dense strided view.
int64_t extent(const TensorView& v) {
  int64_t e = 1;
  for (std::size_t i = 0; i < v.shape.size(); ++i) e += (v.shape[i] - 1) * v.strides[i];
  return v.numel() == 0 ? 0 : e;
}

// A host tensor and its device copy with the same layout.
struct Both {
  std::vector<unsigned char> host;
  std::shared_ptr<void> dev;
  TensorView h, d;
};

Both mirror(const Tensor& t) {
  Both b;
  const std::size_t bytes = extent(t.view()) * size_of(t.dtype());
  b.host.resize(bytes);
  if (bytes) std::memcpy(b.host.data(), t.data(), bytes);
  b.dev = dalloc(bytes);
  if (bytes) {
    EXPECT_EQ(cudaMemcpy(b.dev.get(), t.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  }
  b.h = t.view();
  b.d = t.view();
  b.d.data = b.dev.get();
  b.d.device = kGpu;
  return b;
}

Tensor random_f32(int64_t r, int64_t c, uint64_t seed, double spread = 1.0) {
  Tensor t = Tensor::empty({r, c}, DType::f32, Stream{});
  std::mt19937_64 g(seed);
  std::normal_distribution<double> n(0.0, spread);
  auto* p = static_cast<float*>(t.data());
  for (int64_t i = 0; i < r * c; ++i) p[i] = static_cast<float>(n(g));
  return t;
}

// x ~ scale * q at element (i, k) of an (R, K) operand quantized with `block`.
double dequant(const std::pair<Tensor, Tensor>& qs, Fp8Block block, int64_t i, int64_t k) {
  const TensorView& q = qs.first.view();
  const TensorView& s = qs.second.view();
  const auto* sp = static_cast<const float*>(s.data);
  double scale = 1.0;
  switch (block) {
    case Fp8Block::tensor: scale = sp[0]; break;
    case Fp8Block::row: scale = sp[i]; break;
    case Fp8Block::block128: scale = sp[i * s.strides[0] + (k / 128) * s.strides[1]]; break;
    case Fp8Block::block128x128: scale = sp[(i / 128) * s.strides[0] + (k / 128) * s.strides[1]]; break;
  }
  const auto f = q.dtype == DType::f8_e4m3 ? detail::fp8::e4m3() : detail::fp8::e5m2();
  const uint8_t c = static_cast<const uint8_t*>(q.data)[i * q.shape[1] + k];
  return scale * detail::fp8::decode(c, f);
}

Fp8Block block_of(ScaleMode m) {
  switch (m) {
    case ScaleMode::row: return Fp8Block::row;
    case ScaleMode::block128: return Fp8Block::block128;
    case ScaleMode::block128x128: return Fp8Block::block128x128;
    default: return Fp8Block::tensor;
  }
}

// The transpose of a 2-D view (a scale of W read as the scale of B = W^T).
TensorView transposed(TensorView v) {
  if (v.ndim() == 2) {
    std::swap(v.shape[0], v.shape[1]);
    std::swap(v.strides[0], v.strides[1]);
  }
  return v;
}

struct Case {
  ScaleMode a, b;
  int64_t m, n, k;
  DType result;
};

class Fp8Scales : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) GTEST_SKIP() << "no CUDA device";
  }
};

TEST_P(Fp8Scales, MatchesFloat64OfDequantizedOperands) {
  const Case c = GetParam();
  const Tensor x = random_f32(c.m, c.k, 1, 3.0), w = random_f32(c.n, c.k, 2, 0.05);
  const auto qa = quantize_fp8(x.view(), DType::f8_e4m3, block_of(c.a));
  const auto qw = quantize_fp8(w.view(), DType::f8_e4m3, block_of(c.b));
  Both a = mirror(qa.first), wq = mirror(qw.first);
  Both sa = mirror(qa.second), sw = mirror(qw.second);
  TensorView b = wq.d;  // B = W^T: (K, N) column-major
  b.shape = {c.k, c.n};
  b.strides = {1, c.k};
  EpilogInputs in;
  in.a_scale = sa.d;
  in.b_scale = transposed(sw.d);
  in.a_scale_mode = c.a;
  in.b_scale_mode = c.b;
  in.amax = true;
  MatmulOptions o;
  o.result_type = c.result;
  Matmul mm(a.d, b, {}, 1.0, {}, o);
  mm.plan(Epilog::DEFAULT, in);
  const MatmulResult r = mm.execute(Stream{kGpu, nullptr});
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(r.aux.count("amax"), 1u);

  std::vector<double> ref(c.m * c.n, 0.0);
  double ref_amax = 0.0, norm = 0.0;
  for (int64_t i = 0; i < c.m; ++i)
    for (int64_t j = 0; j < c.n; ++j) {
      double acc = 0.0;
      for (int64_t k = 0; k < c.k; ++k)
        acc += dequant(qa, block_of(c.a), i, k) * dequant(qw, block_of(c.b), j, k);
      ref[i * c.n + j] = acc;
      ref_amax = std::max(ref_amax, std::fabs(acc));
      norm += acc * acc;
    }
  // The result as float64.
  std::vector<double> got(c.m * c.n);
  if (c.result == DType::f32) {
    const auto h = to_host_vec<float>(r.result.data(), got.size());
    for (std::size_t i = 0; i < got.size(); ++i) got[i] = h[i];
  } else {
    const auto h = to_host_vec<uint16_t>(r.result.data(), got.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      const uint32_t u = static_cast<uint32_t>(h[i]) << 16;  // bf16
      float f;
      std::memcpy(&f, &u, 4);
      got[i] = f;
    }
  }
  double err = 0.0;
  for (std::size_t i = 0; i < got.size(); ++i) err += (got[i] - ref[i]) * (got[i] - ref[i]);
  // Exact fp8 products, accumulated by Hopper's fp8 tensor cores with fewer bits than float32
  // (1.3e-4 relative measured on an H100); bf16 output adds its rounding (2^-9 relative).
  const double tol = c.result == DType::f32 ? 5e-4 : 5e-3;
  EXPECT_LT(std::sqrt(err / norm), tol) << name(c.a) << " x " << name(c.b);
  const float amax = to_host_vec<float>(r.aux.at("amax").data(), 1)[0];
  // gpula reduces a float32/bfloat16 result itself (cuBLASLt computes amax for fp8 results only):
  // within the result's error (the fp8 accumulation's, 1.1e-4 seen, and bf16's rounding).
  const double amax_tol = c.result == DType::f32 ? 5e-4 : 4e-3;
  EXPECT_NEAR(amax, ref_amax, amax_tol * ref_amax) << name(c.a) << " x " << name(c.b);
}

INSTANTIATE_TEST_SUITE_P(
    Modes, Fp8Scales,
    ::testing::Values(Case{ScaleMode::tensor, ScaleMode::tensor, 256, 384, 512, DType::f32},
                      Case{ScaleMode::row, ScaleMode::row, 256, 384, 512, DType::f32},
                      Case{ScaleMode::row, ScaleMode::row, 256, 384, 512, DType::bf16},
                      Case{ScaleMode::block128, ScaleMode::block128x128, 256, 384, 512, DType::f32},
                      Case{ScaleMode::block128, ScaleMode::block128x128, 256, 384, 512, DType::bf16},
                      Case{ScaleMode::block128x128, ScaleMode::block128, 256, 384, 512, DType::f32},
                      Case{ScaleMode::block128, ScaleMode::block128, 256, 384, 512, DType::f32},
                      // ragged: M, N not multiples of 128, K/128 = 5 (not a multiple of 4)
                      Case{ScaleMode::row, ScaleMode::row, 200, 136, 640, DType::f32},
                      Case{ScaleMode::block128, ScaleMode::block128x128, 200, 136, 640, DType::f32}));

TEST(Fp8Quantize, GpuBitsEqualCpu) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) GTEST_SKIP() << "no CUDA device";
  Tensor x = random_f32(300, 260, 5, 10.0);
  auto* p = static_cast<float*>(x.data());
  p[7] = NAN;
  p[300] = INFINITY;
  p[1000] = -INFINITY;
  p[2000] = 1e-30f;
  Both xd = mirror(x);
  for (DType t : {DType::f8_e4m3, DType::f8_e5m2})
    for (Fp8Block b : {Fp8Block::tensor, Fp8Block::row, Fp8Block::block128, Fp8Block::block128x128}) {
      const auto cpu = quantize_fp8(x.view(), t, b);
      const auto gpu = quantize_fp8(xd.d, t, b, Stream{kGpu, nullptr});
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      const auto q = to_host_vec<uint8_t>(gpu.first.data(), 300 * 260);
      EXPECT_EQ(std::memcmp(q.data(), cpu.first.data(), q.size()), 0) << name(b);
      const int64_t ns = extent(cpu.second.view());
      const auto s = to_host_vec<float>(gpu.second.data(), ns);
      EXPECT_EQ(std::memcmp(s.data(), cpu.second.data(), ns * 4), 0) << name(b);
      EXPECT_EQ(gpu.second.view().strides, cpu.second.view().strides);
    }
}

}  // namespace
