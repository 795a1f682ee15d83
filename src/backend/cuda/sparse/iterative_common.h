#pragma once
// What the device-resident Krylov loops share: cg (sparse_iterative.cpp) and bicgstab / gmres /
// minres (sparse_krylov.cpp): the status check period, cuBLAS device pointer mode, typed dot /
// nrm2, the cuSPARSE SpMV descriptors, the user callback and the Jacobi inverse diagonal.
#include <cublas_v2.h>
#include <cusparse.h>

#include <algorithm>
#include <climits>
#include <cstdint>

#include "backend/cuda/base/check.h"
#include "backend/cuda/base/context.h"
#include "backend/cuda/kernels/sparse_iterative.h"
#include "core/format.h"
#include "sparse/iterative_backend.h"

namespace gpula::sparse::detail::cuda {

// The host reads the device status word every kCheckEvery iterations (and at the last one).
inline constexpr int64_t kCheckEvery = 8;

// cuBLAS reads and writes its scalars in device memory while this lives.
struct PointerModeDevice {
  cublasHandle_t h;
  explicit PointerModeDevice(cublasHandle_t handle, const char* op = "sparse.linalg.cg")
      : h(handle) {
    GPULA_CHECK(op, cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
  }
  ~PointerModeDevice() { GPULA_CHECK_NOTHROW(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST)); }
};

inline cublasStatus_t dot(cublasHandle_t h, int64_t n, const float* x, const float* y, float* r) {
  return cublasSdot_64(h, n, x, 1, y, 1, r);
}
inline cublasStatus_t dot(cublasHandle_t h, int64_t n, const double* x, const double* y,
                          double* r) {
  return cublasDdot_64(h, n, x, 1, y, 1, r);
}
inline cublasStatus_t nrm2(cublasHandle_t h, int64_t n, const float* x, float* r) {
  return cublasSnrm2_64(h, n, x, 1, r);
}
inline cublasStatus_t nrm2(cublasHandle_t h, int64_t n, const double* x, double* r) {
  return cublasDnrm2_64(h, n, x, 1, r);
}

struct CusparseObjects {
  cusparseSpMatDescr_t a = nullptr;
  cusparseDnVecDescr_t in = nullptr, out = nullptr;
  ~CusparseObjects() {
    if (a) GPULA_CHECK_NOTHROW(cusparseDestroySpMat(a));
    if (in) GPULA_CHECK_NOTHROW(cusparseDestroyDnVec(in));
    if (out) GPULA_CHECK_NOTHROW(cusparseDestroyDnVec(out));
  }
};

// Runs the user's callback on x. The callback may run gpula work of its own: it gets cuBLAS in
// host pointer mode, and the handles are bound to this solve's stream (and device pointer
// mode) again afterwards; hb and hs are updated in place.
inline void run_callback(const char* op, const IterativeOptions& o, const TensorView& x,
                         int device, cudaStream_t st, cublasHandle_t& hb, cusparseHandle_t& hs) {
  GPULA_CHECK(op, cublasSetPointerMode(hb, CUBLAS_POINTER_MODE_HOST));
  o.callback(x);
  gpula::detail::cuda::Context& ctx = gpula::detail::cuda::context(device);
  hb = ctx.cublas(st);
  hs = ctx.cusparse(st);
  GPULA_CHECK(op, cublasSetPointerMode(hb, CUBLAS_POINTER_MODE_DEVICE));
}

// 1 / diag(A) (duplicates summed) for M = 'jacobi'; a zero diagonal raises InvalidArgument, as
// on the CPU. `scratch` is one device int64; the host waits for the check.
template <class T>
Tensor jacobi_inverse_diagonal(const char* op, const CsrView& a, int64_t* scratch, cudaStream_t st,
                               Stream stream) {
  const int64_t n = a.rows;
  Tensor dinv = Tensor::empty({std::max<int64_t>(n, 1)}, a.dtype(), stream);
  int64_t zero_row = INT64_MAX;
  GPULA_CHECK(op, cudaMemcpyAsync(scratch, &zero_row, sizeof zero_row, cudaMemcpyHostToDevice, st));
  if (a.index_dtype() == DType::i32) {
    gpula::detail::cuda::inverse_diagonal<T, int32_t>(
        n, static_cast<const int32_t*>(a.indptr.data), static_cast<const int32_t*>(a.indices.data),
        static_cast<const T*>(a.values.data), static_cast<T*>(dinv.data()), scratch, st);
  } else {
    gpula::detail::cuda::inverse_diagonal<T, int64_t>(
        n, static_cast<const int64_t*>(a.indptr.data), static_cast<const int64_t*>(a.indices.data),
        static_cast<const T*>(a.values.data), static_cast<T*>(dinv.data()), scratch, st);
  }
  GPULA_CHECK(op, cudaGetLastError());
  GPULA_CHECK(op, cudaMemcpyAsync(&zero_row, scratch, sizeof zero_row, cudaMemcpyDeviceToHost, st));
  GPULA_CHECK(op, cudaStreamSynchronize(st));
  if (zero_row != INT64_MAX) {
    gpula::detail::throw_error<InvalidArgument>(op, "M='jacobi' needs a nonzero diagonal, got A[",
                                                zero_row, ", ", zero_row, "] = 0");
  }
  return dinv;
}

/// bicgstab, gmres and minres on the device (sparse_krylov.cpp): real f32 / f64 CSR A, M = None
/// or 'jacobi'; NotSupported for the rest.
IterativeResult krylov_solve(const IterativeProblem& p, const TensorView& b, const TensorView& x,
                             const IterativeOptions& o, Stream stream);

}  // namespace gpula::sparse::detail::cuda
