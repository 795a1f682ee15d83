// cuSPARSE backend of the planned SDDMM: C's CSR descriptor made with the plan; A's and B's
// dense descriptors, the buffer and cusparseSDDMM_preprocess made on the first execute and again
// only when k or the leading dimensions change (otherwise re-pointed). A and B arrive row-major.
#include <cuda_runtime.h>
#include <cusparse.h>

#include "sparse/products_backend.h"
#include "backend/cuda/base/check.h"
#include "backend/cuda/base/context.h"
#include "backend/cuda/sparse/common.h"

namespace gpula::sparse::detail {

namespace {
constexpr const char* kOp = "sparse.sddmm";
}  // namespace

struct CudaSddmmPlan {
  CsrView c;
  cusp::SpMat mat;
  cusp::DnMat a, b;
  void* buffer = nullptr;
  size_t capacity = 0;
  int64_t k = -1, lda = -1, ldb = -1;

  explicit CudaSddmmPlan(const CsrView& v) : c(v), mat(v, kOp) {}
  ~CudaSddmmPlan() {
    if (buffer) GPULA_CHECK_NOTHROW(cudaFree(buffer));
  }
};

std::shared_ptr<CudaSddmmPlan> cuda_sddmm_plan(const CsrView& c) {
  gpula::detail::cuda::context(c.device().index);
  return std::make_shared<CudaSddmmPlan>(c);
}

void cuda_sddmm_execute(CudaSddmmPlan& plan, const TensorView& a, const TensorView& b,
                        double alpha, double beta, Stream stream) {
  auto& ctx = gpula::detail::cuda::context(stream.device.index);
  auto s = static_cast<cudaStream_t>(stream.handle);
  cusparseHandle_t h = ctx.cusparse(s);
  const DType dt = plan.c.dtype();
  const cudaDataType vt = cusp::value_type(dt);
  const cusparseOperation_t nt = CUSPARSE_OPERATION_NON_TRANSPOSE;
  const cusp::Scalar al(alpha, dt), be(beta, dt);
  const int64_t k = a.shape[1], lda = row_major_ld(a), ldb = row_major_ld(b);
  constexpr cusparseSDDMMAlg_t alg = CUSPARSE_SDDMM_ALG_DEFAULT;
  if (k != plan.k || lda != plan.lda || ldb != plan.ldb) {
    plan.a.reset(a.shape[0], k, lda, a.data, dt, kOp);
    plan.b.reset(k, b.shape[1], ldb, b.data, dt, kOp);
    size_t bytes = 0;
    GPULA_CHECK(kOp, cusparseSDDMM_bufferSize(h, nt, nt, al.bytes, plan.a.d, plan.b.d, be.bytes,
                                              plan.mat.d, vt, alg, &bytes));
    if (bytes > plan.capacity) {
      if (plan.buffer) GPULA_CHECK(kOp, cudaFree(plan.buffer));
      plan.buffer = nullptr;
      plan.capacity = 0;
      GPULA_CHECK(kOp, cudaMalloc(&plan.buffer, bytes));
      plan.capacity = bytes;
    }
    GPULA_CHECK(kOp, cusparseSDDMM_preprocess(h, nt, nt, al.bytes, plan.a.d, plan.b.d, be.bytes,
                                              plan.mat.d, vt, alg, plan.buffer));
    plan.k = k;
    plan.lda = lda;
    plan.ldb = ldb;
  } else {
    GPULA_CHECK(kOp, cusparseDnMatSetValues(plan.a.d, a.data));
    GPULA_CHECK(kOp, cusparseDnMatSetValues(plan.b.d, b.data));
  }
  GPULA_CHECK(kOp, cusparseSDDMM(h, nt, nt, al.bytes, plan.a.d, plan.b.d, be.bytes, plan.mat.d,
                                 vt, alg, plan.buffer));
}

}  // namespace gpula::sparse::detail
