// CUDA CG (real f32 / f64; M = None, jacobi or ic0) with the whole loop on the device: cuSPARSE
// SpMV (buffer and preprocessing made once per solve), cuBLAS dot / nrm2 writing device scalars
// (CUBLAS_POINTER_MODE_DEVICE), fused kernels for alpha, beta and the vector updates, and a
// device status word that the host reads every `check_every` iterations (the kernels stop
// updating once it is set, so the iterate and the count are those of the converged iteration).
// M = 'ic0' (int32 indices only): IC(0) of a copy of A's values by cuSPARSE's legacy csric02
// (it reads the lower triangle, sorted column indices: gpula CSR is canonical), then
// z ~ L^-T L^-1 r. By default each triangular solve is approximated by a few Jacobi sweeps
// (t_0 = D^-1 r, t_s = D^-1 (r - E t_{s-1}), E the strictly lower part of L; the same for L^T
// on a transposed copy of the factor: Anzt, Chow, Dongarra, "Iterative sparse triangular solves
// for preconditioning", Euro-Par 2015). With a fixed sweep count from zero the operator is
// P^T P with P = sum_s (-D^-1 E)^s D^-1 nonsingular, so the preconditioner stays symmetric
// positive definite and CG stays valid; each sweep is one SpMV-like pass, where the exact
// level-scheduled solves (cusparseSpSV: triangular_sweeps = 0) serialize over the levels of
// the matrix (about 2 sqrt(n) of them for a 2-D grid: 25x slower per iteration at n = 1e6).
#define DISABLE_CUSPARSE_DEPRECATED  // csric02 is the legacy API (no generic IC(0) in cuSPARSE)
#include "backend/cuda/kernels/sparse_iterative.h"

#include <cublas_v2.h>
#include <cusparse.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "backend/cuda/base/check.h"
#include "backend/cuda/base/context.h"
#include "backend/cuda/base/types.h"
#include "backend/cuda/sparse/iterative_common.h"
#include "core/dtype_dispatch.h"
#include "core/format.h"
#include "sparse/iterative_backend.h"

namespace gpula::sparse::detail::cuda {

namespace {

using namespace gpula::detail::cuda;
using gpula::detail::throw_error;

cusparseStatus_t csric02_buffer_size(cusparseHandle_t h, int n, int nnz, cusparseMatDescr_t md,
                                     float* v, const int* ptr, const int* col, csric02Info_t info,
                                     int* bytes) {
  return cusparseScsric02_bufferSize(h, n, nnz, md, v, ptr, col, info, bytes);
}
cusparseStatus_t csric02_buffer_size(cusparseHandle_t h, int n, int nnz, cusparseMatDescr_t md,
                                     double* v, const int* ptr, const int* col, csric02Info_t info,
                                     int* bytes) {
  return cusparseDcsric02_bufferSize(h, n, nnz, md, v, ptr, col, info, bytes);
}
cusparseStatus_t csric02_analysis(cusparseHandle_t h, int n, int nnz, cusparseMatDescr_t md,
                                  const float* v, const int* ptr, const int* col,
                                  csric02Info_t info, void* buf) {
  return cusparseScsric02_analysis(h, n, nnz, md, v, ptr, col, info,
                                   CUSPARSE_SOLVE_POLICY_USE_LEVEL, buf);
}
cusparseStatus_t csric02_analysis(cusparseHandle_t h, int n, int nnz, cusparseMatDescr_t md,
                                  const double* v, const int* ptr, const int* col,
                                  csric02Info_t info, void* buf) {
  return cusparseDcsric02_analysis(h, n, nnz, md, v, ptr, col, info,
                                   CUSPARSE_SOLVE_POLICY_USE_LEVEL, buf);
}
cusparseStatus_t csric02(cusparseHandle_t h, int n, int nnz, cusparseMatDescr_t md, float* v,
                         const int* ptr, const int* col, csric02Info_t info, void* buf) {
  return cusparseScsric02(h, n, nnz, md, v, ptr, col, info, CUSPARSE_SOLVE_POLICY_USE_LEVEL, buf);
}
cusparseStatus_t csric02(cusparseHandle_t h, int n, int nnz, cusparseMatDescr_t md, double* v,
                         const int* ptr, const int* col, csric02Info_t info, void* buf) {
  return cusparseDcsric02(h, n, nnz, md, v, ptr, col, info, CUSPARSE_SOLVE_POLICY_USE_LEVEL, buf);
}

// Jacobi sweeps per triangular solve of M='ic0' when the caller leaves the choice (< 0).
constexpr int64_t kIc0Sweeps = 2;

// The IC(0) preconditioner: the factored values (L in the lower triangle, A's upper entries
// above), the temporary t ~ L^-1 r, and either (sweeps > 0) the inverse diagonal of L, a CSC
// copy of the factored values (its columns are the rows of L^T) and a second temporary, or
// (sweeps == 0) the SpSV descriptors of L and L^T with their buffers.
struct Ic0 {
  int64_t sweeps = 0;
  bool on = false;
  cusparseMatDescr_t md = nullptr;
  csric02Info_t info = nullptr;
  cusparseSpMatDescr_t l = nullptr;
  cusparseSpSVDescr_t lower = nullptr, upper = nullptr;
  cusparseDnVecDescr_t r = nullptr, t = nullptr, z = nullptr;
  Tensor values, tmp, factor_buffer, lower_buffer, upper_buffer;
  Tensor inv_diag, tmp2, t_ptr, t_idx, t_val;
  bool active() const { return on; }
  ~Ic0() {
    if (md) GPULA_CHECK_NOTHROW(cusparseDestroyMatDescr(md));
    if (info) GPULA_CHECK_NOTHROW(cusparseDestroyCsric02Info(info));
    if (l) GPULA_CHECK_NOTHROW(cusparseDestroySpMat(l));
    if (lower) GPULA_CHECK_NOTHROW(cusparseSpSV_destroyDescr(lower));
    if (upper) GPULA_CHECK_NOTHROW(cusparseSpSV_destroyDescr(upper));
    if (r) GPULA_CHECK_NOTHROW(cusparseDestroyDnVec(r));
    if (t) GPULA_CHECK_NOTHROW(cusparseDestroyDnVec(t));
    if (z) GPULA_CHECK_NOTHROW(cusparseDestroyDnVec(z));
  }
};

Tensor byte_buffer(size_t bytes, Stream stream) {
  return Tensor::empty({static_cast<int64_t>(bytes / 4 + 1)}, DType::i32, stream);
}

// Factors a copy of A's values (A is not modified) and prepares the two triangular solves
// r -> t (L t = r) -> z (L^T z = t). Missing diagonal: SingularMatrix; a pivot that is not
// positive: NotPositiveDefinite, as the CPU ic0 (the row is the first bad diagonal of L).
template <class T>
void setup_ic0(Ic0& m, const char* op, const CsrView& a, DType dt, T* r, T* z, int64_t* scratch,
               int64_t sweeps, cudaStream_t st, cusparseHandle_t hs, Stream stream) {
  const cudaDataType vt = gpula::detail::cuda::data_type(gpula::detail::dtype_of<T>());
  const int n = static_cast<int>(a.rows);
  const int nnz = static_cast<int>(a.nnz());
  const int* ptr = static_cast<const int*>(a.indptr.data);
  const int* col = static_cast<const int*>(a.indices.data);
  {  // csric02 and SpSV need sorted column indices (CsrMatrix is canonical; a raw view may not be)
    int64_t bad = INT64_MAX;
    GPULA_CHECK(op, cudaMemcpyAsync(scratch, &bad, sizeof bad, cudaMemcpyHostToDevice, st));
    first_unsorted_row(a.rows, ptr, col, scratch, st);
    GPULA_CHECK(op, cudaGetLastError());
    GPULA_CHECK(op, cudaMemcpyAsync(&bad, scratch, sizeof bad, cudaMemcpyDeviceToHost, st));
    GPULA_CHECK(op, cudaStreamSynchronize(st));
    if (bad != INT64_MAX) {
      throw_error<InvalidArgument>(op,
                                   "M='ic0' on a GPU needs canonical CSR (sorted column indices, "
                                   "no duplicates); row ",
                                   bad, " is not");
    }
  }
  m.values = Tensor::empty({std::max<int64_t>(a.nnz(), 1)}, dt, stream);
  T* lv = static_cast<T*>(m.values.data());
  GPULA_CHECK(
      op, cudaMemcpyAsync(lv, a.values.data, a.nnz() * sizeof(T), cudaMemcpyDeviceToDevice, st));
  GPULA_CHECK(op, cusparseCreateMatDescr(&m.md));
  GPULA_CHECK(op, cusparseSetMatType(m.md, CUSPARSE_MATRIX_TYPE_GENERAL));
  GPULA_CHECK(op, cusparseSetMatIndexBase(m.md, CUSPARSE_INDEX_BASE_ZERO));
  GPULA_CHECK(op, cusparseCreateCsric02Info(&m.info));
  int fbytes = 0;
  GPULA_CHECK(op, csric02_buffer_size(hs, n, nnz, m.md, lv, ptr, col, m.info, &fbytes));
  m.factor_buffer = byte_buffer(static_cast<size_t>(fbytes), stream);
  GPULA_CHECK(op, csric02_analysis(hs, n, nnz, m.md, lv, ptr, col, m.info, m.factor_buffer.data()));
  int pos = -1;  // host pointer mode: zeroPivot waits for the analysis
  cusparseStatus_t zs = cusparseXcsric02_zeroPivot(hs, m.info, &pos);
  if (zs == CUSPARSE_STATUS_ZERO_PIVOT) {
    throw SingularMatrix(gpula::detail::cat("[", op, "] M='ic0': A[", pos, ", ", pos,
                                            "] is not stored (zero pivot)"),
                         pos, -1);
  }
  GPULA_CHECK(op, zs);
  GPULA_CHECK(op, csric02(hs, n, nnz, m.md, lv, ptr, col, m.info, m.factor_buffer.data()));
  // csric02 reports a zero pivot; a negative one gives a NaN diagonal: look for both.
  zs = cusparseXcsric02_zeroPivot(hs, m.info, &pos);
  if (zs != CUSPARSE_STATUS_ZERO_PIVOT) GPULA_CHECK(op, zs);
  int64_t bad = INT64_MAX;
  GPULA_CHECK(op, cudaMemcpyAsync(scratch, &bad, sizeof bad, cudaMemcpyHostToDevice, st));
  ic0_bad_pivot<T>(a.rows, ptr, col, lv, scratch, st);
  GPULA_CHECK(op, cudaGetLastError());
  GPULA_CHECK(op, cudaMemcpyAsync(&bad, scratch, sizeof bad, cudaMemcpyDeviceToHost, st));
  GPULA_CHECK(op, cudaStreamSynchronize(st));
  if (zs == CUSPARSE_STATUS_ZERO_PIVOT && pos >= 0 && pos < bad) bad = pos;
  if (bad != INT64_MAX) {
    throw NotPositiveDefinite(gpula::detail::cat("[", op, "] M='ic0': pivot ", bad,
                                                 " is not positive (IC(0) of A breaks down)"),
                              bad + 1, -1);
  }

  m.on = true;
  m.sweeps = sweeps < 0 ? kIc0Sweeps : sweeps;
  m.tmp = Tensor::empty({a.rows}, dt, stream);
  if (m.sweeps > 0) {
    m.inv_diag = Tensor::empty({a.rows}, dt, stream);
    inverse_diagonal<T, int32_t>(a.rows, ptr, col, lv, static_cast<T*>(m.inv_diag.data()), scratch,
                                 st);  // every diagonal was found positive above
    m.tmp2 = Tensor::empty({a.rows}, dt, stream);
    m.t_ptr = Tensor::empty({a.rows + 1}, DType::i32, stream);
    m.t_idx = Tensor::empty({std::max<int64_t>(a.nnz(), 1)}, DType::i32, stream);
    m.t_val = Tensor::empty({std::max<int64_t>(a.nnz(), 1)}, dt, stream);
    auto* tptr = static_cast<int*>(m.t_ptr.data());
    auto* tidx = static_cast<int*>(m.t_idx.data());
    size_t tbytes = 0;
    GPULA_CHECK(op, cusparseCsr2cscEx2_bufferSize(
                        hs, n, n, nnz, lv, ptr, col, m.t_val.data(), tptr, tidx, vt, CUSPARSE_ACTION_NUMERIC, CUSPARSE_INDEX_BASE_ZERO,
                        CUSPARSE_CSR2CSC_ALG1, &tbytes));
    Tensor tbuf = byte_buffer(tbytes, stream);
    GPULA_CHECK(op, cusparseCsr2cscEx2(hs, n, n, nnz, lv, ptr, col, m.t_val.data(), tptr, tidx,
                                       vt, CUSPARSE_ACTION_NUMERIC,
                                       CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1,
                                       tbuf.data()));
    return;  // tbuf goes back to the stream-ordered pool after the transpose, on st
  }
  GPULA_CHECK(
      op, cusparseCreateCsr(&m.l, a.rows, a.cols, a.nnz(), a.indptr.data, a.indices.data, lv,
                            CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_BASE_ZERO, vt));
  cusparseFillMode_t fill = CUSPARSE_FILL_MODE_LOWER;
  cusparseDiagType_t diag = CUSPARSE_DIAG_TYPE_NON_UNIT;
  GPULA_CHECK(op, cusparseSpMatSetAttribute(m.l, CUSPARSE_SPMAT_FILL_MODE, &fill, sizeof fill));
  GPULA_CHECK(op, cusparseSpMatSetAttribute(m.l, CUSPARSE_SPMAT_DIAG_TYPE, &diag, sizeof diag));
  GPULA_CHECK(op, cusparseCreateDnVec(&m.r, a.rows, r, vt));
  GPULA_CHECK(op, cusparseCreateDnVec(&m.t, a.rows, m.tmp.data(), vt));
  GPULA_CHECK(op, cusparseCreateDnVec(&m.z, a.rows, z, vt));
  const T one = 1;
  size_t bytes = 0;
  GPULA_CHECK(op, cusparseSpSV_createDescr(&m.lower));
  GPULA_CHECK(op, cusparseSpSV_bufferSize(hs, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, m.l, m.r, m.t,
                                          vt, CUSPARSE_SPSV_ALG_DEFAULT, m.lower, &bytes));
  m.lower_buffer = byte_buffer(bytes, stream);
  GPULA_CHECK(op,
              cusparseSpSV_analysis(hs, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, m.l, m.r, m.t, vt,
                                    CUSPARSE_SPSV_ALG_DEFAULT, m.lower, m.lower_buffer.data()));
  GPULA_CHECK(op, cusparseSpSV_createDescr(&m.upper));
  GPULA_CHECK(op, cusparseSpSV_bufferSize(hs, CUSPARSE_OPERATION_TRANSPOSE, &one, m.l, m.t, m.z, vt,
                                          CUSPARSE_SPSV_ALG_DEFAULT, m.upper, &bytes));
  m.upper_buffer = byte_buffer(bytes, stream);
  GPULA_CHECK(op, cusparseSpSV_analysis(hs, CUSPARSE_OPERATION_TRANSPOSE, &one, m.l, m.t, m.z, vt,
                                        CUSPARSE_SPSV_ALG_DEFAULT, m.upper, m.upper_buffer.data()));
}

template <class T>
IterativeResult cg_typed(const IterativeProblem& p, const TensorView& bv, const TensorView& xv,
                         const IterativeOptions& o, Stream stream) {
  const char* op = p.op;
  const int64_t n = p.n;
  const CsrView& a = *p.csr;
  const DType dt = p.dtype;
  const cudaDataType vt = gpula::detail::cuda::data_type(gpula::detail::dtype_of<T>());
  const cusparseIndexType_t it =
      a.index_dtype() == DType::i32 ? CUSPARSE_INDEX_32I : CUSPARSE_INDEX_64I;
  cudaStream_t st = static_cast<cudaStream_t>(stream.handle);
  Context& ctx = context(a.device().index);
  cublasHandle_t hb = ctx.cublas(st);
  cusparseHandle_t hs = ctx.cusparse(st);

  Tensor work = Tensor::empty({4 * n + 8}, dt, stream);  // r z p q, scalars
  Tensor status_t = Tensor::empty({2}, DType::i64, stream);
  T* r = static_cast<T*>(work.data());
  T* z = r + n;
  T* pv = z + n;
  T* q = pv + n;
  T* sc = q + n;
  CgScalars s{sc, sc + 1, sc + 2, sc + 3, sc + 4};
  T* bnorm_d = sc + 5;
  int64_t* status = static_cast<int64_t*>(status_t.data());
  T* x = static_cast<T*>(xv.data);
  const T* b = static_cast<const T*>(bv.data);

  Tensor dinv;
  if (o.preconditioner == Preconditioner::jacobi)
    dinv = jacobi_inverse_diagonal<T>(op, a, status, st, stream);
  Ic0 ic0;
  if (o.preconditioner == Preconditioner::ic0) {
    setup_ic0<T>(ic0, op, a, dt, r, z, status, o.triangular_sweeps, st, hs, stream);
  }
  GPULA_CHECK(op, cudaMemsetAsync(status, 0, 2 * sizeof(int64_t), st));

  CusparseObjects d;
  GPULA_CHECK(op, cusparseCreateCsr(&d.a, a.rows, a.cols, a.nnz(), a.indptr.data, a.indices.data,
                                    a.values.data, it, it, CUSPARSE_INDEX_BASE_ZERO, vt));
  GPULA_CHECK(op, cusparseCreateDnVec(&d.in, n, pv, vt));
  GPULA_CHECK(op, cusparseCreateDnVec(&d.out, n, q, vt));
  const T one = 1, zero = 0, minus_one = -1;
  size_t bytes = 0;
  GPULA_CHECK(op, cusparseSpMV_bufferSize(hs, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, d.a, d.in,
                                          &zero, d.out, vt, CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
  Tensor buffer = Tensor::empty({static_cast<int64_t>(bytes / 4 + 1)}, DType::i32, stream);
  GPULA_CHECK(op,
              cusparseSpMV_preprocess(hs, CUSPARSE_OPERATION_NON_TRANSPOSE, &one, d.a, d.in, &zero,
                                      d.out, vt, CUSPARSE_SPMV_ALG_DEFAULT, buffer.data()));
  auto spmv = [&](const T* alpha, const T* beta) {
    GPULA_CHECK(op, cusparseSpMV(hs, CUSPARSE_OPERATION_NON_TRANSPOSE, alpha, d.a, d.in, beta,
                                 d.out, vt, CUSPARSE_SPMV_ALG_DEFAULT, buffer.data()));
  };

  // r = b - A x (q = b, then q = -A x + q, r = q); ||b|| and ||r|| read once here.
  GPULA_CHECK(op, cudaMemcpyAsync(q, b, n * sizeof(T), cudaMemcpyDeviceToDevice, st));
  GPULA_CHECK(op, cusparseDnVecSetValues(d.in, x));
  spmv(&minus_one, &one);
  GPULA_CHECK(op, cusparseDnVecSetValues(d.in, pv));
  GPULA_CHECK(op, cudaMemcpyAsync(r, q, n * sizeof(T), cudaMemcpyDeviceToDevice, st));
  PointerModeDevice mode(hb);
  GPULA_CHECK(op, nrm2(hb, n, b, bnorm_d));
  GPULA_CHECK(op, nrm2(hb, n, r, static_cast<T*>(s.rnorm)));
  T host[2];
  GPULA_CHECK(op, cudaMemcpyAsync(&host[0], bnorm_d, sizeof(T), cudaMemcpyDeviceToHost, st));
  GPULA_CHECK(op, cudaMemcpyAsync(&host[1], s.rnorm, sizeof(T), cudaMemcpyDeviceToHost, st));
  GPULA_CHECK(op, cudaStreamSynchronize(st));
  IterativeResult res;
  if (host[0] == T(0)) {
    GPULA_CHECK(op, cudaMemsetAsync(x, 0, n * sizeof(T), st));
    return res;
  }
  if (!std::isfinite(static_cast<double>(host[0]))) {
    return non_finite_b(static_cast<double>(host[1]));
  }
  const double tol = std::max(o.rtol * static_cast<double>(host[0]), o.atol);
  res.residual_norm = static_cast<double>(host[1]);
  if (res.residual_norm <= tol) return res;

  auto precondition = [&]() -> const T* {
    if (dinv.defined()) {
      jacobi_apply<T>(n, static_cast<const T*>(dinv.data()), r, z, status, st);
      return z;
    }
    if (ic0.active() && ic0.sweeps > 0) {  // L t = r, L^T z = t, each by Jacobi sweeps
      const int64_t S = ic0.sweeps;
      const auto* ptr = static_cast<const int32_t*>(a.indptr.data);
      const auto* col = static_cast<const int32_t*>(a.indices.data);
      const auto* lv = static_cast<const T*>(ic0.values.data());
      const auto* di = static_cast<const T*>(ic0.inv_diag.data());
      T* t = static_cast<T*>(ic0.tmp.data());
      T* spare = static_cast<T*>(ic0.tmp2.data());
      // Sweep s writes where the last one (s = S) lands in the wanted vector.
      auto dst = [&](T* want, int64_t s) { return (S - s) % 2 == 0 ? want : spare; };
      for (int64_t s = 0; s <= S; ++s)
        triangular_sweep<T>(n, ptr, col, lv, di, r, s == 0 ? nullptr : dst(t, s - 1), dst(t, s),
                            true, status, st);
      const auto* tp = static_cast<const int32_t*>(ic0.t_ptr.data());
      const auto* ti = static_cast<const int32_t*>(ic0.t_idx.data());
      const auto* tv = static_cast<const T*>(ic0.t_val.data());
      for (int64_t s = 0; s <= S; ++s)
        triangular_sweep<T>(n, tp, ti, tv, di, t, s == 0 ? nullptr : dst(z, s - 1), dst(z, s),
                            false, status, st);
      return z;
    }
    if (ic0.active()) {  // L t = r, L^T z = t
      const T unit = 1;
      GPULA_CHECK(op, cusparseSpSV_solve(hs, CUSPARSE_OPERATION_NON_TRANSPOSE, &unit, ic0.l, ic0.r,
                                         ic0.t, vt, CUSPARSE_SPSV_ALG_DEFAULT, ic0.lower));
      GPULA_CHECK(op, cusparseSpSV_solve(hs, CUSPARSE_OPERATION_TRANSPOSE, &unit, ic0.l, ic0.t,
                                         ic0.z, vt, CUSPARSE_SPSV_ALG_DEFAULT, ic0.upper));
      return z;
    }
    return r;
  };
  const T* zz = precondition();
  GPULA_CHECK(op, cudaMemcpyAsync(pv, zz, n * sizeof(T), cudaMemcpyDeviceToDevice, st));
  GPULA_CHECK(op, dot(hb, n, r, zz, static_cast<T*>(s.rho)));
  int64_t hs_status[2] = {0, 0};
  for (int64_t k = 1; k <= p.maxiter; ++k) {
    spmv(&one, &zero);  // q = A p
    GPULA_CHECK(op, dot(hb, n, pv, q, static_cast<T*>(s.pq)));
    cg_alpha<T>(s, status, st);
    cg_update_xr<T>(n, s, pv, q, x, r, status, st);
    GPULA_CHECK(op, nrm2(hb, n, r, static_cast<T*>(s.rnorm)));
    cg_check<T>(s, tol, k, status, st);
    zz = precondition();
    GPULA_CHECK(op, dot(hb, n, r, zz, static_cast<T*>(s.rho_new)));
    cg_update_p<T>(n, s, zz, pv, status, st);
    if (o.callback) {
      GPULA_CHECK(op, cudaStreamSynchronize(st));  // a host sync per iteration
      run_callback(op, o, xv, a.device().index, st, hb, hs);
    }
    if (k % kCheckEvery == 0 || k == p.maxiter || o.callback) {
      GPULA_CHECK(op,
                  cudaMemcpyAsync(hs_status, status, sizeof hs_status, cudaMemcpyDeviceToHost, st));
      GPULA_CHECK(op, cudaStreamSynchronize(st));
      if (hs_status[0] != 0) break;
    }
  }
  GPULA_CHECK(op, cudaMemcpyAsync(&host[1], s.rnorm, sizeof(T), cudaMemcpyDeviceToHost, st));
  GPULA_CHECK(op, cudaStreamSynchronize(st));
  res.residual_norm = static_cast<double>(host[1]);
  res.iterations = hs_status[1];
  res.info = hs_status[0] == 1 ? 0 : hs_status[0] == -1 ? -1 : not_converged_info(p.maxiter);
  if (hs_status[0] == 0) res.iterations = p.maxiter;
  return res;
}

}  // namespace

IterativeResult iterative_solve(const IterativeProblem& p, const TensorView& b, const TensorView& x,
                                const IterativeOptions& o, Stream stream) {
  if (p.method != KrylovMethod::cg) return krylov_solve(p, b, x, o, stream);
  const bool real = p.dtype == DType::f32 || p.dtype == DType::f64;
  const bool prec_ok = o.preconditioner == Preconditioner::none ||
                       o.preconditioner == Preconditioner::jacobi ||
                       o.preconditioner == Preconditioner::ic0;
  if (!real || p.csr == nullptr || !prec_ok) {
    throw_error<NotSupported>(p.op,
                              "on a GPU cg needs a real (float32/float64) sparse A and "
                              "M = None, 'jacobi' or 'ic0'");
  }
  if (o.preconditioner == Preconditioner::ic0 && p.csr->index_dtype() != DType::i32) {
    throw_error<NotSupported>(p.op,
                              "M='ic0' on a GPU needs int32 A.indices / A.indptr (cuSPARSE "
                              "csric02 is 32-bit only), got ",
                              gpula::name(p.csr->index_dtype()));
  }
  if (p.dtype == DType::f32) return cg_typed<float>(p, b, x, o, stream);
  return cg_typed<double>(p, b, x, o, stream);
}

}  // namespace gpula::sparse::detail::cuda
