#include "backend/cuda/base/check.h"

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

const char* cusolver_status_name(cusolverStatus_t status) {
  switch (status) {
#define GPULA_CUSOLVER_NAME(s) \
  case s:                      \
    return #s;
    GPULA_CUSOLVER_NAME(CUSOLVER_STATUS_SUCCESS)
    GPULA_CUSOLVER_NAME(CUSOLVER_STATUS_NOT_INITIALIZED)
    GPULA_CUSOLVER_NAME(CUSOLVER_STATUS_ALLOC_FAILED)
    GPULA_CUSOLVER_NAME(CUSOLVER_STATUS_INVALID_VALUE)
    GPULA_CUSOLVER_NAME(CUSOLVER_STATUS_ARCH_MISMATCH)
    GPULA_CUSOLVER_NAME(CUSOLVER_STATUS_MAPPING_ERROR)
    GPULA_CUSOLVER_NAME(CUSOLVER_STATUS_EXECUTION_FAILED)
    GPULA_CUSOLVER_NAME(CUSOLVER_STATUS_INTERNAL_ERROR)
    GPULA_CUSOLVER_NAME(CUSOLVER_STATUS_MATRIX_TYPE_NOT_SUPPORTED)
    GPULA_CUSOLVER_NAME(CUSOLVER_STATUS_NOT_SUPPORTED)
    GPULA_CUSOLVER_NAME(CUSOLVER_STATUS_ZERO_PIVOT)
    GPULA_CUSOLVER_NAME(CUSOLVER_STATUS_INVALID_LICENSE)
    GPULA_CUSOLVER_NAME(CUSOLVER_STATUS_IRS_PARAMS_NOT_INITIALIZED)
    GPULA_CUSOLVER_NAME(CUSOLVER_STATUS_IRS_PARAMS_INVALID)
    GPULA_CUSOLVER_NAME(CUSOLVER_STATUS_IRS_PARAMS_INVALID_PREC)
    GPULA_CUSOLVER_NAME(CUSOLVER_STATUS_IRS_PARAMS_INVALID_REFINE)
    GPULA_CUSOLVER_NAME(CUSOLVER_STATUS_IRS_PARAMS_INVALID_MAXITER)
    GPULA_CUSOLVER_NAME(CUSOLVER_STATUS_IRS_INTERNAL_ERROR)
    GPULA_CUSOLVER_NAME(CUSOLVER_STATUS_IRS_NOT_SUPPORTED)
    GPULA_CUSOLVER_NAME(CUSOLVER_STATUS_IRS_OUT_OF_RANGE)
    GPULA_CUSOLVER_NAME(CUSOLVER_STATUS_IRS_NRHS_NOT_SUPPORTED_FOR_REFINE_GMRES)
    GPULA_CUSOLVER_NAME(CUSOLVER_STATUS_IRS_INFOS_NOT_INITIALIZED)
    GPULA_CUSOLVER_NAME(CUSOLVER_STATUS_IRS_INFOS_NOT_DESTROYED)
    GPULA_CUSOLVER_NAME(CUSOLVER_STATUS_IRS_MATRIX_SINGULAR)
    GPULA_CUSOLVER_NAME(CUSOLVER_STATUS_INVALID_WORKSPACE)
#undef GPULA_CUSOLVER_NAME
  }
  return "CUSOLVER_STATUS_UNKNOWN";
}

void throw_cusolver(cusolverStatus_t status, const char* op, const char* call) {
  const char* name = cusolver_status_name(status);
  const std::string msg = std::string("[") + op + "] " + call + " failed: " + name;
  if (status == CUSOLVER_STATUS_ALLOC_FAILED) throw OutOfMemory(msg);
  if (status == CUSOLVER_STATUS_NOT_SUPPORTED || status == CUSOLVER_STATUS_ARCH_MISMATCH ||
      status == CUSOLVER_STATUS_IRS_NOT_SUPPORTED)
    throw NotSupported(msg);
  throw CusolverError(msg, static_cast<int>(status), name);
}

void throw_cusparse(cusparseStatus_t status, const char* op, const char* call) {
  const char* name = cusparseGetErrorName(status);
  const std::string msg = std::string("[") + op + "] " + call + " failed: " + name + " (" +
                          cusparseGetErrorString(status) + ")";
  if (status == CUSPARSE_STATUS_ALLOC_FAILED || status == CUSPARSE_STATUS_INSUFFICIENT_RESOURCES)
    throw OutOfMemory(msg);
  if (status == CUSPARSE_STATUS_NOT_SUPPORTED || status == CUSPARSE_STATUS_ARCH_MISMATCH)
    throw NotSupported(msg);
  throw CusparseError(msg, static_cast<int>(status), name);
}

#ifdef GPULA_WITH_CUDSS
namespace {
const char* cudss_status_name(cudssStatus_t s) {
  switch (s) {
#define GPULA_CUDSS_NAME(s) \
  case s:                   \
    return #s;
    GPULA_CUDSS_NAME(CUDSS_STATUS_SUCCESS)
    GPULA_CUDSS_NAME(CUDSS_STATUS_NOT_INITIALIZED)
    GPULA_CUDSS_NAME(CUDSS_STATUS_ALLOC_FAILED)
    GPULA_CUDSS_NAME(CUDSS_STATUS_INVALID_VALUE)
    GPULA_CUDSS_NAME(CUDSS_STATUS_NOT_SUPPORTED)
    GPULA_CUDSS_NAME(CUDSS_STATUS_EXECUTION_FAILED)
    GPULA_CUDSS_NAME(CUDSS_STATUS_INTERNAL_ERROR)
    GPULA_CUDSS_NAME(CUDSS_STATUS_IR_FAILED)
#undef GPULA_CUDSS_NAME
  }
  return "CUDSS_STATUS_UNKNOWN";
}
}  // namespace

void throw_cudss(cudssStatus_t status, const char* op, const char* call) {
  const char* name = cudss_status_name(status);
  const std::string msg = std::string("[") + op + "] " + call + " failed: " + name;
  if (status == CUDSS_STATUS_ALLOC_FAILED) throw OutOfMemory(msg);
  throw CudssError(msg, static_cast<int>(status), name);
}
#endif

}  // namespace gpula::detail::cuda
