#pragma once
// Status checks for CUDA runtime, cuBLAS(Lt), cuSOLVER, cuSPARSE and (where gpula is built with
// it: GPULA_WITH_CUDSS) cuDSS calls, active in every build type; the Mp libraries' overloads are
// in backend/cuda/distributed/mp_comm.h.
// Messages name the failing call and the status:
// "[matmul] cublasLtMatmul failed: CUBLAS_STATUS_NOT_SUPPORTED".
#include <cublasLt.h>
#include <cuda_runtime.h>
#include <cusolver_common.h>
#include <cusparse.h>
#ifdef GPULA_WITH_CUDSS
#include <cudss.h>
#endif

#include <gpula/error.h>

#include <string>

namespace gpula::detail::cuda {

[[noreturn]] void throw_cuda(cudaError_t status, const char* op, const char* call);
[[noreturn]] void throw_cublas(cublasStatus_t status, const char* op, const char* call);
[[noreturn]] void throw_cusolver(cusolverStatus_t status, const char* op, const char* call);
[[noreturn]] void throw_cusparse(cusparseStatus_t status, const char* op, const char* call);
// "CUSOLVER_STATUS_INVALID_VALUE"
const char* cusolver_status_name(cusolverStatus_t status);

inline void check(cudaError_t status, const char* op, const char* call) {
  if (status != cudaSuccess) throw_cuda(status, op, call);
}
inline void check(cublasStatus_t status, const char* op, const char* call) {
  if (status != CUBLAS_STATUS_SUCCESS) throw_cublas(status, op, call);
}
inline void check(cusolverStatus_t status, const char* op, const char* call) {
  if (status != CUSOLVER_STATUS_SUCCESS) throw_cusolver(status, op, call);
}
inline void check(cusparseStatus_t status, const char* op, const char* call) {
  if (status != CUSPARSE_STATUS_SUCCESS) throw_cusparse(status, op, call);
}

#ifdef GPULA_WITH_CUDSS
[[noreturn]] void throw_cudss(cudssStatus_t status, const char* op, const char* call);
inline void check(cudssStatus_t status, const char* op, const char* call) {
  if (status != CUDSS_STATUS_SUCCESS) throw_cudss(status, op, call);
}
#endif

}  // namespace gpula::detail::cuda

// GPULA_CHECK(op, call): runs a CUDA runtime, cuBLAS, cuSOLVER, cuSPARSE or cuDSS call (in an Mp
// build also NCCL, cuSOLVERMp, cuBLASMp) and throws the library's error on failure; an
// allocation failure is OutOfMemory, an unsupported case NotSupported.
#define GPULA_CHECK(op, call) ::gpula::detail::cuda::check((call), (op), #call)
// For destructors: failures are swallowed (nothing sensible can be thrown there).
#define GPULA_CHECK_NOTHROW(call) static_cast<void>(call)
