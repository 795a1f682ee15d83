#pragma once
// Device-memory helpers shared by the linalg CUDA tests.
#include <cuda_runtime.h>
#include <gpula/gpula.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "support/linalg.h"
#include "support/common.h"

namespace linalg_cuda_test {

inline void cuda_ok(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}
#define CUDA_OK(call) ::linalg_cuda_test::cuda_ok((call), #call)

// A batch of square matrices of order n, as the size lists of the CUDA tests name them.
struct Size {
  gpula::Shape batch;
  int64_t n;
};

inline bool under_sanitizer() { return std::getenv("GPULA_TEST_SANITIZER") != nullptr; }

// A device copy of h's whole storage, viewed with h's strides.
struct DeviceTensor {
  std::shared_ptr<void> mem;
  gpula::TensorView view;
  std::size_t bytes = 0;
};

inline DeviceTensor to_device(const core_test::HostTensor& h) {
  DeviceTensor d;
  d.bytes = h.storage_bytes();
  void* p = nullptr;
  CUDA_OK(cudaMalloc(&p, std::max<std::size_t>(d.bytes, 1)));
  d.mem = std::shared_ptr<void>(p, [](void* q) { cudaFree(q); });
  CUDA_OK(cudaMemcpy(p, h.mem.get(), d.bytes, cudaMemcpyHostToDevice));
  d.view = h.view;
  d.view.data = p;
  d.view.device = gpula::Device::cuda(0);
  return d;
}

// Whether the device copy still holds h's bytes (inputs are never written).
inline bool unchanged(const DeviceTensor& d, const core_test::HostTensor& h) {
  std::vector<std::byte> back(d.bytes);
  CUDA_OK(cudaMemcpy(back.data(), d.mem.get(), d.bytes, cudaMemcpyDeviceToHost));
  return std::equal(back.begin(), back.end(), h.mem.get());
}

// A contiguous host copy of a result Tensor (device or host, any strides: lu_factor's lu is
// column-major per matrix).
inline core_test::HostTensor host_of(const gpula::Tensor& t) {
  core_test::HostTensor h = core_test::make_host(t.shape(), t.dtype());
  if (t.view().numel() > 0) {
    gpula::copy(t.view(), h.view);
    CUDA_OK(cudaDeviceSynchronize());
  }
  return h;
}

// Tolerance of a backward error or reconstruction in dtype t for order n.
inline double tol(gpula::DType t, int64_t n) {
  return 30.0 * static_cast<double>(std::max<int64_t>(n, 4)) * core_test::eps_of(t);
}

// Fixtures that skip without a usable GPU: one parametrized by dtype, one plain.
inline void skip_without_gpu() {
  if (!gpula::cuda_compiled() || gpula::cuda_device_count() == 0)
    GTEST_SKIP() << "no usable CUDA device";
}
class GpuDTypeTest : public ::testing::TestWithParam<gpula::DType> {
 protected:
  void SetUp() override { skip_without_gpu(); }
};
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override { skip_without_gpu(); }
};

// Random host matrices of a kind (linalg_test::fill_kind), and random right-hand sides.
inline core_test::HostTensor random_kind(const gpula::Shape& shape, gpula::DType t,
                                         linalg_test::Kind kind, core_test::Layout layout,
                                         uint64_t seed) {
  core_test::HostTensor h = core_test::make_host(shape, t, layout);
  linalg_test::fill_kind(h, kind, seed);
  return h;
}

inline core_test::HostTensor random_b(const gpula::Shape& shape, gpula::DType t, uint64_t seed) {
  core_test::HostTensor h = core_test::make_host(shape, t);
  core_test::Filler(seed).fill(h.view);
  return h;
}

}  // namespace linalg_cuda_test
