// cuSPARSE backend of the planned SpMM: the CSR descriptor made with the plan; the dense
// descriptors, buffer and preprocessing made on the first execute and again only when B's or C's
// column count or leading dimensions change (otherwise re-pointed). B and C arrive row-major.
#include <cuda_runtime.h>
#include <cusparse.h>

#include "sparse/products_backend.h"
#include "backend/cuda/base/check.h"
#include "backend/cuda/base/context.h"
#include "backend/cuda/sparse/common.h"

namespace gpula::sparse::detail {

namespace {
constexpr const char* kOp = "sparse.spmm";
}  // namespace

struct CudaSpmmPlan {
  CsrView a;
  Op op = Op::none;
  cusp::SpMat mat;
  cusp::DnMat b, c;
  void* buffer = nullptr;
  size_t capacity = 0;
  int64_t n = -1, ldb = -1, ldc = -1;
  cusparseSpMMAlg_t alg = CUSPARSE_SPMM_ALG_DEFAULT;

  CudaSpmmPlan(const CsrView& v, Op o) : a(v), op(o), mat(v, kOp) {}
  ~CudaSpmmPlan() {
    if (buffer) GPULA_CHECK_NOTHROW(cudaFree(buffer));
  }
};

std::shared_ptr<CudaSpmmPlan> cuda_spmm_plan(const CsrView& a, Op op) {
  gpula::detail::cuda::context(a.device().index);
  return std::make_shared<CudaSpmmPlan>(a, op);
}

void cuda_spmm_execute(CudaSpmmPlan& plan, const TensorView& b, const TensorView& c, double alpha,
                       double beta, Stream stream) {
  auto& ctx = gpula::detail::cuda::context(stream.device.index);
  auto s = static_cast<cudaStream_t>(stream.handle);
  cusparseHandle_t h = ctx.cusparse(s);
  const DType dt = plan.a.dtype();
  const cudaDataType vt = cusp::value_type(dt);
  const cusparseOperation_t op_a = cusp::operation(plan.op, dt);
  const cusparseOperation_t op_b = CUSPARSE_OPERATION_NON_TRANSPOSE;
  const cusp::Scalar al(alpha, dt), be(beta, dt);
  const int64_t n = c.shape[1], ldb = row_major_ld(b), ldc = row_major_ld(c);
  if (n != plan.n || ldb != plan.ldb || ldc != plan.ldc) {
    plan.b.reset(b.shape[0], n, ldb, b.data, dt, kOp);
    plan.c.reset(c.shape[0], n, ldc, c.data, dt, kOp);
    // CSR_ALG2 is cuSPARSE's row-major CSR algorithm (deterministic); where this cuSPARSE does
    // not take it for these operands, ALG_DEFAULT. Transposed A: ALG_DEFAULT.
    plan.alg = op_a == CUSPARSE_OPERATION_NON_TRANSPOSE ? CUSPARSE_SPMM_CSR_ALG2
                                                        : CUSPARSE_SPMM_ALG_DEFAULT;
    size_t bytes = 0;
    cusparseStatus_t st = cusparseSpMM_bufferSize(h, op_a, op_b, al.bytes, plan.mat.d, plan.b.d,
                                                  be.bytes, plan.c.d, vt, plan.alg, &bytes);
    if (st != CUSPARSE_STATUS_SUCCESS && plan.alg != CUSPARSE_SPMM_ALG_DEFAULT) {
      plan.alg = CUSPARSE_SPMM_ALG_DEFAULT;
      st = cusparseSpMM_bufferSize(h, op_a, op_b, al.bytes, plan.mat.d, plan.b.d, be.bytes,
                                   plan.c.d, vt, plan.alg, &bytes);
    }
    gpula::detail::cuda::check(st, kOp, "cusparseSpMM_bufferSize");
    if (bytes > plan.capacity) {
      if (plan.buffer) GPULA_CHECK(kOp, cudaFree(plan.buffer));
      plan.buffer = nullptr;
      plan.capacity = 0;
      GPULA_CHECK(kOp, cudaMalloc(&plan.buffer, bytes));
      plan.capacity = bytes;
    }
    // The analysis of A kept in the buffer, for op = none (where every cuSPARSE takes it).
    if (op_a == CUSPARSE_OPERATION_NON_TRANSPOSE) {
      GPULA_CHECK(kOp, cusparseSpMM_preprocess(h, op_a, op_b, al.bytes, plan.mat.d, plan.b.d,
                                               be.bytes, plan.c.d, vt, plan.alg, plan.buffer));
    }
    plan.n = n;
    plan.ldb = ldb;
    plan.ldc = ldc;
  } else {
    GPULA_CHECK(kOp, cusparseDnMatSetValues(plan.b.d, b.data));
    GPULA_CHECK(kOp, cusparseDnMatSetValues(plan.c.d, c.data));
  }
  GPULA_CHECK(kOp, cusparseSpMM(h, op_a, op_b, al.bytes, plan.mat.d, plan.b.d, be.bytes,
                                plan.c.d, vt, plan.alg, plan.buffer));
}

}  // namespace gpula::sparse::detail
