// The CUDA matmul against the CPU backend: the same Matmul run with options.device = cpu on host
// data, and on a GPU copy of that data (same strides). Device outputs are cudaMalloc'ed and
// poisoned with 0xFF first, so an element the GPU never writes shows up as NaN.
//
// Built only with CUDA; run by scripts/gpu_check.sh on the lent GPU (also under
// compute-sanitizer, where GPULA_TEST_SANITIZER=1 trims the heaviest cases).
#include <cuda_runtime.h>
#include <gpula/gpula.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "support/common.h"

namespace {

using namespace gpula;
using core_test::cdouble;
using core_test::HostTensor;
using core_test::Layout;
using core_test::make_host;

bool has_bias(Epilog e) {
  return e == Epilog::BIAS || e == Epilog::RELU_BIAS || e == Epilog::RELU_AUX_BIAS ||
         e == Epilog::GELU_BIAS || e == Epilog::GELU_AUX_BIAS;
}

bool under_sanitizer() { return std::getenv("GPULA_TEST_SANITIZER") != nullptr; }

void cuda_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
#define CUDA_OK(call) cuda_ok((call), #call)

// ---- device tensors --------------------------------------------------------------------------

struct DeviceTensor {
  std::shared_ptr<void> mem;
  TensorView view;
};

std::shared_ptr<void> device_alloc(std::size_t bytes) {
  void* p = nullptr;
  CUDA_OK(cudaMalloc(&p, std::max<std::size_t>(bytes, 1)));
  return std::shared_ptr<void>(p, [](void* q) { cudaFree(q); });
}

// A GPU copy of `v`, a view into h's storage (possibly broadcast): the whole storage is copied,
// and the view keeps its strides.
DeviceTensor to_device(const HostTensor& h, const TensorView& v) {
  DeviceTensor d;
  d.mem = device_alloc(h.storage_bytes());
  CUDA_OK(cudaMemcpy(d.mem.get(), h.mem.get(), h.storage_bytes(), cudaMemcpyHostToDevice));
  d.view = v;
  d.view.data = static_cast<char*>(d.mem.get()) +
                (static_cast<const char*>(v.data) - reinterpret_cast<const char*>(h.mem.get()));
  d.view.device = Device::cuda(0);
  return d;
}
DeviceTensor to_device(const HostTensor& h) { return to_device(h, h.view); }

// A contiguous device array filled with 0xFF bytes (NaN for floats).
DeviceTensor poisoned(const Shape& shape, DType t) {
  DeviceTensor d;
  const std::size_t bytes = core_test::product(shape) * size_of(t);
  d.mem = device_alloc(bytes);
  CUDA_OK(cudaMemset(d.mem.get(), 0xFF, std::max<std::size_t>(bytes, 1)));
  d.view = TensorView{d.mem.get(), t, shape, contiguous_strides(shape), Device::cuda(0)};
  return d;
}

// Host copy of a contiguous device array.
HostTensor to_host(const TensorView& dv) {
  EXPECT_TRUE(dv.is_contiguous());
  HostTensor h = make_host(dv.shape, dv.dtype);
  CUDA_OK(cudaMemcpy(h.view.data, dv.data, dv.numel() * size_of(dv.dtype), cudaMemcpyDeviceToHost));
  return h;
}

// ---- one problem, run on both backends -------------------------------------------------------

struct Arg {
  HostTensor host;
  TensorView view;  // into host's storage
};
Arg arg(const HostTensor& h) { return {h, h.view}; }

struct Problem {
  Arg a, b;
  std::optional<Arg> c, bias, relu_aux, gelu_aux;
  cdouble alpha = 1.0, beta = 0.0;
  Epilog epilog = Epilog::DEFAULT;
  MatmulOptions options;
  QuantizationScales scales;
};

struct Outputs {
  std::map<std::string, HostTensor> host;      // every output, on the host
  std::map<std::string, DeviceTensor> device;  // GPU runs: the device arrays themselves
};

EpilogInputs host_inputs(const Problem& p) {
  EpilogInputs in;
  if (p.bias) in.bias = p.bias->view;
  if (p.relu_aux) in.relu_aux = p.relu_aux->view;
  if (p.gelu_aux) in.gelu_aux = p.gelu_aux->view;
  return in;
}

Outputs run_cpu(const Problem& p) {
  MatmulOptions o = p.options;
  o.device = Device::cpu();
  std::optional<TensorView> c;
  if (p.c) c = p.c->view;
  Matmul mm(p.a.view, p.b.view, c, p.alpha, p.beta, o, p.scales);
  mm.plan(p.epilog, host_inputs(p));
  MatmulResult r = mm.execute();
  Outputs out;
  auto keep = [&](const std::string& k, const Tensor& t) {
    HostTensor h = make_host(t.shape(), t.dtype());
    std::memcpy(h.view.data, t.data(), t.view().numel() * size_of(t.dtype()));
    out.host[k] = h;
  };
  keep("result", r.result);
  for (const auto& [k, t] : r.aux) keep(k, t);
  return out;
}

// On the GPU; device inputs may be given (e.g. a forward call's device aux), else copied.
Outputs run_gpu(const Problem& p, cudaStream_t stream = nullptr,
                const std::map<std::string, TensorView>& device_inputs = {}) {
  std::vector<DeviceTensor> keep;
  auto dev = [&](const char* name, const Arg& x) {
    auto it = device_inputs.find(name);
    if (it != device_inputs.end()) return it->second;
    keep.push_back(to_device(x.host, x.view));
    return keep.back().view;
  };
  const TensorView a = dev("a", p.a), b = dev("b", p.b);
  std::optional<TensorView> c;
  if (p.c) c = dev("c", *p.c);
  EpilogInputs in;
  if (p.bias) in.bias = dev("bias", *p.bias);
  if (p.relu_aux) in.relu_aux = dev("relu_aux", *p.relu_aux);
  if (p.gelu_aux) in.gelu_aux = dev("gelu_aux", *p.gelu_aux);
  Matmul mm(a, b, c, p.alpha, p.beta, p.options, p.scales);
  EXPECT_EQ(mm.device(), Device::cuda(0));
  mm.plan(p.epilog, in);
  Outputs out;
  MatmulOutputs mo;
  for (const OutputSpec& s : mm.output_specs()) {
    DeviceTensor d = poisoned(s.shape, s.dtype);
    if (s.name == "result")
      mo.result = d.view;
    else
      mo.aux[s.name] = d.view;
    out.device[s.name] = d;
  }
  const Stream st{Device::cuda(0), stream};
  mm.execute(mo, st);
  CUDA_OK(cudaStreamSynchronize(stream));
  for (const auto& [k, d] : out.device) out.host[k] = to_host(d.view);
  return out;
}

// |got - want| <= rtol * (|want| + max |want|), element by element. For aux arrays with padded
// rows (aux_ld > n), only the first `cols` columns of each row are compared.
void expect_match(const HostTensor& got, const HostTensor& want, double rtol,
                  const std::string& what, int64_t cols = -1) {
  ASSERT_EQ(got.view.shape, want.view.shape) << what;
  ASSERT_EQ(got.view.dtype, want.view.dtype) << what;
  double max_abs = 0.0;
  core_test::for_each_index(
      want.view.shape, [&](const Shape& i) { max_abs = std::max(max_abs, std::abs(want.get(i))); });
  int64_t bad = 0, f = 0;
  core_test::for_each_index(want.view.shape, [&](const Shape& i) {
    ++f;
    if (cols >= 0 && !i.empty() && i.back() >= cols) return;
    const cdouble g = got.get(i), w = want.get(i);
    if (!(std::abs(g - w) <= rtol * (std::abs(w) + max_abs)) && bad++ < 5)
      ADD_FAILURE() << what << " element " << f - 1 << ": gpu (" << g.real() << ", " << g.imag()
                    << "), cpu (" << w.real() << ", " << w.imag() << ")";
  });
  EXPECT_EQ(bad, 0) << what << ": " << bad << " elements differ";
}

// ReLU bit masks: bits of columns j < n of every row must agree.
void expect_same_mask(const HostTensor& got, const HostTensor& want, int64_t n,
                      const std::string& what) {
  ASSERT_EQ(got.view.shape, want.view.shape) << what;
  const int64_t row_bytes = got.view.shape.back();
  const int64_t rows = got.view.numel() / std::max<int64_t>(row_bytes, 1);
  const auto* g = static_cast<const uint8_t*>(got.view.data);
  const auto* w = static_cast<const uint8_t*>(want.view.data);
  int64_t bad = 0;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) {
      const int gb = (g[r * row_bytes + j / 8] >> (j % 8)) & 1;
      const int wb = (w[r * row_bytes + j / 8] >> (j % 8)) & 1;
      if (gb != wb && bad++ < 5) ADD_FAILURE() << what << " row " << r << " col " << j;
    }
  EXPECT_EQ(bad, 0) << what;
}

double rtol_of(DType t) {
  switch (t) {
    case DType::f16:
      return 2e-3;
    case DType::bf16:
      return 1.6e-2;
    case DType::f32:
    case DType::c64:
      return 2e-5;
    default:
      return 1e-12;
  }
}

// Compares every output of a GPU run with the CPU run of the same problem.
void compare_runs(const Outputs& gpu, const Outputs& cpu, const Problem& p, double rtol,
                  const std::string& what) {
  ASSERT_EQ(gpu.host.size(), cpu.host.size()) << what;
  const int64_t n =
      gpu.host.at("result").view.shape.empty() ? 1 : gpu.host.at("result").view.shape.back();
  for (const auto& [k, want] : cpu.host) {
    const HostTensor& got = gpu.host.at(k);
    if (k == "relu_aux")
      expect_same_mask(got, want, n, what + " relu_aux");
    else
      expect_match(got, want, rtol, what + " " + k, k == "gelu_aux" ? n : -1);
  }
  (void)p;
}

HostTensor random(const Shape& s, DType t, Layout l, uint64_t seed, bool integers = false) {
  HostTensor h = make_host(s, t, l);
  core_test::Filler(seed).fill(h.view, integers);
  return h;
}

class Cuda : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cuda_compiled() || cuda_device_count() == 0) GTEST_SKIP() << "no usable CUDA device";
  }
};

// ---- dtypes x layouts x batch shapes -----------------------------------------------------------

struct ShapeCase {
  Shape a, b;
  Layout la, lb;
};

const std::vector<ShapeCase> kShapes = {
    {{67, 45}, {45, 33}, Layout::row, Layout::row},
    {{67, 45}, {45, 33}, Layout::col, Layout::row},
    {{67, 45}, {45, 33}, Layout::row, Layout::col},
    {{67, 45}, {45, 33}, Layout::col, Layout::col},
    {{40, 24}, {24, 36}, Layout::padded, Layout::col_padded},
    {{40, 24}, {24, 36}, Layout::strided, Layout::row},  // staged by one copy
    {{3, 40, 24}, {3, 24, 36}, Layout::row, Layout::col},
    {{2, 1, 40, 24}, {1, 3, 24, 36}, Layout::col, Layout::row},  // broadcast batch dims
    {{4, 40, 24}, {24, 36}, Layout::row, Layout::row},           // shared B: folded into m
    {{4, 40, 24}, {24, 36}, Layout::col, Layout::padded},
    {{24}, {24, 36}, Layout::row, Layout::row},  // 1-D operands
    {{40, 24}, {24}, Layout::row, Layout::row},
    {{256, 320}, {320, 192}, Layout::row, Layout::col},  // several tiles
};

class CudaDTypes : public Cuda, public ::testing::WithParamInterface<DType> {};

TEST_P(CudaDTypes, ShapesAndLayoutsMatchCpu) {
  const DType t = GetParam();
  uint64_t seed = 100;
  for (const ShapeCase& sc : kShapes) {
    Problem p{arg(random(sc.a, t, sc.la, seed++)), arg(random(sc.b, t, sc.lb, seed++))};
    const std::string what = core_test::str(t) + " a" + p.a.view.shape_str() + " " +
                             core_test::layout_name(sc.la) + " b" + p.b.view.shape_str() + " " +
                             core_test::layout_name(sc.lb);
    compare_runs(run_gpu(p), run_cpu(p), p, rtol_of(t), what);
  }
}

TEST_P(CudaDTypes, StrideZeroBatchView) {
  const DType t = GetParam();
  HostTensor a1 = random({1, 40, 24}, t, Layout::row, 1);
  Problem p{{a1, core_test::broadcast_dim(a1.view, 0, 3)},
            arg(random({3, 24, 36}, t, Layout::col, 2))};
  compare_runs(run_gpu(p), run_cpu(p), p, rtol_of(t), "stride-0 batch");
}

TEST_P(CudaDTypes, AlphaBetaAndC) {
  const DType t = GetParam();
  const bool cplx = is_complex(t);
  const cdouble alpha = cplx ? cdouble(0.5, -1.0) : cdouble(0.5),
                beta = cplx ? cdouble(-2.0, 0.5) : cdouble(-2.0);
  for (Layout lc : {Layout::row, Layout::padded, Layout::col}) {
    Problem p{arg(random({2, 40, 24}, t, Layout::row, 3)),
              arg(random({24, 36}, t, Layout::col, 4))};
    p.c = arg(random({2, 40, 36}, t, lc, 5));
    p.alpha = alpha;
    p.beta = beta;
    compare_runs(run_gpu(p), run_cpu(p), p, rtol_of(t),
                 std::string("c ") + core_test::layout_name(lc));
  }
  // c broadcast from one row
  Problem p{arg(random({40, 24}, t, Layout::row, 6)), arg(random({24, 36}, t, Layout::row, 7))};
  p.c = arg(random({36}, t, Layout::row, 8));
  p.beta = 1.0;
  compare_runs(run_gpu(p), run_cpu(p), p, rtol_of(t), "c (n,)");
}

TEST_P(CudaDTypes, EmptyDimensions) {
  const DType t = GetParam();
  const std::vector<std::pair<Shape, Shape>> shapes = {
      {{0, 24}, {24, 36}}, {{40, 24}, {24, 0}}, {{40, 0}, {0, 36}}, {{0, 40, 24}, {24, 36}}};
  for (const auto& [sa, sb] : shapes) {
    Problem p{arg(random(sa, t, Layout::row, 9)), arg(random(sb, t, Layout::row, 10))};
    compare_runs(run_gpu(p), run_cpu(p), p, rtol_of(t), "empty a" + p.a.view.shape_str());
  }
  // k = 0 with beta * c
  Problem p{arg(random({40, 0}, t, Layout::row, 11)), arg(random({0, 36}, t, Layout::row, 12))};
  p.c = arg(random({40, 36}, t, Layout::row, 13));
  p.beta = 2.0;
  compare_runs(run_gpu(p), run_cpu(p), p, rtol_of(t), "k=0 with c");
}

TEST_P(CudaDTypes, GpulaAllocatedOutputsOnAStream) {
  const DType t = GetParam();
  HostTensor a = random({3, 40, 24}, t, Layout::row, 14),
             b = random({3, 24, 36}, t, Layout::row, 15);
  Problem p{arg(a), arg(b)};
  const Outputs cpu = run_cpu(p);
  cudaStream_t s;
  CUDA_OK(cudaStreamCreate(&s));
  {
    DeviceTensor da = to_device(a), db = to_device(b);
    MatmulResult r = gpula::matmul(da.view, db.view, {}, 1.0, 0.0, Epilog::DEFAULT, {}, {},
                                   Stream{Device::cuda(0), s});
    EXPECT_EQ(r.result.device(), Device::cuda(0));
    CUDA_OK(cudaStreamSynchronize(s));
    expect_match(to_host(r.result.view()), cpu.host.at("result"), rtol_of(t), "function form");
    matmul_cache_clear();
  }
  CUDA_OK(cudaStreamSynchronize(s));
  CUDA_OK(cudaStreamDestroy(s));
}

INSTANTIATE_TEST_SUITE_P(AllTypes, CudaDTypes,
                         ::testing::Values(DType::f16, DType::bf16, DType::f32, DType::f64,
                                           DType::c64, DType::c128),
                         [](const auto& info) { return std::string(name(info.param)); });

// ---- compute types -----------------------------------------------------------------------------

TEST_F(Cuda, Tf32ComputeType) {
  Problem p{arg(random({2, 130, 96}, DType::f32, Layout::row, 20)),
            arg(random({96, 70}, DType::f32, Layout::col, 21))};
  p.options.compute_type = ComputeType::COMPUTE_32F_FAST_TF32;
  compare_runs(run_gpu(p), run_cpu(p), p, 5e-3, "tf32");
}

TEST_F(Cuda, OtherReducedComputeTypes) {
  for (ComputeType ct : {ComputeType::COMPUTE_32F_FAST_16F, ComputeType::COMPUTE_32F_FAST_16BF}) {
    Problem p{arg(random({64, 96}, DType::f32, Layout::row, 22)),
              arg(random({96, 48}, DType::f32, Layout::row, 23))};
    p.options.compute_type = ct;
    compare_runs(run_gpu(p), run_cpu(p), p, ct == ComputeType::COMPUTE_32F_FAST_16F ? 5e-3 : 3e-2,
                 std::string(name(ct)));
  }
  // f16 accumulation: exact on small integers
  Problem p{arg(random({64, 96}, DType::f16, Layout::row, 24, true)),
            arg(random({96, 48}, DType::f16, Layout::col, 25, true))};
  p.options.compute_type = ComputeType::COMPUTE_16F;
  compare_runs(run_gpu(p), run_cpu(p), p, 1e-3, "COMPUTE_16F");
}

// ---- fp8 ---------------------------------------------------------------------------------------

// Values exactly representable in the fp8 type: multiples of 1/4 up to 3.75 (e4m3), of 1/2 up to
// 3.5 (e5m2).
HostTensor fp8_random(const Shape& s, DType t, Layout l, uint64_t seed) {
  HostTensor h = make_host(s, t, l);
  std::mt19937_64 rng(seed);
  const int lim = t == DType::f8_e4m3 ? 15 : 7;
  const double step = t == DType::f8_e4m3 ? 0.25 : 0.5;
  std::uniform_int_distribution<int> u(-lim, lim);
  core_test::for_each_index(s, [&](const Shape& i) { h.set(i, u(rng) * step); });
  return h;
}

// The same values as f32, in a C-order copy.
HostTensor dequantized(const Arg& x) {
  HostTensor h = make_host(x.view.shape, DType::f32);
  core_test::for_each_index(x.view.shape,
                            [&](const Shape& i) { h.set(i, core_test::at(x.view, i)); });
  return h;
}

struct Fp8Case {
  DType ta, tb, result;
  Epilog epilog;
  bool batched;
};

class CudaFp8 : public Cuda, public ::testing::WithParamInterface<Fp8Case> {};

TEST_P(CudaFp8, XTimesWTransposedMatchesF32Reference) {
  const Fp8Case fc = GetParam();
  const int64_t m = 64, n = 48, k = 96;
  // x (m, k) row-major; W (n, k) row-major, used as W^T: a (k, n) column-major view.
  Shape sa = fc.batched ? Shape{2, m, k} : Shape{m, k};
  Problem p{arg(fp8_random(sa, fc.ta, Layout::row, 30)),
            arg(fp8_random({k, n}, fc.tb, Layout::col, 31))};
  p.options.result_type = fc.result;
  p.scales = {.a = 0.5f, .b = 2.0f, .d = 1.0f};
  p.alpha = 1.5;
  p.epilog = fc.epilog;
  if (has_bias(fc.epilog)) p.bias = arg(random({n}, DType::bf16, Layout::row, 32));
  Outputs gpu;
  try {
    gpu = run_gpu(p);
  } catch (const NotSupported& e) {
    if (fc.epilog == Epilog::DEFAULT || fc.epilog == Epilog::BIAS) throw;
    GTEST_SKIP() << "cuBLASLt: " << e.what();
  }
  // The CPU reference: f32 operands with the same values; alpha folds in the scales.
  Problem r{arg(dequantized(p.a)), arg(dequantized(p.b))};
  r.alpha = p.alpha * static_cast<double>(p.scales.a * p.scales.b);
  r.epilog = fc.epilog;
  if (p.bias) r.bias = arg(dequantized(*p.bias));
  const Outputs cpu = run_cpu(r);
  const HostTensor& got = gpu.host.at("result");
  const HostTensor& want = cpu.host.at("result");
  ASSERT_EQ(got.view.shape, want.view.shape);
  HostTensor got32 = make_host(got.view.shape, DType::f32);
  core_test::for_each_index(got.view.shape, [&](const Shape& i) { got32.set(i, got.get(i)); });
  expect_match(
      got32, want, fc.result == DType::f32 ? 1e-5 : rtol_of(fc.result),
      core_test::str(fc.ta) + " x " + core_test::str(fc.tb) + " -> " + core_test::str(fc.result));
}

INSTANTIATE_TEST_SUITE_P(
    Fp8, CudaFp8,
    ::testing::Values(
        Fp8Case{DType::f8_e4m3, DType::f8_e4m3, DType::bf16, Epilog::DEFAULT, false},
        Fp8Case{DType::f8_e4m3, DType::f8_e4m3, DType::bf16, Epilog::DEFAULT, true},
        Fp8Case{DType::f8_e4m3, DType::f8_e4m3, DType::f16, Epilog::DEFAULT, false},
        Fp8Case{DType::f8_e4m3, DType::f8_e5m2, DType::bf16, Epilog::DEFAULT, false},
        Fp8Case{DType::f8_e5m2, DType::f8_e4m3, DType::bf16, Epilog::DEFAULT, false},
        Fp8Case{DType::f8_e4m3, DType::f8_e4m3, DType::bf16, Epilog::BIAS, false},
        Fp8Case{DType::f8_e4m3, DType::f8_e4m3, DType::bf16, Epilog::RELU_BIAS, false},
        Fp8Case{DType::f8_e4m3, DType::f8_e4m3, DType::bf16, Epilog::GELU_BIAS, false},
        Fp8Case{DType::f8_e4m3, DType::f8_e4m3, DType::f32, Epilog::DEFAULT, false}),
    [](const auto& info) {
      const Fp8Case& c = info.param;
      return std::string(c.ta == DType::f8_e4m3 ? "e4m3" : "e5m2") + "_" +
             (c.tb == DType::f8_e4m3 ? "e4m3" : "e5m2") + "_" + std::string(name(c.result)) + "_" +
             std::string(name(c.epilog)) + (c.batched ? "_batched" : "");
    });

// ---- epilogues
// -----------------------------------------------------------------------------------

struct EpiCase {
  DType t;
  Epilog forward;   // the forward epilogue (writes aux for the backward ones)
  Epilog backward;  // DEFAULT: none
  bool batched;
};

bool relu_family(Epilog e) {
  return e == Epilog::RELU || e == Epilog::RELU_AUX || e == Epilog::RELU_BIAS ||
         e == Epilog::RELU_AUX_BIAS || e == Epilog::DRELU || e == Epilog::DRELU_BGRAD;
}

class CudaEpilog : public Cuda, public ::testing::WithParamInterface<EpiCase> {};

TEST_P(CudaEpilog, ForwardAndBackwardMatchCpu) {
  const EpiCase ec = GetParam();
  const DType t = ec.t;
  const int64_t m = 70, k = 24, n = 36;  // n not a multiple of 8: aux rows are padded
  // Small integers (exact everywhere) for ReLU and bias gradients; a bias of x.5 keeps every
  // pre-activation away from 0, so masks agree bit for bit.
  const bool ints = relu_family(ec.forward) || ec.forward == Epilog::BGRADA ||
                    ec.forward == Epilog::BGRADB || ec.forward == Epilog::BIAS;
  const Shape sa = ec.batched ? Shape{2, m, k} : Shape{m, k};
  const Shape sb = ec.batched ? Shape{2, k, n} : Shape{k, n};
  Problem f{arg(random(sa, t, Layout::row, 40, ints)), arg(random(sb, t, Layout::col, 41, ints))};
  f.epilog = ec.forward;
  if (has_bias(ec.forward)) {
    HostTensor bias = make_host({n}, t);
    core_test::Filler fill(42);
    core_test::for_each_index(
        bias.view.shape, [&](const Shape& i) { bias.set(i, fill.integer(2, false).real() + 0.5); });
    f.bias = arg(bias);
  }
  const std::string what =
      core_test::str(t) + " " + std::string(name(ec.forward)) + (ec.batched ? " batched" : "");
  Outputs gpu;
  try {
    gpu = run_gpu(f);
  } catch (const NotSupported& e) {
    if (t != DType::f64) throw;
    GTEST_SKIP() << "cuBLASLt: " << e.what();
  }
  const Outputs cpu = run_cpu(f);
  const bool gelu = !relu_family(ec.forward) && ec.forward != Epilog::BIAS &&
                    ec.forward != Epilog::BGRADA && ec.forward != Epilog::BGRADB;
  const double rtol = gelu ? std::max(rtol_of(t), 1e-4) : rtol_of(t);
  compare_runs(gpu, cpu, f, rtol, what);
  if (ec.backward == Epilog::DEFAULT) return;

  // Backward: (G @ H) times the activation's derivative at the stored point. The GPU reads the
  // aux its forward call wrote, in place on the device; the CPU reads its own.
  const char* aux = relu_family(ec.backward) ? "relu_aux" : "gelu_aux";
  Problem g{arg(random(ec.batched ? Shape{2, m, 16} : Shape{m, 16}, t, Layout::row, 43, ints)),
            arg(random(ec.batched ? Shape{2, 16, n} : Shape{16, n}, t, Layout::row, 44, ints))};
  g.epilog = ec.backward;
  Problem g_cpu = g;
  (relu_family(ec.backward) ? g.relu_aux : g.gelu_aux) = arg(gpu.host.at(aux));
  (relu_family(ec.backward) ? g_cpu.relu_aux : g_cpu.gelu_aux) = arg(cpu.host.at(aux));
  const Outputs gb = run_gpu(g, nullptr, {{aux, gpu.device.at(aux).view}});
  const Outputs cb = run_cpu(g_cpu);
  compare_runs(gb, cb, g, gelu ? std::max(rtol_of(t), 1e-4) : rtol_of(t),
               what + " -> " + std::string(name(ec.backward)));
}

std::vector<EpiCase> epilog_cases() {
  std::vector<EpiCase> v;
  for (DType t : {DType::f16, DType::bf16, DType::f32, DType::f64})
    for (bool batched : {false, true}) {
      for (Epilog e : {Epilog::RELU, Epilog::BIAS, Epilog::RELU_BIAS, Epilog::GELU,
                       Epilog::GELU_BIAS, Epilog::GELU_AUX, Epilog::BGRADA, Epilog::BGRADB})
        v.push_back({t, e, Epilog::DEFAULT, batched});
      v.push_back({t, Epilog::RELU_AUX, Epilog::DRELU, batched});
      v.push_back({t, Epilog::RELU_AUX_BIAS, Epilog::DRELU_BGRAD, batched});
      v.push_back({t, Epilog::GELU_AUX, Epilog::DGELU, batched});
      v.push_back({t, Epilog::GELU_AUX_BIAS, Epilog::DGELU_BGRAD, batched});
    }
  return v;
}

INSTANTIATE_TEST_SUITE_P(All, CudaEpilog, ::testing::ValuesIn(epilog_cases()),
                         [](const auto& info) {
                           const EpiCase& c = info.param;
                           std::string s =
                               std::string(name(c.t)) + "_" + std::string(name(c.forward));
                           if (c.backward != Epilog::DEFAULT)
                             s += "_then_" + std::string(name(c.backward));
                           return s + (c.batched ? "_batched" : "");
                         });

// ---- plans: autotune, reset_operands, where work runs, memory limits ---------------------------

TEST_F(Cuda, AutotuneReturnsACandidateAndKeepsResults) {
  HostTensor a = random({256, 192}, DType::bf16, Layout::row, 50);
  HostTensor b = random({192, 320}, DType::bf16, Layout::col, 51);
  HostTensor bias = random({320}, DType::bf16, Layout::row, 52);
  DeviceTensor da = to_device(a), db = to_device(b), dbias = to_device(bias);
  Matmul mm(da.view, db.view);
  const std::vector<AlgorithmInfo> algos = mm.plan(Epilog::RELU_BIAS, {.bias = dbias.view});
  ASSERT_FALSE(algos.empty());
  for (const AlgorithmInfo& x : algos) EXPECT_GE(x.algo_id, 0);
  EXPECT_EQ(mm.algorithm().index, 0);
  DeviceTensor before = poisoned({256, 320}, DType::bf16);
  mm.execute({.result = before.view});
  const AlgorithmInfo chosen = mm.autotune(3);
  EXPECT_GE(chosen.index, 0);
  EXPECT_LT(chosen.index, static_cast<int>(algos.size()));
  EXPECT_GE(chosen.time_ms, 0.0f);
  EXPECT_EQ(mm.algorithm().index, chosen.index);
  DeviceTensor after = poisoned({256, 320}, DType::bf16);
  mm.execute({.result = after.view});
  CUDA_OK(cudaDeviceSynchronize());
  expect_match(to_host(after.view), to_host(before.view), rtol_of(DType::bf16), "after autotune");
  Problem p{arg(a), arg(b)};
  p.epilog = Epilog::RELU_BIAS;
  p.bias = arg(bias);
  expect_match(to_host(after.view), run_cpu(p).host.at("result"), rtol_of(DType::bf16), "vs cpu");
}

TEST_F(Cuda, ResetOperandsSwapsDataWithoutReplanning) {
  const DType t = DType::f32;
  HostTensor a = random({2, 64, 48}, t, Layout::row, 60), b = random({48, 80}, t, Layout::col, 61);
  HostTensor bias = random({80}, t, Layout::row, 62);
  HostTensor a2 = random({2, 64, 48}, t, Layout::row, 63),
             b2 = random({48, 80}, t, Layout::col, 64);
  HostTensor bias2 = random({80}, t, Layout::row, 65);
  DeviceTensor da = to_device(a), db = to_device(b), dbias = to_device(bias);
  DeviceTensor da2 = to_device(a2), db2 = to_device(b2), dbias2 = to_device(bias2);
  Matmul mm(da.view, db.view);
  mm.plan(Epilog::GELU_BIAS, {.bias = dbias.view});
  mm.autotune(2);
  const AlgorithmInfo algo = mm.algorithm();
  mm.reset_operands({.a = da2.view, .b = db2.view, .epilog_inputs = {.bias = dbias2.view}});
  EXPECT_EQ(mm.algorithm().algo_id, algo.algo_id);
  DeviceTensor out = poisoned({2, 64, 80}, t);
  mm.execute({.result = out.view});
  CUDA_OK(cudaDeviceSynchronize());
  Problem p{arg(a2), arg(b2)};
  p.epilog = Epilog::GELU_BIAS;
  p.bias = arg(bias2);
  expect_match(to_host(out.view), run_cpu(p).host.at("result"), 1e-4, "after reset_operands");
  EXPECT_THROW(mm.reset_operands({.b = da.view}), InvalidArgument);
}

// The second execute with the same operands and stream is captured into a CUDA graph and later
// ones replay it: results must follow the operands' current data, a rebinding, an autotune, and
// a caller who captures the stream into a graph of their own.
TEST_F(Cuda, RepeatedExecuteReplaysAGraphThatReadsCurrentData) {
  const DType t = DType::f32;
  HostTensor b = random({64, 64}, t, Layout::row, 71);
  DeviceTensor da = to_device(random({64, 64}, t, Layout::row, 70)), db = to_device(b);
  DeviceTensor da2 = to_device(random({64, 64}, t, Layout::row, 72));
  DeviceTensor out = poisoned({64, 64}, t);
  cudaStream_t st;
  CUDA_OK(cudaStreamCreate(&st));
  const Stream stream{Device::cuda(0), st};
  {
    Matmul mm(da.view, db.view);
    mm.plan();
    auto round = [&](const DeviceTensor& dst_a, uint64_t seed, const char* what) {
      HostTensor a = random({64, 64}, t, Layout::row, seed);
      CUDA_OK(cudaMemcpyAsync(dst_a.view.data, a.view.data, 64 * 64 * sizeof(float),
                              cudaMemcpyHostToDevice, st));
      mm.execute({.result = out.view}, stream);
      CUDA_OK(cudaStreamSynchronize(st));
      Problem p{arg(a), arg(b)};
      expect_match(to_host(out.view), run_cpu(p).host.at("result"), 1e-4, what);
    };
    for (uint64_t r = 0; r < 5; ++r) round(da, 100 + r, "repeated execute");
    mm.reset_operands({.a = da2.view});
    for (uint64_t r = 0; r < 3; ++r) round(da2, 200 + r, "after reset_operands");
    mm.autotune(2);
    for (uint64_t r = 0; r < 3; ++r) round(da2, 300 + r, "after autotune");
    // The caller captures: the execute becomes a node of their graph, run at each launch.
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CUDA_OK(cudaStreamBeginCapture(st, cudaStreamCaptureModeGlobal));
    mm.execute({.result = out.view}, stream);
    CUDA_OK(cudaStreamEndCapture(st, &g));
    CUDA_OK(cudaGraphInstantiate(&ge, g, 0));
    HostTensor a = random({64, 64}, t, Layout::row, 400);
    CUDA_OK(cudaMemcpyAsync(da2.view.data, a.view.data, 64 * 64 * sizeof(float),
                            cudaMemcpyHostToDevice, st));
    CUDA_OK(cudaGraphLaunch(ge, st));
    CUDA_OK(cudaStreamSynchronize(st));
    Problem p{arg(a), arg(b)};
    expect_match(to_host(out.view), run_cpu(p).host.at("result"), 1e-4, "in the caller's graph");
    CUDA_OK(cudaGraphExecDestroy(ge));
    CUDA_OK(cudaGraphDestroy(g));
    // The legacy default stream cannot be captured; the plan captures on a stream of its own
    // and replays there, ordered after the copies on the default stream.
    const Stream legacy{Device::cuda(0), nullptr};
    for (uint64_t r = 0; r < 4; ++r) {
      HostTensor a = random({64, 64}, t, Layout::row, 500 + r);
      CUDA_OK(cudaMemcpy(da2.view.data, a.view.data, 64 * 64 * sizeof(float),
                         cudaMemcpyHostToDevice));
      mm.execute({.result = out.view}, legacy);
      CUDA_OK(cudaDeviceSynchronize());
      Problem p{arg(a), arg(b)};
      expect_match(to_host(out.view), run_cpu(p).host.at("result"), 1e-4,
                   "repeated execute on the default stream");
    }
  }
  CUDA_OK(cudaStreamSynchronize(st));
  CUDA_OK(cudaStreamDestroy(st));
}

TEST_F(Cuda, HostDataRunOnTheGpuAndDeviceDataOnTheCpu) {
  const DType t = DType::f64;
  HostTensor a = random({3, 40, 24}, t, Layout::col, 70), b = random({24, 36}, t, Layout::row, 71);
  Problem p{arg(a), arg(b)};
  const Outputs cpu = run_cpu(p);
  // Host data, work on the GPU: copies in and out, the result on the host.
  MatmulOptions on_gpu;
  on_gpu.device = Device::cuda(0);
  MatmulResult r = gpula::matmul(a.view, b.view, {}, 1.0, 0.0, Epilog::DEFAULT, {}, on_gpu);
  EXPECT_EQ(r.result.device(), Device::cpu());
  HostTensor got = make_host(r.result.shape(), t);
  std::memcpy(got.view.data, r.result.data(), r.result.view().numel() * size_of(t));
  expect_match(got, cpu.host.at("result"), 1e-12, "host data on the GPU");
  // Device data, work on the CPU: the result stays on the device.
  DeviceTensor da = to_device(a), db = to_device(b);
  MatmulOptions on_cpu;
  on_cpu.device = Device::cpu();
  Matmul mm(da.view, db.view, {}, 1.0, 0.0, on_cpu);
  EXPECT_EQ(mm.device(), Device::cpu());
  mm.plan();
  DeviceTensor out = poisoned({3, 40, 36}, t);
  mm.execute({.result = out.view});
  CUDA_OK(cudaDeviceSynchronize());
  expect_match(to_host(out.view), cpu.host.at("result"), 1e-12, "device data on the CPU");
  matmul_cache_clear();
}

TEST_F(Cuda, TinyMemoryLimitFallsBackToTheCpu) {
  const DType t = DType::f32;
  // Strided operands need staging copies, which a 16-byte memory_limit cannot hold.
  HostTensor a = random({64, 48}, t, Layout::strided, 80), b = random({48, 40}, t, Layout::row, 81);
  Problem p{arg(a), arg(b)};
  const Outputs cpu = run_cpu(p);
  DeviceTensor da = to_device(a), db = to_device(b);
  MatmulOptions o;
  o.memory_limit = MemoryLimit::of_bytes(16);
  {
    Matmul strict(da.view, db.view, {}, 1.0, 0.0, o);
    strict.plan();
    DeviceTensor out = poisoned({64, 40}, t);
    EXPECT_THROW(strict.execute({.result = out.view}), OutOfMemory);
  }
  std::vector<std::string> warnings;
  o.fallback = Fallback::cpu;
  o.logger = [&](LogLevel l, const std::string& msg) {
    if (l >= LogLevel::warning) warnings.push_back(msg);
  };
  Matmul mm(da.view, db.view, {}, 1.0, 0.0, o);
  mm.plan();
  DeviceTensor out = poisoned({64, 40}, t);
  mm.execute({.result = out.view});
  CUDA_OK(cudaDeviceSynchronize());
  expect_match(to_host(out.view), cpu.host.at("result"), 1e-5, "cpu fallback");
  ASSERT_FALSE(warnings.empty());
  EXPECT_NE(warnings[0].find("CPU"), std::string::npos) << warnings[0];
  // A zero workspace still finds an algorithm for operands read in place.
  HostTensor c = random({64, 48}, t, Layout::row, 82);
  DeviceTensor dc = to_device(c);
  MatmulOptions zero_ws;
  zero_ws.memory_limit = MemoryLimit::of_bytes(0);
  Matmul z(dc.view, db.view, {}, 1.0, 0.0, zero_ws);
  z.plan();
  for (const AlgorithmInfo& x : z.plan()) EXPECT_EQ(x.workspace_bytes, 0);
  DeviceTensor zout = poisoned({64, 40}, t);
  z.execute({.result = zout.view});
  CUDA_OK(cudaDeviceSynchronize());
  expect_match(to_host(zout.view), run_cpu(Problem{arg(c), arg(b)}).host.at("result"), 1e-5,
               "zero workspace");
}

TEST_F(Cuda, BlockingOptionWaitsForTheResult) {
  HostTensor a = random({128, 64}, DType::f32, Layout::row, 90),
             b = random({64, 96}, DType::f32, Layout::row, 91);
  DeviceTensor da = to_device(a), db = to_device(b);
  cudaStream_t s;
  CUDA_OK(cudaStreamCreate(&s));
  MatmulOptions o;
  o.blocking = true;
  {
    Matmul mm(da.view, db.view, {}, 1.0, 0.0, o);
    mm.plan();
    DeviceTensor out = poisoned({128, 96}, DType::f32);
    mm.execute({.result = out.view}, Stream{Device::cuda(0), s});
    EXPECT_EQ(cudaStreamQuery(s), cudaSuccess);
    expect_match(to_host(out.view), run_cpu(Problem{arg(a), arg(b)}).host.at("result"), 1e-5,
                 "blocking");
  }
  CUDA_OK(cudaStreamDestroy(s));
}

// ---- threads
// -------------------------------------------------------------------------------------

TEST_F(Cuda, EightThreadsEachWithItsOwnStream) {
  constexpr int kThreads = 8;
  const int iters = under_sanitizer() ? 2 : 10;
  struct Work {
    HostTensor a, b, bias;
    HostTensor want_plain, want_epilog;
  };
  std::vector<Work> work(kThreads);
  for (int i = 0; i < kThreads; ++i) {
    Work& w = work[i];
    const DType t = i % 2 ? DType::bf16 : DType::f32;
    w.a = random({2, 96 + 8 * i, 64}, t, Layout::row, 200 + i, true);
    w.b = random({64, 72}, t, i % 3 ? Layout::col : Layout::row, 300 + i, true);
    w.bias = random({72}, t, Layout::row, 400 + i, true);
    Problem p{arg(w.a), arg(w.b)};
    w.want_plain = run_cpu(p).host.at("result");
    p.epilog = Epilog::RELU_BIAS;
    p.bias = arg(w.bias);
    w.want_epilog = run_cpu(p).host.at("result");
  }
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      Work& w = work[i];
      try {
        cudaStream_t s;
        CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
        {
          const Stream st{Device::cuda(0), s};
          DeviceTensor da = to_device(w.a), db = to_device(w.b), dbias = to_device(w.bias);
          Matmul own(da.view, db.view);
          own.plan(Epilog::RELU_BIAS, {.bias = dbias.view});
          std::vector<MatmulResult> plain, fused;
          for (int it = 0; it < iters; ++it) {
            plain.push_back(
                gpula::matmul(da.view, db.view, {}, 1.0, 0.0, Epilog::DEFAULT, {}, {}, st));
            fused.push_back(own.execute(st));
          }
          CUDA_OK(cudaStreamSynchronize(s));
          for (int it = 0; it < iters; ++it) {
            HostTensor p = to_host(plain[it].result.view()), f = to_host(fused[it].result.view());
            const double rtol = rtol_of(w.a.view.dtype);
            expect_match(p, w.want_plain, rtol, "thread " + std::to_string(i) + " function form");
            expect_match(f, w.want_epilog, rtol, "thread " + std::to_string(i) + " plan");
          }
          plain.clear();
          fused.clear();
          matmul_cache_clear();
          CUDA_OK(cudaStreamSynchronize(s));
        }
        CUDA_OK(cudaStreamDestroy(s));
      } catch (const std::exception& e) {
        ADD_FAILURE() << "thread " << i << ": " << e.what();
        ++errors;
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
}

}  // namespace
