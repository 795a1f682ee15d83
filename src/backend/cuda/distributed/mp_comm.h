#pragma once
// Shared by the multi-process backends (cusolver_mp.cpp, cublas_mp.cpp): the Communicator's
// state (NCCL communicator, stream, cuSOLVERMp / cuBLASMp handles and grids), GPULA_CHECK's
// overloads for NCCL and cuBLASMp, and the per-call set-up (device, lock, waiting for the
// caller's work).
#include <cublasmp.h>
#include <cusolverMp.h>
#include <nccl.h>

#include <cstdint>
#include <map>
#include <mutex>
#include <utility>

#include "backend/cuda/base/check.h"
#include "backend/cuda/base/types.h"
#include "distributed/mp_backend.h"

namespace gpula::detail::cuda {

// GPULA_CHECK's overloads for NCCL and cuBLASMp (cuSOLVERMp returns cusolverStatus_t).
[[noreturn]] void throw_nccl(ncclResult_t status, const char* op, const char* call);
[[noreturn]] void throw_cublasmp(cublasMpStatus_t status, const char* op, const char* call);

inline void check(ncclResult_t s, const char* op, const char* call) {
  if (s != ncclSuccess) throw_nccl(s, op, call);
}
inline void check(cublasMpStatus_t s, const char* op, const char* call) {
  if (s != CUBLASMP_STATUS_SUCCESS) throw_cublasmp(s, op, call);
}

}  // namespace gpula::detail::cuda

// One per Communicator (shared by its copies). Handles are made on first use; grids are cached
// per shape (every rank makes them in the same order: the calls are collective).
struct gpula::distributed::Communicator::Impl {
  int rank = 0, size = 1, device = 0;
  ncclComm_t nccl = nullptr;
  cudaStream_t stream = nullptr;
  cusolverMpHandle_t solver = nullptr;
  cublasMpHandle_t blas = nullptr;
  std::map<std::pair<int64_t, int64_t>, cusolverMpGrid_t> solver_grids;
  std::map<std::pair<int64_t, int64_t>, cublasMpGrid_t> blas_grids;
  std::mutex mutex;  // one call at a time on a communicator

  ~Impl();
  cusolverMpHandle_t solver_handle(const char* op);
  cublasMpHandle_t blas_handle(const char* op);
  cusolverMpGrid_t solver_grid(const char* op, int64_t nprow, int64_t npcol);
  cublasMpGrid_t blas_grid(const char* op, int64_t nprow, int64_t npcol);
};

namespace gpula::detail::mp {

// The set-up of one call: the communicator's device current (the caller's restored after),
// the communicator locked, and the device idle (work the caller queued on any stream is done).
class Call {
 public:
  Call(const distributed::Communicator& comm, const char* op);
  ~Call();
  Call(const Call&) = delete;
  Call& operator=(const Call&) = delete;
  distributed::Communicator::Impl& c;
  const char* op;
  // Waits for the communicator's stream.
  void sync();

 private:
  std::lock_guard<std::mutex> lock_;
  int saved_device_ = 0;
};

// cudaMalloc'd bytes (at least 1), freed on every path.
class DeviceBuffer {
 public:
  DeviceBuffer(const char* op, std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return p_; }

 private:
  void* p_ = nullptr;
};

}  // namespace gpula::detail::mp
