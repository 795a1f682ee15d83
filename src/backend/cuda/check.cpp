#include "backend/cuda/check.h"

namespace gpula::detail::cuda {

void throw_cuda(cudaError_t status, const char* op, const char* call) {
  cudaGetLastError();  // clear a sticky-free error so later calls are not poisoned
  const std::string msg = std::string("[") + op + "] " + call + " failed: " +
                          cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")";
  if (status == cudaErrorMemoryAllocation) throw OutOfMemory(msg);
  throw CudaError(msg, static_cast<int>(status), cudaGetErrorName(status));
}

void throw_cublas(cublasStatus_t status, const char* op, const char* call) {
  const char* name = cublasLtGetStatusName(status);
  const std::string msg = std::string("[") + op + "] " + call + " failed: " + name;
  if (status == CUBLAS_STATUS_ALLOC_FAILED) throw OutOfMemory(msg);
  if (status == CUBLAS_STATUS_NOT_SUPPORTED) throw NotSupported(msg);
  throw CublasError(msg, static_cast<int>(status), name);
}

}  // namespace gpula::detail::cuda
