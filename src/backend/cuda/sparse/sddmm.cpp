// cuSPARSE backend of the planned SDDMM: C's CSR descriptor made with the plan; A's and B's
// dense descriptors, the buffer and cusparseSDDMM_preprocess made on the first execute and again
// only when k or the leading dimensions change (otherwise re-pointed). A and B go to cuSPARSE
// row-major (copied when they are not).
#include <cuda_runtime.h>
#include <cusparse.h>

#include "backend/cuda/base/check.h"
#include "backend/cuda/base/context.h"
#include "backend/cuda/sparse/common.h"
#include "sparse/check.h"
#include "sparse/sddmm_backend.h"

namespace gpula::sparse::detail::cuda {

namespace {

constexpr const char* kOp = "sparse.sddmm";

// No product terms (k = 0): C = beta C, through the CPU kernel on a host copy (rare edge case).
void scale_only(const CsrView& c, const TensorView& a, const TensorView& b, double alpha,
                double beta, Stream s) {
  const Stream host{Device::cpu(), nullptr};
  Tensor h = Tensor::empty(c.values.shape, c.dtype(), host);
  if (beta != 0.0) copy(c.values, h.view(), s);
  Tensor hp = Tensor::empty(c.indptr.shape, c.index_dtype(), host);
  Tensor hi = Tensor::empty(c.indices.shape, c.index_dtype(), host);
  copy(c.indptr, hp.view(), s);
  copy(c.indices, hi.view(), s);
  TensorView ha = a, hb = b;
  ha.device = hb.device = Device::cpu();
  ha.data = hb.data = nullptr;
  cpu::sddmm(CsrView{c.rows, c.cols, hp.view(), hi.view(), h.view()}, ha, hb, alpha, beta);
  copy(h.view(), c.values, s);
}

class CudaSddmmPlan final : public SddmmBackendPlan {
 public:
  explicit CudaSddmmPlan(const CsrView& c) : c_(c), mat_(c, kOp) {}
  void execute(const TensorView& a, const TensorView& b, double alpha, double beta,
               Stream stream) override {
    if (a.shape[1] == 0) {
      scale_only(c_, a, b, alpha, beta, stream);
      return;
    }
    Tensor at, bt;
    const TensorView av = row_major_operand(a, at, true, stream);
    const TensorView bv = row_major_operand(b, bt, true, stream);
    run(av, bv, alpha, beta, stream);
  }

 private:
  void run(const TensorView& a, const TensorView& b, double alpha, double beta, Stream stream);

  CsrView c_;
  SpMat mat_;
  DnMat a_, b_;
  WorkBuffer buffer_;
  int64_t k_ = -1, lda_ = -1, ldb_ = -1;
};

// C = alpha (A B) o spy(C) + beta C with A and B row-major.
void CudaSddmmPlan::run(const TensorView& a, const TensorView& b, double alpha, double beta,
                        Stream stream) {
  auto& ctx = gpula::detail::cuda::context(stream.device.index);
  auto s = static_cast<cudaStream_t>(stream.handle);
  cusparseHandle_t h = ctx.cusparse(s);
  const DType dt = c_.dtype();
  const cudaDataType vt = data_type(dt);
  const cusparseOperation_t nt = CUSPARSE_OPERATION_NON_TRANSPOSE;
  const Scalar al(alpha, dt), be(beta, dt);
  const int64_t k = a.shape[1], lda = row_major_ld(a), ldb = row_major_ld(b);
  constexpr cusparseSDDMMAlg_t alg = CUSPARSE_SDDMM_ALG_DEFAULT;
  if (k != k_ || lda != lda_ || ldb != ldb_) {
    a_.reset(a.shape[0], k, lda, a.data, dt, kOp);
    b_.reset(k, b.shape[1], ldb, b.data, dt, kOp);
    size_t bytes = 0;
    GPULA_CHECK(kOp, cusparseSDDMM_bufferSize(h, nt, nt, al.bytes, a_.d, b_.d, be.bytes, mat_.d, vt,
                                              alg, &bytes));
    buffer_.reserve(bytes, kOp);
    GPULA_CHECK(kOp, cusparseSDDMM_preprocess(h, nt, nt, al.bytes, a_.d, b_.d, be.bytes, mat_.d, vt,
                                              alg, buffer_.p));
    k_ = k;
    lda_ = lda;
    ldb_ = ldb;
  } else {
    GPULA_CHECK(kOp, cusparseDnMatSetValues(a_.d, a.data));
    GPULA_CHECK(kOp, cusparseDnMatSetValues(b_.d, b.data));
  }
  GPULA_CHECK(kOp,
              cusparseSDDMM(h, nt, nt, al.bytes, a_.d, b_.d, be.bytes, mat_.d, vt, alg, buffer_.p));
}

}  // namespace

std::unique_ptr<SddmmBackendPlan> make_sddmm_plan(const CsrView& c) {
  gpula::detail::cuda::context(c.device().index);
  return std::make_unique<CudaSddmmPlan>(c);
}

}  // namespace gpula::sparse::detail::cuda
