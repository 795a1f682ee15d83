// The function form gpula::matmul and the Matmul object on the CPU against a float64 reference:
// shapes (batched, broadcast, 1-D, empty), layouts (transposed, padded, strided), alpha/beta/c,
// the per-thread plan cache, and use from several threads at once.
#include <gpula/gpula.h>
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "support/common.h"

namespace {

using namespace gpula;
using core_test::cdouble;
using core_test::HostTensor;
using core_test::Layout;
using core_test::make_host;
using core_test::reference_matmul;

double rtol_for(DType t) { return t == DType::f64 ? 1e-13 : 1e-5; }

HostTensor random(const Shape& s, DType t, Layout l, uint64_t seed) {
  HostTensor h = make_host(s, t, l);
  core_test::Filler(seed).fill(h.view);
  return h;
}

std::string shape_str(const Shape& s) {
  return TensorView{nullptr, DType::f32, s, Shape(s.size(), 1), Device::cpu()}.shape_str();
}

struct Case {
  Shape a, b;
  Layout la = Layout::row, lb = Layout::row;
};

std::string label(const Case& c, DType t) {
  return std::string(name(t)) + " a" + shape_str(c.a) + " " + core_test::layout_name(c.la) + " b" +
         shape_str(c.b) + " " + core_test::layout_name(c.lb);
}

const std::vector<Case> kCases = {
    // 2-D, sizes that are not multiples of anything
    {{37, 19}, {19, 23}},
    {{1, 1}, {1, 1}},
    {{64, 65}, {65, 66}},
    // transposed, padded and strided views
    {{37, 19}, {19, 23}, Layout::col, Layout::row},
    {{37, 19}, {19, 23}, Layout::row, Layout::col},
    {{37, 19}, {19, 23}, Layout::col, Layout::col},
    {{20, 13}, {13, 9}, Layout::padded, Layout::col_padded},
    {{20, 13}, {13, 9}, Layout::strided, Layout::strided},
    // batched, with and without broadcasting of batch dimensions
    {{3, 17, 11}, {3, 11, 5}},
    {{2, 3, 17, 11}, {3, 11, 5}},
    {{2, 1, 7, 11}, {1, 4, 11, 5}, Layout::col, Layout::padded},
    {{4, 9, 6}, {6, 8}},                   // B shared: folds the batch into M
    {{4, 9, 6}, {6, 8}, Layout::strided},  // B shared, A not foldable
    {{9, 6}, {5, 6, 8}, Layout::row, Layout::col},
    // 1-D operands (numpy promotion)
    {{11}, {11, 7}},
    {{7, 11}, {11}},
    {{11}, {11}},
    {{3, 7, 11}, {11}},
    {{11}, {2, 11, 4}},
    // empty dimensions
    {{0, 5}, {5, 3}},
    {{4, 5}, {5, 0}},
    {{4, 0}, {0, 3}},
    {{0, 4, 5}, {5, 3}},
    {{2, 4, 0}, {2, 0, 3}},
};

class FunctionForm : public ::testing::TestWithParam<DType> {};

TEST_P(FunctionForm, MatchesReference) {
  const DType t = GetParam();
  uint64_t seed = 1;
  for (const Case& c : kCases) {
    HostTensor a = random(c.a, t, c.la, seed++), b = random(c.b, t, c.lb, seed++);
    const core_test::Reference ref = reference_matmul(a.view, b.view);
    MatmulResult r = gpula::matmul(a.view, b.view);
    EXPECT_TRUE(r.aux.empty());
    EXPECT_EQ(r.result.dtype(), t);
    EXPECT_EQ(r.result.device(), Device::cpu());
    core_test::expect_close(r.result.view(), ref, rtol_for(t), 0.0, label(c, t));
  }
}

TEST_P(FunctionForm, AlphaBetaAndC) {
  const DType t = GetParam();
  HostTensor a = random({2, 9, 7}, t, Layout::col, 11), b = random({7, 5}, t, Layout::row, 12);
  // c as a full array, broadcast along the batch, and as one row (n,) broadcast to every row
  HostTensor c_full = random({2, 9, 5}, t, Layout::padded, 13);
  HostTensor c_batch = random({9, 5}, t, Layout::col, 14);
  HostTensor c_row = random({5}, t, Layout::row, 15);
  for (const HostTensor* c : {&c_full, &c_batch, &c_row}) {
    const auto ref = reference_matmul(a.view, b.view, 0.5, &c->view, -2.0);
    MatmulResult r = gpula::matmul(a.view, b.view, c->view, 0.5, -2.0);
    core_test::expect_close(r.result.view(), ref, rtol_for(t), 0.0, "c " + c->view.shape_str());
  }
  // beta = 0 with c given: c is not read
  HostTensor nan_c = make_host({2, 9, 5}, t);
  core_test::for_each_index(nan_c.view.shape, [&](const Shape& i) { nan_c.set(i, std::nan("")); });
  const auto ref = reference_matmul(a.view, b.view, 3.0);
  core_test::expect_close(gpula::matmul(a.view, b.view, nan_c.view, 3.0, 0.0).result.view(), ref,
                          rtol_for(t), 0.0, "beta 0");
}

TEST_P(FunctionForm, KZeroGivesZerosOrBetaC) {
  const DType t = GetParam();
  HostTensor a = make_host({4, 0}, t), b = make_host({0, 3}, t);
  MatmulResult r = gpula::matmul(a.view, b.view);
  ASSERT_EQ(r.result.shape(), (Shape{4, 3}));
  core_test::for_each_index(r.result.shape(), [&](const Shape& i) {
    EXPECT_EQ(core_test::at(r.result.view(), i), cdouble(0.0));
  });
  HostTensor c = random({4, 3}, t, Layout::row, 3);
  const auto ref = reference_matmul(a.view, b.view, 1.0, &c.view, 2.0);
  core_test::expect_close(gpula::matmul(a.view, b.view, c.view, 1.0, 2.0).result.view(), ref,
                          rtol_for(t), 0.0, "k=0 with c");
}

TEST_P(FunctionForm, PlanObjectMatchesFunctionForm) {
  const DType t = GetParam();
  HostTensor a = random({33, 21}, t, Layout::col, 5), b = random({21, 17}, t, Layout::row, 6);
  Matmul mm(a.view, b.view);
  const std::vector<AlgorithmInfo> algos = mm.plan();
  ASSERT_FALSE(algos.empty());
  EXPECT_EQ(mm.device(), Device::cpu());
  EXPECT_TRUE(mm.planned());
  const std::vector<OutputSpec> specs = mm.output_specs();
  ASSERT_EQ(specs.size(), 1u);
  EXPECT_EQ(specs[0].name, "result");
  EXPECT_EQ(specs[0].shape, (Shape{33, 17}));
  const AlgorithmInfo best = mm.autotune(2);
  EXPECT_GE(best.time_ms, 0.0f);
  const auto ref = reference_matmul(a.view, b.view);
  core_test::expect_close(mm.execute().result.view(), ref, rtol_for(t), 0.0, "execute");
  // Into caller-provided outputs.
  HostTensor out = make_host({33, 17}, t);
  mm.execute({.result = out.view});
  core_test::expect_close(out.view, ref, rtol_for(t), 0.0, "execute(outputs)");
  // New operands of the same layout.
  HostTensor a2 = random({33, 21}, t, Layout::col, 7);
  mm.reset_operands({.a = a2.view});
  core_test::expect_close(mm.execute().result.view(), reference_matmul(a2.view, b.view),
                          rtol_for(t), 0.0, "reset_operands");
}

TEST_P(FunctionForm, BiasAndReluEpilog) {
  const DType t = GetParam();
  HostTensor x = random({3, 10, 8}, t, Layout::row, 21), w = random({8, 6}, t, Layout::col, 22);
  HostTensor bias = random({6}, t, Layout::row, 23);
  MatmulResult r =
      gpula::matmul(x.view, w.view, {}, 1.0, 0.0, Epilog::RELU_BIAS, {.bias = bias.view});
  core_test::Reference ref = reference_matmul(x.view, w.view);
  for (std::size_t e = 0; e < ref.value.size(); ++e) {
    const double v = ref.value[e].real() + bias.get({static_cast<int64_t>(e % 6)}).real();
    ref.value[e] = v > 0 ? v : 0.0;
  }
  core_test::expect_close(r.result.view(), ref, rtol_for(t), 0.0, "RELU_BIAS");
}

INSTANTIATE_TEST_SUITE_P(CpuRealTypes, FunctionForm, ::testing::Values(DType::f32, DType::f64),
                         [](const auto& info) { return std::string(name(info.param)); });

TEST(FunctionFormComplex, MatchesReference) {
  for (DType t : {DType::c64, DType::c128}) {
    HostTensor a = random({2, 13, 9}, t, Layout::col, 31), b = random({9, 7}, t, Layout::row, 32);
    HostTensor c = random({7}, t, Layout::row, 33);
    const cdouble alpha(0.5, -1.0), beta(0.25, 2.0);
    const auto ref = reference_matmul(a.view, b.view, alpha, &c.view, beta);
    core_test::expect_close(gpula::matmul(a.view, b.view, c.view, alpha, beta).result.view(), ref,
                            t == DType::c128 ? 1e-13 : 1e-5, 0.0, std::string(name(t)));
  }
}

// ---------------------------------------------------------------------------------------------
// Plan cache

TEST(PlanCache, GrowsPerLayoutAndClears) {
  matmul_cache_clear();
  EXPECT_EQ(matmul_cache_size(), 0u);
  HostTensor a = random({8, 4}, DType::f32, Layout::row, 1),
             b = random({4, 3}, DType::f32, Layout::row, 2);
  gpula::matmul(a.view, b.view);
  EXPECT_EQ(matmul_cache_size(), 1u);
  // Same layouts, other data (equally aligned): the cached plan is reused.
  HostTensor a2 = random({8, 4}, DType::f32, Layout::row, 3);
  const auto ref = reference_matmul(a2.view, b.view);
  core_test::expect_close(gpula::matmul(a2.view, b.view).result.view(), ref, 1e-5, 0.0, "hit");
  EXPECT_EQ(matmul_cache_size(), 1u);
  // Another shape, another layout, other scalars, another epilogue: new entries.
  HostTensor a3 = random({9, 4}, DType::f32, Layout::row, 4);
  gpula::matmul(a3.view, b.view);
  EXPECT_EQ(matmul_cache_size(), 2u);
  HostTensor at = random({8, 4}, DType::f32, Layout::col, 5);
  gpula::matmul(at.view, b.view);
  EXPECT_EQ(matmul_cache_size(), 3u);
  gpula::matmul(a.view, b.view, {}, 2.0);
  EXPECT_EQ(matmul_cache_size(), 4u);
  gpula::matmul(a.view, b.view, {}, 1.0, 0.0, Epilog::RELU);
  EXPECT_EQ(matmul_cache_size(), 5u);
  // The cache is per thread.
  std::size_t other = 99;
  std::thread([&] { other = matmul_cache_size(); }).join();
  EXPECT_EQ(other, 0u);
  matmul_cache_clear();
  EXPECT_EQ(matmul_cache_size(), 0u);
  // Still correct after clearing.
  core_test::expect_close(gpula::matmul(a2.view, b.view).result.view(), ref, 1e-5, 0.0,
                          "after clear");
  EXPECT_EQ(matmul_cache_size(), 1u);
}

TEST(PlanCache, CachedMatmulIsPlannedAndBound) {
  matmul_cache_clear();
  HostTensor a = random({5, 4}, DType::f64, Layout::row, 1),
             b = random({4, 3}, DType::f64, Layout::row, 2);
  std::shared_ptr<Matmul> mm = cached_matmul(a.view, b.view);
  EXPECT_TRUE(mm->planned());
  core_test::expect_close(mm->execute().result.view(), reference_matmul(a.view, b.view), 1e-13, 0.0,
                          "cached");
  HostTensor a2 = random({5, 4}, DType::f64, Layout::row, 3);
  std::shared_ptr<Matmul> again = cached_matmul(a2.view, b.view);
  EXPECT_EQ(again.get(), mm.get());
  core_test::expect_close(again->execute().result.view(), reference_matmul(a2.view, b.view), 1e-13,
                          0.0, "rebound");
  // A plan the caller holds outlives the cache's copy.
  matmul_cache_clear();
  EXPECT_EQ(matmul_cache_size(), 0u);
  core_test::expect_close(mm->execute().result.view(), reference_matmul(a2.view, b.view), 1e-13,
                          0.0, "after clear");
}

TEST(PlanCache, BoundedInSize) {
  matmul_cache_clear();
  HostTensor b = random({3, 2}, DType::f32, Layout::row, 1);
  std::vector<HostTensor> as;
  for (int m = 1; m <= 80; ++m) {
    as.push_back(random({m, 3}, DType::f32, Layout::row, m));
    gpula::matmul(as.back().view, b.view);
  }
  EXPECT_GT(matmul_cache_size(), 0u);
  EXPECT_LT(matmul_cache_size(), 80u);  // least recently used plans go
  matmul_cache_clear();
}

// ---------------------------------------------------------------------------------------------
// Threads

bool close_to(const TensorView& got, const core_test::Reference& ref, double rtol) {
  int64_t f = 0;
  bool ok = got.shape == ref.shape;
  core_test::for_each_index(got.shape, [&](const Shape& idx) {
    const double tol = rtol * (ref.magnitude[f] + std::abs(ref.value[f]));
    ok = ok && std::abs(core_test::at(got, idx) - ref.value[f]) <= tol;
    ++f;
  });
  return ok;
}

// One Matmul shared by 8 threads: every execute is right, while another thread swaps operands
// (two buffers holding the same values), re-plans and autotunes. Before the plan's mutex, calls
// from several threads raced on the plan's state.
TEST(MatmulThreads, EightThreadsShareOnePlan) {
  constexpr int kThreads = 8, kIters = 200;
  HostTensor a = random({3, 24, 16}, DType::f64, Layout::row, 11);
  HostTensor a_copy = random({3, 24, 16}, DType::f64, Layout::row, 11);  // same values
  HostTensor b = random({16, 20}, DType::f64, Layout::col, 12);
  HostTensor bias = random({20}, DType::f64, Layout::row, 13);
  core_test::Reference ref = reference_matmul(a.view, b.view);
  for (std::size_t e = 0; e < ref.value.size(); ++e) {
    const double v = ref.value[e].real() + bias.get({static_cast<int64_t>(e % 20)}).real();
    ref.value[e] = v > 0 ? v : 0.0;
  }
  Matmul mm(a.view, b.view);
  mm.plan(Epilog::RELU_BIAS, {.bias = bias.view});
  std::atomic<int> wrong{0}, errors{0}, shared_outputs{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&] {
      try {
        for (int it = 0; it < kIters; ++it) {
          MatmulResult r1 = mm.execute();
          MatmulResult r2 = mm.execute();
          if (r1.result.data() == r2.result.data()) ++shared_outputs;
          if (!close_to(r1.result.view(), ref, 1e-13) || !close_to(r2.result.view(), ref, 1e-13))
            ++wrong;
        }
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
        ++errors;
      }
    });
  }
  std::thread mutator([&] {
    for (int it = 0; !stop; ++it) {
      mm.reset_operands({.a = (it % 2 ? a_copy : a).view});
      if (it % 16 == 0) mm.autotune(1);
      if (it % 64 == 0) mm.plan(Epilog::RELU_BIAS, {.bias = bias.view});  // the same plan again
    }
  });
  for (auto& th : threads) th.join();
  stop = true;
  mutator.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(shared_outputs.load(), 0);
}

// free() from another thread: executes before it succeed, after it raise InvalidArgument.
TEST(MatmulThreads, FreeWhileOtherThreadsExecute) {
  HostTensor a = random({32, 16}, DType::f32, Layout::row, 21);
  HostTensor b = random({16, 8}, DType::f32, Layout::row, 22);
  const core_test::Reference ref = reference_matmul(a.view, b.view);
  Matmul mm(a.view, b.view);
  mm.plan();
  std::atomic<int> wrong{0}, other{0}, refused{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&] {
      for (int it = 0; it < 500; ++it) {
        try {
          if (!close_to(mm.execute().result.view(), ref, 1e-5)) ++wrong;
        } catch (const InvalidArgument& e) {
          if (std::string(e.what()).find("after free()") == std::string::npos) ++other;
          ++refused;
        } catch (...) {
          ++other;
        }
      }
    });
  }
  mm.free();
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(other.load(), 0);
  EXPECT_THROW(mm.execute(), InvalidArgument);
}

TEST(MatmulThreads, EightThreadsFunctionFormAndOwnPlans) {
  constexpr int kThreads = 8, kIters = 20;
  struct Work {
    HostTensor a, b, bias;
    core_test::Reference plain, relu_bias;
  };
  std::vector<Work> work(kThreads);
  for (int i = 0; i < kThreads; ++i) {
    Work& w = work[i];
    const DType t = i % 2 ? DType::f64 : DType::f32;
    w.a = random({2, 24 + i, 16}, t, i % 3 ? Layout::row : Layout::col, 100 + i);
    w.b = random({16, 20}, t, Layout::row, 200 + i);
    w.bias = random({20}, t, Layout::row, 300 + i);
    w.plain = reference_matmul(w.a.view, w.b.view);
    w.relu_bias = w.plain;
    for (std::size_t e = 0; e < w.relu_bias.value.size(); ++e) {
      const double v =
          w.relu_bias.value[e].real() + w.bias.get({static_cast<int64_t>(e % 20)}).real();
      w.relu_bias.value[e] = v > 0 ? v : 0.0;
    }
  }
  std::atomic<int> failures{0};
  const auto close = close_to;
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      Work& w = work[i];
      const double rtol = w.a.view.dtype == DType::f64 ? 1e-13 : 1e-5;
      try {
        Matmul own(w.a.view, w.b.view);
        own.plan(Epilog::RELU_BIAS, {.bias = w.bias.view});
        for (int it = 0; it < kIters; ++it) {
          if (!close(gpula::matmul(w.a.view, w.b.view).result.view(), w.plain, rtol)) ++failures;
          if (!close(own.execute().result.view(), w.relu_bias, rtol)) ++failures;
        }
        if (matmul_cache_size() != 1u) ++failures;
      } catch (const std::exception& e) {
        ADD_FAILURE() << "thread " << i << ": " << e.what();
        ++failures;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
