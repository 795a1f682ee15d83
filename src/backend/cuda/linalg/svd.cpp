// CUDA backend of the SVD (cuSOLVER). route() picks the routine for a method, shape and batch
// size; it is the one place where that choice lives (logged at debug level):
//   gesvd          cusolverDnXgesvd (64-bit API), looped over the batch;       needs rows >= cols
//   gesvdj         cusolverDn<t>gesvdj (Jacobi, econ flag), looped over the batch
//   gesvdj_batched cusolverDn<t>gesvdjBatched, one call (rows, cols <= 32)
//   gesvdp         cusolverDnXgesvdp (polar decomposition), looped;            needs rows >= cols
//   gesvda         cusolverDn<t>gesvdaStridedBatched, one call, economy only; needs rows >= cols
// automatic and gesvdj take gesvdj_batched for batches of rows, cols <= 32, else gesvdj.
// Routines that return V (all but gesvd) write it into a workspace; one strided copy (and, for
// complex types, a cuBLAS scal of the imaginary parts) turns it into the VT the front wants.
// Workspaces are sized once per call by *_bufferSize and taken from the stream-ordered pool; the
// loops do not synchronize, except that gesvdp and gesvda return host values (h_err_sigma,
// h_R_nrmF) and so wait for the device inside cuSOLVER.
#include <cuComplex.h>
#include <gpula/log.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "backend/cuda/base/check.h"
#include "backend/cuda/base/context.h"
#include "backend/cuda/base/types.h"
#include "backend/cuda/kernels/svd_jacobi_batched.h"
#include "backend/cuda/linalg/common.h"
#include "backend/cuda_api.h"
#include "core/format.h"
#include "linalg/svd_backend.h"

namespace gpula::detail::cuda {
namespace {

using linalg::SvdMethod;
using ll = long long;

constexpr int64_t kJacobiBatchedMaxN = 32;  // cusolverDn<t>gesvdjBatched's limit

enum class Route : uint8_t { gesvd, gesvdj, gesvdj_batched, gesvdp, gesvda, jacobi_batched };

const char* route_name(Route r) {
  switch (r) {
    case Route::gesvd:
      return "cusolverDnXgesvd";
    case Route::gesvdj:
      return "cusolverDn<t>gesvdj";
    case Route::gesvdj_batched:
      return "cusolverDn<t>gesvdjBatched";
    case Route::gesvdp:
      return "cusolverDnXgesvdp";
    case Route::jacobi_batched:
      return "gpula batched one-sided Jacobi kernel";
    default:
      return "cusolverDn<t>gesvdaStridedBatched";
  }
}

// Whether gpula's batched Jacobi kernel takes this problem: a real type, the matrix and its
// right vectors in one block's shared memory, economy vectors (or square).
bool jacobi_kernel_fits(DType t, int64_t rows, int64_t cols, bool full, int device) {
  if (t != DType::f32 && t != DType::f64) return false;
  if (full && rows != cols) return false;
  const int64_t big = std::max(rows, cols), small = std::min(rows, cols);
  if (small < 1 || big > (1 << 20)) return false;
  return svd_jacobi_shared_bytes(static_cast<int>(big), static_cast<int>(small), size_of(t),
                                 device) > 0;
}

// The routine for `method` on `count` matrices of rows x cols. The GPU measurements tune this
// table; an explicit method is always honoured (its batched form taken where there is one).
// automatic: gesvdjBatched for batches of order <= 32; gpula's Jacobi kernel for the other
// batches it takes (1000 x 128^2 float32 on an H200: see bench/results); gesvd for matrices
// with min(rows, cols) >= 1024 (4096^2 float32 on an H200: gesvdj 1008 ms with orthogonality
// error 1.3e-1 after its default 100 sweeps, gesvd 1216 ms with 5e-4, the reference
// accuracy); gesvdj otherwise. (Python's "auto" runs the float64 Gram method before this for
// float32 / complex64; gpula/_linalg_svd_gram.py.)
constexpr int64_t kGesvdMinN = 1024;

Route route(SvdMethod method, int64_t rows, int64_t cols, int64_t count, DType t, bool full,
            int device) {
  const bool small_batch = count > 1 && rows <= kJacobiBatchedMaxN && cols <= kJacobiBatchedMaxN;
  switch (method) {
    case SvdMethod::jacobi_batched:
      return Route::jacobi_batched;
    case SvdMethod::gesvd:
      return Route::gesvd;
    case SvdMethod::gesvdp:
      return Route::gesvdp;
    case SvdMethod::gesvda:
      return Route::gesvda;
    case SvdMethod::gesvdj:
      return small_batch ? Route::gesvdj_batched : Route::gesvdj;
    default:  // automatic
      if (small_batch) return Route::gesvdj_batched;
      if (count > 1 && jacobi_kernel_fits(t, rows, cols, full, device))
        return Route::jacobi_batched;
      if (std::min(rows, cols) >= kGesvdMinN) return Route::gesvd;
      return Route::gesvdj;
  }
}

bool route_needs_tall(Route r) {
  return r == Route::gesvd || r == Route::gesvdp || r == Route::gesvda;
}

// gesvdjInfo_t, destroyed on every path.
struct GesvdjInfo {
  gesvdjInfo_t p = nullptr;
  ~GesvdjInfo() {
    if (p) GPULA_CHECK_NOTHROW(cusolverDnDestroyGesvdjInfo(p));
  }
};

using Eig = cusolverEigMode_t;
using H = cusolverDnHandle_t;
using C = cuComplex;
using Z = cuDoubleComplex;

// clang-format off
cusolverStatus_t gesvdj_size(H h, Eig j, int e, int m, int n, const float* a, int lda, const float* s, const float* u, int ldu, const float* v, int ldv, int* lw, gesvdjInfo_t p) { return cusolverDnSgesvdj_bufferSize(h, j, e, m, n, a, lda, s, u, ldu, v, ldv, lw, p); }
cusolverStatus_t gesvdj_size(H h, Eig j, int e, int m, int n, const double* a, int lda, const double* s, const double* u, int ldu, const double* v, int ldv, int* lw, gesvdjInfo_t p) { return cusolverDnDgesvdj_bufferSize(h, j, e, m, n, a, lda, s, u, ldu, v, ldv, lw, p); }
cusolverStatus_t gesvdj_size(H h, Eig j, int e, int m, int n, const C* a, int lda, const float* s, const C* u, int ldu, const C* v, int ldv, int* lw, gesvdjInfo_t p) { return cusolverDnCgesvdj_bufferSize(h, j, e, m, n, a, lda, s, u, ldu, v, ldv, lw, p); }
cusolverStatus_t gesvdj_size(H h, Eig j, int e, int m, int n, const Z* a, int lda, const double* s, const Z* u, int ldu, const Z* v, int ldv, int* lw, gesvdjInfo_t p) { return cusolverDnZgesvdj_bufferSize(h, j, e, m, n, a, lda, s, u, ldu, v, ldv, lw, p); }

cusolverStatus_t gesvdj_call(H h, Eig j, int e, int m, int n, float* a, int lda, float* s, float* u, int ldu, float* v, int ldv, float* w, int lw, int* info, gesvdjInfo_t p) { return cusolverDnSgesvdj(h, j, e, m, n, a, lda, s, u, ldu, v, ldv, w, lw, info, p); }
cusolverStatus_t gesvdj_call(H h, Eig j, int e, int m, int n, double* a, int lda, double* s, double* u, int ldu, double* v, int ldv, double* w, int lw, int* info, gesvdjInfo_t p) { return cusolverDnDgesvdj(h, j, e, m, n, a, lda, s, u, ldu, v, ldv, w, lw, info, p); }
cusolverStatus_t gesvdj_call(H h, Eig j, int e, int m, int n, C* a, int lda, float* s, C* u, int ldu, C* v, int ldv, C* w, int lw, int* info, gesvdjInfo_t p) { return cusolverDnCgesvdj(h, j, e, m, n, a, lda, s, u, ldu, v, ldv, w, lw, info, p); }
cusolverStatus_t gesvdj_call(H h, Eig j, int e, int m, int n, Z* a, int lda, double* s, Z* u, int ldu, Z* v, int ldv, Z* w, int lw, int* info, gesvdjInfo_t p) { return cusolverDnZgesvdj(h, j, e, m, n, a, lda, s, u, ldu, v, ldv, w, lw, info, p); }

cusolverStatus_t gesvdj_batched_size(H h, Eig j, int m, int n, const float* a, int lda, const float* s, const float* u, int ldu, const float* v, int ldv, int* lw, gesvdjInfo_t p, int b) { return cusolverDnSgesvdjBatched_bufferSize(h, j, m, n, a, lda, s, u, ldu, v, ldv, lw, p, b); }
cusolverStatus_t gesvdj_batched_size(H h, Eig j, int m, int n, const double* a, int lda, const double* s, const double* u, int ldu, const double* v, int ldv, int* lw, gesvdjInfo_t p, int b) { return cusolverDnDgesvdjBatched_bufferSize(h, j, m, n, a, lda, s, u, ldu, v, ldv, lw, p, b); }
cusolverStatus_t gesvdj_batched_size(H h, Eig j, int m, int n, const C* a, int lda, const float* s, const C* u, int ldu, const C* v, int ldv, int* lw, gesvdjInfo_t p, int b) { return cusolverDnCgesvdjBatched_bufferSize(h, j, m, n, a, lda, s, u, ldu, v, ldv, lw, p, b); }
cusolverStatus_t gesvdj_batched_size(H h, Eig j, int m, int n, const Z* a, int lda, const double* s, const Z* u, int ldu, const Z* v, int ldv, int* lw, gesvdjInfo_t p, int b) { return cusolverDnZgesvdjBatched_bufferSize(h, j, m, n, a, lda, s, u, ldu, v, ldv, lw, p, b); }

cusolverStatus_t gesvdj_batched_call(H h, Eig j, int m, int n, float* a, int lda, float* s, float* u, int ldu, float* v, int ldv, float* w, int lw, int* info, gesvdjInfo_t p, int b) { return cusolverDnSgesvdjBatched(h, j, m, n, a, lda, s, u, ldu, v, ldv, w, lw, info, p, b); }
cusolverStatus_t gesvdj_batched_call(H h, Eig j, int m, int n, double* a, int lda, double* s, double* u, int ldu, double* v, int ldv, double* w, int lw, int* info, gesvdjInfo_t p, int b) { return cusolverDnDgesvdjBatched(h, j, m, n, a, lda, s, u, ldu, v, ldv, w, lw, info, p, b); }
cusolverStatus_t gesvdj_batched_call(H h, Eig j, int m, int n, C* a, int lda, float* s, C* u, int ldu, C* v, int ldv, C* w, int lw, int* info, gesvdjInfo_t p, int b) { return cusolverDnCgesvdjBatched(h, j, m, n, a, lda, s, u, ldu, v, ldv, w, lw, info, p, b); }
cusolverStatus_t gesvdj_batched_call(H h, Eig j, int m, int n, Z* a, int lda, double* s, Z* u, int ldu, Z* v, int ldv, Z* w, int lw, int* info, gesvdjInfo_t p, int b) { return cusolverDnZgesvdjBatched(h, j, m, n, a, lda, s, u, ldu, v, ldv, w, lw, info, p, b); }

cusolverStatus_t gesvda_size(H h, Eig j, int r, int m, int n, const float* a, int lda, ll sa, const float* s, ll ss, const float* u, int ldu, ll su, const float* v, int ldv, ll sv, int* lw, int b) { return cusolverDnSgesvdaStridedBatched_bufferSize(h, j, r, m, n, a, lda, sa, s, ss, u, ldu, su, v, ldv, sv, lw, b); }
cusolverStatus_t gesvda_size(H h, Eig j, int r, int m, int n, const double* a, int lda, ll sa, const double* s, ll ss, const double* u, int ldu, ll su, const double* v, int ldv, ll sv, int* lw, int b) { return cusolverDnDgesvdaStridedBatched_bufferSize(h, j, r, m, n, a, lda, sa, s, ss, u, ldu, su, v, ldv, sv, lw, b); }
cusolverStatus_t gesvda_size(H h, Eig j, int r, int m, int n, const C* a, int lda, ll sa, const float* s, ll ss, const C* u, int ldu, ll su, const C* v, int ldv, ll sv, int* lw, int b) { return cusolverDnCgesvdaStridedBatched_bufferSize(h, j, r, m, n, a, lda, sa, s, ss, u, ldu, su, v, ldv, sv, lw, b); }
cusolverStatus_t gesvda_size(H h, Eig j, int r, int m, int n, const Z* a, int lda, ll sa, const double* s, ll ss, const Z* u, int ldu, ll su, const Z* v, int ldv, ll sv, int* lw, int b) { return cusolverDnZgesvdaStridedBatched_bufferSize(h, j, r, m, n, a, lda, sa, s, ss, u, ldu, su, v, ldv, sv, lw, b); }

cusolverStatus_t gesvda_call(H h, Eig j, int r, int m, int n, const float* a, int lda, ll sa, float* s, ll ss, float* u, int ldu, ll su, float* v, int ldv, ll sv, float* w, int lw, int* info, double* res, int b) { return cusolverDnSgesvdaStridedBatched(h, j, r, m, n, a, lda, sa, s, ss, u, ldu, su, v, ldv, sv, w, lw, info, res, b); }
cusolverStatus_t gesvda_call(H h, Eig j, int r, int m, int n, const double* a, int lda, ll sa, double* s, ll ss, double* u, int ldu, ll su, double* v, int ldv, ll sv, double* w, int lw, int* info, double* res, int b) { return cusolverDnDgesvdaStridedBatched(h, j, r, m, n, a, lda, sa, s, ss, u, ldu, su, v, ldv, sv, w, lw, info, res, b); }
cusolverStatus_t gesvda_call(H h, Eig j, int r, int m, int n, const C* a, int lda, ll sa, float* s, ll ss, C* u, int ldu, ll su, C* v, int ldv, ll sv, C* w, int lw, int* info, double* res, int b) { return cusolverDnCgesvdaStridedBatched(h, j, r, m, n, a, lda, sa, s, ss, u, ldu, su, v, ldv, sv, w, lw, info, res, b); }
cusolverStatus_t gesvda_call(H h, Eig j, int r, int m, int n, const Z* a, int lda, ll sa, double* s, ll ss, Z* u, int ldu, ll su, Z* v, int ldv, ll sv, Z* w, int lw, int* info, double* res, int b) { return cusolverDnZgesvdaStridedBatched(h, j, r, m, n, a, lda, sa, s, ss, u, ldu, su, v, ldv, sv, w, lw, info, res, b); }
// clang-format on

int to_int(int64_t v, const LinalgCall& c, const char* what, Route r) {
  return checked_int(v, c, what, route_name(r));
}

// Element offset `off` of the `t` array at p.
void* at(void* p, DType t, int64_t off) {
  return static_cast<char*>(p) + off * static_cast<int64_t>(size_of(t));
}

Device device_of(const LinalgCall& c) { return c.stream.device; }

// vt (count items of vrows x cols, ld vrows) = the conjugate transpose of the first vrows
// columns of V (count items of cols x vcols, ld cols, `v_item` elements apart): one strided copy,
// then for complex types the imaginary parts negated by cuBLAS scal.
void adjoint_into(const void* v, int64_t v_item, void* vt, int64_t vrows, int64_t cols,
                  int64_t count, DType t, const LinalgCall& c) {
  const TensorView src{
      const_cast<void*>(v), t, {count, vrows, cols}, {v_item, cols, 1}, device_of(c)};
  const TensorView dst{vt, t, {count, vrows, cols}, {vrows * cols, 1, vrows}, device_of(c)};
  cuda::copy(src, dst, c.stream);
  if (!is_complex(t)) return;
  cublasHandle_t hb = context(c.stream.device.index).cublas(raw(c));
  const int64_t n = count * vrows * cols;
  if (t == DType::c64) {
    const float minus = -1.0f;
    GPULA_CHECK(c.op, cublasSscal_64(hb, n, &minus, static_cast<float*>(vt) + 1, 2));
  } else {
    const double minus = -1.0;
    GPULA_CHECK(c.op, cublasDscal_64(hb, n, &minus, static_cast<double*>(vt) + 1, 2));
  }
}

// The first `ucols` columns of U (count items of rows x rows, ld rows) into u (rows x ucols).
void leading_columns(const void* uf, void* u, int64_t rows, int64_t ucols, int64_t count, DType t,
                     const LinalgCall& c) {
  const TensorView src{
      const_cast<void*>(uf), t, {count, rows, ucols}, {rows * rows, 1, rows}, device_of(c)};
  const TensorView dst{u, t, {count, rows, ucols}, {rows * ucols, 1, rows}, device_of(c)};
  cuda::copy(src, dst, c.stream);
}

class CudaSvd final : public SvdBackend {
 public:
  bool needs_tall(SvdMethod method, int64_t rows, int64_t cols, int64_t count) const override {
    // Only routes that need rows >= cols matter here, and those do not depend on type or full.
    return route_needs_tall(route(method, rows, cols, count, DType::f64, false, 0));
  }

  void gesvd(const SvdBatch& p, SvdMethod method, int32_t* info,
             const LinalgCall& c) const override {
    const Route r =
        route(method, p.a.rows, p.a.cols, p.a.count, p.a.dtype, p.full, c.stream.device.index);
    note(c,
         cat("svd: ", route_name(r), " for ", p.a.count, " matrices of ", p.a.rows, " x ", p.a.cols,
             p.vectors() ? (p.full ? ", full u/vt" : ", economy u/vt") : ", values only"));
    if (route_needs_tall(r) && p.a.rows < p.a.cols)
      throw_error<Error>(c.op, "internal: ", route_name(r), " was handed a wide matrix");
    switch (r) {
      case Route::gesvd:
        return xgesvd(p, info, c);
      case Route::gesvdj:
        return gesvdj(p, info, c);
      case Route::gesvdj_batched:
        return gesvdj_batched(p, info, c);
      case Route::gesvdp:
        return xgesvdp(p, info, c);
      case Route::gesvda:
        return gesvda(p, info, c);
      case Route::jacobi_batched:
        return jacobi_batched(p, info, c);
    }
  }

 private:
  static void xgesvd(const SvdBatch& p, int32_t* info, const LinalgCall& c) {
    Context& ctx = context(c.stream.device.index);
    cusolverDnHandle_t h = ctx.cusolver(raw(c));
    const DType t = p.a.dtype;
    const cudaDataType_t dt = data_type(t), rt = data_type(real_type(t));
    const int64_t rows = p.a.rows, cols = p.a.cols, k = p.k();
    const bool vec = p.vectors();
    const signed char job = !vec ? 'N' : (p.full ? 'A' : 'S');
    const int64_t ldvt = vec ? p.vrows() : 1;
    std::size_t dev = 0, host = 0;
    GPULA_CHECK(c.op, cusolverDnXgesvd_bufferSize(h, ctx.cusolver_params(), job, job, rows, cols,
                                                  dt, p.a.data, rows, rt, p.s, dt, p.u, rows, dt,
                                                  p.vt, ldvt, dt, &dev, &host));
    Tensor ws = scratch(static_cast<int64_t>(dev), c);
    void* hw = host_workspace(host);
    const int64_t us = rows * p.ucols(), vs = p.vrows() * cols;
    for (int64_t b = 0; b < p.a.count; ++b)
      GPULA_CHECK(c.op, cusolverDnXgesvd(h, ctx.cusolver_params(), job, job, rows, cols, dt,
                                         at(p.a.data, t, b * rows * cols), rows, rt,
                                         at(p.s, real_type(t), b * k), dt,
                                         vec ? at(p.u, t, b * us) : nullptr, rows, dt,
                                         vec ? at(p.vt, t, b * vs) : nullptr, ldvt, dt, ws.data(),
                                         dev, hw, host, info + b));
  }

  static void gesvdj(const SvdBatch& p, int32_t* info, const LinalgCall& c) {
    Context& ctx = context(c.stream.device.index);
    cusolverDnHandle_t h = ctx.cusolver(raw(c));
    const DType t = p.a.dtype;
    const int64_t rows = p.a.rows, cols = p.a.cols, k = p.k(), count = p.a.count;
    const bool vec = p.vectors();
    const Route r = Route::gesvdj;
    const int m = to_int(rows, c, "m", r), n = to_int(cols, c, "n", r);
    const int econ = p.full && p.vectors() ? 0 : 1;  // values only: economy workspaces
    const Eig jobz = vec ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    // With vectors, U goes straight to p.u and V (cols x vcols per item) to a workspace; values
    // only: one economy item of each, reused by every matrix.
    const int64_t ucols = vec ? p.ucols() : k, vcols = vec ? p.vrows() : k;
    const int64_t es = static_cast<int64_t>(size_of(t));
    Tensor wu = vec ? Tensor{} : scratch(rows * k * es, c);
    Tensor wv = scratch((vec ? count : 1) * cols * vcols * es, c);
    GesvdjInfo params;
    GPULA_CHECK(c.op, cusolverDnCreateGesvdjInfo(&params.p));
    visit_solver_type(t, [&](auto tt) {
      using T = decltype(tt);
      using R = solver_real_t<T>;
      T* a = static_cast<T*>(p.a.data);
      R* s = static_cast<R*>(p.s);
      T* u = static_cast<T*>(vec ? p.u : wu.data());
      T* v = static_cast<T*>(wv.data());
      int lwork = 0;
      GPULA_CHECK(c.op, gesvdj_size(h, jobz, econ, m, n, a, m, s, u, m, v, n, &lwork, params.p));
      Tensor ws = scratch(static_cast<int64_t>(lwork) * es, c);
      for (int64_t b = 0; b < count; ++b)
        GPULA_CHECK(
            c.op, gesvdj_call(h, jobz, econ, m, n, a + b * rows * cols, m, s + b * k,
                              vec ? u + b * rows * ucols : u, m, vec ? v + b * cols * vcols : v, n,
                              static_cast<T*>(ws.data()), lwork, info + b, params.p));
    });
    if (vec) adjoint_into(wv.data(), cols * vcols, p.vt, p.vrows(), cols, count, t, c);
  }

  // gpula's kernel orthogonalizes the columns of M (M V = G) with M = X when X is tall, else
  // M = X^T, so that M has rows >= cols; X = M^T = V' S U'^T in the wide case, so V' goes to u
  // and U'^T to vt. Both written through strides, straight into the column-major outputs.
  static void jacobi_batched(const SvdBatch& p, int32_t* info, const LinalgCall& c) {
    const DType t = p.a.dtype;
    const int64_t rows = p.a.rows, cols = p.a.cols, k = p.k(), count = p.a.count;
    if (!jacobi_kernel_fits(t, rows, cols, p.full, c.stream.device.index))
      throw_error<NotSupported>(c.op,
                                "method jacobi_batched takes real float32/float64 matrices "
                                "that fit one thread block's shared memory (economy vectors or "
                                "square), got ",
                                name(t), " ", rows, " x ", cols,
                                p.full ? " with full_matrices" : "");
    const bool tall = rows >= cols;
    const int mr = static_cast<int>(tall ? rows : cols), mc = static_cast<int>(k);
    const int64_t item = rows * cols;
    const Strided3 m_st = tall ? Strided3{item, 1, rows} : Strided3{item, rows, 1};
    const int64_t vr = p.vrows(), uc = p.ucols();
    // Left vectors of M (mr x k) and right vectors of M (k x k), as X's u and vt.
    const Strided3 lu = tall ? Strided3{rows * uc, 1, rows} : Strided3{vr * cols, vr, 1};
    const Strided3 rv = tall ? Strided3{vr * cols, vr, 1} : Strided3{rows * uc, 1, rows};
    void* left = p.vectors() ? (tall ? p.u : p.vt) : nullptr;
    void* right = p.vectors() ? (tall ? p.vt : p.u) : nullptr;
    constexpr int kMaxSweeps = 40;
    cudaStream_t s = raw(c);
    if (t == DType::f32)
      svd_jacobi_batched<float>(static_cast<const float*>(p.a.data), m_st, count, mr, mc,
                                static_cast<float*>(left), lu, static_cast<float*>(p.s),
                                static_cast<float*>(right), rv, info, kMaxSweeps, s);
    else
      svd_jacobi_batched<double>(static_cast<const double*>(p.a.data), m_st, count, mr, mc,
                                 static_cast<double*>(left), lu, static_cast<double*>(p.s),
                                 static_cast<double*>(right), rv, info, kMaxSweeps, s);
  }

  static void gesvdj_batched(const SvdBatch& p, int32_t* info, const LinalgCall& c) {
    Context& ctx = context(c.stream.device.index);
    cusolverDnHandle_t h = ctx.cusolver(raw(c));
    const DType t = p.a.dtype;
    const int64_t rows = p.a.rows, cols = p.a.cols, count = p.a.count;
    const bool vec = p.vectors();
    const Route r = Route::gesvdj_batched;
    const int m = to_int(rows, c, "m", r), n = to_int(cols, c, "n", r);
    const int batch = to_int(count, c, "batch", r);
    const Eig jobz = vec ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    // gesvdjBatched always forms the square U (rows x rows) and V (cols x cols).
    const int64_t es = static_cast<int64_t>(size_of(t));
    const bool u_direct = vec && p.ucols() == rows;
    Tensor wu = u_direct ? Tensor{} : scratch(count * rows * rows * es, c);
    Tensor wv = scratch(count * cols * cols * es, c);
    GesvdjInfo params;
    GPULA_CHECK(c.op, cusolverDnCreateGesvdjInfo(&params.p));
    GPULA_CHECK(c.op, cusolverDnXgesvdjSetSortEig(params.p, 1));
    visit_solver_type(t, [&](auto tt) {
      using T = decltype(tt);
      using R = solver_real_t<T>;
      T* a = static_cast<T*>(p.a.data);
      R* s = static_cast<R*>(p.s);
      T* u = static_cast<T*>(u_direct ? p.u : wu.data());
      T* v = static_cast<T*>(wv.data());
      int lwork = 0;
      GPULA_CHECK(c.op,
                  gesvdj_batched_size(h, jobz, m, n, a, m, s, u, m, v, n, &lwork, params.p, batch));
      Tensor ws = scratch(static_cast<int64_t>(lwork) * es, c);
      GPULA_CHECK(
          c.op, gesvdj_batched_call(h, jobz, m, n, a, m, s, u, m, v, n, static_cast<T*>(ws.data()),
                                    lwork, info, params.p, batch));
    });
    if (!vec) return;
    if (!u_direct) leading_columns(wu.data(), p.u, rows, p.ucols(), count, t, c);
    adjoint_into(wv.data(), cols * cols, p.vt, p.vrows(), cols, count, t, c);
  }

  // Xgesvdp can return a wrong SVD and say so only through h_err_sigma, the size of the
  // perturbation of the singular values (H200, CUDA 13.0, Gaussian float32 matrices: n = 2048
  // h_err_sigma 2439 and n = 4096 4883, reconstruction errors 54 and 76, where n <= 1024 and
  // every float64 order tried gave 0 and accurate results). An item whose h_err_sigma is past
  // sqrt(eps) s[0] gets info = k + 1 ("did not converge" with check_info) and a warning.
  static void flag_unreliable_gesvdp(const SvdBatch& p, int64_t b, double err_sigma, int32_t* info,
                                     const LinalgCall& c) {
    const DType rt = real_type(p.a.dtype);
    double s0 = 0.0;
    if (p.k() > 0) {
      float f = 0.0f;
      void* dst = rt == DType::f32 ? static_cast<void*>(&f) : static_cast<void*>(&s0);
      GPULA_CHECK(c.op, cudaMemcpyAsync(dst, at(p.s, rt, b * p.k()), size_of(rt),
                                        cudaMemcpyDeviceToHost, raw(c)));
      GPULA_CHECK(c.op, cudaStreamSynchronize(raw(c)));
      if (rt == DType::f32) s0 = f;
    }
    const double eps = rt == DType::f32 ? std::numeric_limits<float>::epsilon()
                                        : std::numeric_limits<double>::epsilon();
    if (err_sigma <= std::sqrt(eps) * s0) return;  // NaN s0 or err_sigma: flagged
    log(LogLevel::warning,
        cat("[", c.op, "] cusolverDnXgesvdp returned h_err_sigma ", err_sigma, " against s[0] = ",
            s0, " for batch item ", b, ": its SVD is unreliable (method=\"gesvd\" computes it)"),
        c.logger ? *c.logger : LogSink{});
    const int32_t flag = static_cast<int32_t>(p.k() + 1);
    GPULA_CHECK(c.op,
                cudaMemcpyAsync(info + b, &flag, sizeof flag, cudaMemcpyHostToDevice, raw(c)));
    GPULA_CHECK(c.op, cudaStreamSynchronize(raw(c)));
  }

  static void xgesvdp(const SvdBatch& p, int32_t* info, const LinalgCall& c) {
    Context& ctx = context(c.stream.device.index);
    cusolverDnHandle_t h = ctx.cusolver(raw(c));
    const DType t = p.a.dtype;
    const cudaDataType_t dt = data_type(t), rt = data_type(real_type(t));
    const int64_t rows = p.a.rows, cols = p.a.cols, k = p.k(), count = p.a.count;  // k == cols
    const bool vec = p.vectors();
    const int econ = p.full && p.vectors() ? 0 : 1;  // values only: economy workspaces
    const Eig jobz = vec ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    const int64_t es = static_cast<int64_t>(size_of(t));
    const int64_t ucols = vec ? p.ucols() : k;
    Tensor wu = vec ? Tensor{} : scratch(rows * k * es, c);
    Tensor wv = scratch((vec ? count : 1) * cols * cols * es, c);
    void* u = vec ? p.u : wu.data();
    std::size_t dev = 0, host = 0;
    GPULA_CHECK(c.op, cusolverDnXgesvdp_bufferSize(h, ctx.cusolver_params(), jobz, econ, rows, cols,
                                                   dt, p.a.data, rows, rt, p.s, dt, u, rows, dt,
                                                   wv.data(), cols, dt, &dev, &host));
    Tensor ws = scratch(static_cast<int64_t>(dev), c);
    void* hw = host_workspace(host);
    double worst = 0.0;
    for (int64_t b = 0; b < count; ++b) {
      double err_sigma = 0.0;
      GPULA_CHECK(c.op, cusolverDnXgesvdp(h, ctx.cusolver_params(), jobz, econ, rows, cols, dt,
                                          at(p.a.data, t, b * rows * cols), rows, rt,
                                          at(p.s, real_type(t), b * k), dt,
                                          vec ? at(u, t, b * rows * ucols) : u, rows, dt,
                                          at(wv.data(), t, vec ? b * cols * cols : 0), cols, dt,
                                          ws.data(), dev, hw, host, info + b, &err_sigma));
      worst = std::max(worst, err_sigma);
      if (err_sigma != 0.0) flag_unreliable_gesvdp(p, b, err_sigma, info, c);
    }
    note(c, cat("cusolverDnXgesvdp: largest h_err_sigma ", worst));
    if (vec) adjoint_into(wv.data(), cols * cols, p.vt, p.vrows(), cols, count, t, c);
  }

  static void gesvda(const SvdBatch& p, int32_t* info, const LinalgCall& c) {
    const int64_t rows = p.a.rows, cols = p.a.cols, k = p.k(), count = p.a.count;  // k == cols
    if (p.vectors() && p.full && rows != cols)
      throw_error<NotSupported>(c.op,
                                "method gesvda computes economy u and vh only; use "
                                "full_matrices=false or another method for a ",
                                rows, " x ", cols, " matrix");
    Context& ctx = context(c.stream.device.index);
    cusolverDnHandle_t h = ctx.cusolver(raw(c));
    const DType t = p.a.dtype;
    const Route r = Route::gesvda;
    const int m = to_int(rows, c, "m", r), n = to_int(cols, c, "n", r);
    const int batch = to_int(count, c, "batch", r), rank = n;
    const bool vec = p.vectors();
    const Eig jobz = vec ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    const int64_t es = static_cast<int64_t>(size_of(t));
    Tensor wu = vec ? Tensor{} : scratch(count * rows * k * es, c);
    Tensor wv = scratch(count * cols * k * es, c);
    std::vector<double> residual(static_cast<std::size_t>(count));
    const ll sa = rows * cols, ss = k, su = rows * k, sv = cols * k;
    visit_solver_type(t, [&](auto tt) {
      using T = decltype(tt);
      using R = solver_real_t<T>;
      const T* a = static_cast<const T*>(p.a.data);
      R* s = static_cast<R*>(p.s);
      T* u = static_cast<T*>(vec ? p.u : wu.data());
      T* v = static_cast<T*>(wv.data());
      int lwork = 0;
      GPULA_CHECK(c.op, gesvda_size(h, jobz, rank, m, n, a, m, sa, s, ss, u, m, su, v, n, sv,
                                    &lwork, batch));
      Tensor ws = scratch(static_cast<int64_t>(lwork) * es, c);
      GPULA_CHECK(c.op,
                  gesvda_call(h, jobz, rank, m, n, a, m, sa, s, ss, u, m, su, v, n, sv,
                              static_cast<T*>(ws.data()), lwork, info, residual.data(), batch));
    });
    note(c, cat("cusolverDn<t>gesvdaStridedBatched: largest residual ||A - U S V^H||_F ",
                *std::max_element(residual.begin(), residual.end())));
    if (vec) adjoint_into(wv.data(), cols * k, p.vt, p.vrows(), cols, count, t, c);
  }
};

}  // namespace

const SvdBackend& svd_backend() {
  static const CudaSvd backend;
  return backend;
}

}  // namespace gpula::detail::cuda
