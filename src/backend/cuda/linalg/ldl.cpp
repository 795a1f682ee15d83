// CUDA backend of the Bunch-Kaufman factorization: cusolverDn<t>sytrf per matrix of the batch
// (real symmetric and complex symmetric), on the stream, with one workspace sized by
// *_bufferSize from the stream-ordered pool. cuSOLVER has no hetrf: takes() says so and the
// front factors complex Hermitian input on the host. Nothing here synchronizes.
#include "backend/cuda/linalg/common.h"
#include "linalg/ldl_backend.h"

namespace gpula::detail::cuda {
namespace {

// cusolverDn<t>sytrf(_bufferSize) overloads on the element type.
// clang-format off
cusolverStatus_t trf_size(cusolverDnHandle_t h, int n, float* a, int* lw) { return cusolverDnSsytrf_bufferSize(h, n, a, n, lw); }
cusolverStatus_t trf_size(cusolverDnHandle_t h, int n, double* a, int* lw) { return cusolverDnDsytrf_bufferSize(h, n, a, n, lw); }
cusolverStatus_t trf_size(cusolverDnHandle_t h, int n, cuComplex* a, int* lw) { return cusolverDnCsytrf_bufferSize(h, n, a, n, lw); }
cusolverStatus_t trf_size(cusolverDnHandle_t h, int n, cuDoubleComplex* a, int* lw) { return cusolverDnZsytrf_bufferSize(h, n, a, n, lw); }
cusolverStatus_t trf(cusolverDnHandle_t h, cublasFillMode_t u, int n, float* a, int* p, float* wk, int lw, int* info) { return cusolverDnSsytrf(h, u, n, a, n, p, wk, lw, info); }
cusolverStatus_t trf(cusolverDnHandle_t h, cublasFillMode_t u, int n, double* a, int* p, double* wk, int lw, int* info) { return cusolverDnDsytrf(h, u, n, a, n, p, wk, lw, info); }
cusolverStatus_t trf(cusolverDnHandle_t h, cublasFillMode_t u, int n, cuComplex* a, int* p, cuComplex* wk, int lw, int* info) { return cusolverDnCsytrf(h, u, n, a, n, p, wk, lw, info); }
cusolverStatus_t trf(cusolverDnHandle_t h, cublasFillMode_t u, int n, cuDoubleComplex* a, int* p, cuDoubleComplex* wk, int lw, int* info) { return cusolverDnZsytrf(h, u, n, a, n, p, wk, lw, info); }
// clang-format on

class CudaLdl final : public LdlBackend {
 public:
  void sytrf(const SquareBatch& a, bool upper, bool /*hermitian: takes() keeps it real*/,
             int32_t* ipiv, int32_t* info, const LinalgCall& c) const override {
    cusolverDnHandle_t h = context(c.stream.device.index).cusolver(raw(c));
    const int n = checked_int(a.n, c, "n", "cusolverDn<t>sytrf");
    note(c, cat("cusolverDn<t>sytrf: ", a.count, " x order ", a.n));
    visit_solver_type(a.dtype, [&](auto t) {
      using T = decltype(t);
      T* pa = static_cast<T*>(a.data);
      int lwork = 0;
      GPULA_CHECK(c.op, trf_size(h, n, pa, &lwork));
      Tensor ws = scratch(static_cast<int64_t>(lwork) * static_cast<int64_t>(sizeof(T)), c);
      for (int64_t i = 0; i < a.count; ++i)
        GPULA_CHECK(c.op, trf(h, fill(upper), n, pa + i * a.n * a.n, ipiv + i * a.n,
                              static_cast<T*>(ws.data()), lwork, info + i));
    });
  }
  bool takes(DType t, bool hermitian) const override { return !(hermitian && is_complex(t)); }
};

}  // namespace

const LdlBackend& ldl_backend() {
  static const CudaLdl backend;
  return backend;
}

}  // namespace gpula::detail::cuda
