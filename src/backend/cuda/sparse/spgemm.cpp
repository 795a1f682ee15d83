// cuSPARSE backend of SpGEMM C = A B: cusparseSpGEMM's three phases (workEstimation, compute,
// copy) with ALG_DEFAULT; C's row offsets are allocated first, its columns and values once the
// compute phase has told nnz(C).
#include <cuda_runtime.h>
#include <cusparse.h>

#include <cstdint>
#include <limits>

#include "backend/cuda/base/check.h"
#include "backend/cuda/base/context.h"
#include "backend/cuda/sparse/common.h"
#include "core/format.h"
#include "sparse/spgemm_backend.h"

namespace gpula::sparse::detail::cuda {

namespace {

constexpr const char* kOp = "sparse.spgemm";

struct DeviceBuffer {
  void* p = nullptr;
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void allocate(size_t bytes) {
    if (bytes > 0) GPULA_CHECK(kOp, cudaMalloc(&p, bytes));
  }
  ~DeviceBuffer() {
    if (p) GPULA_CHECK_NOTHROW(cudaFree(p));
  }
};

struct SpGemmDescr {
  cusparseSpGEMMDescr_t d = nullptr;
  SpGemmDescr() { GPULA_CHECK(kOp, cusparseSpGEMM_createDescr(&d)); }
  SpGemmDescr(const SpGemmDescr&) = delete;
  SpGemmDescr& operator=(const SpGemmDescr&) = delete;
  ~SpGemmDescr() {
    if (d) GPULA_CHECK_NOTHROW(cusparseSpGEMM_destroyDescr(d));
  }
};

}  // namespace

CsrMatrix spgemm(const CsrView& a, const CsrView& b, Stream stream) {
  auto& ctx = gpula::detail::cuda::context(stream.device.index);
  auto s = static_cast<cudaStream_t>(stream.handle);
  cusparseHandle_t h = ctx.cusparse(s);
  const DType dt = a.dtype(), idt = a.index_dtype();
  const cudaDataType vt = data_type(dt);
  const cusparseIndexType_t it = index_type(idt);
  const cusparseOperation_t nt = CUSPARSE_OPERATION_NON_TRANSPOSE;
  constexpr cusparseSpGEMMAlg_t alg = CUSPARSE_SPGEMM_DEFAULT;
  const Scalar al(1.0, dt), be(0.0, dt);
  const int64_t m = a.rows, n = b.cols;

  SpMat ma(a, kOp), mb(b, kOp), mc;
  Tensor cptr = Tensor::empty({m + 1}, idt, stream);
  GPULA_CHECK(kOp, cusparseCreateCsr(&mc.d, m, n, 0, cptr.data(), nullptr, nullptr, it, it,
                                     CUSPARSE_INDEX_BASE_ZERO, vt));
  SpGemmDescr desc;
  size_t bytes1 = 0, bytes2 = 0;
  DeviceBuffer buf1, buf2;
  GPULA_CHECK(kOp, cusparseSpGEMM_workEstimation(h, nt, nt, al.bytes, ma.d, mb.d, be.bytes, mc.d,
                                                 vt, alg, desc.d, &bytes1, nullptr));
  buf1.allocate(bytes1);
  GPULA_CHECK(kOp, cusparseSpGEMM_workEstimation(h, nt, nt, al.bytes, ma.d, mb.d, be.bytes, mc.d,
                                                 vt, alg, desc.d, &bytes1, buf1.p));
  GPULA_CHECK(kOp, cusparseSpGEMM_compute(h, nt, nt, al.bytes, ma.d, mb.d, be.bytes, mc.d, vt,
                                          alg, desc.d, &bytes2, nullptr));
  buf2.allocate(bytes2);
  GPULA_CHECK(kOp, cusparseSpGEMM_compute(h, nt, nt, al.bytes, ma.d, mb.d, be.bytes, mc.d, vt,
                                          alg, desc.d, &bytes2, buf2.p));
  int64_t rows = 0, cols = 0, nnz = 0;
  GPULA_CHECK(kOp, cusparseSpMatGetSize(mc.d, &rows, &cols, &nnz));
  if (idt == DType::i32 && nnz > std::numeric_limits<int32_t>::max()) {
    gpula::detail::throw_error<InvalidArgument>(
        kOp, "nnz(C) = ", nnz, " does not fit the int32 indices of A and B; use int64 indices");
  }
  Tensor cind = Tensor::empty({nnz}, idt, stream);
  Tensor cval = Tensor::empty({nnz}, dt, stream);
  GPULA_CHECK(kOp, cusparseCsrSetPointers(mc.d, cptr.data(), cind.data(), cval.data()));
  GPULA_CHECK(kOp, cusparseSpGEMM_copy(h, nt, nt, al.bytes, ma.d, mb.d, be.bytes, mc.d, vt, alg,
                                       desc.d));
  GPULA_CHECK(kOp, cudaStreamSynchronize(s));
  // Validated (and canonicalized, should cuSPARSE leave a row's columns unsorted) on the host.
  return CsrMatrix::from_csr(m, n, cptr, cind, cval, kOp);
}

}  // namespace gpula::sparse::detail::cuda
