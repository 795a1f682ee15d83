// The README's C++ quick start: a linear layer y = relu(x @ W + b), planned once and run twice,
// then the same product through the function form.
#include <gpula/gpula.h>

#include <cstdio>
#include <vector>

int main() {
  using namespace gpula;
  const int64_t m = 4, k = 3, n = 2;
  std::vector<float> x(m * k, 1.0f), w(k * n, 0.5f), b = {-1.0f, 1.0f};
  // Views of host memory (strides in elements); a transposed view needs no copy.
  TensorView xv{x.data(), DType::f32, {m, k}, {k, 1}, Device::cpu()};
  TensorView wv{w.data(), DType::f32, {k, n}, {n, 1}, Device::cpu()};
  TensorView bv{b.data(), DType::f32, {n}, {1}, Device::cpu()};

  Matmul mm(xv, wv);                         // checks shapes and dtypes
  mm.plan(Epilog::RELU_BIAS, {.bias = bv});  // picks the algorithm
  mm.autotune(3);                            // optional: times the candidates
  MatmulResult r = mm.execute();             // r.result: a Tensor of shape (4, 2)
  const float* y = static_cast<const float*>(r.result.data());
  std::printf("relu(x @ W + b)[0] = [%g, %g]\n", y[0], y[1]);  // [0.5, 2.5]
  const bool ok = y[0] == 0.5f && y[1] == 2.5f;

  std::vector<float> x2(m * k, 2.0f);  // other data, same layout: no re-planning
  TensorView x2v = xv;
  x2v.data = x2.data();
  mm.reset_operands({.a = x2v});
  r = mm.execute();
  y = static_cast<const float*>(r.result.data());
  std::printf("after reset_operands: [%g, %g]\n", y[0], y[1]);  // [2, 4]

  // Function form: plans are cached per thread, keyed by layouts and options.
  MatmulResult f = gpula::matmul(xv, wv, {}, 1.0, 0.0, Epilog::BIAS, {.bias = bv});
  std::printf("(x @ W + b)[0] = [%g, %g]\n", static_cast<const float*>(f.result.data())[0],
              static_cast<const float*>(f.result.data())[1]);
  return ok && y[0] == 2.0f ? 0 : 1;
}
