// The CUDA grouped matmul against the float64 loop over groups: bf16/fp16/fp32, both GPU paths
// (grouped_gemm: cublasGemmGroupedBatchedEx; per_group: cuBLASLt per group), epilogues, empty
// groups, T = 0, one group, 2000 groups, offsets on the device and on the host, rows of odd
// pitch (unaligned group pointers), staged layouts, lists of pairs, float8. Results are written
// into outputs poisoned with 0xFF first, so an element never written shows up as NaN.
#include <gtest/gtest.h>

#include "support/grouped.h"
#include "support/matmul_cuda.h"

namespace {

using namespace matmul_cuda_test;
using grouped_test::offsets_tensor;
using grouped_test::random_ends;
using grouped_test::reference;
using grouped_test::reference_pair;
using grouped_test::rel_error;
using grouped_test::tol_of;

HostTensor rnd(const Shape& s, DType t, Layout l, uint64_t seed) {
  return grouped_test::random(s, t, l, seed);
}

struct MoeCase {
  int64_t t, k, n, e;
  Epilog epilog = Epilog::DEFAULT;
  GroupedAlgo algo = GroupedAlgo::automatic;
  bool device_offsets = true;
  bool fill_all = true;
  Layout la = Layout::row, lb = Layout::row;
};

std::string describe(const MoeCase& c, DType t) {
  return core_test::str(t) + " T=" + std::to_string(c.t) + " K=" + std::to_string(c.k) +
         " N=" + std::to_string(c.n) + " E=" + std::to_string(c.e) + " " +
         std::string(name(c.epilog)) + " " + std::string(name(c.algo)) +
         (c.device_offsets ? " device offsets" : " host offsets") + " a " +
         core_test::layout_name(c.la) + " b " + core_test::layout_name(c.lb);
}

// Runs the case on the GPU; returns the path taken.
GroupedAlgo run_case(const MoeCase& c, DType t, uint64_t seed,
                     std::optional<std::vector<int64_t>> ends_in = {}) {
  const std::string what = describe(c, t);
  HostTensor a = rnd({c.t, c.k}, t, c.la, seed), b = rnd({c.e, c.k, c.n}, t, c.lb, seed + 1),
             bias = rnd({c.e, c.n}, t, Layout::row, seed + 2);
  const std::vector<int64_t> ends = ends_in ? *ends_in : random_ends(c.e, c.t, seed + 3, c.fill_all);
  HostTensor off = offsets_tensor(ends, seed % 2 ? DType::i32 : DType::i64);
  DeviceTensor da = to_device(a), db = to_device(b), dbias = to_device(bias), doff = to_device(off);
  const bool with_bias = has_bias(c.epilog);
  GroupedMatmulOptions o;
  o.algo = c.algo;
  GroupedMatmul g(da.view, db.view, std::nullopt, o);
  GroupedEpilogInputs in;
  if (with_bias) in.bias = dbias.view;
  g.plan(c.epilog, in);
  DeviceTensor out = poisoned({c.t, c.n}, t);
  g.execute({out.view}, c.device_offsets ? doff.view : off.view);
  CUDA_OK(cudaDeviceSynchronize());
  HostTensor got = to_host(out.view);
  const auto want = reference(a.view, b.view, ends, c.epilog, with_bias ? &bias.view : nullptr);
  EXPECT_LE(rel_error(got.view, want), tol_of(t)) << what;
  return g.algorithm();
}

class CudaGrouped : public Cuda, public ::testing::WithParamInterface<DType> {};

TEST_P(CudaGrouped, BothPathsMatchTheReference) {
  const DType t = GetParam();
  uint64_t seed = 1;
  for (GroupedAlgo algo : {GroupedAlgo::grouped_gemm, GroupedAlgo::per_group}) {
    for (bool dev : {true, false}) {
      MoeCase c{300, 64, 48, 7};
      c.algo = algo;
      c.device_offsets = dev;
      EXPECT_EQ(run_case(c, t, seed += 10), algo);
    }
  }
  MoeCase c{300, 64, 48, 7};
  EXPECT_EQ(run_case(c, t, 99), GroupedAlgo::grouped_gemm) << "auto: ~43 rows per group";
  MoeCase big{3000, 64, 48, 4};  // ~750 rows per group: per_group, spread over streams
  EXPECT_EQ(run_case(big, t, 98), GroupedAlgo::per_group) << "auto: ~750 rows per group";
}

TEST_P(CudaGrouped, EpiloguesPerGroup) {
  const DType t = GetParam();
  uint64_t seed = 200;
  for (Epilog e : {Epilog::RELU, Epilog::GELU, Epilog::BIAS, Epilog::RELU_BIAS, Epilog::GELU_BIAS}) {
    MoeCase c{257, 40, 72, 5};
    c.epilog = e;
    EXPECT_EQ(run_case(c, t, seed += 10), GroupedAlgo::per_group) << name(e);
  }
}

TEST_P(CudaGrouped, EdgeCases) {
  const DType t = GetParam();
  for (GroupedAlgo algo : {GroupedAlgo::grouped_gemm, GroupedAlgo::per_group}) {
    MoeCase c{0, 32, 16, 3};  // T = 0
    c.algo = algo;
    run_case(c, t, 1);
    c = MoeCase{100, 32, 16, 1};  // one group
    c.algo = algo;
    run_case(c, t, 2);
    c = MoeCase{4000, 32, 16, 2000};  // 2000 groups, many empty
    c.algo = algo;
    run_case(c, t, 3);
    c = MoeCase{120, 32, 16, 6};  // rows past the last offset stay zero
    c.algo = algo;
    c.fill_all = false;
    run_case(c, t, 4);
    c = MoeCase{60, 32, 16, 5};  // empty groups between others, and all empty
    c.algo = algo;
    run_case(c, t, 5, std::vector<int64_t>{0, 20, 20, 60, 60});
    run_case(c, t, 6, std::vector<int64_t>{0, 0, 0, 0, 0});
    c = MoeCase{61, 5, 3, 4};  // odd pitches: group pointers not 16-byte aligned
    c.algo = algo;
    run_case(c, t, 7);
    c = MoeCase{50, 24, 20, 3};  // column-major and strided operands
    c.algo = algo;
    c.la = Layout::col;
    c.lb = Layout::col;
    run_case(c, t, 8);
    c.la = Layout::strided;
    c.lb = Layout::padded;
    run_case(c, t, 9);
  }
  MoeCase c{40, 0, 16, 3};  // K = 0: the epilogue of the bias alone
  c.epilog = Epilog::GELU_BIAS;
  run_case(c, t, 10);
}

TEST_P(CudaGrouped, PlannedFormNewDeviceOffsetsEachStep) {
  const DType t = GetParam();
  HostTensor a = rnd({512, 64}, t, Layout::row, 1), b = rnd({8, 64, 96}, t, Layout::row, 2);
  DeviceTensor da = to_device(a), db = to_device(b);
  cudaStream_t s;
  CUDA_OK(cudaStreamCreate(&s));
  GroupedMatmul g(da.view, db.view);
  g.plan();
  for (uint64_t step = 0; step < 5; ++step) {
    const auto ends = random_ends(8, 512, 40 + step, step % 2 == 0);
    HostTensor off = offsets_tensor(ends, DType::i64);
    DeviceTensor doff = to_device(off);
    DeviceTensor out = poisoned({512, 96}, t);
    g.execute({out.view}, doff.view, Stream{Device::cuda(0), s});
    CUDA_OK(cudaStreamSynchronize(s));
    EXPECT_LE(rel_error(to_host(out.view).view,
                        reference(a.view, b.view, ends, Epilog::DEFAULT, nullptr)),
              tol_of(t))
        << "step " << step;
  }
  CUDA_OK(cudaStreamDestroy(s));
}

TEST_P(CudaGrouped, ListForm) {
  const DType t = GetParam();
  const std::vector<std::array<int64_t, 3>> shapes = {{33, 64, 16}, {0, 8, 8},   {128, 32, 80},
                                                      {7, 5, 3},    {64, 0, 16}, {1, 16, 1}};
  for (GroupedAlgo algo : {GroupedAlgo::grouped_gemm, GroupedAlgo::per_group}) {
    for (Epilog e : {Epilog::DEFAULT, Epilog::GELU_BIAS}) {
      if (e != Epilog::DEFAULT && algo == GroupedAlgo::grouped_gemm) continue;
      std::vector<HostTensor> ha, hb, hbias;
      std::vector<DeviceTensor> keep;
      std::vector<TensorView> as, bs, biases;
      uint64_t seed = 70;
      for (const auto& [m, k, n] : shapes) {
        ha.push_back(rnd({m, k}, t, Layout::row, seed++));
        hb.push_back(rnd({k, n}, t, seed % 2 ? Layout::col : Layout::row, seed));
        ++seed;
        hbias.push_back(rnd({n}, t, Layout::row, seed++));
        keep.push_back(to_device(ha.back()));
        as.push_back(keep.back().view);
        keep.push_back(to_device(hb.back()));
        bs.push_back(keep.back().view);
        keep.push_back(to_device(hbias.back()));
        biases.push_back(keep.back().view);
      }
      GroupedMatmulOptions o;
      o.algo = algo;
      const bool bias = e != Epilog::DEFAULT;
      std::vector<Tensor> d =
          grouped_matmul(as, bs, e, bias ? biases : std::vector<TensorView>{}, o);
      CUDA_OK(cudaDeviceSynchronize());
      for (std::size_t i = 0; i < shapes.size(); ++i)
        EXPECT_LE(rel_error(to_host(d[i].view()).view,
                            reference_pair(ha[i].view, hb[i].view, e,
                                           bias ? &hbias[i].view : nullptr)),
                  tol_of(t))
            << name(algo) << " " << name(e) << " pair " << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(DTypes, CudaGrouped,
                         ::testing::Values(DType::bf16, DType::f16, DType::f32),
                         [](const auto& info) { return core_test::str(info.param); });

TEST_F(Cuda, GroupedFloat8PerTensorScales) {
  int major = 0;
  CUDA_OK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
  if (major < 9) GTEST_SKIP() << "float8 needs sm_89+";
  HostTensor a = rnd({200, 64}, DType::f8_e4m3, Layout::row, 1),
             b = rnd({4, 64, 32}, DType::f8_e4m3, Layout::row, 2),
             bias = rnd({4, 32}, DType::bf16, Layout::row, 3);
  const auto ends = random_ends(4, 200, 4);
  HostTensor off = offsets_tensor(ends, DType::i64);
  DeviceTensor da = to_device(a), db = to_device(b), dbias = to_device(bias);
  GroupedMatmulOptions o;
  o.result_type = DType::bf16;
  const QuantizationScales scales{0.5f, 4.0f, 1.0f};
  Tensor d = grouped_matmul(da.view, db.view, off.view, Epilog::RELU_BIAS, dbias.view, o, {},
                            scales);
  CUDA_OK(cudaDeviceSynchronize());
  // Reference: relu(2 * A @ B + bias) = the reference of (2 A) with the same bias.
  HostTensor a2 = core_test::make_host({200, 64}, DType::f64);
  core_test::for_each_index(a2.view.shape, [&](const Shape& i) { a2.set(i, 2.0 * a.get(i)); });
  EXPECT_LE(rel_error(to_host(d.view()).view,
                      reference(a2.view, b.view, ends, Epilog::RELU_BIAS, &bias.view)),
            3e-2);
  GroupedMatmulOptions gg = o;
  gg.algo = GroupedAlgo::grouped_gemm;
  EXPECT_THROW(grouped_matmul(da.view, db.view, off.view, Epilog::DEFAULT, {}, gg), NotSupported);
}

TEST_F(Cuda, GroupedErrors) {
  HostTensor a = rnd({20, 8}, DType::f32, Layout::row, 1), b = rnd({3, 8, 4}, DType::f32,
                                                                    Layout::row, 2);
  DeviceTensor da = to_device(a), db = to_device(b);
  HostTensor bad = offsets_tensor({5, 3, 20}, DType::i64);
  DeviceTensor dbad = to_device(bad);
  EXPECT_THROW(grouped_matmul(da.view, db.view, dbad.view), InvalidArgument);
  EXPECT_THROW(grouped_matmul(da.view, db.view, bad.view), InvalidArgument);
  GroupedMatmulOptions gg;
  gg.algo = GroupedAlgo::grouped_gemm;
  HostTensor good = offsets_tensor({5, 13, 20}, DType::i64);
  HostTensor bias = rnd({3, 4}, DType::f32, Layout::row, 3);
  DeviceTensor dbias = to_device(bias);
  EXPECT_THROW(grouped_matmul(da.view, db.view, good.view, Epilog::BIAS, dbias.view, gg),
               NotSupported);
  EXPECT_THROW(grouped_matmul(da.view, b.view, good.view), InvalidArgument);  // mixed devices
}

}  // namespace
