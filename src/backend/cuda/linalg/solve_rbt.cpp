#include "backend/cuda/linalg/solve_rbt.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "backend/cuda/kernels/rbt.h"
#include "backend/cuda/linalg/common.h"
#include "backend/cuda/linalg/solver_calls.h"

namespace gpula::detail::cuda {
namespace {

constexpr int64_t kBlock = 256;         // block rows of the triangular solves
constexpr int kMaxSteps = 10;           // refinement steps before giving up
constexpr uint64_t kSeed = 0x5eed2026;  // fixed: results are reproducible

bool single(DType t) { return t == DType::f32 || t == DType::c64; }
int64_t real_size(DType t) { return single(t) ? 4 : 8; }

char* at(const Tensor& t, int64_t elems, DType d) {
  return static_cast<char*>(t.data()) + elems * static_cast<int64_t>(size_of(d));
}

}  // namespace

RbtSolver::RbtSolver(DType t, int64_t n, int64_t k, const LinalgCall& c)
    : t_(t), n_(n), k_(k), big_n_((n + 3) / 4 * 4), c_(c) {
  nb_ = std::min(kBlock, big_n_);
  blocks_ = (big_n_ + nb_ - 1) / nb_;
  const int64_t es = static_cast<int64_t>(size_of(t)), rs = real_size(t);
  w_ = scratch(big_n_ * big_n_ * es, c);
  inv_l_ = scratch(blocks_ * nb_ * nb_ * es, c);
  inv_u_ = scratch(blocks_ * nb_ * nb_ * es, c);
  t1_ = scratch(big_n_ * k * es, c);
  t2_ = scratch(big_n_ * k * es, c);
  r_ = scratch(n * k * es, c);
  scalars_ = scratch(64, c);  // a's 1-norm (a real), then a RefineCheck at offset 16
  info_ = scratch(4, c);

  // U's and V's weights, exp(u / 10) with u uniform in [-1/2, 1/2] (as Baboulin et al.).
  std::mt19937_64 gen(kSeed);
  std::uniform_real_distribution<double> u(-0.5, 0.5);
  const std::size_t count = 4 * static_cast<std::size_t>(big_n_);  // 2N for U, 2N for V
  std::vector<double> w(count);
  for (double& v : w) v = std::exp(u(gen) / 10.0);
  weights_ = scratch(static_cast<int64_t>(count) * rs, c);
  std::vector<float> wf;
  const void* src = w.data();
  if (rs == 4) {
    wf.assign(w.begin(), w.end());
    src = wf.data();
  }
  // Pageable host memory: the copy is staged before cudaMemcpyAsync returns.
  GPULA_CHECK(c.op,
              cudaMemcpyAsync(weights_.data(), src, count * rs, cudaMemcpyHostToDevice, raw(c)));

  Context& ctx = context(c.stream.device.index);
  const cudaDataType_t dt = data_type(t);
  GPULA_CHECK(
      c.op, cusolverDnXgetrf_bufferSize(ctx.cusolver(raw(c)), ctx.cusolver_params(), big_n_, big_n_,
                                        dt, w_.data(), big_n_, dt, &getrf_dev_, &getrf_host_));
  getrf_ws_ = scratch(static_cast<int64_t>(getrf_dev_), c);
}

void RbtSolver::apply(const void* r, void* x, bool accumulate) const {
  const ElemType et = elem_type(t_);
  const int64_t N = big_n_;
  const char* wu = static_cast<const char*>(weights_.data());
  const char* wv = wu + 2 * N * real_size(t_);
  cublasHandle_t h = context(c_.stream.device.index).cublas(raw(c_));
  auto lu = [&](int64_t i, int64_t j) { return at(w_, i + j * N, t_); };
  auto y1 = [&](int64_t i) { return at(t1_, i, t_); };
  auto y2 = [&](int64_t i) { return at(t2_, i, t_); };

  GPULA_CHECK(c_.op, launch_rbt_left(r, et, n_, k_, t1_.data(), N, wu, raw(c_)));
  // L y = t1, right-looking by 256-row blocks: y_j = inv(L_jj) t1_j (gemm), then every row
  // below at once, t1_e: -= L_e:,j y_j (gemm of (N - e) x k x nb: many CTAs). MAGMA's trsm does
  // the same; cuBLAS trsm on the 256 x 16 diagonal blocks took 125-200 us each on the H200 (21 of
  // the 35 ms of an n = 8192 solve), the left-looking gemms (nb x k x r0) have a handful of CTAs.
  for (int64_t j = 0; j < blocks_; ++j) {
    const int64_t r0 = j * nb_, m = std::min(nb_, N - r0), e = r0 + m;
    calls::gemm(h, t_, m, k_, m, 1.0, at(inv_l_, j * nb_ * nb_, t_), nb_, y1(r0), N, 0.0, y2(r0), N,
                c_.op);
    if (e < N)
      calls::gemm(h, t_, N - e, k_, m, -1.0, lu(e, r0), N, y2(r0), N, 1.0, y1(e), N, c_.op);
  }
  // U z = y (in t2), from the last block row up; z lands in t1.
  for (int64_t j = blocks_ - 1; j >= 0; --j) {
    const int64_t r0 = j * nb_, m = std::min(nb_, N - r0);
    calls::gemm(h, t_, m, k_, m, 1.0, at(inv_u_, j * nb_ * nb_, t_), nb_, y2(r0), N, 0.0, y1(r0), N,
                c_.op);
    if (r0 > 0) calls::gemm(h, t_, r0, k_, m, -1.0, lu(0, r0), N, y1(r0), N, 1.0, y2(0), N, c_.op);
  }
  GPULA_CHECK(c_.op, launch_rbt_right(t1_.data(), et, N, k_, x, n_, wv, accumulate, raw(c_)));
}

bool RbtSolver::solve(const void* a, const void* b, void* x, int64_t item) const {
  const ElemType et = elem_type(t_);
  const int64_t N = big_n_, es = static_cast<int64_t>(size_of(t_));
  const cudaStream_t s = raw(c_);
  Context& ctx = context(c_.stream.device.index);
  const char* wu = static_cast<const char*>(weights_.data());
  const char* wv = wu + 2 * N * real_size(t_);
  void* anorm = scalars_.data();
  auto* check = reinterpret_cast<RefineCheck*>(static_cast<char*>(scalars_.data()) + 16);
  const double eps =
      single(t_) ? std::numeric_limits<float>::epsilon() : std::numeric_limits<double>::epsilon();
  const double tol = std::sqrt(static_cast<double>(n_)) * eps;
  const std::string where = item >= 0 ? cat(" (batch item ", item, ")") : std::string();
  auto fall_back = [&](const std::string& why) {
    log(LogLevel::info,
        cat("[", c_.op, "] RBT solve, order ", n_, ": ", why,
            "; falling back to LU with partial pivoting", where),
        c_.logger ? *c_.logger : LogSink{});
    return false;
  };

  GPULA_CHECK(c_.op, cudaMemsetAsync(scalars_.data(), 0, 64, s));
  GPULA_CHECK(c_.op, launch_norm1(a, et, n_, n_, anorm, s));
  GPULA_CHECK(c_.op, launch_rbt_matrix(a, et, n_, w_.data(), N, wu, wv, anorm, s));
  // LU without pivoting (a null pivot array). A zero pivot leaves Inf/NaN in the factors: the
  // pivot check below and the stopping test reject them, info needs no look.
  const cudaDataType_t dt = data_type(t_);
  GPULA_CHECK(c_.op, cusolverDnXgetrf(ctx.cusolver(s), ctx.cusolver_params(), N, N, dt, w_.data(),
                                      N, nullptr, dt, getrf_ws_.data(), getrf_dev_,
                                      host_workspace(getrf_host_), getrf_host_,
                                      static_cast<int*>(info_.data())));
  // Inverses of the diagonal blocks: trsm of each against the identity, the full blocks in one
  // batched call, the last (shorter) one alone.
  cublasHandle_t h = ctx.cublas(s);
  GPULA_CHECK(c_.op, launch_set_identity(inv_l_.data(), et, nb_, blocks_, s));
  GPULA_CHECK(c_.op, launch_set_identity(inv_u_.data(), et, nb_, blocks_, s));
  const int64_t full = N / nb_, rest = N - full * nb_;
  const int nbi = static_cast<int>(nb_), ni = checked_int(N, c_, "n", "cuBLAS trsmBatched");
  if (full > 0) {
    Tensor pd = scratch(full * 8, c_), pl = scratch(full * 8, c_), pu = scratch(full * 8, c_);
    auto** d = static_cast<void**>(pd.data());
    auto** l = static_cast<void**>(pl.data());
    auto** u = static_cast<void**>(pu.data());
    GPULA_CHECK(c_.op, launch_fill_pointers(d, w_.data(), nb_ * (N + 1) * es, full, s));
    GPULA_CHECK(c_.op, launch_fill_pointers(l, inv_l_.data(), nb_ * nb_ * es, full, s));
    GPULA_CHECK(c_.op, launch_fill_pointers(u, inv_u_.data(), nb_ * nb_ * es, full, s));
    calls::trsm_batched(h, t_, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, nbi, nbi, d,
                        ni, l, nbi, static_cast<int>(full), c_.op, CUBLAS_DIAG_UNIT);
    calls::trsm_batched(h, t_, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, nbi, nbi, d,
                        ni, u, nbi, static_cast<int>(full), c_.op);
  }
  if (rest > 0) {
    const char* d = at(w_, full * nb_ * (N + 1), t_);
    calls::trsm(h, t_, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, rest, rest, d, N,
                at(inv_l_, full * nb_ * nb_, t_), nb_, c_.op, CUBLAS_DIAG_UNIT);
    calls::trsm(h, t_, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_N, rest, rest, d, N,
                at(inv_u_, full * nb_ * nb_, t_), nb_, c_.op);
  }
  // A pivot at rounding level (|u_kk| <= sqrt(N) eps max |u|) means a is numerically singular:
  // pivoted LU decides then, as the plain solve would (an exact zero pivot raises there).
  GPULA_CHECK(c_.op, launch_pivot_check(w_.data(), et, N, std::sqrt(static_cast<double>(N)) * eps,
                                        check, s));
  apply(b, x, false);
  double previous = std::numeric_limits<double>::infinity();
  for (int step = 0; step <= kMaxSteps; ++step) {
    // r = b - a x in working precision, then the stopping test on the device.
    GPULA_CHECK(c_.op, cudaMemcpyAsync(r_.data(), b, n_ * k_ * es, cudaMemcpyDeviceToDevice, s));
    calls::gemm(h, t_, n_, k_, n_, -1.0, a, n_, x, n_, 1.0, r_.data(), n_, c_.op);
    GPULA_CHECK(c_.op, cudaMemsetAsync(&check->fails, 0, sizeof check->fails, s));
    GPULA_CHECK(c_.op, cudaMemsetAsync(&check->worst, 0, sizeof check->worst, s));
    GPULA_CHECK(c_.op, launch_refine_check(r_.data(), x, et, n_, k_, anorm, tol, check, s));
    RefineCheck host{};
    GPULA_CHECK(c_.op, cudaMemcpyAsync(&host, check, sizeof host, cudaMemcpyDeviceToHost, s));
    GPULA_CHECK(c_.op, cudaStreamSynchronize(s));
    if (host.small_pivots)
      return fall_back(
          "a pivot of the unpivoted LU is at rounding level (a is numerically "
          "singular)");
    if (host.fails == 0) {
      note(c_, cat("RBT solve, order ", n_, ", ", k_, " right-hand sides: ", step,
                   " refinement steps, backward error ", host.worst, where));
      return true;
    }
    // Stagnation, divergence or NaN: LU with pivoting will do better.
    if (!(host.worst < previous) || step == kMaxSteps)
      return fall_back(cat("refinement stopped after ", step, " steps at backward error ",
                           host.worst, " (target ", tol, ")"));
    previous = host.worst;
    apply(r_.data(), x, true);
  }
  return false;
}

}  // namespace gpula::detail::cuda
