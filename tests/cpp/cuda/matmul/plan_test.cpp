// The CUDA matmul plans against the CPU backend: autotune, reset_operands, graph replay, where work
// runs, memory limits and threads (shared helpers: support/matmul_cuda.h).
//
// Built only with CUDA; run by scripts/gpu_check.sh on the lent GPU.
#include <gtest/gtest.h>

#include "support/matmul_cuda.h"

namespace {

using namespace matmul_cuda_test;

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
