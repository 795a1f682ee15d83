// Device memory: the per-device stream-ordered pool (cudaMallocAsync), and device queries.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "backend/cuda/base/check.h"
#include "backend/cuda_api.h"
#include "core/format.h"

namespace gpula::detail::cuda {
namespace {

// Keep freed memory in the pool instead of returning it to the driver at each sync.
void configure_pool(int device) {
  static std::once_flag flags[64];
  std::call_once(flags[device % 64], [device] {
    cudaMemPool_t pool;
    GPULA_CHECK("memory", cudaDeviceGetDefaultMemPool(&pool, device));
    uint64_t threshold = UINT64_MAX;
    GPULA_CHECK("memory", cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  });
}

}  // namespace

bool compiled() { return true; }

int device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return n;
}

std::string describe() {
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  std::string s = cat("cuda: runtime ", runtime, ", driver ", driver, ", cuBLASLt ",
                      cublasLtGetVersion());
  const int n = device_count();
  for (int i = 0; i < n; ++i) {
    cudaDeviceProp p{};
    if (cudaGetDeviceProperties(&p, i) == cudaSuccess)
      s += cat("\ncuda:", i, ": ", p.name, ", sm_", p.major, p.minor, ", ",
               p.totalGlobalMem >> 20, " MiB");
  }
  if (n == 0) s += "\ncuda: no device";
  return s;
}

int64_t total_memory(int device) {
  static std::mutex mu;
  static std::vector<int64_t> cache;
  std::lock_guard lock(mu);
  if (device >= static_cast<int>(cache.size())) cache.resize(device + 1, -1);
  if (cache[device] < 0) {
    cudaDeviceProp p{};
    GPULA_CHECK("memory", cudaGetDeviceProperties(&p, device));
    cache[device] = static_cast<int64_t>(p.totalGlobalMem);
  }
  return cache[device];
}

void* allocate(std::size_t bytes, Stream stream) {
  const int device = stream.device.index;
  int current = -1;
  GPULA_CHECK("memory", cudaGetDevice(&current));
  if (current != device) GPULA_CHECK("memory", cudaSetDevice(device));
  configure_pool(device);
  void* p = nullptr;
  const cudaError_t st =
      cudaMallocAsync(&p, bytes, static_cast<cudaStream_t>(stream.handle));
  if (st == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    throw_error<OutOfMemory>("memory", "could not allocate ", bytes, " bytes on ",
                             to_string(stream.device));
  }
  GPULA_CHECK("memory", st);
  return p;
}

void deallocate(void* ptr, Stream stream) noexcept {
  if (cudaFreeAsync(ptr, static_cast<cudaStream_t>(stream.handle)) != cudaSuccess) {
    cudaGetLastError();
    GPULA_CHECK_NOTHROW(cudaFree(ptr));
  }
}

void synchronize(Stream stream) {
  GPULA_CHECK("synchronize", cudaStreamSynchronize(static_cast<cudaStream_t>(stream.handle)));
}

}  // namespace gpula::detail::cuda
