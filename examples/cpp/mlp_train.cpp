// A two-layer MLP regressor trained by plain gradient descent, every product a gpula matmul with
// a fused epilogue:
//   forward   h = gelu(x @ W1 + b1)            GELU_AUX_BIAS (keeps the pre-activation as aux)
//             y = h @ W2 + b2                  BIAS
//   backward  dpre = (dy @ W2^T) * gelu'(pre)  DGELU_BGRAD (also gives db1 = column sums)
//             dW2 = h^T @ dy, dW1 = x^T @ dpre (transposed views: no copies)
// Runs on the GPU when there is one (host data copied in and out by gpula), else on the CPU.
// Exits nonzero unless the loss falls to a quarter of its start.
#include <gpula/gpula.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

namespace {

using gpula::DType;
using gpula::Epilog;
using gpula::TensorView;

TensorView view(std::vector<float>& v, int64_t rows, int64_t cols) {
  return {v.data(), DType::f32, {rows, cols}, {cols, 1}, gpula::Device::cpu()};
}
TensorView view(std::vector<float>& v) {
  return {v.data(), DType::f32, {static_cast<int64_t>(v.size())}, {1}, gpula::Device::cpu()};
}
// The transpose of a row-major matrix view, by swapping strides.
TensorView transposed(TensorView t) {
  std::swap(t.shape[0], t.shape[1]);
  std::swap(t.strides[0], t.strides[1]);
  return t;
}
const float* data(const gpula::Tensor& t) { return static_cast<const float*>(t.data()); }

}  // namespace

int main() {
  const int64_t n = 512, d_in = 4, hidden = 64;
  const int steps = 150;
  const float lr = 0.1f;
  gpula::MatmulOptions opts;
  if (gpula::cuda_device_count() > 0) opts.device = gpula::Device::cuda(0);
  std::printf("training on %s\n", opts.device ? "cuda:0" : "cpu");

  // Data: y = sin(x0) + x1 * x2 - 0.5 * x3.
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::normal_distribution<float> g(0.0f, 1.0f);
  std::vector<float> x(n * d_in), target(n);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < d_in; ++j) x[i * d_in + j] = u(rng);
    const float* r = &x[i * d_in];
    target[i] = std::sin(2.0f * r[0]) + r[1] * r[2] - 0.5f * r[3];
  }
  std::vector<float> w1(d_in * hidden), b1(hidden, 0.0f), w2(hidden), b2(1, 0.0f);
  for (float& v : w1) v = g(rng) / std::sqrt(static_cast<float>(d_in));
  for (float& v : w2) v = g(rng) / std::sqrt(static_cast<float>(hidden));

  std::vector<float> h(n * hidden), dy(n), dw1(d_in * hidden), dw2(hidden);
  float first_loss = 0.0f, loss = 0.0f;
  const auto t0 = std::chrono::steady_clock::now();
  for (int step = 0; step < steps; ++step) {
    // Forward.
    auto [h_t, aux] = gpula::matmul(view(x, n, d_in), view(w1, d_in, hidden), {}, 1.0, 0.0,
                                    Epilog::GELU_AUX_BIAS, {.bias = view(b1)}, opts);
    std::copy(data(h_t), data(h_t) + n * hidden, h.begin());
    gpula::MatmulResult y = gpula::matmul(view(h, n, hidden), view(w2, hidden, 1), {}, 1.0, 0.0,
                                          Epilog::BIAS, {.bias = view(b2)}, opts);
    loss = 0.0f;
    for (int64_t i = 0; i < n; ++i) {
      const float e = data(y.result)[i] - target[i];
      loss += e * e / n;
      dy[i] = 2.0f * e / n;
    }
    if (step == 0) first_loss = loss;
    if (step % 30 == 0 || step == steps - 1) std::printf("step %3d  loss %.5f\n", step, loss);

    // Backward.
    const gpula::Tensor& gelu_aux = aux.at("gelu_aux");
    auto [dpre, db1] = gpula::matmul(view(dy, n, 1), transposed(view(w2, hidden, 1)), {}, 1.0, 0.0,
                                     Epilog::DGELU_BGRAD, {.gelu_aux = gelu_aux.view()}, opts);
    gpula::MatmulResult g2 = gpula::matmul(transposed(view(h, n, hidden)), view(dy, n, 1), {}, 1.0,
                                           0.0, Epilog::DEFAULT, {}, opts);
    gpula::MatmulResult g1 = gpula::matmul(transposed(view(x, n, d_in)), dpre.view(), {}, 1.0, 0.0,
                                           Epilog::DEFAULT, {}, opts);
    float db2 = 0.0f;
    for (float v : dy) db2 += v;

    // Update.
    for (int64_t i = 0; i < d_in * hidden; ++i) w1[i] -= lr * data(g1.result)[i];
    for (int64_t i = 0; i < hidden; ++i) {
      w2[i] -= lr * data(g2.result)[i];
      b1[i] -= lr * data(db1.at("dgelu_bgrad"))[i];
    }
    b2[0] -= lr * db2;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("loss %.5f -> %.5f in %d steps, %.1f ms/step\n", first_loss, loss, steps,
              1e3 * secs / steps);
  return loss < 0.25f * first_loss ? 0 : 1;
}
