#include "backend/cuda/base/context.h"

#include <memory>
#include <vector>

#include "backend/cuda/base/check.h"

namespace gpula::detail::cuda {

Context::Context(int device) : device_(device) {}

Context::~Context() {
  // Work still queued on a side stream finishes; the stream's resources go when it has.
  for (cudaStream_t st : side_)
    if (st) GPULA_CHECK_NOTHROW(cudaStreamDestroy(st));
  // Thread exit: the streams may be gone already, so free synchronously (never on a stream).
  for (auto& [stream, ws] : workspaces_) GPULA_CHECK_NOTHROW(cudaFree(ws.ptr));
  if (lt_) GPULA_CHECK_NOTHROW(cublasLtDestroy(lt_));
  if (cusolver_params_) GPULA_CHECK_NOTHROW(cusolverDnDestroyParams(cusolver_params_));
  if (cusolver_) GPULA_CHECK_NOTHROW(cusolverDnDestroy(cusolver_));
  if (cublas_) GPULA_CHECK_NOTHROW(cublasDestroy(cublas_));
  if (cusparse_) GPULA_CHECK_NOTHROW(cusparseDestroy(cusparse_));
}

cublasLtHandle_t Context::cublaslt() {
  if (!lt_) GPULA_CHECK("context", cublasLtCreate(&lt_));
  return lt_;
}

cublasHandle_t Context::cublas(cudaStream_t stream) {
  if (!cublas_) GPULA_CHECK("context", cublasCreate(&cublas_));
  GPULA_CHECK("context", cublasSetStream(cublas_, stream));
  return cublas_;
}

cusolverDnHandle_t Context::cusolver(cudaStream_t stream) {
  if (!cusolver_) GPULA_CHECK("context", cusolverDnCreate(&cusolver_));
  GPULA_CHECK("context", cusolverDnSetStream(cusolver_, stream));
  return cusolver_;
}

cusolverDnParams_t Context::cusolver_params() {
  if (!cusolver_params_) GPULA_CHECK("context", cusolverDnCreateParams(&cusolver_params_));
  return cusolver_params_;
}

cusparseHandle_t Context::cusparse(cudaStream_t stream) {
  if (!cusparse_) GPULA_CHECK("context", cusparseCreate(&cusparse_));
  GPULA_CHECK("context", cusparseSetStream(cusparse_, stream));
  return cusparse_;
}

cudaStream_t Context::side_stream(int i) {
  cudaStream_t& st = side_.at(static_cast<std::size_t>(i));
  if (!st) GPULA_CHECK("context", cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  return st;
}

void* Context::workspace(cudaStream_t stream, std::size_t bytes) {
  Workspace& ws = workspaces_[stream];
  if (ws.bytes < bytes) {
    if (ws.ptr) GPULA_CHECK("workspace", cudaFreeAsync(ws.ptr, stream));
    ws.ptr = nullptr;
    ws.bytes = 0;
    GPULA_CHECK("workspace", cudaMallocAsync(&ws.ptr, bytes, stream));
    ws.bytes = bytes;
  }
  return ws.ptr;
}

Context& context(int device) {
  thread_local std::vector<std::unique_ptr<Context>> contexts;
  int current = -1;
  GPULA_CHECK("context", cudaGetDevice(&current));
  if (current != device) GPULA_CHECK("context", cudaSetDevice(device));
  if (device >= static_cast<int>(contexts.size())) contexts.resize(device + 1);
  if (!contexts[device]) contexts[device] = std::make_unique<Context>(device);
  return *contexts[device];
}

}  // namespace gpula::detail::cuda
