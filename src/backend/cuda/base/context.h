#pragma once
// Per (device, thread) library handles and per-stream workspaces, created on first use.
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <cusolverDn.h>
#include <cusparse.h>

#include <array>
#include <cstddef>
#include <unordered_map>

namespace gpula::detail::cuda {

class Context {
 public:
  explicit Context(int device);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  cublasLtHandle_t cublaslt();
  // cuBLAS and cuSOLVER dense handles, set to `stream` on every call.
  cublasHandle_t cublas(cudaStream_t stream);
  cusolverDnHandle_t cusolver(cudaStream_t stream);
  // Parameters of cuSOLVER's 64-bit X API (default algorithms).
  cusolverDnParams_t cusolver_params();
  // cuSPARSE handle, set to `stream` on every call.
  cusparseHandle_t cusparse(cudaStream_t stream);
  // A workspace of at least `bytes` for work ordered on `stream`; grown, never shrunk.
  void* workspace(cudaStream_t stream, std::size_t bytes);
  // Side stream i (< kSideStreams) of this device and thread, non-blocking, created on first use
  // and kept for the thread's life: work forked from a caller's stream (with events) runs on
  // these, so that their workspaces are bounded and reused rather than made per call.
  static constexpr int kSideStreams = 4;
  cudaStream_t side_stream(int i);

 private:
  int device_;
  cublasLtHandle_t lt_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
  cusolverDnHandle_t cusolver_ = nullptr;
  cusolverDnParams_t cusolver_params_ = nullptr;
  cusparseHandle_t cusparse_ = nullptr;
  struct Workspace {
    void* ptr = nullptr;
    std::size_t bytes = 0;
  };
  std::unordered_map<cudaStream_t, Workspace> workspaces_;
  std::array<cudaStream_t, kSideStreams> side_{};
};

// Makes `device` current on this thread and returns its context.
Context& context(int device);

}  // namespace gpula::detail::cuda
