#pragma once
// Shared by the CUDA matmul tests (matmul_test.cpp, plan_test.cpp): device tensors poisoned
// with 0xFF, one problem run on both backends, tolerances and the comparison of their outputs.
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

namespace matmul_cuda_test {


using namespace gpula;
using core_test::cdouble;
using core_test::HostTensor;
using core_test::Layout;
using core_test::make_host;

inline bool has_bias(Epilog e) {
  return e == Epilog::BIAS || e == Epilog::RELU_BIAS || e == Epilog::RELU_AUX_BIAS ||
         e == Epilog::GELU_BIAS || e == Epilog::GELU_AUX_BIAS;
}

inline bool under_sanitizer() { return std::getenv("GPULA_TEST_SANITIZER") != nullptr; }

inline void cuda_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
#define CUDA_OK(call) cuda_ok((call), #call)

// ---- device tensors --------------------------------------------------------------------------

struct DeviceTensor {
  std::shared_ptr<void> mem;
  TensorView view;
};

inline std::shared_ptr<void> device_alloc(std::size_t bytes) {
  void* p = nullptr;
  CUDA_OK(cudaMalloc(&p, std::max<std::size_t>(bytes, 1)));
  return std::shared_ptr<void>(p, [](void* q) { cudaFree(q); });
}

// A GPU copy of `v`, a view into h's storage (possibly broadcast): the whole storage is copied,
// and the view keeps its strides.
inline DeviceTensor to_device(const HostTensor& h, const TensorView& v) {
  DeviceTensor d;
  d.mem = device_alloc(h.storage_bytes());
  CUDA_OK(cudaMemcpy(d.mem.get(), h.mem.get(), h.storage_bytes(), cudaMemcpyHostToDevice));
  d.view = v;
  d.view.data = static_cast<char*>(d.mem.get()) +
                (static_cast<const char*>(v.data) - reinterpret_cast<const char*>(h.mem.get()));
  d.view.device = Device::cuda(0);
  return d;
}
inline DeviceTensor to_device(const HostTensor& h) { return to_device(h, h.view); }

// A contiguous device array filled with 0xFF bytes (NaN for floats).
inline DeviceTensor poisoned(const Shape& shape, DType t) {
  DeviceTensor d;
  const std::size_t bytes = core_test::product(shape) * size_of(t);
  d.mem = device_alloc(bytes);
  CUDA_OK(cudaMemset(d.mem.get(), 0xFF, std::max<std::size_t>(bytes, 1)));
  d.view = TensorView{d.mem.get(), t, shape, contiguous_strides(shape), Device::cuda(0)};
  return d;
}

// Host copy of a contiguous device array.
inline HostTensor to_host(const TensorView& dv) {
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
inline Arg arg(const HostTensor& h) { return {h, h.view}; }

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

inline EpilogInputs host_inputs(const Problem& p) {
  EpilogInputs in;
  if (p.bias) in.bias = p.bias->view;
  if (p.relu_aux) in.relu_aux = p.relu_aux->view;
  if (p.gelu_aux) in.gelu_aux = p.gelu_aux->view;
  return in;
}

inline Outputs run_cpu(const Problem& p) {
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
inline Outputs run_gpu(const Problem& p, cudaStream_t stream = nullptr,
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
inline void expect_match(const HostTensor& got, const HostTensor& want, double rtol,
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
inline void expect_same_mask(const HostTensor& got, const HostTensor& want, int64_t n,
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

inline double rtol_of(DType t) {
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
inline void compare_runs(const Outputs& gpu, const Outputs& cpu, const Problem& p, double rtol,
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

inline HostTensor random(const Shape& s, DType t, Layout l, uint64_t seed, bool integers = false) {
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


}  // namespace matmul_cuda_test
