// The CUDA matmul against the CPU backend: the same Matmul run with options.device = cpu on host
// data, and on a GPU copy of that data (same strides). Device outputs are cudaMalloc'ed and
// poisoned with 0xFF first, so an element the GPU never writes shows up as NaN.
//
// Built only with CUDA; run by scripts/gpu_check.sh on the lent GPU (also under
// compute-sanitizer, where GPULA_TEST_SANITIZER=1 trims the heaviest cases).
#include <gtest/gtest.h>

#include "support/matmul_cuda.h"

namespace {

using namespace matmul_cuda_test;

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


}  // namespace
