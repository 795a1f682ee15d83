// CUDA backend of QR and least squares, looping over the batch on the stream: cuSOLVER's
// 64-bit cusolverDnXgeqrf, cusolverDn<t>orgqr/ungqr and <t>ormqr/unmqr, and cuBLAS trsm (and
// geam for a^H when m < n). Least squares assumes full rank (no pivoting, no rank check).
// Workspaces come from the stream-ordered pool; nothing here synchronizes.
#include <cuComplex.h>
#include <gpula/log.h>

#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "backend/cuda/base/check.h"
#include "backend/cuda/base/context.h"
#include "backend/cuda/base/types.h"
#include "backend/cuda/linalg/common.h"
#include "backend/cuda/linalg/solver_calls.h"
#include "core/format.h"
#include "linalg/qr_backend.h"

namespace gpula::detail::cuda {
namespace {

// clang-format off
cusolverStatus_t orgqr_size(cusolverDnHandle_t h, int m, int n, int k, const float* a, int lda, const float* tau, int* lw) { return cusolverDnSorgqr_bufferSize(h, m, n, k, a, lda, tau, lw); }
cusolverStatus_t orgqr_size(cusolverDnHandle_t h, int m, int n, int k, const double* a, int lda, const double* tau, int* lw) { return cusolverDnDorgqr_bufferSize(h, m, n, k, a, lda, tau, lw); }
cusolverStatus_t orgqr_size(cusolverDnHandle_t h, int m, int n, int k, const cuComplex* a, int lda, const cuComplex* tau, int* lw) { return cusolverDnCungqr_bufferSize(h, m, n, k, a, lda, tau, lw); }
cusolverStatus_t orgqr_size(cusolverDnHandle_t h, int m, int n, int k, const cuDoubleComplex* a, int lda, const cuDoubleComplex* tau, int* lw) { return cusolverDnZungqr_bufferSize(h, m, n, k, a, lda, tau, lw); }

cusolverStatus_t orgqr_call(cusolverDnHandle_t h, int m, int n, int k, float* a, int lda, const float* tau, float* w, int lw, int* info) { return cusolverDnSorgqr(h, m, n, k, a, lda, tau, w, lw, info); }
cusolverStatus_t orgqr_call(cusolverDnHandle_t h, int m, int n, int k, double* a, int lda, const double* tau, double* w, int lw, int* info) { return cusolverDnDorgqr(h, m, n, k, a, lda, tau, w, lw, info); }
cusolverStatus_t orgqr_call(cusolverDnHandle_t h, int m, int n, int k, cuComplex* a, int lda, const cuComplex* tau, cuComplex* w, int lw, int* info) { return cusolverDnCungqr(h, m, n, k, a, lda, tau, w, lw, info); }
cusolverStatus_t orgqr_call(cusolverDnHandle_t h, int m, int n, int k, cuDoubleComplex* a, int lda, const cuDoubleComplex* tau, cuDoubleComplex* w, int lw, int* info) { return cusolverDnZungqr(h, m, n, k, a, lda, tau, w, lw, info); }

cusolverStatus_t ormqr_size(cusolverDnHandle_t h, cublasSideMode_t s, cublasOperation_t t, int m, int n, int k, const float* a, int lda, const float* tau, const float* c, int ldc, int* lw) { return cusolverDnSormqr_bufferSize(h, s, t, m, n, k, a, lda, tau, c, ldc, lw); }
cusolverStatus_t ormqr_size(cusolverDnHandle_t h, cublasSideMode_t s, cublasOperation_t t, int m, int n, int k, const double* a, int lda, const double* tau, const double* c, int ldc, int* lw) { return cusolverDnDormqr_bufferSize(h, s, t, m, n, k, a, lda, tau, c, ldc, lw); }
cusolverStatus_t ormqr_size(cusolverDnHandle_t h, cublasSideMode_t s, cublasOperation_t t, int m, int n, int k, const cuComplex* a, int lda, const cuComplex* tau, const cuComplex* c, int ldc, int* lw) { return cusolverDnCunmqr_bufferSize(h, s, t, m, n, k, a, lda, tau, c, ldc, lw); }
cusolverStatus_t ormqr_size(cusolverDnHandle_t h, cublasSideMode_t s, cublasOperation_t t, int m, int n, int k, const cuDoubleComplex* a, int lda, const cuDoubleComplex* tau, const cuDoubleComplex* c, int ldc, int* lw) { return cusolverDnZunmqr_bufferSize(h, s, t, m, n, k, a, lda, tau, c, ldc, lw); }

cusolverStatus_t ormqr_call(cusolverDnHandle_t h, cublasSideMode_t s, cublasOperation_t t, int m, int n, int k, const float* a, int lda, const float* tau, float* c, int ldc, float* w, int lw, int* info) { return cusolverDnSormqr(h, s, t, m, n, k, a, lda, tau, c, ldc, w, lw, info); }
cusolverStatus_t ormqr_call(cusolverDnHandle_t h, cublasSideMode_t s, cublasOperation_t t, int m, int n, int k, const double* a, int lda, const double* tau, double* c, int ldc, double* w, int lw, int* info) { return cusolverDnDormqr(h, s, t, m, n, k, a, lda, tau, c, ldc, w, lw, info); }
cusolverStatus_t ormqr_call(cusolverDnHandle_t h, cublasSideMode_t s, cublasOperation_t t, int m, int n, int k, const cuComplex* a, int lda, const cuComplex* tau, cuComplex* c, int ldc, cuComplex* w, int lw, int* info) { return cusolverDnCunmqr(h, s, t, m, n, k, a, lda, tau, c, ldc, w, lw, info); }
cusolverStatus_t ormqr_call(cusolverDnHandle_t h, cublasSideMode_t s, cublasOperation_t t, int m, int n, int k, const cuDoubleComplex* a, int lda, const cuDoubleComplex* tau, cuDoubleComplex* c, int ldc, cuDoubleComplex* w, int lw, int* info) { return cusolverDnZunmqr(h, s, t, m, n, k, a, lda, tau, c, ldc, w, lw, info); }

// c (rows x cols, ldc) = a^H (a: cols x rows, lda), through geam with beta = 0 over a zeroed c.
cublasStatus_t adjoint(cublasHandle_t h, int rows, int cols, const float* a, int lda, float* c, int ldc) { const float one = 1.0f, zero = 0.0f; return cublasSgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, rows, cols, &one, a, lda, &zero, c, ldc, c, ldc); }
cublasStatus_t adjoint(cublasHandle_t h, int rows, int cols, const double* a, int lda, double* c, int ldc) { const double one = 1.0, zero = 0.0; return cublasDgeam(h, CUBLAS_OP_T, CUBLAS_OP_N, rows, cols, &one, a, lda, &zero, c, ldc, c, ldc); }
cublasStatus_t adjoint(cublasHandle_t h, int rows, int cols, const cuComplex* a, int lda, cuComplex* c, int ldc) { const cuComplex one = make_cuComplex(1.0f, 0.0f), zero = make_cuComplex(0.0f, 0.0f); return cublasCgeam(h, CUBLAS_OP_C, CUBLAS_OP_N, rows, cols, &one, a, lda, &zero, c, ldc, c, ldc); }
cublasStatus_t adjoint(cublasHandle_t h, int rows, int cols, const cuDoubleComplex* a, int lda, cuDoubleComplex* c, int ldc) { const cuDoubleComplex one = make_cuDoubleComplex(1.0, 0.0), zero = make_cuDoubleComplex(0.0, 0.0); return cublasZgeam(h, CUBLAS_OP_C, CUBLAS_OP_N, rows, cols, &one, a, lda, &zero, c, ldc, c, ldc); }
// clang-format on

int to_int(int64_t v, const LinalgCall& c, const char* what) {
  return checked_int(v, c, what, "cusolverDn<t>orgqr/ormqr");
}

int64_t es(DType t) { return static_cast<int64_t>(size_of(t)); }
char* item(const DenseBatch& x, int64_t b) {
  return static_cast<char*>(x.data) + b * x.rows * x.cols * es(x.dtype);
}

// Householder QR of `count` m x n items (lda = m, item stride `stride` bytes) into tau
// (min(m, n) per item).
void xgeqrf(Context& ctx, const LinalgCall& c, DType t, int64_t m, int64_t n, char* a,
            int64_t stride, int64_t count, char* tau, int* info) {
  cusolverDnHandle_t h = ctx.cusolver(raw(c));
  const cudaDataType_t dt = data_type(t);
  std::size_t dev = 0, host = 0;
  GPULA_CHECK(c.op, cusolverDnXgeqrf_bufferSize(h, ctx.cusolver_params(), m, n, dt, a, m, dt, tau,
                                                dt, &dev, &host));
  Tensor ws = scratch(static_cast<int64_t>(dev), c);
  void* hw = host_workspace(host);
  const int64_t k = std::min(m, n);
  for (int64_t b = 0; b < count; ++b)
    GPULA_CHECK(c.op, cusolverDnXgeqrf(h, ctx.cusolver_params(), m, n, dt, a + b * stride, m, dt,
                                       tau + b * k * es(t), dt, ws.data(), dev, hw, host, info));
}

class CudaQr final : public QrBackend {
 public:
  void geqrf(const DenseBatch& a, void* tau, const LinalgCall& c) const override {
    if (a.count == 0 || std::min(a.rows, a.cols) == 0) return;
    note(c, cat("cusolverDnXgeqrf: ", a.count, " x ", a.rows, " x ", a.cols));
    Context& ctx = context(c.stream.device.index);
    Tensor info = scratch(4, c);
    xgeqrf(ctx, c, a.dtype, a.rows, a.cols, static_cast<char*>(a.data),
           a.rows * a.cols * es(a.dtype), a.count, static_cast<char*>(tau),
           static_cast<int*>(info.data()));
  }

  void orgqr(const DenseBatch& q, int64_t k, const void* tau, const LinalgCall& c) const override {
    if (q.count == 0 || q.cols == 0) return;
    note(c, cat("cusolverDn<t>orgqr/ungqr: ", q.count, " x ", q.rows, " x ", q.cols));
    Context& ctx = context(c.stream.device.index);
    cusolverDnHandle_t h = ctx.cusolver(raw(c));
    const int m = to_int(q.rows, c, "m"), n = to_int(q.cols, c, "n"), ki = to_int(k, c, "k");
    Tensor info = scratch(4, c);
    auto* pi = static_cast<int*>(info.data());
    visit_solver_type(q.dtype, [&](auto t) {
      using T = decltype(t);
      const T* tp = static_cast<const T*>(tau);
      int lw = 0;
      GPULA_CHECK(c.op, orgqr_size(h, m, n, ki, reinterpret_cast<const T*>(q.data), m, tp, &lw));
      Tensor ws = scratch(static_cast<int64_t>(lw) * es(q.dtype), c);
      for (int64_t b = 0; b < q.count; ++b)
        GPULA_CHECK(c.op, orgqr_call(h, m, n, ki, reinterpret_cast<T*>(item(q, b)), m, tp + b * k,
                                     static_cast<T*>(ws.data()), lw, pi));
    });
  }

  // QR assumes full rank: no rcond, singular values or rank (see qr_backend.h).
  void lstsq(const DenseBatch& a, const DenseBatch& b, double /*rcond*/, void* /*s*/,
             int32_t* /*rank*/, const LinalgCall& c) const override {
    const int64_t m = a.rows, n = a.cols, nrhs = b.cols, ldb = b.rows;
    if (a.count == 0 || m == 0 || n == 0 || nrhs == 0) return;
    note(c, cat("QR least squares (cusolverDnXgeqrf, <t>ormqr/unmqr, cublas<t>trsm): ", a.count,
                " x ", m, " x ", n, ", ", nrhs, " right-hand sides"));
    Context& ctx = context(c.stream.device.index);
    const DType dt = a.dtype;
    const int64_t e = es(dt), k = std::min(m, n);
    const bool tall = m >= n;
    // QR of a (tall) or of a^H (wide): f is p x q with p >= q = k, ld p.
    const int64_t p = tall ? m : n;
    Tensor adj;
    char* f = static_cast<char*>(a.data);
    if (!tall) {
      adj = scratch(a.count * n * m * e, c);
      GPULA_CHECK(c.op, cudaMemsetAsync(adj.data(), 0, a.count * n * m * e, raw(c)));
      f = static_cast<char*>(adj.data());
    }
    Tensor tau = scratch(a.count * k * e, c), info = scratch(4, c);
    auto* pi = static_cast<int*>(info.data());
    const int pi32 = to_int(p, c, "rows"), ki = to_int(k, c, "k"),
              nr = to_int(nrhs, c, "right-hand sides"), ld = to_int(ldb, c, "ldb");
    cusolverDnHandle_t hs = ctx.cusolver(raw(c));
    cublasHandle_t hb = ctx.cublas(raw(c));
    const cublasOperation_t adj_op = is_complex(dt) ? CUBLAS_OP_C : CUBLAS_OP_T;
    visit_solver_type(dt, [&](auto t) {
      using T = decltype(t);
      if (!tall)
        for (int64_t i = 0; i < a.count; ++i)
          GPULA_CHECK(c.op, adjoint(hb, to_int(n, c, "n"), to_int(m, c, "m"),
                                    reinterpret_cast<const T*>(item(a, i)), static_cast<int>(m),
                                    reinterpret_cast<T*>(f + i * n * m * e), static_cast<int>(n)));
      xgeqrf(ctx, c, dt, p, k, f, p * k * e, a.count, static_cast<char*>(tau.data()), pi);
      const T* tp = static_cast<const T*>(tau.data());
      const cublasOperation_t qop = tall ? adj_op : CUBLAS_OP_N;
      int lw = 0;
      GPULA_CHECK(c.op,
                  ormqr_size(hs, CUBLAS_SIDE_LEFT, qop, pi32, nr, ki, reinterpret_cast<const T*>(f),
                             pi32, tp, reinterpret_cast<const T*>(b.data), ld, &lw));
      Tensor ws = scratch(static_cast<int64_t>(lw) * e, c);
      for (int64_t i = 0; i < a.count; ++i) {
        auto* fi = reinterpret_cast<T*>(f + i * p * k * e);
        auto* bi = reinterpret_cast<T*>(item(b, i));
        if (tall) {
          // x = R^-1 (Q^H b)[:n]
          GPULA_CHECK(c.op, ormqr_call(hs, CUBLAS_SIDE_LEFT, qop, pi32, nr, ki, fi, pi32,
                                       tp + i * k, bi, ld, static_cast<T*>(ws.data()), lw, pi));
          calls::trsm(hb, dt, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, n, nrhs, fi, m,
                      bi, ldb, c.op);
        } else {
          // a = R^H Q^H: x = Q [R^-H b; 0]
          calls::trsm(hb, dt, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, adj_op, m, nrhs, fi, n, bi,
                      ldb, c.op);
          GPULA_CHECK(c.op, cudaMemset2DAsync(reinterpret_cast<char*>(bi) + m * e, ldb * e, 0,
                                              (n - m) * e, nrhs, raw(c)));
          GPULA_CHECK(c.op, ormqr_call(hs, CUBLAS_SIDE_LEFT, qop, pi32, nr, ki, fi, pi32,
                                       tp + i * k, bi, ld, static_cast<T*>(ws.data()), lw, pi));
        }
      }
    });
  }
};

}  // namespace

const QrBackend& qr_backend() {
  static const CudaQr backend;
  return backend;
}

}  // namespace gpula::detail::cuda
