// Matmul's argument checks through the public API on the CPU: every error is typed, names the
// operation, the argument and the values, and leaves the caller's arrays as they were.
#include <gpula/gpula.h>
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "support/common.h"

namespace {

using namespace gpula;
using core_test::HostTensor;
using core_test::Layout;
using core_test::make_host;

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Runs f, expects exception E, and returns its message.
template <class E, class F>
std::string message_of(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "wrong exception type: " << e.what();
    return {};
  }
  ADD_FAILURE() << "no exception";
  return {};
}

HostTensor filled(const Shape& s, DType t = DType::f32, Layout l = Layout::row) {
  HostTensor h = make_host(s, t, l);
  core_test::Filler(7).fill(h.view);
  return h;
}

// A snapshot of a host tensor's bytes, to check nothing was modified.
std::vector<std::byte> bytes_of(const HostTensor& h) {
  const auto* p = h.mem.get();
  return std::vector<std::byte>(p, p + h.storage_bytes());
}

TEST(MatmulErrors, InnerDimensionMismatchNamesBothShapes) {
  HostTensor a = filled({3, 4}), b = filled({5, 2});
  const auto before_a = bytes_of(a), before_b = bytes_of(b);
  const std::string m = message_of<InvalidArgument>([&] { gpula::matmul(a.view, b.view); });
  EXPECT_TRUE(contains(m, "[matmul]")) << m;
  EXPECT_TRUE(contains(m, "(3, 4)")) << m;
  EXPECT_TRUE(contains(m, "(5, 2)")) << m;
  EXPECT_EQ(bytes_of(a), before_a);
  EXPECT_EQ(bytes_of(b), before_b);
  // The plan object reports it from its constructor.
  EXPECT_THROW(Matmul(a.view, b.view), InvalidArgument);
}

TEST(MatmulErrors, BatchDimensionsThatDoNotBroadcast) {
  HostTensor a = filled({2, 3, 4}), b = filled({3, 4, 5});
  const std::string m = message_of<InvalidArgument>([&] { Matmul(a.view, b.view); });
  EXPECT_TRUE(contains(m, "(2, 3, 4)")) << m;
  EXPECT_TRUE(contains(m, "(3, 4, 5)")) << m;
}

TEST(MatmulErrors, ZeroDimensionalOperand) {
  HostTensor a = filled({}), b = filled({3});
  EXPECT_THROW(Matmul(a.view, b.view), InvalidArgument);
}

TEST(MatmulErrors, DTypeMismatch) {
  HostTensor a = filled({3, 4}, DType::f32), b = filled({4, 2}, DType::f64);
  const std::string m = message_of<DTypeError>([&] { gpula::matmul(a.view, b.view); });
  EXPECT_TRUE(contains(m, "float32")) << m;
  EXPECT_TRUE(contains(m, "float64")) << m;
  EXPECT_TRUE(contains(m, "[matmul]")) << m;
}

TEST(MatmulErrors, IntegerOperandIsDTypeError) {
  HostTensor a = make_host({3, 4}, DType::i32), b = make_host({4, 2}, DType::i32);
  const std::string m = message_of<DTypeError>([&] { Matmul(a.view, b.view); });
  EXPECT_TRUE(contains(m, "int32")) << m;
  HostTensor f = filled({4, 2});
  EXPECT_THROW(Matmul(f.view, make_host({2, 2}, DType::i64).view), DTypeError);
}

TEST(MatmulErrors, CWithWrongDTypeOrShape) {
  HostTensor a = filled({3, 4}), b = filled({4, 2});
  HostTensor c64 = filled({3, 2}, DType::f64);
  EXPECT_THROW(Matmul(a.view, b.view, c64.view, 1.0, 1.0), DTypeError);
  HostTensor wrong = filled({3, 3});
  const std::string m =
      message_of<InvalidArgument>([&] { Matmul(a.view, b.view, wrong.view, 1.0, 1.0); });
  EXPECT_TRUE(contains(m, "(3, 3)")) << m;
}

TEST(MatmulErrors, BetaWithoutC) {
  HostTensor a = filled({3, 4}), b = filled({4, 2});
  const std::string m =
      message_of<InvalidArgument>([&] { gpula::matmul(a.view, b.view, {}, 1.0, 0.5); });
  EXPECT_TRUE(contains(m, "beta")) << m;
}

// c without beta used to run with beta = 0, dropping c without a word.
TEST(MatmulErrors, BetaIsRequiredWithC) {
  HostTensor a = filled({3, 4}), b = filled({4, 2}), c = filled({3, 2});
  const auto before_c = bytes_of(c);
  std::string m = message_of<InvalidArgument>([&] { Matmul(a.view, b.view, c.view); });
  EXPECT_TRUE(contains(m, "[matmul] beta is required when c is given")) << m;
  m = message_of<InvalidArgument>([&] { gpula::matmul(a.view, b.view, c.view); });
  EXPECT_TRUE(contains(m, "[matmul] beta is required when c is given")) << m;
  m = message_of<InvalidArgument>([&] { cached_matmul(a.view, b.view, c.view, 2.0); });
  EXPECT_TRUE(contains(m, "beta is required")) << m;
  EXPECT_EQ(bytes_of(c), before_c);
  // With beta (0 included) it runs; a cached plan with beta does not serve a call without.
  const auto ref = core_test::reference_matmul(a.view, b.view, 1.0, &c.view, 0.5);
  core_test::expect_close(gpula::matmul(a.view, b.view, c.view, 1.0, 0.5).result.view(), ref, 1e-5,
                          0.0, "beta 0.5");
  EXPECT_THROW(gpula::matmul(a.view, b.view, c.view), InvalidArgument);
  EXPECT_NO_THROW(gpula::matmul(a.view, b.view, c.view, 1.0, 0.0));
  EXPECT_NO_THROW(Matmul(a.view, b.view, {}, 1.0, {}));  // no c: beta may be left out
}

// Views a C++ caller built by hand are checked before anything reads them.
TEST(MatmulErrors, MalformedViewsAreInvalidArguments) {
  HostTensor a = filled({3, 4}), b = filled({4, 2});
  TensorView short_strides = a.view;
  short_strides.strides = {1};
  std::string m = message_of<InvalidArgument>([&] { Matmul(short_strides, b.view); });
  EXPECT_TRUE(contains(m, "[matmul] a has 2 dimensions but 1 strides")) << m;
  TensorView negative = b.view;
  negative.shape = {4, -2};
  m = message_of<InvalidArgument>([&] { gpula::matmul(a.view, negative); });
  EXPECT_TRUE(contains(m, "[matmul] b has a negative dimension")) << m;
  TensorView null = a.view;
  null.data = nullptr;
  m = message_of<InvalidArgument>([&] { Matmul(null, b.view); });
  EXPECT_TRUE(contains(m, "[matmul] a of shape (3, 4) has no data")) << m;
  Matmul mm(a.view, b.view);
  mm.plan();
  EXPECT_THROW(mm.reset_operands({.a = short_strides}), InvalidArgument);
  HostTensor out = make_host({3, 2}, DType::f32);
  TensorView bad_out = out.view;
  bad_out.strides = {2, 1, 1};
  m = message_of<InvalidArgument>([&] { mm.execute({.result = bad_out}); });
  EXPECT_TRUE(contains(m, "output 'result'")) << m;
  HostTensor bias = filled({2});
  TensorView bad_bias = bias.view;
  bad_bias.data = nullptr;
  m = message_of<InvalidArgument>([&] { mm.plan(Epilog::BIAS, {.bias = bad_bias}); });
  EXPECT_TRUE(contains(m, "[matmul] bias")) << m;
  EXPECT_THROW(mm.plan(Epilog::DEFAULT, {}, {.limit = 0}), InvalidArgument);
}

// Zero-stride operands can describe results of any size: no wrap-around to a small buffer.
TEST(MatmulErrors, ResultTooLargeIsTypedError) {
  HostTensor a = filled({4, 4}), b = filled({4, 4});
  TensorView huge_a = a.view, huge_b = b.view;
  huge_a.shape = {int64_t{1} << 40, 1, 4, 4};
  huge_a.strides = {0, 0, 4, 1};
  huge_b.shape = {1, int64_t{1} << 40, 4, 4};
  huge_b.strides = {0, 0, 4, 1};
  const std::string m = message_of<InvalidArgument>([&] { Matmul(huge_a, huge_b); });
  EXPECT_TRUE(contains(m, "[matmul] the result")) << m;
  huge_b.shape = {1, int64_t{1} << 20, 4, 4};  // 2^64 elements
  EXPECT_THROW(Matmul(huge_a, huge_b), InvalidArgument);
  huge_b.shape = {1, int64_t{1} << 18, 4, 4};  // 2^62 elements, 2^64 bytes
  Matmul mm(huge_a, huge_b);
  EXPECT_THROW(mm.plan(), OutOfMemory);
  EXPECT_FALSE(mm.planned());
}

// A moved-from Matmul refuses every call instead of dereferencing nothing.
TEST(MatmulErrors, MovedFromMatmul) {
  HostTensor a = filled({3, 4}), b = filled({4, 2});
  Matmul mm(a.view, b.view);
  Matmul other = std::move(mm);
  const std::string m =
      message_of<InvalidArgument>([&] { mm.plan(); });  // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(contains(m, "moved from")) << m;
  EXPECT_THROW(mm.execute(), InvalidArgument);
  other.plan();
  EXPECT_NO_THROW(other.execute());
}

TEST(MatmulErrors, ComplexScalarsWithRealOperands) {
  HostTensor a = filled({3, 4}), b = filled({4, 2});
  EXPECT_THROW(Matmul(a.view, b.view, {}, std::complex<double>(1.0, 1.0)), InvalidArgument);
}

TEST(MatmulErrors, EpilogNeedsBias) {
  HostTensor a = filled({3, 4}), b = filled({4, 2});
  Matmul mm(a.view, b.view);
  const std::string m = message_of<InvalidArgument>([&] { mm.plan(Epilog::RELU_BIAS); });
  EXPECT_TRUE(contains(m, "RELU_BIAS")) << m;
  EXPECT_TRUE(contains(m, "bias")) << m;
  EXPECT_THROW(gpula::matmul(a.view, b.view, {}, 1.0, 0.0, Epilog::GELU_AUX_BIAS), InvalidArgument);
}

TEST(MatmulErrors, BiasGivenToAnEpilogWithoutOne) {
  HostTensor a = filled({3, 4}), b = filled({4, 2}), bias = filled({2});
  Matmul mm(a.view, b.view);
  EXPECT_THROW(mm.plan(Epilog::RELU, {.bias = bias.view}), InvalidArgument);
}

TEST(MatmulErrors, BiasOfWrongLengthOrType) {
  HostTensor a = filled({3, 4}), b = filled({4, 2});
  HostTensor bias3 = filled({3});  // one per row: the wrong convention
  Matmul mm(a.view, b.view);
  const std::string m =
      message_of<InvalidArgument>([&] { mm.plan(Epilog::BIAS, {.bias = bias3.view}); });
  EXPECT_TRUE(contains(m, "(2,)")) << m;
  EXPECT_TRUE(contains(m, "(3,)")) << m;
  HostTensor bias2d = filled({1, 2});
  EXPECT_THROW(mm.plan(Epilog::BIAS, {.bias = bias2d.view}), InvalidArgument);
  HostTensor bias_f64 = filled({2}, DType::f64);
  EXPECT_THROW(mm.plan(Epilog::BIAS, {.bias = bias_f64.view}), DTypeError);
}

TEST(MatmulErrors, BackwardEpilogNeedsItsAux) {
  HostTensor a = filled({3, 4}), b = filled({4, 2});
  Matmul mm(a.view, b.view);
  EXPECT_TRUE(contains(message_of<InvalidArgument>([&] { mm.plan(Epilog::DRELU); }), "relu_aux"));
  EXPECT_TRUE(
      contains(message_of<InvalidArgument>([&] { mm.plan(Epilog::DGELU_BGRAD); }), "gelu_aux"));
  // An aux of the wrong shape.
  HostTensor aux = make_host({3, 2}, DType::f32);
  EXPECT_THROW(mm.plan(Epilog::DGELU, {.gelu_aux = aux.view}), InvalidArgument);
}

TEST(MatmulErrors, ExecuteBeforePlan) {
  HostTensor a = filled({3, 4}), b = filled({4, 2});
  Matmul mm(a.view, b.view);
  EXPECT_FALSE(mm.planned());
  const std::string m = message_of<InvalidArgument>([&] { mm.execute(); });
  EXPECT_TRUE(contains(m, "before plan()")) << m;
  EXPECT_THROW(mm.autotune(), InvalidArgument);
  EXPECT_THROW(mm.output_specs(), InvalidArgument);
}

TEST(MatmulErrors, UseAfterFree) {
  HostTensor a = filled({3, 4}), b = filled({4, 2});
  Matmul mm(a.view, b.view);
  mm.plan();
  mm.free();
  EXPECT_FALSE(mm.planned());
  EXPECT_TRUE(contains(message_of<InvalidArgument>([&] { mm.execute(); }), "free()"));
  EXPECT_THROW(mm.plan(), InvalidArgument);
  EXPECT_THROW(mm.reset_operands({.a = a.view}), InvalidArgument);
}

TEST(MatmulErrors, AutotuneIterations) {
  HostTensor a = filled({3, 4}), b = filled({4, 2});
  Matmul mm(a.view, b.view);
  mm.plan();
  EXPECT_THROW(mm.autotune(0), InvalidArgument);
}

TEST(MatmulErrors, ResetOperandsWithAnotherLayout) {
  HostTensor a = filled({3, 4}), b = filled({4, 2});
  Matmul mm(a.view, b.view);
  mm.plan();
  HostTensor other_shape = filled({3, 5});
  const std::string m =
      message_of<InvalidArgument>([&] { mm.reset_operands({.a = other_shape.view}); });
  EXPECT_TRUE(contains(m, "matmul.reset_operands")) << m;
  EXPECT_TRUE(contains(m, "(3, 4)")) << m;
  EXPECT_TRUE(contains(m, "(3, 5)")) << m;
  HostTensor transposed = filled({3, 4}, DType::f32, Layout::col);
  EXPECT_THROW(mm.reset_operands({.a = transposed.view}), InvalidArgument);
  HostTensor f64 = filled({4, 2}, DType::f64);
  EXPECT_THROW(mm.reset_operands({.b = f64.view}), InvalidArgument);
  HostTensor c = filled({3, 2});
  EXPECT_THROW(mm.reset_operands({.c = c.view}), InvalidArgument);  // c was not an operand
  // The plan still works with its old operands after refusals.
  EXPECT_NO_THROW(mm.execute());
}

TEST(MatmulErrors, ExecuteIntoWrongOutputs) {
  HostTensor a = filled({3, 4}), b = filled({4, 2});
  Matmul mm(a.view, b.view);
  mm.plan();
  HostTensor wrong = make_host({2, 3}, DType::f32);
  const std::string m = message_of<InvalidArgument>([&] { mm.execute({.result = wrong.view}); });
  EXPECT_TRUE(contains(m, "result")) << m;
  HostTensor strided = make_host({3, 2}, DType::f32, Layout::padded);
  EXPECT_THROW(mm.execute({.result = strided.view}), InvalidArgument);
  HostTensor ok = make_host({3, 2}, DType::f32);
  EXPECT_THROW(mm.execute({.result = ok.view, .aux = {{"relu_aux", ok.view}}}), InvalidArgument);
  EXPECT_NO_THROW(mm.execute({.result = ok.view}));
}

TEST(MatmulErrors, Fp8OnCpuIsNotSupported) {
  HostTensor a = make_host({16, 16}, DType::f8_e4m3), b = make_host({16, 16}, DType::f8_e4m3);
  const std::string m = message_of<NotSupported>([&] { Matmul(a.view, b.view); });
  EXPECT_TRUE(contains(m, "float8_e4m3fn")) << m;
  EXPECT_TRUE(contains(m, "CPU")) << m;
  MatmulOptions o;
  o.result_type = DType::bf16;
  EXPECT_THROW(gpula::matmul(a.view, b.view, {}, 1.0, 0.0, Epilog::DEFAULT, {}, o), NotSupported);
  HostTensor e5 = make_host({16, 16}, DType::f8_e5m2);
  EXPECT_THROW(Matmul(e5.view, e5.view), NotSupported);
}

TEST(MatmulErrors, ComplexWithActivationIsNotSupported) {
  HostTensor a = filled({3, 4}, DType::c64), b = filled({4, 2}, DType::c64);
  Matmul mm(a.view, b.view);
  const std::string m = message_of<NotSupported>([&] { mm.plan(Epilog::RELU); });
  EXPECT_TRUE(contains(m, "RELU")) << m;
  EXPECT_TRUE(contains(m, "complex64")) << m;
  EXPECT_NO_THROW(mm.plan());  // DEFAULT is fine
}

TEST(MatmulErrors, ComputeTypeThatDoesNotApply) {
  HostTensor a = filled({3, 4}, DType::f64), b = filled({4, 2}, DType::f64);
  MatmulOptions o;
  o.compute_type = ComputeType::COMPUTE_32F_FAST_TF32;
  const std::string m =
      message_of<InvalidArgument>([&] { Matmul(a.view, b.view, {}, 1.0, 0.0, o); });
  EXPECT_TRUE(contains(m, "COMPUTE_32F_FAST_TF32")) << m;
  MatmulOptions r;
  r.result_type = DType::f16;  // f64 operands give f64
  EXPECT_THROW(Matmul(a.view, b.view, {}, 1.0, 0.0, r), DTypeError);
  MatmulOptions s;
  s.scale_type = DType::f32;
  EXPECT_THROW(Matmul(a.view, b.view, {}, 1.0, 0.0, s), DTypeError);
}

TEST(MatmulErrors, OperandsOnDifferentDevices) {
  HostTensor a = filled({3, 4}), b = filled({4, 2});
  TensorView b_gpu = b.view;
  b_gpu.device = Device::cuda(0);  // never dereferenced: the check comes first
  const std::string m = message_of<InvalidArgument>([&] { Matmul(a.view, b_gpu); });
  EXPECT_TRUE(contains(m, "cpu")) << m;
  EXPECT_TRUE(contains(m, "cuda:0")) << m;
  Matmul mm(a.view, b.view);
  TensorView bias{b.view.data, DType::f32, {2}, {1}, Device::cuda(0)};
  EXPECT_THROW(mm.plan(Epilog::BIAS, {.bias = bias}), InvalidArgument);
}

TEST(MatmulErrors, GpuRequestedWithoutCudaBackend) {
  if (cuda_compiled()) GTEST_SKIP() << "built with CUDA";
  HostTensor a = filled({3, 4}), b = filled({4, 2});
  MatmulOptions o;
  o.device = Device::cuda(0);
  EXPECT_THROW(Matmul(a.view, b.view, {}, 1.0, 0.0, o), NotCompiled);
}

TEST(MatmulErrors, FailedCallsLeaveTheCacheAndOperandsUnchanged) {
  matmul_cache_clear();
  HostTensor a = filled({3, 4}), b = filled({4, 2}), bias = filled({5});
  const auto before_a = bytes_of(a), before_b = bytes_of(b), before_bias = bytes_of(bias);
  EXPECT_THROW(gpula::matmul(a.view, b.view, {}, 1.0, 0.0, Epilog::BIAS, {.bias = bias.view}),
               InvalidArgument);
  EXPECT_EQ(matmul_cache_size(), 0u);
  EXPECT_EQ(bytes_of(a), before_a);
  EXPECT_EQ(bytes_of(b), before_b);
  EXPECT_EQ(bytes_of(bias), before_bias);
}

}  // namespace
