// CUDA CG (real f32 / f64; M = None or jacobi) with the whole loop on the device: cuSPARSE SpMV
// (buffer and preprocessing made once per solve), cuBLAS dot / nrm2 writing device scalars
// (CUBLAS_POINTER_MODE_DEVICE), fused kernels for alpha, beta and the vector updates, and a
// device status word that the host reads every `check_every` iterations (the kernels stop
// updating once it is set, so the iterate and the count are those of the converged iteration).
#include "backend/cuda/kernels/sparse_iterative.h"

#include <cublas_v2.h>
#include <cusparse.h>

#include <algorithm>
#include <string>

#include "backend/cuda/check.h"
#include "backend/cuda/context.h"
#include "format.h"
#include "sparse_iterative_problem.h"

namespace gpula::sparse::cuda {

namespace {

using namespace gpula::detail::cuda;
using gpula::detail::throw_error;

constexpr int64_t kCheckEvery = 8;

struct PointerModeDevice {
  cublasHandle_t h;
  explicit PointerModeDevice(cublasHandle_t handle) : h(handle) {
    GPULA_CHECK("sparse.linalg.cg", cublasSetPointerMode(h, CUBLAS_POINTER_MODE_DEVICE));
  }
  ~PointerModeDevice() { GPULA_CHECK_NOTHROW(cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST)); }
};

cublasStatus_t dot(cublasHandle_t h, int64_t n, const float* x, const float* y, float* r) {
  return cublasSdot_64(h, n, x, 1, y, 1, r);
}
cublasStatus_t dot(cublasHandle_t h, int64_t n, const double* x, const double* y, double* r) {
  return cublasDdot_64(h, n, x, 1, y, 1, r);
}
cublasStatus_t nrm2(cublasHandle_t h, int64_t n, const float* x, float* r) {
  return cublasSnrm2_64(h, n, x, 1, r);
}
cublasStatus_t nrm2(cublasHandle_t h, int64_t n, const double* x, double* r) {
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

template <class T>
IterativeResult cg_typed(const IterativeProblem& p, const TensorView& bv, const TensorView& xv,
                         const IterativeOptions& o, Stream stream) {
  const char* op = p.op;
  const int64_t n = p.n;
  const CsrView& a = *p.csr;
  const DType dt = p.dtype;
  const cudaDataType vt = std::is_same_v<T, float> ? CUDA_R_32F : CUDA_R_64F;
  const cusparseIndexType_t it =
      a.index_dtype() == DType::i32 ? CUSPARSE_INDEX_32I : CUSPARSE_INDEX_64I;
  cudaStream_t st = static_cast<cudaStream_t>(stream.handle);
  Context& ctx = context(a.device().index);
  cublasHandle_t hb = ctx.cublas(st);
  cusparseHandle_t hs = ctx.cusparse(st);

  Tensor work = Tensor::empty({4 * n + 8}, dt, stream);  // r z p q, scalars
  Tensor status_t = Tensor::empty({2}, DType::i64, stream);
  T* r = static_cast<T*>(work.data());
  T* z = r + n;
  T* pv = z + n;
  T* q = pv + n;
  T* sc = q + n;
  CgScalars s{sc, sc + 1, sc + 2, sc + 3, sc + 4};
  T* bnorm_d = sc + 5;
  int64_t* status = static_cast<int64_t*>(status_t.data());
  T* x = static_cast<T*>(xv.data);
  const T* b = static_cast<const T*>(bv.data);

  Tensor dinv;
  if (o.preconditioner == Preconditioner::jacobi) {
    dinv = Tensor::empty({n}, dt, stream);
    const int64_t none = INT64_MAX;
    GPULA_CHECK(op, cudaMemcpyAsync(status, &none, sizeof none, cudaMemcpyHostToDevice, st));
    if (it == CUSPARSE_INDEX_32I) {
      inverse_diagonal<T, int32_t>(n, static_cast<const int32_t*>(a.indptr.data),
                                   static_cast<const int32_t*>(a.indices.data),
                                   static_cast<const T*>(a.values.data),
                                   static_cast<T*>(dinv.data()), status, st);
    } else {
      inverse_diagonal<T, int64_t>(n, static_cast<const int64_t*>(a.indptr.data),
                                   static_cast<const int64_t*>(a.indices.data),
                                   static_cast<const T*>(a.values.data),
                                   static_cast<T*>(dinv.data()), status, st);
    }
    int64_t zero_row = 0;
    GPULA_CHECK(op,
                cudaMemcpyAsync(&zero_row, status, sizeof zero_row, cudaMemcpyDeviceToHost, st));
    GPULA_CHECK(op, cudaStreamSynchronize(st));
    if (zero_row != INT64_MAX) {
      throw_error<InvalidArgument>(op, "M='jacobi' needs a nonzero diagonal, got A[", zero_row,
                                   ", ", zero_row, "] = 0");
    }
  }
  GPULA_CHECK(op, cudaMemsetAsync(status, 0, 2 * sizeof(int64_t), st));

  CusparseObjects d;
  GPULA_CHECK(op, cusparseCreateCsr(&d.a, a.rows, a.cols, a.nnz(), a.indptr.data, a.indices.data,
                                    a.values.data, it, it, CUSPARSE_INDEX_BASE_ZERO, vt));
  GPULA_CHECK(op, cusparseCreateDnVec(&d.in, n, pv, vt));
  GPULA_CHECK(op, cusparseCreateDnVec(&d.out, n, q, vt));
  const T one = 1, zero = 0, minus_one = -1;
  size_t bytes = 0;
  GPULA_CHECK(op, cusparseSpMV_bufferSize(hs, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, d.a, d.in,
                                          &zero, d.out, vt, CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
  Tensor buffer = Tensor::empty({static_cast<int64_t>(bytes / 4 + 1)}, DType::i32, stream);
  GPULA_CHECK(op,
              cusparseSpMV_preprocess(hs, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, d.a, d.in, &zero,
                                      d.out, vt, CUSPARSE_SPMV_ALG_DEFAULT, buffer.data()));
  auto spmv = [&](const T* alpha, const T* beta) {
    GPULA_CHECK(op, cusparseSpMV(hs, CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, d.a, d.in, beta,
                                 d.out, vt, CUSPARSE_SPMV_ALG_DEFAULT, buffer.data()));
  };

  // r = b - A x (q = b, then q = -A x + q, r = q); ||b|| and ||r|| read once here.
  GPULA_CHECK(op, cudaMemcpyAsync(q, b, n * sizeof(T), cudaMemcpyDeviceToDevice, st));
  GPULA_CHECK(op, cusparseDnVecSetValues(d.in, x));
  spmv(&minus_one, &one);
  GPULA_CHECK(op, cusparseDnVecSetValues(d.in, pv));
  GPULA_CHECK(op, cudaMemcpyAsync(r, q, n * sizeof(T), cudaMemcpyDeviceToDevice, st));
  PointerModeDevice mode(hb);
  GPULA_CHECK(op, nrm2(hb, n, b, bnorm_d));
  GPULA_CHECK(op, nrm2(hb, n, r, static_cast<T*>(s.rnorm)));
  T host[2];
  GPULA_CHECK(op, cudaMemcpyAsync(&host[0], bnorm_d, sizeof(T), cudaMemcpyDeviceToHost, st));
  GPULA_CHECK(op, cudaMemcpyAsync(&host[1], s.rnorm, sizeof(T), cudaMemcpyDeviceToHost, st));
  GPULA_CHECK(op, cudaStreamSynchronize(st));
  IterativeResult res;
  if (host[0] == T(0)) {
    GPULA_CHECK(op, cudaMemsetAsync(x, 0, n * sizeof(T), st));
    return res;
  }
  const double tol = std::max(o.rtol * static_cast<double>(host[0]), o.atol);
  res.residual_norm = static_cast<double>(host[1]);
  if (res.residual_norm <= tol) return res;

  auto precondition = [&]() -> const T* {
    if (dinv.defined()) {
      jacobi_apply<T>(n, static_cast<const T*>(dinv.data()), r, z, status, st);
      return z;
    }
    return r;
  };
  const T* zz = precondition();
  GPULA_CHECK(op, cudaMemcpyAsync(pv, zz, n * sizeof(T), cudaMemcpyDeviceToDevice, st));
  GPULA_CHECK(op, dot(hb, n, r, zz, static_cast<T*>(s.rho)));
  int64_t hs_status[2] = {0, 0};
  for (int64_t k = 1; k <= p.maxiter; ++k) {
    spmv(&one, &zero);  // q = A p
    GPULA_CHECK(op, dot(hb, n, pv, q, static_cast<T*>(s.pq)));
    cg_alpha<T>(s, status, st);
    cg_update_xr<T>(n, s, pv, q, x, r, status, st);
    GPULA_CHECK(op, nrm2(hb, n, r, static_cast<T*>(s.rnorm)));
    cg_check<T>(s, tol, k, status, st);
    zz = precondition();
    GPULA_CHECK(op, dot(hb, n, r, zz, static_cast<T*>(s.rho_new)));
    cg_update_p<T>(n, s, zz, pv, status, st);
    if (o.callback) {
      GPULA_CHECK(op, cudaStreamSynchronize(st));  // a host sync per iteration
      o.callback(xv);
    }
    if (k % kCheckEvery == 0 || k == p.maxiter || o.callback) {
      GPULA_CHECK(op,
                  cudaMemcpyAsync(hs_status, status, sizeof hs_status, cudaMemcpyDeviceToHost, st));
      GPULA_CHECK(op, cudaStreamSynchronize(st));
      if (hs_status[0] != 0) break;
    }
  }
  GPULA_CHECK(op, cudaMemcpyAsync(&host[1], s.rnorm, sizeof(T), cudaMemcpyDeviceToHost, st));
  GPULA_CHECK(op, cudaStreamSynchronize(st));
  res.residual_norm = static_cast<double>(host[1]);
  res.iterations = hs_status[1];
  res.info = hs_status[0] == 1 ? 0 : hs_status[0] == -1 ? -1 : p.maxiter;
  if (hs_status[0] == 0) res.iterations = p.maxiter;
  return res;
}

}  // namespace

IterativeResult iterative_solve(const IterativeProblem& p, const TensorView& b, const TensorView& x,
                                const IterativeOptions& o, Stream stream) {
  const bool real = p.dtype == DType::f32 || p.dtype == DType::f64;
  const bool prec_ok =
      o.preconditioner == Preconditioner::none || o.preconditioner == Preconditioner::jacobi;
  if (p.method != KrylovMethod::cg || !real || p.csr == nullptr || !prec_ok) {
    throw_error<NotSupported>(p.op,
                              "on a GPU only cg with a real (float32/float64) sparse A and "
                              "M = None or 'jacobi' is implemented yet");
  }
  if (p.dtype == DType::f32) return cg_typed<float>(p, b, x, o, stream);
  return cg_typed<double>(p, b, x, o, stream);
}

}  // namespace gpula::sparse::cuda
