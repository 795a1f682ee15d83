// Multi-process backend of gpula::distributed, part 2: cublasMpGemm, c <- alpha a b + beta c on
// the caller's local pieces (2-D block-cyclic, column-major, offsets 1). float32 and bfloat16
// run with CUBLAS_COMPUTE_32F (float alpha/beta), float64 with CUBLAS_COMPUTE_64F. The
// workspace sizes come from cublasMpGemm_bufferSize with the same arguments.
#include <gpula/error.h>

#include <algorithm>
#include <vector>

#include "backend/cuda/distributed/mp_comm.h"
#include "core/format.h"

namespace gpula::detail::mp {

namespace {

struct BlasDesc {
  cublasMpMatrixDescriptor_t d = nullptr;
  BlasDesc(const char* op, cublasMpGrid_t grid, DType t, const BlockCyclic& l, int64_t ld) {
    GPULA_CHECK(op, cublasMpMatrixDescriptorCreate(l.m, l.n, l.mb, l.nb, 0, 0, ld,
                                                   cuda::data_type(t), grid, &d));
  }
  ~BlasDesc() {
    if (d) GPULA_CHECK_NOTHROW(cublasMpMatrixDescriptorDestroy(d));
  }
  BlasDesc(const BlasDesc&) = delete;
  BlasDesc& operator=(const BlasDesc&) = delete;
};

}  // namespace

void gemm(const Communicator& comm, DType t, const BlockCyclic& da, Local a, const BlockCyclic& db,
          Local b, const BlockCyclic& dc, Local c, double alpha, double beta) {
  Call x(comm, "distributed.matmul");
  cublasMpHandle_t h = x.c.blas_handle(x.op);
  cublasMpGrid_t grid = x.c.blas_grid(x.op, da.nprow, da.npcol);
  BlasDesc dA(x.op, grid, t, da, a.ld), dB(x.op, grid, t, db, b.ld), dC(x.op, grid, t, dc, c.ld);
  const bool f64 = t == DType::f64;
  const cublasComputeType_t ct = f64 ? CUBLAS_COMPUTE_64F : CUBLAS_COMPUTE_32F;
  const float alpha32 = static_cast<float>(alpha), beta32 = static_cast<float>(beta);
  const void* pa = f64 ? static_cast<const void*>(&alpha) : &alpha32;
  const void* pb = f64 ? static_cast<const void*>(&beta) : &beta32;
  const int64_t m = dc.m, n = dc.n, k = da.n;
  std::size_t dws = 0, hws = 0;
  GPULA_CHECK(x.op,
              cublasMpGemm_bufferSize(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, pa, a.data, 1, 1, dA.d,
                                      b.data, 1, 1, dB.d, pb, c.data, 1, 1, dC.d, ct, &dws, &hws));
  DeviceBuffer work(x.op, dws);
  std::vector<char> hwork(std::max<std::size_t>(hws, 1));
  GPULA_CHECK(
      x.op, cublasMpGemm(h, CUBLAS_OP_N, CUBLAS_OP_N, m, n, k, pa, a.data, 1, 1, dA.d, b.data, 1, 1,
                         dB.d, pb, c.data, 1, 1, dC.d, ct, work.get(), dws, hwork.data(), hws));
  x.sync();
}

}  // namespace gpula::detail::mp
