// Small kernels of the device-resident BiCGSTAB, GMRES and MINRES loops: one thread for each
// scalar recurrence, grid-stride loops for the vector updates. Each mirrors a step of the CPU
// loop in backend/cpu/sparse/iterative.cpp (same formulas, same order, same breakdown tests).
#include <cmath>

#include "backend/cuda/kernels/krylov.h"

namespace gpula::detail::cuda {

namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxBlocks = 4096;

unsigned grid(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 1 ? 1 : b > kMaxBlocks ? kMaxBlocks : b);
}

__device__ int64_t first_index() {
  return blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
}
__device__ int64_t stride() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// The CPU's bad(): zero or not finite.
template <class T>
__device__ bool bad(T v) {
  const double a = fabs(static_cast<double>(v));
  return !(a > 0.0) || !isfinite(a);
}

// ---- BiCGSTAB ----
template <class T>
__global__ void bicgstab_rho_kernel(T* sc, int64_t k, int64_t* status) {
  if (status[kState] != 0) return;
  const T rho_new = sc[kBiRhoNew];
  if (bad(rho_new)) {
    status[kState] = -10;
    status[kIterations] = k - 1;
    return;
  }
  if (k > 1) sc[kBiBeta] = (rho_new / sc[kBiRho]) * (sc[kBiAlpha] / sc[kBiOmega]);
  sc[kBiRho] = rho_new;
}

template <class T>
__global__ void bicgstab_update_p_kernel(int64_t n, const T* sc, bool first, const T* r, const T* v,
                                         T* p, const int64_t* status) {
  if (status[kState] != 0) return;
  const T beta = sc[kBiBeta], omega = sc[kBiOmega];
  for (int64_t i = first_index(); i < n; i += stride()) {
    p[i] = first ? r[i] : r[i] + beta * (p[i] - omega * v[i]);
  }
}

template <class T>
__global__ void bicgstab_alpha_kernel(T* sc, int64_t k, int64_t* status) {
  if (status[kState] != 0) return;
  const T rv = sc[kBiRv];
  if (bad(rv)) {
    status[kState] = -10;
    status[kIterations] = k - 1;
    return;
  }
  sc[kBiAlpha] = sc[kBiRho] / rv;
}

template <class T>
__global__ void bicgstab_update_s_kernel(int64_t n, const T* sc, const T* r, const T* v, T* s,
                                         const int64_t* status) {
  if (status[kState] != 0) return;
  const T alpha = sc[kBiAlpha];
  for (int64_t i = first_index(); i < n; i += stride()) s[i] = r[i] - alpha * v[i];
}

template <class T>
__global__ void bicgstab_check_s_kernel(T* sc, double tol, int64_t k, int64_t* status) {
  if (status[kState] != 0) return;
  status[kIterations] = k;
  const T snorm = sc[kBiSnorm];
  if (static_cast<double>(snorm) <= tol) {
    sc[kBiResid] = snorm;
    status[kState] = 1;
    status[kStepDone] = k;
    status[kUpdated] = k;
  }
}

// Gated on the iteration that converged on s, not on the state (which that iteration set).
template <class T>
__global__ void bicgstab_finish_s_kernel(int64_t n, const T* sc, int64_t k, const T* ph, const T* s,
                                         T* x, T* r, const int64_t* status) {
  if (status[kStepDone] != k) return;
  const T alpha = sc[kBiAlpha];
  for (int64_t i = first_index(); i < n; i += stride()) {
    x[i] += alpha * ph[i];
    r[i] = s[i];
  }
}

template <class T>
__global__ void bicgstab_omega_kernel(T* sc, int64_t* status) {
  if (status[kState] != 0) return;
  const T tt = sc[kBiTt];
  if (!(static_cast<double>(tt) > 0.0)) {
    status[kState] = -11;
    sc[kBiResid] = sc[kBiSnorm];
    return;
  }
  sc[kBiOmega] = sc[kBiTs] / tt;
}

template <class T>
__global__ void bicgstab_update_xr_kernel(int64_t n, const T* sc, const T* ph, const T* sh,
                                          const T* s, const T* t, T* x, T* r,
                                          const int64_t* status) {
  if (status[kState] != 0) return;
  const T alpha = sc[kBiAlpha], omega = sc[kBiOmega];
  for (int64_t i = first_index(); i < n; i += stride()) {
    x[i] += alpha * ph[i] + omega * sh[i];
    r[i] = s[i] - omega * t[i];
  }
}

template <class T>
__global__ void bicgstab_check_kernel(T* sc, double tol, int64_t k, int64_t* status) {
  if (status[kState] != 0) return;
  const T rnorm = sc[kBiRnorm];
  sc[kBiResid] = rnorm;
  status[kUpdated] = k;
  if (static_cast<double>(rnorm) <= tol) {
    status[kState] = 1;
  } else if (bad(sc[kBiOmega])) {
    status[kState] = -11;
  }
}

// ---- MINRES ----
template <class T>
__global__ void minres_scale_v_kernel(int64_t n, const double* ds, const T* y, T* v,
                                      const int64_t* status) {
  if (status[kState] != 0) return;
  const T s = static_cast<T>(1.0 / ds[kMrBeta]);
  for (int64_t i = first_index(); i < n; i += stride()) v[i] = s * y[i];
}

template <class T>
__global__ void minres_lanczos1_kernel(int64_t n, const double* ds, bool first, const T* av,
                                       const T* r1, T* y, const int64_t* status) {
  if (status[kState] != 0) return;
  const T c = first ? T(0) : static_cast<T>(-ds[kMrBeta] / ds[kMrOldb]);
  for (int64_t i = first_index(); i < n; i += stride()) {
    y[i] = first ? av[i] : av[i] + c * r1[i];
  }
}

template <class T>
__global__ void minres_lanczos2_kernel(int64_t n, const T* ts, const double* ds, const T* r2, T* y,
                                       const int64_t* status) {
  if (status[kState] != 0) return;
  const T c = static_cast<T>(-static_cast<double>(ts[kMrAlfa]) / ds[kMrBeta]);
  for (int64_t i = first_index(); i < n; i += stride()) y[i] += c * r2[i];
}

template <class T>
__global__ void minres_givens_kernel(const T* ts, double* d, int64_t k, int64_t* status) {
  if (status[kState] != 0) return;
  const double b2 = static_cast<double>(ts[kMrB2]);
  if (b2 < 0.0 || !isfinite(b2)) {
    status[kState] = -1;
    status[kIterations] = k - 1;
    return;
  }
  const double alfa = static_cast<double>(ts[kMrAlfa]);
  const double cs = d[kMrCs], sn = d[kMrSn], dbar = d[kMrDbar];
  d[kMrOldb] = d[kMrBeta];
  const double beta = sqrt(b2);
  d[kMrBeta] = beta;
  d[kMrOldeps] = d[kMrEpsln];
  d[kMrDelta] = cs * dbar + sn * alfa;
  const double gbar = sn * dbar - cs * alfa;
  d[kMrEpsln] = sn * beta;
  d[kMrDbar] = -cs * beta;
  const double gamma = fmax(hypot(gbar, beta), 1e-300);
  d[kMrGamma] = gamma;
  d[kMrCs] = gbar / gamma;
  d[kMrSn] = beta / gamma;
  d[kMrPhi] = d[kMrCs] * d[kMrPhibar];
  d[kMrPhibar] = d[kMrSn] * d[kMrPhibar];
}

template <class T>
__global__ void minres_update_kernel(int64_t n, const double* ds, const T* v, const T* av,
                                     const T* w1, const T* w2, const T* aw1, const T* aw2, T* w,
                                     T* aw, T* x, T* r, const int64_t* status) {
  if (status[kState] != 0) return;
  const T ig = static_cast<T>(1.0 / ds[kMrGamma]);
  const T e = static_cast<T>(ds[kMrOldeps]), d = static_cast<T>(ds[kMrDelta]);
  const T phi = static_cast<T>(ds[kMrPhi]);
  for (int64_t i = first_index(); i < n; i += stride()) {
    const T wi = (v[i] - e * w1[i] - d * w2[i]) * ig;
    const T awi = (av[i] - e * aw1[i] - d * aw2[i]) * ig;
    w[i] = wi;
    aw[i] = awi;
    x[i] += phi * wi;
    r[i] += -phi * awi;
  }
}

template <class T>
__global__ void minres_check_kernel(T* ts, const double* ds, double tol, int64_t k,
                                    int64_t* status) {
  if (status[kState] != 0) return;
  status[kIterations] = k;
  status[kUpdated] = k;
  const T rnorm = ts[kMrRnorm];
  ts[kMrResid] = rnorm;
  if (static_cast<double>(rnorm) <= tol) {
    status[kState] = 1;
  } else if (ds[kMrBeta] == 0.0) {
    status[kState] = -1;
  }
}

// ---- GMRES ----
template <class T>
__global__ void gmres_start_cycle_kernel(int64_t m, const T* sc, T* g, int64_t* status) {
  if (status[kState] != 0) return;
  g[0] = sc[kGmResid];
  for (int64_t j = 1; j <= m; ++j) g[j] = T(0);
  status[kStepDone] = 0;
  status[kCycleEnd] = 0;
}

template <class T>
__global__ void gmres_scale_kernel(int64_t n, const T* den, const T* in, T* out,
                                   const int64_t* status) {
  if (status[kState] != 0 || status[kStepDone] != 0) return;
  const T d = *den;
  if (!(d > T(0))) return;
  for (int64_t i = first_index(); i < n; i += stride()) out[i] = in[i] / d;
}

template <class T>
__global__ void gmres_givens_kernel(int64_t k, int64_t m, double tol, T* h, const T* h2, T* cs,
                                    T* sn, T* g, const T* sc, int64_t* status) {
  if (status[kState] != 0 || status[kStepDone] != 0) return;
  T* col = h + k * (m + 1);
  for (int64_t j = 0; j <= k; ++j) col[j] += h2[j];
  const T hn = sc[kGmHn];
  col[k + 1] = hn;
  for (int64_t j = 0; j < k; ++j) {  // the earlier rotations
    const T a = col[j], b = col[j + 1];
    col[j] = cs[j] * a + sn[j] * b;
    col[j + 1] = -sn[j] * a + cs[j] * b;
  }
  const T a = col[k], b = col[k + 1];
  const double den = sqrt(static_cast<double>(a) * a + static_cast<double>(b) * b);
  if (!(den > 0.0) || !isfinite(den)) {
    status[kState] = -1;
    return;
  }
  const T dt = static_cast<T>(den);
  cs[k] = a / dt;
  sn[k] = b / dt;
  col[k] = dt;
  col[k + 1] = T(0);
  g[k + 1] = -sn[k] * g[k];
  g[k] = cs[k] * g[k];
  const double est = fabs(static_cast<double>(g[k + 1]));
  status[kIterations] += 1;
  if (static_cast<double>(hn) == 0.0 || k + 1 == m || !(est > tol)) {
    status[kStepDone] = 1;
    status[kCycleEnd] = k + 1;
  }
}

template <class T>
__global__ void gmres_solve_y_kernel(int64_t m, const T* h, const T* g, T* y,
                                     const int64_t* status) {
  if (status[kState] != 0) return;
  const int64_t ke = status[kCycleEnd];
  for (int64_t j = ke; j < m; ++j) y[j] = T(0);
  for (int64_t i = ke - 1; i >= 0; --i) {
    T s = g[i];
    for (int64_t j = i + 1; j < ke; ++j) s -= h[j * (m + 1) + i] * y[j];
    y[i] = s / h[i * (m + 1) + i];
  }
}

template <class T>
__global__ void add_kernel(int64_t n, const T* z, T* x, const int64_t* status) {
  if (status[kState] != 0) return;
  for (int64_t i = first_index(); i < n; i += stride()) x[i] += z[i];
}

template <class T>
__global__ void gmres_check_kernel(T* sc, double tol, int64_t cycle, int64_t* status) {
  if (status[kState] != 0) return;
  const T rnorm = sc[kGmRnorm];
  sc[kGmResid] = rnorm;
  status[kUpdated] = cycle;
  const double v = static_cast<double>(rnorm);
  if (v <= tol) {
    status[kState] = 1;
  } else if (!isfinite(v)) {
    status[kState] = -1;
  }
}

}  // namespace

template <class T>
void bicgstab_rho(T* sc, int64_t k, int64_t* status, cudaStream_t st) {
  bicgstab_rho_kernel<T><<<1, 1, 0, st>>>(sc, k, status);
}
template <class T>
void bicgstab_update_p(int64_t n, const T* sc, bool first, const T* r, const T* v, T* p,
                       const int64_t* status, cudaStream_t st) {
  bicgstab_update_p_kernel<T><<<grid(n), kThreads, 0, st>>>(n, sc, first, r, v, p, status);
}
template <class T>
void bicgstab_alpha(T* sc, int64_t k, int64_t* status, cudaStream_t st) {
  bicgstab_alpha_kernel<T><<<1, 1, 0, st>>>(sc, k, status);
}
template <class T>
void bicgstab_update_s(int64_t n, const T* sc, const T* r, const T* v, T* s, const int64_t* status,
                       cudaStream_t st) {
  bicgstab_update_s_kernel<T><<<grid(n), kThreads, 0, st>>>(n, sc, r, v, s, status);
}
template <class T>
void bicgstab_check_s(T* sc, double tol, int64_t k, int64_t* status, cudaStream_t st) {
  bicgstab_check_s_kernel<T><<<1, 1, 0, st>>>(sc, tol, k, status);
}
template <class T>
void bicgstab_finish_s(int64_t n, const T* sc, int64_t k, const T* ph, const T* s, T* x, T* r,
                       const int64_t* status, cudaStream_t st) {
  bicgstab_finish_s_kernel<T><<<grid(n), kThreads, 0, st>>>(n, sc, k, ph, s, x, r, status);
}
template <class T>
void bicgstab_omega(T* sc, int64_t* status, cudaStream_t st) {
  bicgstab_omega_kernel<T><<<1, 1, 0, st>>>(sc, status);
}
template <class T>
void bicgstab_update_xr(int64_t n, const T* sc, const T* ph, const T* sh, const T* s, const T* t,
                        T* x, T* r, const int64_t* status, cudaStream_t st) {
  bicgstab_update_xr_kernel<T><<<grid(n), kThreads, 0, st>>>(n, sc, ph, sh, s, t, x, r, status);
}
template <class T>
void bicgstab_check(T* sc, double tol, int64_t k, int64_t* status, cudaStream_t st) {
  bicgstab_check_kernel<T><<<1, 1, 0, st>>>(sc, tol, k, status);
}

template <class T>
void minres_scale_v(int64_t n, const double* ds, const T* y, T* v, const int64_t* status,
                    cudaStream_t st) {
  minres_scale_v_kernel<T><<<grid(n), kThreads, 0, st>>>(n, ds, y, v, status);
}
template <class T>
void minres_lanczos1(int64_t n, const double* ds, bool first, const T* av, const T* r1, T* y,
                     const int64_t* status, cudaStream_t st) {
  minres_lanczos1_kernel<T><<<grid(n), kThreads, 0, st>>>(n, ds, first, av, r1, y, status);
}
template <class T>
void minres_lanczos2(int64_t n, const T* ts, const double* ds, const T* r2, T* y,
                     const int64_t* status, cudaStream_t st) {
  minres_lanczos2_kernel<T><<<grid(n), kThreads, 0, st>>>(n, ts, ds, r2, y, status);
}
template <class T>
void minres_givens(const T* ts, double* ds, int64_t k, int64_t* status, cudaStream_t st) {
  minres_givens_kernel<T><<<1, 1, 0, st>>>(ts, ds, k, status);
}
template <class T>
void minres_update(int64_t n, const double* ds, const T* v, const T* av, const T* w1, const T* w2,
                   const T* aw1, const T* aw2, T* w, T* aw, T* x, T* r, const int64_t* status,
                   cudaStream_t st) {
  minres_update_kernel<T>
      <<<grid(n), kThreads, 0, st>>>(n, ds, v, av, w1, w2, aw1, aw2, w, aw, x, r, status);
}
template <class T>
void minres_check(T* ts, const double* ds, double tol, int64_t k, int64_t* status,
                  cudaStream_t st) {
  minres_check_kernel<T><<<1, 1, 0, st>>>(ts, ds, tol, k, status);
}

template <class T>
void gmres_start_cycle(int64_t m, const T* sc, T* g, int64_t* status, cudaStream_t st) {
  gmres_start_cycle_kernel<T><<<1, 1, 0, st>>>(m, sc, g, status);
}
template <class T>
void gmres_scale(int64_t n, const T* den, const T* in, T* out, const int64_t* status,
                 cudaStream_t st) {
  gmres_scale_kernel<T><<<grid(n), kThreads, 0, st>>>(n, den, in, out, status);
}
template <class T>
void gmres_givens(int64_t k, int64_t m, double tol, T* h, const T* h2, T* cs, T* sn, T* g,
                  const T* sc, int64_t* status, cudaStream_t st) {
  gmres_givens_kernel<T><<<1, 1, 0, st>>>(k, m, tol, h, h2, cs, sn, g, sc, status);
}
template <class T>
void gmres_solve_y(int64_t m, const T* h, const T* g, T* y, const int64_t* status,
                   cudaStream_t st) {
  gmres_solve_y_kernel<T><<<1, 1, 0, st>>>(m, h, g, y, status);
}
template <class T>
void krylov_add(int64_t n, const T* z, T* x, const int64_t* status, cudaStream_t st) {
  add_kernel<T><<<grid(n), kThreads, 0, st>>>(n, z, x, status);
}
template <class T>
void gmres_check(T* sc, double tol, int64_t cycle, int64_t* status, cudaStream_t st) {
  gmres_check_kernel<T><<<1, 1, 0, st>>>(sc, tol, cycle, status);
}

#define GPULA_KRYLOV_INST(T)                                                                       \
  template void bicgstab_rho<T>(T*, int64_t, int64_t*, cudaStream_t);                              \
  template void bicgstab_update_p<T>(int64_t, const T*, bool, const T*, const T*, T*,              \
                                     const int64_t*, cudaStream_t);                                \
  template void bicgstab_alpha<T>(T*, int64_t, int64_t*, cudaStream_t);                            \
  template void bicgstab_update_s<T>(int64_t, const T*, const T*, const T*, T*, const int64_t*,    \
                                     cudaStream_t);                                                \
  template void bicgstab_check_s<T>(T*, double, int64_t, int64_t*, cudaStream_t);                  \
  template void bicgstab_finish_s<T>(int64_t, const T*, int64_t, const T*, const T*, T*, T*,       \
                                     const int64_t*, cudaStream_t);                                \
  template void bicgstab_omega<T>(T*, int64_t*, cudaStream_t);                                     \
  template void bicgstab_update_xr<T>(int64_t, const T*, const T*, const T*, const T*, const T*,   \
                                      T*, T*, const int64_t*, cudaStream_t);                       \
  template void bicgstab_check<T>(T*, double, int64_t, int64_t*, cudaStream_t);                    \
  template void minres_scale_v<T>(int64_t, const double*, const T*, T*, const int64_t*,            \
                                  cudaStream_t);                                                   \
  template void minres_lanczos1<T>(int64_t, const double*, bool, const T*, const T*, T*,           \
                                   const int64_t*, cudaStream_t);                                  \
  template void minres_lanczos2<T>(int64_t, const T*, const double*, const T*, T*, const int64_t*, \
                                   cudaStream_t);                                                  \
  template void minres_givens<T>(const T*, double*, int64_t, int64_t*, cudaStream_t);              \
  template void minres_update<T>(int64_t, const double*, const T*, const T*, const T*, const T*,   \
                                 const T*, const T*, T*, T*, T*, T*, const int64_t*,               \
                                 cudaStream_t);                                                    \
  template void minres_check<T>(T*, const double*, double, int64_t, int64_t*, cudaStream_t);       \
  template void gmres_start_cycle<T>(int64_t, const T*, T*, int64_t*, cudaStream_t);               \
  template void gmres_scale<T>(int64_t, const T*, const T*, T*, const int64_t*, cudaStream_t);     \
  template void gmres_givens<T>(int64_t, int64_t, double, T*, const T*, T*, T*, T*, const T*,      \
                                int64_t*, cudaStream_t);                                           \
  template void gmres_solve_y<T>(int64_t, const T*, const T*, T*, const int64_t*, cudaStream_t);   \
  template void krylov_add<T>(int64_t, const T*, T*, const int64_t*, cudaStream_t);                \
  template void gmres_check<T>(T*, double, int64_t, int64_t*, cudaStream_t);
GPULA_KRYLOV_INST(float)
GPULA_KRYLOV_INST(double)

}  // namespace gpula::detail::cuda
