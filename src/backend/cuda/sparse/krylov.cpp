// CUDA BiCGSTAB, restarted GMRES and MINRES (real f32 / f64 CSR A, int32 or int64 indices;
// M = None or 'jacobi') with the loops on the device, as CG in sparse_iterative.cpp: one cuSPARSE
// SpMV descriptor set (buffer and preprocessing made once per solve), cuBLAS dot / nrm2 / gemv
// reading and writing device scalars, the recurrences in small kernels (kernels/krylov.cu) and a
// device status word the host reads every kCheckEvery iterations. Semantics are those of the CPU
// loops (backend/cpu/sparse/iterative.cpp): the same recurrences, stopping tests, info codes and
// iteration counts. GMRES orthogonalizes by classical Gram-Schmidt done twice (two gemv pairs on
// the basis block) where the CPU runs modified Gram-Schmidt; rotations, the triangular solve and
// the update x += M^-1 V y (one gemv) stay on the device; the host reads the status once per
// cycle and every kCheckEvery Arnoldi steps.
#include <cublas_v2.h>
#include <cusparse.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "backend/cuda/base/check.h"
#include "backend/cuda/base/context.h"
#include "backend/cuda/base/types.h"
#include "backend/cuda/kernels/krylov.h"
#include "backend/cuda/sparse/iterative_common.h"
#include "core/dtype_dispatch.h"
#include "core/format.h"
#include "sparse/iterative_backend.h"

namespace gpula::sparse::detail::cuda {

namespace {

using namespace gpula::detail::cuda;
using gpula::detail::throw_error;

cublasStatus_t gemv(cublasHandle_t h, cublasOperation_t t, int64_t rows, int64_t cols,
                    const float* alpha, const float* a, const float* x, const float* beta,
                    float* y) {
  return cublasSgemv_64(h, t, rows, cols, alpha, a, rows, x, 1, beta, y, 1);
}
cublasStatus_t gemv(cublasHandle_t h, cublasOperation_t t, int64_t rows, int64_t cols,
                    const double* alpha, const double* a, const double* x, const double* beta,
                    double* y) {
  return cublasDgemv_64(h, t, rows, cols, alpha, a, rows, x, 1, beta, y, 1);
}

// What the three loops share: handles on the caller's stream, the status word, M = jacobi's
// inverse diagonal, the SpMV, the callback.
template <class T>
class Env {
 public:
  Env(const IterativeProblem& p, const TensorView& xv, const IterativeOptions& o, Stream stream)
      : op(p.op),
        n(p.n),
        dt(p.dtype),
        maxiter(p.maxiter),
        stream_(stream),
        st(static_cast<cudaStream_t>(stream.handle)),
        xv_(xv),
        o_(o),
        a_(*p.csr) {
    Context& ctx = context(a_.device().index);
    hb = ctx.cublas(st);
    hs = ctx.cusparse(st);
    status_t_ = Tensor::empty({kStatusWords}, DType::i64, stream);
    status = static_cast<int64_t*>(status_t_.data());
    if (o.preconditioner == Preconditioner::jacobi) {
      dinv_ = jacobi_inverse_diagonal<T>(op, a_, status, st, stream);
    }
    GPULA_CHECK(op, cudaMemsetAsync(status, 0, kStatusWords * sizeof(int64_t), st));
    const cusparseIndexType_t it =
        a_.index_dtype() == DType::i32 ? CUSPARSE_INDEX_32I : CUSPARSE_INDEX_64I;
    GPULA_CHECK(
        op, cusparseCreateCsr(&d_.a, a_.rows, a_.cols, a_.nnz(), a_.indptr.data, a_.indices.data,
                              a_.values.data, it, it, CUSPARSE_INDEX_BASE_ZERO, vt()));
    mode_.emplace(hb, op);
  }

  static cudaDataType vt() {
    return gpula::detail::cuda::data_type(gpula::detail::dtype_of<T>());
  }

  // `count` zeroed work vectors of length n in one allocation (nothing reads garbage, not even
  // a product whose beta is 0).
  Tensor vectors(int64_t count) const {
    Tensor t = Tensor::empty({count * n}, dt, stream_);
    GPULA_CHECK(op, cudaMemsetAsync(t.data(), 0, count * n * sizeof(T), st));
    return t;
  }
  Tensor scalars(int64_t count, DType type) const {
    Tensor t = Tensor::empty({count}, type, stream_);
    GPULA_CHECK(op, cudaMemsetAsync(t.data(), 0, count * size_of(type), st));
    return t;
  }

  // out = alpha A in + beta out (alpha, beta on the host). The first call makes the buffer and
  // the preprocessing, kept for the solve.
  void spmv(const T* in, T* out, T alpha, T beta) {
    if (d_.in == nullptr) {
      GPULA_CHECK(op, cusparseCreateDnVec(&d_.in, n, const_cast<T*>(in), vt()));
      GPULA_CHECK(op, cusparseCreateDnVec(&d_.out, n, out, vt()));
      size_t bytes = 0;
      GPULA_CHECK(op,
                  cusparseSpMV_bufferSize(hs, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, d_.a, d_.in,
                                          &beta, d_.out, vt(), CUSPARSE_SPMV_ALG_DEFAULT, &bytes));
      buffer_ = Tensor::empty({static_cast<int64_t>(bytes / 4 + 1)}, DType::i32, stream_);
      GPULA_CHECK(op, cusparseSpMV_preprocess(hs, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, d_.a,
                                              d_.in, &beta, d_.out, vt(), CUSPARSE_SPMV_ALG_DEFAULT,
                                              buffer_.data()));
    } else {
      GPULA_CHECK(op, cusparseDnVecSetValues(d_.in, const_cast<T*>(in)));
      GPULA_CHECK(op, cusparseDnVecSetValues(d_.out, out));
    }
    GPULA_CHECK(op, cusparseSpMV(hs, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, d_.a, d_.in, &beta,
                                 d_.out, vt(), CUSPARSE_SPMV_ALG_DEFAULT, buffer_.data()));
  }
  bool jacobi() const { return dinv_.defined(); }
  // M^-1 in: into `out` for jacobi, `in` itself for M = None.
  const T* precondition(const T* in, T* out) {
    if (!jacobi()) return in;
    jacobi_apply<T>(n, static_cast<const T*>(dinv_.data()), in, out, status, st);
    return out;
  }
  // out = M^-1 in, always written (a copy for M = None).
  void precondition_into(const T* in, T* out) {
    if (jacobi()) {
      jacobi_apply<T>(n, static_cast<const T*>(dinv_.data()), in, out, status, st);
    } else {
      GPULA_CHECK(op, cudaMemcpyAsync(out, in, n * sizeof(T), cudaMemcpyDeviceToDevice, st));
    }
  }

  // r = b - A x, *resid = ||r||. Returns false where the solve ends before its loop, with `res`
  // set: b = 0 (x = 0), a non-finite b (breakdown), or an x0 that already passes the test.
  bool prologue(const T* b, T* x, T* r, T* resid, IterativeResult& res) {
    GPULA_CHECK(op, cudaMemcpyAsync(r, b, n * sizeof(T), cudaMemcpyDeviceToDevice, st));
    spmv(x, r, T(-1), T(1));
    Tensor bn = scalars(1, dt);
    GPULA_CHECK(op, nrm2(hb, n, b, static_cast<T*>(bn.data())));
    GPULA_CHECK(op, nrm2(hb, n, r, resid));
    T host[2];
    GPULA_CHECK(op, cudaMemcpyAsync(&host[0], bn.data(), sizeof(T), cudaMemcpyDeviceToHost, st));
    GPULA_CHECK(op, cudaMemcpyAsync(&host[1], resid, sizeof(T), cudaMemcpyDeviceToHost, st));
    GPULA_CHECK(op, cudaStreamSynchronize(st));
    res = {};
    if (host[0] == T(0)) {
      GPULA_CHECK(op, cudaMemsetAsync(x, 0, n * sizeof(T), st));
      return false;
    }
    if (!std::isfinite(static_cast<double>(host[0]))) {
      res = non_finite_b(static_cast<double>(host[1]));
      return false;
    }
    tol = std::max(o_.rtol * static_cast<double>(host[0]), o_.atol);
    res.residual_norm = static_cast<double>(host[1]);
    return !(res.residual_norm <= tol);
  }

  void read_status() {
    GPULA_CHECK(
        op, cudaMemcpyAsync(host_status, status, sizeof host_status, cudaMemcpyDeviceToHost, st));
    GPULA_CHECK(op, cudaStreamSynchronize(st));
  }
  int64_t state() const { return host_status[kState]; }

  // After iteration (gmres: cycle) k: the callback where x changed in it (a host sync each), the
  // status every kCheckEvery iterations and at the last. True once the loop has stopped.
  bool poll(int64_t k, bool always) {
    GPULA_CHECK(op, cudaGetLastError());
    if (!(always || o_.callback || k % kCheckEvery == 0 || k == maxiter)) return false;
    read_status();
    if (o_.callback && host_status[kUpdated] == k) callback();
    return state() != 0;
  }

  // The result from the device status and reported residual norm.
  IterativeResult finish(const T* resid) {
    T host = 0;
    GPULA_CHECK(op, cudaMemcpyAsync(&host, resid, sizeof(T), cudaMemcpyDeviceToHost, st));
    read_status();
    IterativeResult res;
    res.residual_norm = static_cast<double>(host);
    res.iterations = host_status[kIterations];
    res.info = state() == 1 ? 0 : state() < 0 ? state() : not_converged_info(maxiter);
    return res;
  }

  const char* op;
  int64_t n;
  DType dt;
  int64_t maxiter;
  double tol = 0;
  Stream stream_;
  cudaStream_t st;
  cublasHandle_t hb = nullptr;
  cusparseHandle_t hs = nullptr;
  int64_t* status = nullptr;
  int64_t host_status[kStatusWords] = {};

 private:
  void callback() { run_callback(op, o_, xv_, a_.device().index, st, hb, hs); }

  TensorView xv_;
  const IterativeOptions& o_;
  const CsrView& a_;
  Tensor status_t_, dinv_, buffer_;
  CusparseObjects d_;
  std::optional<PointerModeDevice> mode_;
};

// BiCGSTAB, step for step the CPU's solve_bicgstab.
template <class T>
IterativeResult bicgstab_typed(Env<T>& e, const T* b, T* x) {
  const int64_t n = e.n;
  Tensor work = e.vectors(e.jacobi() ? 8 : 6);
  T* r = static_cast<T*>(work.data());
  T* rhat = r + n;
  T* p = rhat + n;
  T* v = p + n;
  T* s = v + n;
  T* t = s + n;
  T* ph_buf = e.jacobi() ? t + n : nullptr;
  T* sh_buf = e.jacobi() ? t + 2 * n : nullptr;
  Tensor sct = e.scalars(kBicgstabScalars, e.dt);
  T* sc = static_cast<T*>(sct.data());
  IterativeResult res;
  if (!e.prologue(b, x, r, sc + kBiResid, res)) return res;
  const T init[4] = {1, 1, 1, 0};  // rho, alpha, omega, beta
  static_assert(kBiRho == 0 && kBiAlpha == 1 && kBiOmega == 2 && kBiBeta == 3);
  GPULA_CHECK(e.op, cudaMemcpyAsync(sc, init, sizeof init, cudaMemcpyHostToDevice, e.st));
  GPULA_CHECK(e.op, cudaMemcpyAsync(rhat, r, n * sizeof(T), cudaMemcpyDeviceToDevice, e.st));
  int64_t* status = e.status;
  for (int64_t k = 1; k <= e.maxiter; ++k) {
    GPULA_CHECK(e.op, dot(e.hb, n, rhat, r, sc + kBiRhoNew));
    bicgstab_rho<T>(sc, k, status, e.st);
    bicgstab_update_p<T>(n, sc, k == 1, r, v, p, status, e.st);
    const T* ph = e.precondition(p, ph_buf);
    e.spmv(ph, v, T(1), T(0));
    GPULA_CHECK(e.op, dot(e.hb, n, rhat, v, sc + kBiRv));
    bicgstab_alpha<T>(sc, k, status, e.st);
    bicgstab_update_s<T>(n, sc, r, v, s, status, e.st);
    GPULA_CHECK(e.op, nrm2(e.hb, n, s, sc + kBiSnorm));
    bicgstab_check_s<T>(sc, e.tol, k, status, e.st);
    bicgstab_finish_s<T>(n, sc, k, ph, s, x, r, status, e.st);
    const T* sh = e.precondition(s, sh_buf);
    e.spmv(sh, t, T(1), T(0));
    GPULA_CHECK(e.op, dot(e.hb, n, t, t, sc + kBiTt));
    GPULA_CHECK(e.op, dot(e.hb, n, t, s, sc + kBiTs));
    bicgstab_omega<T>(sc, status, e.st);
    bicgstab_update_xr<T>(n, sc, ph, sh, s, t, x, r, status, e.st);
    GPULA_CHECK(e.op, nrm2(e.hb, n, r, sc + kBiRnorm));
    bicgstab_check<T>(sc, e.tol, k, status, e.st);
    if (e.poll(k, false)) break;
  }
  return e.finish(sc + kBiResid);
}

// MINRES, step for step the CPU's solve_minres; the vector swaps there are pointer rotations
// here (the host issues the same rotations whether or not the device has stopped: after a stop
// only x, r and the reported residual matter, and those no longer change).
template <class T>
IterativeResult minres_typed(Env<T>& e, const T* b, T* x) {
  const int64_t n = e.n;
  Tensor work = e.vectors(12);
  T* base = static_cast<T*>(work.data());
  T* r = base;
  T* r1 = base + n;
  T* r2 = base + 2 * n;
  T* y = base + 3 * n;
  T* v = base + 4 * n;
  T* av = base + 5 * n;
  T* w = base + 6 * n;
  T* w1 = base + 7 * n;
  T* w2 = base + 8 * n;
  T* aw = base + 9 * n;
  T* aw1 = base + 10 * n;
  T* aw2 = base + 11 * n;
  Tensor tst = e.scalars(kMinresScalars, e.dt);
  Tensor dst = e.scalars(kMinresStates, DType::f64);
  T* ts = static_cast<T*>(tst.data());
  double* ds = static_cast<double*>(dst.data());
  IterativeResult res;
  if (!e.prologue(b, x, r, ts + kMrResid, res)) return res;
  GPULA_CHECK(e.op, cudaMemcpyAsync(r1, r, n * sizeof(T), cudaMemcpyDeviceToDevice, e.st));
  GPULA_CHECK(e.op, cudaMemcpyAsync(r2, r, n * sizeof(T), cudaMemcpyDeviceToDevice, e.st));
  GPULA_CHECK(e.op, cudaMemsetAsync(w, 0, 6 * n * sizeof(T), e.st));  // w .. aw2
  e.precondition_into(r1, y);
  GPULA_CHECK(e.op, dot(e.hb, n, r1, y, ts + kMrB2));
  T b1 = 0;
  GPULA_CHECK(e.op, cudaMemcpyAsync(&b1, ts + kMrB2, sizeof(T), cudaMemcpyDeviceToHost, e.st));
  GPULA_CHECK(e.op, cudaStreamSynchronize(e.st));
  double beta1 = static_cast<double>(b1);
  if (!(beta1 > 0.0)) return {-1, 0, res.residual_norm};
  beta1 = std::sqrt(beta1);
  double init[kMinresStates] = {};
  init[kMrBeta] = beta1;
  init[kMrPhibar] = beta1;
  init[kMrCs] = -1.0;
  GPULA_CHECK(e.op, cudaMemcpyAsync(ds, init, sizeof init, cudaMemcpyHostToDevice, e.st));
  int64_t* status = e.status;
  for (int64_t k = 1; k <= e.maxiter; ++k) {
    minres_scale_v<T>(n, ds, y, v, status, e.st);
    e.spmv(v, av, T(1), T(0));
    minres_lanczos1<T>(n, ds, k == 1, av, r1, y, status, e.st);
    GPULA_CHECK(e.op, dot(e.hb, n, v, y, ts + kMrAlfa));
    minres_lanczos2<T>(n, ts, ds, r2, y, status, e.st);
    T* freed = r1;  // r1 <- r2, r2 <- y, y <- the old r1's storage
    r1 = r2;
    r2 = y;
    y = freed;
    e.precondition_into(r2, y);
    GPULA_CHECK(e.op, dot(e.hb, n, r2, y, ts + kMrB2));
    minres_givens<T>(ts, ds, k, status, e.st);
    std::swap(w1, w2);  // w1 <- w2, w2 <- w, w <- the old w1's storage
    std::swap(w2, w);
    std::swap(aw1, aw2);
    std::swap(aw2, aw);
    minres_update<T>(n, ds, v, av, w1, w2, aw1, aw2, w, aw, x, r, status, e.st);
    GPULA_CHECK(e.op, nrm2(e.hb, n, r, ts + kMrRnorm));
    minres_check<T>(ts, ds, e.tol, k, status, e.st);
    if (e.poll(k, false)) break;
  }
  return e.finish(ts + kMrResid);
}

// GMRES(m) with right preconditioning (x = x0 + M^-1 V y), maxiter restart cycles, the true
// residual b - A x at the end of every cycle, as the CPU's solve_gmres.
template <class T>
IterativeResult gmres_typed(Env<T>& e, const IterativeOptions& o, const T* b, T* x) {
  const int64_t n = e.n;
  const int64_t m = std::max<int64_t>(1, std::min(o.restart, n));
  // V: column-major n x (m + 1), zeroed so that columns a cycle did not reach are finite (the
  // update's gemv spans all m columns, with y = 0 past the cycle's dimension).
  Tensor basis = e.vectors(m + 1);
  T* vb = static_cast<T*>(basis.data());
  GPULA_CHECK(e.op, cudaMemsetAsync(vb, 0, (m + 1) * n * sizeof(T), e.st));
  Tensor work = e.vectors(e.jacobi() ? 4 : 3);
  T* r = static_cast<T*>(work.data());
  T* w = r + n;
  T* u = w + n;  // V y
  T* z_buf = e.jacobi() ? u + n : nullptr;
  // H (m + 1) x m column-major, then cs, sn (m), g (m + 1), y (m), h2 (m + 1), the scalars.
  const int64_t hsize = (m + 1) * m;
  Tensor small = e.scalars(hsize + 5 * m + 2 + kGmresScalars, e.dt);
  T* h = static_cast<T*>(small.data());
  T* cs = h + hsize;
  T* sn = cs + m;
  T* g = sn + m;
  T* y = g + m + 1;
  T* h2 = y + m;
  T* sc = h2 + m + 1;
  IterativeResult res;
  if (!e.prologue(b, x, r, sc + kGmResid, res)) return res;
  const T constants[3] = {1, 0, -1};
  static_assert(kGmZero == kGmOne + 1 && kGmMinusOne == kGmOne + 2);
  GPULA_CHECK(e.op, cudaMemcpyAsync(sc + kGmOne, constants, sizeof constants,
                                    cudaMemcpyHostToDevice, e.st));
  const T* one = sc + kGmOne;
  const T* zero = sc + kGmZero;
  const T* minus_one = sc + kGmMinusOne;
  int64_t* status = e.status;
  for (int64_t cycle = 1; cycle <= e.maxiter; ++cycle) {
    gmres_start_cycle<T>(m, sc, g, status, e.st);
    gmres_scale<T>(n, sc + kGmResid, r, vb, status, e.st);
    for (int64_t k = 0; k < m; ++k) {
      T* hk = h + k * (m + 1);
      e.spmv(e.precondition(vb + k * n, z_buf), w, T(1), T(0));
      // classical Gram-Schmidt, twice: h = V^T w, w -= V h; h2 = V^T w, w -= V h2
      GPULA_CHECK(e.op, gemv(e.hb, CUBLAS_OP_T, n, k + 1, one, vb, w, zero, hk));
      GPULA_CHECK(e.op, gemv(e.hb, CUBLAS_OP_N, n, k + 1, minus_one, vb, hk, one, w));
      GPULA_CHECK(e.op, gemv(e.hb, CUBLAS_OP_T, n, k + 1, one, vb, w, zero, h2));
      GPULA_CHECK(e.op, gemv(e.hb, CUBLAS_OP_N, n, k + 1, minus_one, vb, h2, one, w));
      GPULA_CHECK(e.op, nrm2(e.hb, n, w, sc + kGmHn));
      gmres_scale<T>(n, sc + kGmHn, w, vb + (k + 1) * n, status, e.st);
      gmres_givens<T>(k, m, e.tol, h, h2, cs, sn, g, sc, status, e.st);
      if ((k + 1) % kCheckEvery == 0 && k + 1 < m) {
        GPULA_CHECK(e.op, cudaGetLastError());
        e.read_status();
        if (e.state() != 0 || e.host_status[kStepDone] != 0) break;
      }
    }
    gmres_solve_y<T>(m, h, g, y, status, e.st);
    GPULA_CHECK(e.op, gemv(e.hb, CUBLAS_OP_N, n, m, one, vb, y, zero, u));
    krylov_add<T>(n, e.precondition(u, z_buf), x, status, e.st);
    GPULA_CHECK(e.op, cudaMemcpyAsync(r, b, n * sizeof(T), cudaMemcpyDeviceToDevice, e.st));
    e.spmv(x, r, T(-1), T(1));  // the true residual at each restart
    GPULA_CHECK(e.op, nrm2(e.hb, n, r, sc + kGmRnorm));
    gmres_check<T>(sc, e.tol, cycle, status, e.st);
    if (e.poll(cycle, true)) break;
  }
  return e.finish(sc + kGmResid);
}

template <class T>
IterativeResult solve_typed(const IterativeProblem& p, const TensorView& bv, const TensorView& xv,
                            const IterativeOptions& o, Stream stream) {
  Env<T> e(p, xv, o, stream);
  const T* b = static_cast<const T*>(bv.data);
  T* x = static_cast<T*>(xv.data);
  switch (p.method) {
    case KrylovMethod::bicgstab:
      return bicgstab_typed<T>(e, b, x);
    case KrylovMethod::minres:
      return minres_typed<T>(e, b, x);
    default:
      return gmres_typed<T>(e, o, b, x);
  }
}

const char* method_name(KrylovMethod m) {
  switch (m) {
    case KrylovMethod::cg:
      return "cg";
    case KrylovMethod::gmres:
      return "gmres";
    case KrylovMethod::bicgstab:
      return "bicgstab";
    default:
      return "minres";
  }
}

const char* preconditioner_name(Preconditioner m) {
  switch (m) {
    case Preconditioner::ic0:
      return "M='ic0'";
    case Preconditioner::ilu0:
      return "M='ilu0'";
    case Preconditioner::custom:
      return "an operator M";
    default:
      return "this M";
  }
}

}  // namespace

IterativeResult krylov_solve(const IterativeProblem& p, const TensorView& b, const TensorView& x,
                             const IterativeOptions& o, Stream stream) {
  const char* name = method_name(p.method);
  if (p.dtype != DType::f32 && p.dtype != DType::f64) {
    throw_error<NotSupported>(p.op, "on a GPU ", name, " needs a real (float32/float64) A, got ",
                              gpula::name(p.dtype));
  }
  if (p.csr == nullptr) {
    throw_error<NotSupported>(p.op, "on a GPU ", name, " needs a sparse CSR A");
  }
  if (o.preconditioner != Preconditioner::none && o.preconditioner != Preconditioner::jacobi) {
    throw_error<NotSupported>(p.op, "on a GPU ", name, " takes M = None or 'jacobi', got ",
                              preconditioner_name(o.preconditioner));
  }
  if (p.n == 0) return {};
  if (p.dtype == DType::f32) return solve_typed<float>(p, b, x, o, stream);
  return solve_typed<double>(p, b, x, o, stream);
}

}  // namespace gpula::sparse::detail::cuda
