// cuSPARSE backend of the planned SpMV: CSR descriptor made once, dense-vector descriptors made
// on the first execute and re-pointed afterwards, buffer sized and preprocessed once.
#include <cuda_runtime.h>
#include <cusparse.h>

#include <complex>
#include <cstring>

#include "sparse/spmv_backend.h"
#include "backend/cuda/base/check.h"
#include "backend/cuda/base/context.h"

namespace gpula::sparse::detail {

namespace {

constexpr const char* kOp = "sparse.SpMV";

cudaDataType value_type(DType t) {
  switch (t) {
    case DType::f32:
      return CUDA_R_32F;
    case DType::f64:
      return CUDA_R_64F;
    case DType::c64:
      return CUDA_C_32F;
    default:
      return CUDA_C_64F;
  }
}

cusparseOperation_t to_cusparse(Op op) {
  switch (op) {
    case Op::none:
      return CUSPARSE_OPERATION_NON_TRANSPOSE;
    case Op::transpose:
      return CUSPARSE_OPERATION_TRANSPOSE;
    default:
      return CUSPARSE_OPERATION_CONJUGATE_TRANSPOSE;
  }
}

// alpha / beta in A's dtype, 16 bytes of storage.
struct Scalar {
  alignas(16) unsigned char bytes[16] = {};
  Scalar(double v, DType t) {
    switch (t) {
      case DType::f32: {
        float f = static_cast<float>(v);
        std::memcpy(bytes, &f, sizeof f);
        break;
      }
      case DType::f64:
        std::memcpy(bytes, &v, sizeof v);
        break;
      case DType::c64: {
        std::complex<float> c(static_cast<float>(v));
        std::memcpy(bytes, &c, sizeof c);
        break;
      }
      default: {
        std::complex<double> c(v);
        std::memcpy(bytes, &c, sizeof c);
        break;
      }
    }
  }
};

}  // namespace

struct CudaSpmvPlan {
  CsrView a;
  Op op = Op::none;
  cusparseSpMatDescr_t mat = nullptr;
  cusparseDnVecDescr_t x = nullptr;
  cusparseDnVecDescr_t y = nullptr;
  void* buffer = nullptr;
  bool prepared = false;
  cusparseSpMVAlg_t alg = CUSPARSE_SPMV_CSR_ALG1;

  ~CudaSpmvPlan() {
    if (x) GPULA_CHECK_NOTHROW(cusparseDestroyDnVec(x));
    if (y) GPULA_CHECK_NOTHROW(cusparseDestroyDnVec(y));
    if (mat) GPULA_CHECK_NOTHROW(cusparseDestroySpMat(mat));
    if (buffer) GPULA_CHECK_NOTHROW(cudaFree(buffer));
  }
};

std::shared_ptr<CudaSpmvPlan> cuda_spmv_plan(const CsrView& a, Op op) {
  gpula::detail::cuda::context(a.device().index);
  auto plan = std::make_shared<CudaSpmvPlan>();
  plan->a = a;
  plan->op = op;
  const cusparseIndexType_t it =
      a.index_dtype() == DType::i32 ? CUSPARSE_INDEX_32I : CUSPARSE_INDEX_64I;
  GPULA_CHECK(kOp, cusparseCreateCsr(&plan->mat, a.rows, a.cols, a.nnz(), a.indptr.data,
                                     a.indices.data, a.values.data, it, it,
                                     CUSPARSE_INDEX_BASE_ZERO, value_type(a.dtype())));
  return plan;
}

void cuda_spmv_execute(CudaSpmvPlan& plan, const TensorView& x, const TensorView& y, double alpha,
                       double beta, Stream stream) {
  auto& ctx = gpula::detail::cuda::context(stream.device.index);
  auto s = static_cast<cudaStream_t>(stream.handle);
  cusparseHandle_t h = ctx.cusparse(s);
  const CsrView& a = plan.a;
  const cudaDataType vt = value_type(a.dtype());
  const int64_t ny = y.shape[0];
  if (ny == 0) return;
  if (a.nnz() == 0 || x.shape[0] == 0) {
    // y = beta * y with no products: cuSPARSE does this too, but skip its edge cases.
    if (beta == 0.0) {
      GPULA_CHECK(kOp, cudaMemsetAsync(y.data, 0, ny * size_of(y.dtype), s));
      return;
    }
  }
  const Scalar al(alpha, a.dtype()), be(beta, a.dtype());
  if (!plan.x) {
    GPULA_CHECK(kOp, cusparseCreateDnVec(&plan.x, x.shape[0], x.data, vt));
    GPULA_CHECK(kOp, cusparseCreateDnVec(&plan.y, ny, y.data, vt));
  } else {
    GPULA_CHECK(kOp, cusparseDnVecSetValues(plan.x, x.data));
    GPULA_CHECK(kOp, cusparseDnVecSetValues(plan.y, y.data));
  }
  // For real values A^H is A^T, and cuSPARSE rejects CONJUGATE_TRANSPOSE on real types.
  const bool real = a.dtype() == DType::f32 || a.dtype() == DType::f64;
  const cusparseOperation_t op = to_cusparse(real && plan.op == Op::conjugate_transpose ? Op::transpose : plan.op);
  if (!plan.prepared) {
    size_t bytes = 0;
    GPULA_CHECK(kOp, cusparseSpMV_bufferSize(h, op, al.bytes, plan.mat, plan.x, be.bytes, plan.y,
                                             vt, plan.alg, &bytes));
    if (bytes > 0) GPULA_CHECK(kOp, cudaMalloc(&plan.buffer, bytes));
    // Preprocessing (an analysis of A kept in the buffer) only for op = none, where every
    // cuSPARSE version supports it; transposed products run without it.
    if (op == CUSPARSE_OPERATION_NON_TRANSPOSE) {
      GPULA_CHECK(kOp, cusparseSpMV_preprocess(h, op, al.bytes, plan.mat, plan.x, be.bytes, plan.y,
                                               vt, plan.alg, plan.buffer));
    }
    plan.prepared = true;
  }
  GPULA_CHECK(kOp, cusparseSpMV(h, op, al.bytes, plan.mat, plan.x, be.bytes, plan.y, vt, plan.alg,
                                plan.buffer));
}

}  // namespace gpula::sparse::detail
