// CUDA backend of the dense solvers. One matrix, or a batch of large ones: cuSOLVER's 64-bit
// X API (Xpotrf/Xpotrs, Xgetrf/Xgetrs), looping over the batch on the stream, with workspaces
// sized by *_bufferSize and taken from the stream-ordered pool. Batches of matrices of order
// <= kSmallBatchedMaxN (32): gpula's own kernels for potrf, potrs_right, getrf and getrs
// (kernels/batched_small.h), one launch per batch. Batches up to order kBatchedMaxN:
// cusolverDn<t>potrfBatched/potrsBatched and cuBLAS getrf/getrs/getri/matinv/trsmBatched over
// device pointer arrays, one call per batch. Refined solves: cuSOLVER
// IRS (cusolverDnIRSXgesv) with fallback to working precision. Nothing here synchronizes except
// IRS, which returns its iteration count to the host.
#include <algorithm>
#include <climits>
#include <string>
#include <vector>

#include "backend/cuda/base/check.h"
#include "backend/cuda/base/context.h"
#include "backend/cuda/kernels/batched_small.h"
#include "backend/cuda/kernels/linalg.h"
#include "backend/cuda/linalg/common.h"
#include "backend/cuda/linalg/solve_rbt.h"
#include "backend/cuda/linalg/solver_calls.h"
#include "core/format.h"
#include "linalg/solve_backend.h"

namespace gpula::detail::cuda {
namespace {

// Batches of matrices up to this order go to the batched APIs; larger ones loop over X API calls.
constexpr int64_t kBatchedMaxN = 128;
// refine=automatic solves of this order and up take the RBT solve (solve_rbt.h): faster than
// pivoted LU from there on the H200 (float64, 16 right-hand sides: n = 512 1.17 vs 1.61 ms,
// n = 8192 16.6 vs 45.1 ms); smaller orders were not measured.
constexpr int64_t kRbtMinN = 512;
constexpr int64_t kMatinvMaxN = 32;  // cublas<t>matinvBatched's limit

int to_int(int64_t v, const LinalgCall& c, const char* what) {
  return checked_int(v, c, what, "the batched cuBLAS/cuSOLVER routines");
}

int64_t item_bytes(const SquareBatch& a) {
  return a.n * a.n * static_cast<int64_t>(size_of(a.dtype));
}
int64_t item_bytes(const DenseBatch& x) {
  return x.rows * x.cols * static_cast<int64_t>(size_of(x.dtype));
}
char* item(const SquareBatch& a, int64_t b) {
  return static_cast<char*>(a.data) + b * item_bytes(a);
}
char* item(const DenseBatch& x, int64_t b) {
  return static_cast<char*>(x.data) + b * item_bytes(x);
}

// The device pointer array of a contiguous batch.
template <class B>
Tensor pointers(const B& m, const LinalgCall& c) {
  Tensor p = scratch(m.count * static_cast<int64_t>(sizeof(void*)), c);
  GPULA_CHECK(c.op, launch_fill_pointers(static_cast<void**>(p.data()), m.data, item_bytes(m),
                                         m.count, raw(c)));
  return p;
}
void** ptrs(const Tensor& t) { return static_cast<void**>(t.data()); }

bool batched(int64_t count, int64_t n) { return count > 1 && n <= kBatchedMaxN; }
// Batches that gpula's own kernels take (kernels/batched_small.h).
bool small_batched(int64_t count, int64_t n) { return count > 1 && n <= kSmallBatchedMaxN; }

// cuSOLVER IRS objects, destroyed on every path.
struct IrsParams {
  cusolverDnIRSParams_t p = nullptr;
  ~IrsParams() {
    if (p) GPULA_CHECK_NOTHROW(cusolverDnIRSParamsDestroy(p));
  }
};
struct IrsInfos {
  cusolverDnIRSInfos_t p = nullptr;
  ~IrsInfos() {
    if (p) GPULA_CHECK_NOTHROW(cusolverDnIRSInfosDestroy(p));
  }
};

const char* prec_name(cusolverPrecType_t p) {
  switch (p) {
    case CUSOLVER_R_64F:
      return "R_64F";
    case CUSOLVER_R_32F:
      return "R_32F";
    case CUSOLVER_R_16F:
      return "R_16F";
    case CUSOLVER_R_16BF:
      return "R_16BF";
    case CUSOLVER_R_TF32:
      return "R_TF32";
    case CUSOLVER_C_64F:
      return "C_64F";
    case CUSOLVER_C_32F:
      return "C_32F";
    case CUSOLVER_C_16F:
      return "C_16F";
    case CUSOLVER_C_16BF:
      return "C_16BF";
    case CUSOLVER_C_TF32:
      return "C_TF32";
    default:
      return "?";
  }
}

// The inner (lowest) precision IRS factors in, for working precision `t`: tf32, f16 and bf16
// factor lower and refine to the data's accuracy (cuSOLVER's stopping test
// ||r|| < sqrt(n) eps ||A|| ||x||, eps of the working precision); f32 on float64 data. Only
// refinements below the working precision get here (src/linalg/solve.cpp).
cusolverPrecType_t lowest_precision(DType t, linalg::Refine r) {
  const bool cplx = is_complex(t);
  switch (r) {
    case linalg::Refine::tf32:
      return cplx ? CUSOLVER_C_TF32 : CUSOLVER_R_TF32;
    case linalg::Refine::f16:
      return cplx ? CUSOLVER_C_16F : CUSOLVER_R_16F;
    case linalg::Refine::bf16:
      return cplx ? CUSOLVER_C_16BF : CUSOLVER_R_16BF;
    default:  // f32 (the front sends none, automatic and f32 on float32 data to getrf/getrs)
      // float32 factors converge for matrices with cond(a) well below 1e7.
      return cplx ? CUSOLVER_C_32F : CUSOLVER_R_32F;
  }
}

class CudaSolve final : public SolveBackend {
 public:
  void potrf(const SquareBatch& a, bool upper, int32_t* info, const LinalgCall& c) const override {
    Context& ctx = context(c.stream.device.index);
    if (small_batched(a.count, a.n)) {
      note(c, cat("gpula batched_small potrf: ", a.count, " matrices of order ", a.n));
      GPULA_CHECK(c.op, launch_potrf_small(a.data, elem_type(a.dtype), static_cast<int>(a.n),
                                           a.count, upper, info, raw(c)));
      return;
    }
    cusolverDnHandle_t h = ctx.cusolver(raw(c));
    if (batched(a.count, a.n)) {
      note(c, cat("cusolverDn<t>potrfBatched: ", a.count, " matrices of order ", a.n));
      Tensor p = pointers(a, c);
      calls::potrf_batched(h, a.dtype, upper, to_int(a.n, c, "n"), ptrs(p), info,
                           to_int(a.count, c, "batch"), c.op);
      return;
    }
    note(c, cat("cusolverDnXpotrf: ", a.count, " x order ", a.n));
    const cudaDataType_t dt = data_type(a.dtype);
    std::size_t dev = 0, host = 0;
    GPULA_CHECK(c.op, cusolverDnXpotrf_bufferSize(h, ctx.cusolver_params(), fill(upper), a.n, dt,
                                                  a.data, a.n, dt, &dev, &host));
    Tensor ws = scratch(static_cast<int64_t>(dev), c);
    void* hw = host_workspace(host);
    for (int64_t b = 0; b < a.count; ++b)
      GPULA_CHECK(c.op, cusolverDnXpotrf(h, ctx.cusolver_params(), fill(upper), a.n, dt, item(a, b),
                                         a.n, dt, ws.data(), dev, hw, host, info + b));
  }

  // The batched_small kernel runs the same on either triangle; cuSOLVER's upper is ~2x slower.
  bool potrf_any_triangle(int64_t count, int64_t n) const override {
    return small_batched(count, n);
  }

  void potrs_right(const SquareBatch& f, bool upper, const DenseBatch& y,
                   const LinalgCall& c) const override {
    Context& ctx = context(c.stream.device.index);
    const int64_t n = f.n, m = y.rows;
    if (m == 0) return;
    if (small_batched(y.count, n)) {
      note(c, cat("gpula batched_small potrs: ", y.count, " matrices of order ", n, ", ", m,
                  " right-hand sides"));
      GPULA_CHECK(c.op, launch_potrs_right_small(f.data, elem_type(f.dtype), static_cast<int>(n),
                                                 y.count, upper, y.data, m, raw(c)));
      return;
    }
    if (!is_complex(f.dtype) && m == 1) {
      // One right-hand side, real: y M = b is M y^T = b^T (M symmetric), LAPACK's potrs.
      cusolverDnHandle_t h = ctx.cusolver(raw(c));
      Tensor info = scratch(4 * y.count, c);
      auto* pi = static_cast<int*>(info.data());
      if (batched(y.count, n)) {
        note(c, cat("cusolverDn<t>potrsBatched: ", y.count, " matrices of order ", n));
        Tensor pf = pointers(f, c), py = pointers(y, c);
        calls::potrs_batched(h, f.dtype, upper, to_int(n, c, "n"), ptrs(pf), ptrs(py), pi,
                             to_int(y.count, c, "batch"), c.op);
        return;
      }
      note(c, cat("cusolverDnXpotrs: ", y.count, " x order ", n));
      const cudaDataType_t dt = data_type(f.dtype);
      for (int64_t b = 0; b < y.count; ++b)
        GPULA_CHECK(c.op, cusolverDnXpotrs(h, ctx.cusolver_params(), fill(upper), n, 1, dt,
                                           item(f, b), n, dt, item(y, b), n, pi + b));
      return;
    }
    // Y F^H F = B (upper) or Y F F^H = B (lower): two triangular solves from the right.
    cublasHandle_t h = ctx.cublas(raw(c));
    const cublasOperation_t first = upper ? CUBLAS_OP_N : CUBLAS_OP_C;
    const cublasOperation_t second = upper ? CUBLAS_OP_C : CUBLAS_OP_N;
    if (batched(y.count, n)) {
      note(c, cat("cublas<t>trsmBatched x2: ", y.count, " matrices of order ", n, ", ", m,
                  " right-hand sides"));
      Tensor pf = pointers(f, c), py = pointers(y, c);
      const int ni = to_int(n, c, "n"), mi = to_int(m, c, "right-hand sides"),
                cnt = to_int(y.count, c, "batch");
      for (cublasOperation_t op : {first, second})
        calls::trsm_batched(h, f.dtype, CUBLAS_SIDE_RIGHT, fill(upper), op, mi, ni, ptrs(pf), ni,
                            ptrs(py), mi, cnt, c.op);
      return;
    }
    note(c, cat("cublas<t>trsm x2: ", y.count, " x order ", n, ", ", m, " right-hand sides"));
    for (int64_t b = 0; b < y.count; ++b)
      for (cublasOperation_t op : {first, second})
        calls::trsm(h, f.dtype, CUBLAS_SIDE_RIGHT, fill(upper), op, m, n, item(f, b), n, item(y, b),
                    m, c.op);
  }

  void getrf(const SquareBatch& a, int32_t* ipiv, int32_t* info,
             const LinalgCall& c) const override {
    Context& ctx = context(c.stream.device.index);
    if (small_batched(a.count, a.n)) {
      note(c, cat("gpula batched_small getrf: ", a.count, " matrices of order ", a.n));
      GPULA_CHECK(c.op, launch_getrf_small(a.data, elem_type(a.dtype), static_cast<int>(a.n),
                                           a.count, ipiv, info, raw(c)));
      return;
    }
    if (batched(a.count, a.n)) {
      note(c, cat("cublas<t>getrfBatched: ", a.count, " matrices of order ", a.n));
      Tensor p = pointers(a, c);
      calls::getrf_batched(ctx.cublas(raw(c)), a.dtype, to_int(a.n, c, "n"), ptrs(p), ipiv, info,
                           to_int(a.count, c, "batch"), c.op);
      return;
    }
    note(c, cat("cusolverDnXgetrf: ", a.count, " x order ", a.n));
    cusolverDnHandle_t h = ctx.cusolver(raw(c));
    const cudaDataType_t dt = data_type(a.dtype);
    std::size_t dev = 0, host = 0;
    GPULA_CHECK(c.op, cusolverDnXgetrf_bufferSize(h, ctx.cusolver_params(), a.n, a.n, dt, a.data,
                                                  a.n, dt, &dev, &host));
    Tensor ws = scratch(static_cast<int64_t>(dev), c);
    Tensor p64 = scratch(8 * a.n * a.count, c);
    auto* pp = static_cast<int64_t*>(p64.data());
    void* hw = host_workspace(host);
    for (int64_t b = 0; b < a.count; ++b)
      GPULA_CHECK(c.op, cusolverDnXgetrf(h, ctx.cusolver_params(), a.n, a.n, dt, item(a, b), a.n,
                                         pp + b * a.n, dt, ws.data(), dev, hw, host, info + b));
    GPULA_CHECK(
        c.op, launch_convert_pivots(pp, true, ipiv, false, a.n * a.count, a.n, 0, nullptr, raw(c)));
  }

  void getrs(const SquareBatch& lu, const int32_t* ipiv, bool transpose, const DenseBatch& x,
             const LinalgCall& c) const override {
    Context& ctx = context(c.stream.device.index);
    const int64_t n = lu.n, k = x.cols;
    if (k == 0) return;
    if (small_batched(x.count, n)) {
      note(c, cat("gpula batched_small getrs", transpose ? " (transposed): " : ": ", x.count,
                  " matrices of order ", n, ", ", k, " right-hand sides"));
      GPULA_CHECK(c.op, launch_getrs_small(lu.data, elem_type(lu.dtype), static_cast<int>(n),
                                           x.count, ipiv, transpose, x.data, k, raw(c)));
      return;
    }
    if (batched(x.count, n)) {
      note(c, cat("cublas<t>getrsBatched: ", x.count, " matrices of order ", n, ", ", k,
                  " right-hand sides"));
      Tensor pa = pointers(lu, c), pb = pointers(x, c);
      calls::getrs_batched(ctx.cublas(raw(c)), lu.dtype, transpose, to_int(n, c, "n"),
                           to_int(k, c, "right-hand sides"), ptrs(pa), ipiv, ptrs(pb),
                           to_int(x.count, c, "batch"), c.op);
      return;
    }
    note(c, cat("cusolverDnXgetrs: ", x.count, " x order ", n, ", ", k, " right-hand sides"));
    cusolverDnHandle_t h = ctx.cusolver(raw(c));
    const cudaDataType_t dt = data_type(lu.dtype);
    Tensor p64 = scratch(8 * n * x.count, c);
    auto* pp = static_cast<int64_t*>(p64.data());
    GPULA_CHECK(c.op,
                launch_convert_pivots(ipiv, false, pp, true, n * x.count, n, 0, nullptr, raw(c)));
    Tensor info = scratch(4 * x.count, c);
    auto* pi = static_cast<int*>(info.data());
    const cublasOperation_t op = transpose ? CUBLAS_OP_T : CUBLAS_OP_N;
    for (int64_t b = 0; b < x.count; ++b)
      GPULA_CHECK(c.op, cusolverDnXgetrs(h, ctx.cusolver_params(), op, n, k, dt, item(lu, b), n,
                                         pp + b * n, dt, item(x, b), n, pi + b));
  }

  void sysv(const SquareBatch& a, bool upper, const DenseBatch& x, int32_t* info,
            const LinalgCall& c) const override {
    // cuSOLVER has sytrf but no sytrs: mirror the triangle that was given, then LU.
    note(c, "assume_a=sym on the GPU: mirrored triangle, LU with partial pivoting");
    GPULA_CHECK(c.op, launch_mirror_triangle(a.data, static_cast<int>(size_of(a.dtype)), a.n,
                                             a.count, upper, raw(c)));
    Tensor ipiv = scratch(4 * a.n * a.count, c);
    auto* p = static_cast<int32_t*>(ipiv.data());
    getrf(a, p, info, c);
    getrs(a, p, false, x, c);
  }

  bool solve_prefers_rbt(int64_t n) const override { return n >= kRbtMinN; }

  void gesv_refined(const SquareBatch& a, const DenseBatch& b, const DenseBatch& x,
                    linalg::Refine refine, int32_t* info, const LinalgCall& c) const override {
    if (refine == linalg::Refine::rbt) {
      gesv_rbt(a, b, x, info, c);
      return;
    }
    const bool dbl = a.dtype == DType::f64 || a.dtype == DType::c128;
    const cusolverPrecType_t main = is_complex(a.dtype) ? (dbl ? CUSOLVER_C_64F : CUSOLVER_C_32F)
                                                        : (dbl ? CUSOLVER_R_64F : CUSOLVER_R_32F);
    const cusolverPrecType_t lowest = lowest_precision(a.dtype, refine);
    Context& ctx = context(c.stream.device.index);
    cusolverDnHandle_t h = ctx.cusolver(raw(c));
    const int n = to_int(a.n, c, "n"), nrhs = to_int(x.cols, c, "right-hand sides");
    IrsParams params;
    IrsInfos infos;
    GPULA_CHECK(c.op, cusolverDnIRSParamsCreate(&params.p));
    GPULA_CHECK(c.op, cusolverDnIRSParamsSetSolverPrecisions(params.p, main, lowest));
    // GMRES-based refinement is the more robust; cuSOLVER takes it for one right-hand side only.
    GPULA_CHECK(c.op, cusolverDnIRSParamsSetRefinementSolver(
                          params.p, nrhs == 1 ? CUSOLVER_IRS_REFINE_CLASSICAL_GMRES
                                              : CUSOLVER_IRS_REFINE_CLASSICAL));
    GPULA_CHECK(c.op, cusolverDnIRSParamsEnableFallback(params.p));
    GPULA_CHECK(c.op, cusolverDnIRSInfosCreate(&infos.p));
    std::size_t lwork = 0;
    GPULA_CHECK(c.op, cusolverDnIRSXgesv_bufferSize(h, params.p, n, nrhs, &lwork));
    Tensor ws = scratch(static_cast<int64_t>(lwork), c);
    for (int64_t i = 0; i < a.count; ++i) {
      int niters = 0;
      GPULA_CHECK(c.op, cusolverDnIRSXgesv(h, params.p, infos.p, n, nrhs, item(a, i), n, item(b, i),
                                           n, item(x, i), n, ws.data(), lwork, &niters, info + i));
      log(niters < 0 ? LogLevel::info : LogLevel::debug,
          cat("[", c.op, "] cusolverDnIRSXgesv ", prec_name(main), " -> ", prec_name(lowest),
              ", order ", n, ", ", nrhs, " right-hand sides: ",
              niters >= 0 ? cat(niters, " iterations")
                          : cat("niters ", niters, ", fell back to working precision"),
              a.count > 1 ? cat(" (batch item ", i, ")") : std::string()),
          c.logger ? *c.logger : LogSink{});
    }
  }

  // RBT solve per matrix; a matrix whose refinement fails is solved again by LU with partial
  // pivoting (which reports a singular one through info).
  void gesv_rbt(const SquareBatch& a, const DenseBatch& b, const DenseBatch& x, int32_t* info,
                const LinalgCall& c) const {
    GPULA_CHECK(c.op, cudaMemsetAsync(info, 0, 4 * a.count, raw(c)));
    if (a.n == 0 || x.cols == 0) return;
    const RbtSolver rbt(a.dtype, a.n, x.cols, c);
    for (int64_t i = 0; i < a.count; ++i) {
      if (rbt.solve(item(a, i), item(b, i), item(x, i), a.count > 1 ? i : -1)) continue;
      const SquareBatch ai{item(a, i), a.dtype, a.n, 1};
      const DenseBatch xi{item(x, i), x.dtype, x.rows, x.cols, 1};
      GPULA_CHECK(c.op, cudaMemcpyAsync(xi.data, item(b, i), item_bytes(xi),
                                        cudaMemcpyDeviceToDevice, raw(c)));
      Tensor ipiv = scratch(4 * a.n, c);
      getrf(ai, static_cast<int32_t*>(ipiv.data()), info + i, c);
      getrs(ai, static_cast<int32_t*>(ipiv.data()), false, xi, c);
    }
  }

  void inv(const SquareBatch& a, int32_t* info, const LinalgCall& c) const override {
    Context& ctx = context(c.stream.device.index);
    Tensor lu_mem = scratch(item_bytes(a) * a.count, c);
    GPULA_CHECK(c.op, cudaMemcpyAsync(lu_mem.data(), a.data, item_bytes(a) * a.count,
                                      cudaMemcpyDeviceToDevice, raw(c)));
    const SquareBatch lu{lu_mem.data(), a.dtype, a.n, a.count};
    if (a.count > 1 && a.n <= kMatinvMaxN) {
      note(c, cat("cublas<t>matinvBatched: ", a.count, " matrices of order ", a.n));
      Tensor pl = pointers(lu, c), pa = pointers(a, c);
      calls::matinv_batched(ctx.cublas(raw(c)), a.dtype, to_int(a.n, c, "n"), ptrs(pl), ptrs(pa),
                            info, to_int(a.count, c, "batch"), c.op);
      return;
    }
    Tensor ipiv = scratch(4 * a.n * a.count, c);
    auto* p = static_cast<int32_t*>(ipiv.data());
    getrf(lu, p, info, c);
    if (batched(a.count, a.n)) {
      note(c, cat("cublas<t>getriBatched: ", a.count, " matrices of order ", a.n));
      Tensor pl = pointers(lu, c), pa = pointers(a, c);
      calls::getri_batched(ctx.cublas(raw(c)), a.dtype, to_int(a.n, c, "n"), ptrs(pl), p, ptrs(pa),
                           info, to_int(a.count, c, "batch"), c.op);
      return;
    }
    note(c, "inverse by getrs against the identity");
    GPULA_CHECK(c.op, launch_set_identity(a.data, elem_type(a.dtype), a.n, a.count, raw(c)));
    getrs(lu, p, false, DenseBatch{a.data, a.dtype, a.n, a.n, a.count}, c);
  }

  void det(const SquareBatch& a, void* det_or_sign, void* logabs,
           const LinalgCall& c) const override {
    Tensor ipiv = scratch(4 * a.n * a.count, c), info = scratch(4 * a.count, c);
    auto* p = static_cast<int32_t*>(ipiv.data());
    auto* pi = static_cast<int32_t*>(info.data());
    getrf(a, p, pi, c);
    GPULA_CHECK(c.op, launch_lu_det(a.data, elem_type(a.dtype), a.n, a.count, p, pi, det_or_sign,
                                    logabs, raw(c)));
  }

  void zero_triangle(const SquareBatch& a, bool upper, const LinalgCall& c) const override {
    GPULA_CHECK(c.op, launch_zero_triangle(a.data, static_cast<int>(size_of(a.dtype)), a.n, a.count,
                                           upper, raw(c)));
  }

  void transpose_triangle(const SquareBatch& src, void* dst, bool src_upper, bool zero_rest,
                          const LinalgCall& c) const override {
    GPULA_CHECK(c.op, launch_transpose_triangle(src.data, dst, static_cast<int>(size_of(src.dtype)),
                                                src.n, src.count, src_upper, zero_rest, raw(c)));
  }

  void shift_pivots(int32_t* p, int64_t count, int64_t n, int32_t delta, int32_t* bad,
                    const LinalgCall& c) const override {
    GPULA_CHECK(c.op, launch_convert_pivots(p, false, p, false, count, n, delta, bad, raw(c)));
  }
};

}  // namespace

const SolveBackend& solve_backend() {
  static const CudaSolve backend;
  return backend;
}

}  // namespace gpula::detail::cuda
