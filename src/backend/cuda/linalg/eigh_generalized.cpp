// CUDA backend of the generalized symmetric-definite eigensolver: cusolverDn<t>sygvd (hegvd
// for complex types) per pair of the batch, on the stream, with one workspace sized by
// *_bufferSize from the stream-ordered pool. cuSOLVER has no batched sygvd. Nothing here
// synchronizes.
#include "backend/cuda/linalg/common.h"
#include "linalg/eigh_generalized_backend.h"

namespace gpula::detail::cuda {
namespace {

// cusolverDn<t>sygvd(_bufferSize) overloads on the element type, so the typed calls read as one.
// clang-format off
cusolverStatus_t gvd_size(cusolverDnHandle_t h, cusolverEigType_t it, cusolverEigMode_t j, cublasFillMode_t u, int n, const float* a, const float* b, const float* w, int* lw) { return cusolverDnSsygvd_bufferSize(h, it, j, u, n, a, n, b, n, w, lw); }
cusolverStatus_t gvd_size(cusolverDnHandle_t h, cusolverEigType_t it, cusolverEigMode_t j, cublasFillMode_t u, int n, const double* a, const double* b, const double* w, int* lw) { return cusolverDnDsygvd_bufferSize(h, it, j, u, n, a, n, b, n, w, lw); }
cusolverStatus_t gvd_size(cusolverDnHandle_t h, cusolverEigType_t it, cusolverEigMode_t j, cublasFillMode_t u, int n, const cuComplex* a, const cuComplex* b, const float* w, int* lw) { return cusolverDnChegvd_bufferSize(h, it, j, u, n, a, n, b, n, w, lw); }
cusolverStatus_t gvd_size(cusolverDnHandle_t h, cusolverEigType_t it, cusolverEigMode_t j, cublasFillMode_t u, int n, const cuDoubleComplex* a, const cuDoubleComplex* b, const double* w, int* lw) { return cusolverDnZhegvd_bufferSize(h, it, j, u, n, a, n, b, n, w, lw); }
cusolverStatus_t gvd(cusolverDnHandle_t h, cusolverEigType_t it, cusolverEigMode_t j, cublasFillMode_t u, int n, float* a, float* b, float* w, float* wk, int lw, int* info) { return cusolverDnSsygvd(h, it, j, u, n, a, n, b, n, w, wk, lw, info); }
cusolverStatus_t gvd(cusolverDnHandle_t h, cusolverEigType_t it, cusolverEigMode_t j, cublasFillMode_t u, int n, double* a, double* b, double* w, double* wk, int lw, int* info) { return cusolverDnDsygvd(h, it, j, u, n, a, n, b, n, w, wk, lw, info); }
cusolverStatus_t gvd(cusolverDnHandle_t h, cusolverEigType_t it, cusolverEigMode_t j, cublasFillMode_t u, int n, cuComplex* a, cuComplex* b, float* w, cuComplex* wk, int lw, int* info) { return cusolverDnChegvd(h, it, j, u, n, a, n, b, n, w, wk, lw, info); }
cusolverStatus_t gvd(cusolverDnHandle_t h, cusolverEigType_t it, cusolverEigMode_t j, cublasFillMode_t u, int n, cuDoubleComplex* a, cuDoubleComplex* b, double* w, cuDoubleComplex* wk, int lw, int* info) { return cusolverDnZhegvd(h, it, j, u, n, a, n, b, n, w, wk, lw, info); }
// clang-format on

class CudaEighGeneralized final : public EighGeneralizedBackend {
 public:
  void sygvd(const SquareBatch& a, const SquareBatch& b, int type, bool upper, bool vectors,
             void* w, int32_t* info, const LinalgCall& c) const override {
    cusolverDnHandle_t h = context(c.stream.device.index).cusolver(raw(c));
    const cusolverEigMode_t jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    const auto it = static_cast<cusolverEigType_t>(CUSOLVER_EIG_TYPE_1 + (type - 1));
    const int n = checked_int(a.n, c, "n", "cusolverDn<t>sygvd");
    note(c, cat("cusolverDn<t>sygvd: ", a.count, " x order ", a.n, ", type ", type));
    visit_solver_type(a.dtype, [&](auto t) {
      using T = decltype(t);
      using R = solver_real_t<T>;
      T* pa = static_cast<T*>(a.data);
      T* pb = static_cast<T*>(b.data);
      R* pw = static_cast<R*>(w);
      int lwork = 0;
      GPULA_CHECK(c.op, gvd_size(h, it, jobz, fill(upper), n, pa, pb, pw, &lwork));
      Tensor ws = scratch(static_cast<int64_t>(lwork) * static_cast<int64_t>(sizeof(T)), c);
      for (int64_t i = 0; i < a.count; ++i)
        GPULA_CHECK(c.op, gvd(h, it, jobz, fill(upper), n, pa + i * a.n * a.n,
                              pb + i * a.n * a.n, pw + i * a.n, static_cast<T*>(ws.data()),
                              lwork, info + i));
    });
  }
};

}  // namespace

const EighGeneralizedBackend& eigh_generalized_backend() {
  static const CudaEighGeneralized backend;
  return backend;
}

}  // namespace gpula::detail::cuda
