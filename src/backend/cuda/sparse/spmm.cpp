// cuSPARSE backend of the planned SpMM: the CSR descriptor made with the plan; the dense
// descriptors, buffer and preprocessing made on the first execute and again only when B's or C's
// column count or leading dimensions change (otherwise re-pointed). B and C go to cuSPARSE
// row-major (copied when they are not).
#include <cuda_runtime.h>
#include <cusparse.h>

#include "backend/cuda/base/check.h"
#include "backend/cuda/base/context.h"
#include "backend/cuda/sparse/common.h"
#include "sparse/check.h"
#include "sparse/spmm_backend.h"

namespace gpula::sparse::detail::cuda {

namespace {

constexpr const char* kOp = "sparse.spmm";

// C = beta C where no product term exists (k = 0 or nnz = 0): zero by memset for beta = 0,
// otherwise through a host copy (a rare edge case, kept simple).
void scale_only(const TensorView& c, double beta, Stream s) {
  if (beta == 1.0) return;
  Tensor h = Tensor::empty(c.shape, c.dtype, Stream{Device::cpu(), nullptr});
  if (beta != 0.0) copy(c, h.view(), s);
  cpu::scale(h.view(), beta);
  copy(h.view(), c, s);
}

class CudaSpmmPlan final : public SpmmBackendPlan {
 public:
  CudaSpmmPlan(const CsrView& a, Op op) : a_(a), op_(op), mat_(a, kOp) {}
  void execute(const TensorView& b, const TensorView& c, double alpha, double beta,
               Stream stream) override {
    const int64_t k = op_ != Op::none ? a_.rows : a_.cols;
    if (k == 0 || a_.nnz() == 0) {
      scale_only(c, beta, stream);
      return;
    }
    Tensor bt, ct;
    const TensorView bv = row_major_operand(b, bt, true, stream);
    const TensorView cv = row_major_operand(c, ct, beta != 0.0, stream);
    run(bv, cv, alpha, beta, stream);
    if (ct.defined()) copy(ct.view(), c, stream);
  }

 private:
  void run(const TensorView& b, const TensorView& c, double alpha, double beta, Stream stream);

  CsrView a_;
  Op op_;
  SpMat mat_;
  DnMat b_, c_;
  WorkBuffer buffer_;
  int64_t n_ = -1, ldb_ = -1, ldc_ = -1;
  cusparseSpMMAlg_t alg_ = CUSPARSE_SPMM_ALG_DEFAULT;
};

// C = alpha op(A) B + beta C with B and C row-major.
void CudaSpmmPlan::run(const TensorView& b, const TensorView& c, double alpha, double beta,
                       Stream stream) {
  auto& ctx = gpula::detail::cuda::context(stream.device.index);
  auto s = static_cast<cudaStream_t>(stream.handle);
  cusparseHandle_t h = ctx.cusparse(s);
  const DType dt = a_.dtype();
  const cudaDataType vt = data_type(dt);
  const cusparseOperation_t op_a = operation(op_, dt);
  const cusparseOperation_t op_b = CUSPARSE_OPERATION_NON_TRANSPOSE;
  const Scalar al(alpha, dt), be(beta, dt);
  const int64_t n = c.shape[1], ldb = row_major_ld(b), ldc = row_major_ld(c);
  if (n != n_ || ldb != ldb_ || ldc != ldc_) {
    b_.reset(b.shape[0], n, ldb, b.data, dt, kOp);
    c_.reset(c.shape[0], n, ldc, c.data, dt, kOp);
    // CSR_ALG2 is cuSPARSE's row-major CSR algorithm (deterministic); where this cuSPARSE does
    // not take it for these operands, ALG_DEFAULT. Transposed A: ALG_DEFAULT.
    alg_ = op_a == CUSPARSE_OPERATION_NON_TRANSPOSE ? CUSPARSE_SPMM_CSR_ALG2
                                                    : CUSPARSE_SPMM_ALG_DEFAULT;
    size_t bytes = 0;
    cusparseStatus_t st = cusparseSpMM_bufferSize(h, op_a, op_b, al.bytes, mat_.d, b_.d, be.bytes,
                                                  c_.d, vt, alg_, &bytes);
    if (st != CUSPARSE_STATUS_SUCCESS && alg_ != CUSPARSE_SPMM_ALG_DEFAULT) {
      alg_ = CUSPARSE_SPMM_ALG_DEFAULT;
      st = cusparseSpMM_bufferSize(h, op_a, op_b, al.bytes, mat_.d, b_.d, be.bytes, c_.d, vt, alg_,
                                   &bytes);
    }
    gpula::detail::cuda::check(st, kOp, "cusparseSpMM_bufferSize");
    buffer_.reserve(bytes, kOp);
    // The analysis of A kept in the buffer, for op = none (where every cuSPARSE takes it).
    if (op_a == CUSPARSE_OPERATION_NON_TRANSPOSE) {
      GPULA_CHECK(kOp, cusparseSpMM_preprocess(h, op_a, op_b, al.bytes, mat_.d, b_.d, be.bytes,
                                               c_.d, vt, alg_, buffer_.p));
    }
    n_ = n;
    ldb_ = ldb;
    ldc_ = ldc;
  } else {
    GPULA_CHECK(kOp, cusparseDnMatSetValues(b_.d, b.data));
    GPULA_CHECK(kOp, cusparseDnMatSetValues(c_.d, c.data));
  }
  GPULA_CHECK(kOp, cusparseSpMM(h, op_a, op_b, al.bytes, mat_.d, b_.d, be.bytes, c_.d, vt, alg_,
                                buffer_.p));
}

}  // namespace

std::unique_ptr<SpmmBackendPlan> make_spmm_plan(const CsrView& a, Op op) {
  gpula::detail::cuda::context(a.device().index);
  return std::make_unique<CudaSpmmPlan>(a, op);
}

}  // namespace gpula::sparse::detail::cuda
