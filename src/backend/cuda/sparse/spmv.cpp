// cuSPARSE backend of the planned SpMV: CSR descriptor made once, dense-vector descriptors made
// on the first execute and re-pointed afterwards, buffer sized and preprocessed once.
#include <cuda_runtime.h>
#include <cusparse.h>

#include "backend/cuda/base/check.h"
#include "backend/cuda/base/context.h"
#include "backend/cuda/sparse/common.h"
#include "sparse/spmv_backend.h"

namespace gpula::sparse::detail::cuda {

namespace {

constexpr const char* kOp = "sparse.SpMV";

class CudaSpmvPlan final : public SpmvBackendPlan {
 public:
  CudaSpmvPlan(const CsrView& a, Op op) : a_(a), op_(op), mat_(a, kOp) {}
  ~CudaSpmvPlan() override {
    if (x_) GPULA_CHECK_NOTHROW(cusparseDestroyDnVec(x_));
    if (y_) GPULA_CHECK_NOTHROW(cusparseDestroyDnVec(y_));
    if (buffer_) GPULA_CHECK_NOTHROW(cudaFree(buffer_));
  }
  void execute(const TensorView& x, const TensorView& y, double alpha, double beta,
               Stream stream) override;

 private:
  CsrView a_;
  Op op_;
  SpMat mat_;
  cusparseDnVecDescr_t x_ = nullptr;
  cusparseDnVecDescr_t y_ = nullptr;
  void* buffer_ = nullptr;
  bool prepared_ = false;
  cusparseSpMVAlg_t alg_ = CUSPARSE_SPMV_CSR_ALG1;
};

void CudaSpmvPlan::execute(const TensorView& x, const TensorView& y, double alpha, double beta,
                           Stream stream) {
  auto& ctx = gpula::detail::cuda::context(stream.device.index);
  auto s = static_cast<cudaStream_t>(stream.handle);
  cusparseHandle_t h = ctx.cusparse(s);
  const cudaDataType vt = data_type(a_.dtype());
  const int64_t ny = y.shape[0];
  if (ny == 0) return;
  if (a_.nnz() == 0 || x.shape[0] == 0) {
    // y = beta * y with no products: cuSPARSE does this too, but skip its edge cases.
    if (beta == 0.0) {
      GPULA_CHECK(kOp, cudaMemsetAsync(y.data, 0, ny * size_of(y.dtype), s));
      return;
    }
  }
  const Scalar al(alpha, a_.dtype()), be(beta, a_.dtype());
  if (!x_) {
    GPULA_CHECK(kOp, cusparseCreateDnVec(&x_, x.shape[0], x.data, vt));
    GPULA_CHECK(kOp, cusparseCreateDnVec(&y_, ny, y.data, vt));
  } else {
    GPULA_CHECK(kOp, cusparseDnVecSetValues(x_, x.data));
    GPULA_CHECK(kOp, cusparseDnVecSetValues(y_, y.data));
  }
  const cusparseOperation_t op = operation(op_, a_.dtype());
  if (!prepared_) {
    size_t bytes = 0;
    GPULA_CHECK(
        kOp, cusparseSpMV_bufferSize(h, op, al.bytes, mat_.d, x_, be.bytes, y_, vt, alg_, &bytes));
    if (bytes > 0) GPULA_CHECK(kOp, cudaMalloc(&buffer_, bytes));
    // Preprocessing (an analysis of A kept in the buffer) only for op = none, where every
    // cuSPARSE version supports it; transposed products run without it.
    if (op == CUSPARSE_OPERATION_NON_TRANSPOSE) {
      GPULA_CHECK(kOp, cusparseSpMV_preprocess(h, op, al.bytes, mat_.d, x_, be.bytes, y_, vt, alg_,
                                               buffer_));
    }
    prepared_ = true;
  }
  GPULA_CHECK(kOp, cusparseSpMV(h, op, al.bytes, mat_.d, x_, be.bytes, y_, vt, alg_, buffer_));
}

}  // namespace

std::unique_ptr<SpmvBackendPlan> make_spmv_plan(const CsrView& a, Op op) {
  gpula::detail::cuda::context(a.device().index);
  return std::make_unique<CudaSpmvPlan>(a, op);
}

}  // namespace gpula::sparse::detail::cuda
