// gpula::GroupedMatmul and gpula::grouped_matmul on the CPU against a float64 loop over groups:
// MoE layout (empty groups, T = 0, one group, 2000 groups, trailing rows, layouts, epilogues),
// lists of pairs, the planned form with new offsets per execute, and argument errors.
#include <gpula/gpula.h>
#include <gtest/gtest.h>

#include "support/grouped.h"

namespace {

using namespace gpula;
using namespace grouped_test;

struct Moe {
  HostTensor a, b, bias;
  std::vector<int64_t> ends;
};

Moe moe(int64_t t, int64_t k, int64_t n, int64_t e, DType dt, uint64_t seed,
        Layout la = Layout::row, Layout lb = Layout::row, bool fill_all = true) {
  Moe p{random({t, k}, dt, la, seed), random({e, k, n}, dt, lb, seed + 1),
        random({e, n}, dt, Layout::row, seed + 2), random_ends(e, t, seed + 3, fill_all)};
  return p;
}

void check_moe(const Moe& p, Epilog ep, const std::string& what,
               GroupedAlgo algo = GroupedAlgo::automatic) {
  const bool bias = ep == Epilog::BIAS || ep == Epilog::RELU_BIAS || ep == Epilog::GELU_BIAS;
  HostTensor off = offsets_tensor(p.ends, DType::i64);
  GroupedMatmulOptions o;
  o.algo = algo;
  Tensor d = grouped_matmul(p.a.view, p.b.view, off.view, ep,
                            bias ? std::optional<TensorView>(p.bias.view) : std::nullopt, o);
  ASSERT_EQ(d.shape(), (Shape{p.a.view.shape[0], p.b.view.shape[2]})) << what;
  const auto want = reference(p.a.view, p.b.view, p.ends, ep, bias ? &p.bias.view : nullptr);
  EXPECT_LE(rel_error(d.view(), want), tol_of(p.a.view.dtype)) << what;
}

TEST(GroupedMatmulCpu, DTypesAndEpilogues) {
  uint64_t seed = 1;
  for (DType dt : {DType::f64, DType::f32, DType::f16, DType::bf16})
    for (Epilog ep : {Epilog::DEFAULT, Epilog::RELU, Epilog::GELU, Epilog::BIAS, Epilog::RELU_BIAS,
                      Epilog::GELU_BIAS})
      check_moe(moe(50, 17, 23, 5, dt, seed += 10), ep,
                std::string(name(dt)) + " " + std::string(name(ep)));
}

TEST(GroupedMatmulCpu, Layouts) {
  uint64_t seed = 100;
  for (Layout la : {Layout::row, Layout::col, Layout::padded, Layout::strided})
    for (Layout lb : {Layout::row, Layout::col, Layout::col_padded, Layout::strided})
      check_moe(moe(40, 12, 9, 4, DType::f64, seed += 10, la, lb), Epilog::BIAS,
                std::string(core_test::layout_name(la)) + " x " + core_test::layout_name(lb));
}

TEST(GroupedMatmulCpu, EdgeCases) {
  check_moe(moe(0, 8, 6, 3, DType::f64, 1), Epilog::DEFAULT, "T = 0");
  check_moe(moe(30, 8, 6, 1, DType::f64, 2), Epilog::RELU_BIAS, "one group");
  check_moe(moe(30, 8, 6, 4, DType::f64, 3, Layout::row, Layout::row, false), Epilog::BIAS,
            "rows past the last offset are zero");
  check_moe(moe(30, 0, 6, 4, DType::f64, 4), Epilog::GELU_BIAS, "K = 0: epilogue of the bias");
  check_moe(moe(30, 8, 0, 4, DType::f64, 5), Epilog::DEFAULT, "N = 0");
  check_moe(moe(3000, 4, 3, 2000, DType::f32, 6), Epilog::BIAS, "2000 groups");
  Moe empty = moe(20, 5, 4, 3, DType::f64, 7);
  empty.ends = {0, 0, 0};
  check_moe(empty, Epilog::DEFAULT, "all groups empty");
  Moe gaps = moe(20, 5, 4, 5, DType::f64, 8);
  gaps.ends = {0, 7, 7, 20, 20};
  check_moe(gaps, Epilog::RELU, "empty groups between others");
  check_moe(moe(20, 5, 4, 3, DType::f64, 9), Epilog::DEFAULT, "per_group", GroupedAlgo::per_group);
}

TEST(GroupedMatmulCpu, Int32OffsetsAndStridedBroadcastB) {
  Moe p = moe(25, 6, 7, 3, DType::f64, 11);
  HostTensor off = offsets_tensor(p.ends, DType::i32);
  // Every group reads the same expert: b with a stride-0 group dimension.
  TensorView b0 = p.b.view;
  b0.strides[0] = 0;
  Tensor d = grouped_matmul(p.a.view, b0, off.view);
  EXPECT_LE(rel_error(d.view(), reference(p.a.view, b0, p.ends, Epilog::DEFAULT, nullptr)), 1e-12);
}

TEST(GroupedMatmulCpu, PlannedFormNewOffsetsEachExecute) {
  Moe p = moe(40, 9, 11, 6, DType::f64, 21);
  GroupedMatmul g(p.a.view, p.b.view);
  GroupedEpilogInputs in;
  in.bias = p.bias.view;
  g.plan(Epilog::GELU_BIAS, in);
  EXPECT_EQ(g.algorithm(), GroupedAlgo::per_group);
  for (uint64_t step = 0; step < 4; ++step) {
    const auto ends = random_ends(6, 40, 300 + step, step % 2 == 0);
    HostTensor off = offsets_tensor(ends, DType::i64);
    Tensor d = g.execute(off.view).front();
    EXPECT_LE(rel_error(d.view(), reference(p.a.view, p.b.view, ends, Epilog::GELU_BIAS,
                                            &p.bias.view)),
              1e-12)
        << "step " << step;
  }
  // New operands of the same layout.
  Moe q = moe(40, 9, 11, 6, DType::f64, 22);
  GroupedOperandUpdate u;
  u.a = q.a.view;
  u.b = q.b.view;
  u.epilog_inputs.bias = q.bias.view;
  g.reset_operands(u);
  HostTensor off = offsets_tensor(q.ends, DType::i64);
  Tensor d = g.execute(off.view).front();
  EXPECT_LE(rel_error(d.view(), reference(q.a.view, q.b.view, q.ends, Epilog::GELU_BIAS,
                                          &q.bias.view)),
            1e-12);
  // Into caller-provided results.
  HostTensor out = core_test::make_host({40, 11}, DType::f64);
  g.execute({out.view}, off.view);
  EXPECT_LE(rel_error(out.view, reference(q.a.view, q.b.view, q.ends, Epilog::GELU_BIAS,
                                          &q.bias.view)),
            1e-12);
  GroupedOperandUpdate bad;
  bad.a = random({41, 9}, DType::f64, Layout::row, 1).view;
  EXPECT_THROW(g.reset_operands(bad), InvalidArgument);
  g.free();
  EXPECT_THROW(g.execute(off.view), InvalidArgument);
}

TEST(GroupedMatmulCpu, ListForm) {
  const std::vector<std::array<int64_t, 3>> shapes = {{5, 7, 3}, {0, 4, 2}, {9, 1, 6},
                                                      {4, 0, 5}, {12, 8, 0}, {1, 1, 1}};
  for (Epilog ep : {Epilog::DEFAULT, Epilog::RELU_BIAS, Epilog::GELU_BIAS}) {
    std::vector<HostTensor> keep;
    std::vector<TensorView> as, bs, biases;
    uint64_t seed = 50;
    for (const auto& [m, k, n] : shapes) {
      keep.push_back(random({m, k}, DType::f64, seed % 2 ? Layout::col : Layout::row, seed));
      ++seed;
      as.push_back(keep.back().view);
      keep.push_back(random({k, n}, DType::f64, Layout::row, seed++));
      bs.push_back(keep.back().view);
      keep.push_back(random({n}, DType::f64, Layout::row, seed++));
      biases.push_back(keep.back().view);
    }
    const bool bias = ep != Epilog::DEFAULT;
    std::vector<Tensor> d = grouped_matmul(as, bs, ep, bias ? biases : std::vector<TensorView>{});
    ASSERT_EQ(d.size(), shapes.size());
    for (std::size_t i = 0; i < shapes.size(); ++i) {
      ASSERT_EQ(d[i].shape(), (Shape{shapes[i][0], shapes[i][2]}));
      EXPECT_LE(rel_error(d[i].view(),
                          reference_pair(as[i], bs[i], ep, bias ? &biases[i] : nullptr)),
                1e-12)
          << name(ep) << " pair " << i;
    }
  }
  EXPECT_TRUE(grouped_matmul(std::vector<TensorView>{}, std::vector<TensorView>{}).empty());
}

TEST(GroupedMatmulCpu, Errors) {
  Moe p = moe(20, 5, 4, 3, DType::f64, 31);
  auto run = [&](const std::vector<int64_t>& ends, DType t = DType::i64) {
    HostTensor off = offsets_tensor(ends, t);
    return grouped_matmul(p.a.view, p.b.view, off.view);
  };
  auto message = [](auto&& f) {
    try {
      f();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THROW(run({5, 3, 20}), InvalidArgument);
  EXPECT_NE(message([&] { run({5, 3, 20}); }).find("offsets"), std::string::npos);
  EXPECT_THROW(run({-1, 3, 20}), InvalidArgument);
  EXPECT_THROW(run({1, 3, 21}), InvalidArgument);
  EXPECT_THROW(run({1, 20}), InvalidArgument);
  EXPECT_THROW(run({1, 3, 20}, DType::f32), DTypeError);
  HostTensor off2 = core_test::make_host({3, 1}, DType::i64);
  EXPECT_THROW(grouped_matmul(p.a.view, p.b.view, off2.view), InvalidArgument);
  HostTensor off = offsets_tensor(p.ends, DType::i64);
  HostTensor wrong_k = random({3, 6, 4}, DType::f64, Layout::row, 1);
  EXPECT_THROW(grouped_matmul(p.a.view, wrong_k.view, off.view), InvalidArgument);
  HostTensor f32b = random({3, 5, 4}, DType::f32, Layout::row, 1);
  EXPECT_THROW(grouped_matmul(p.a.view, f32b.view, off.view), DTypeError);
  EXPECT_THROW(grouped_matmul(p.a.view, p.b.view, off.view, Epilog::RELU_AUX), NotSupported);
  EXPECT_NE(message([&] { grouped_matmul(p.a.view, p.b.view, off.view, Epilog::DRELU); })
                .find("DRELU"),
            std::string::npos);
  EXPECT_THROW(grouped_matmul(p.a.view, p.b.view, off.view, Epilog::BIAS), InvalidArgument);
  HostTensor bias_wrong = random({3, 5}, DType::f64, Layout::row, 1);
  EXPECT_THROW(grouped_matmul(p.a.view, p.b.view, off.view, Epilog::BIAS, bias_wrong.view),
               InvalidArgument);
  GroupedMatmulOptions gg;
  gg.algo = GroupedAlgo::grouped_gemm;
  EXPECT_THROW(grouped_matmul(p.a.view, p.b.view, off.view, Epilog::DEFAULT, {}, gg),
               NotSupported);
  HostTensor f8 = core_test::make_host({20, 5}, DType::f8_e4m3);
  HostTensor f8b = core_test::make_host({3, 5, 4}, DType::f8_e4m3);
  EXPECT_THROW(grouped_matmul(f8.view, f8b.view, off.view), NotSupported);
  HostTensor ints = core_test::make_host({20, 5}, DType::i32);
  EXPECT_THROW(grouped_matmul(ints.view, p.b.view, off.view), DTypeError);
  GroupedMatmul g(p.a.view, p.b.view);
  g.plan();
  EXPECT_THROW(g.execute(), InvalidArgument);  // no offsets anywhere
  // List form
  HostTensor x = random({3, 4}, DType::f64, Layout::row, 2), y = random({5, 2}, DType::f64,
                                                                        Layout::row, 3);
  EXPECT_THROW(grouped_matmul({x.view}, {y.view}), InvalidArgument);
  EXPECT_THROW(grouped_matmul({x.view, x.view}, {y.view}), InvalidArgument);
}

}  // namespace
