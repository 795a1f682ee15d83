#pragma once
// Launchers of the small kernels of the device-resident BiCGSTAB, GMRES and MINRES loops
// (kernels/krylov.cu, driven by backend/cuda/sparse/krylov.cpp). Scalars live in device arrays
// at the indices below; the host never reads them inside the loop. Every kernel is a no-op once
// status[kState] is nonzero, except bicgstab_finish_s (gated on the number of the iteration that
// converged on s, which sets the state), so the host may test the status only now and then.
#include <cuda_runtime.h>

#include <cstdint>

namespace gpula::detail::cuda {

/// Words of the int64 status array (zeroed before the loop).
enum KrylovWord : int {
  kState = 0,       ///< 0 running, 1 converged, < 0 breakdown (the info code)
  kIterations = 1,  ///< iterations done (gmres: Arnoldi steps over all cycles)
  kUpdated = 2,     ///< the last iteration (gmres: cycle) that changed x, for the callback
  kStepDone = 3,    ///< bicgstab: the iteration that converged on s; gmres: the cycle's Arnoldi
                    ///< loop has ended (1) or runs (0)
  kCycleEnd = 4,    ///< gmres: the Krylov dimension of the cycle's least-squares problem
  kStatusWords = 5
};

/// BiCGSTAB scalars (T): the recurrence, cuBLAS results and the reported residual norm.
enum BicgstabScalar : int {
  kBiRho,
  kBiAlpha,
  kBiOmega,
  kBiBeta,
  kBiRhoNew,
  kBiRv,
  kBiSnorm,
  kBiTt,
  kBiTs,
  kBiRnorm,
  kBiResid,
  kBicgstabScalars
};
/// MINRES scalars of T (cuBLAS results, reported residual) ...
enum MinresScalar : int { kMrAlfa, kMrB2, kMrRnorm, kMrResid, kMinresScalars };
/// ... and of double (the Lanczos / Givens recurrence, kept in double as on the CPU): kMrOldb to
/// kMrSn carry over from iteration to iteration, kMrOldeps to kMrPhi are this iteration's update.
enum MinresState : int {
  kMrOldb,
  kMrBeta,
  kMrDbar,
  kMrEpsln,
  kMrPhibar,
  kMrCs,
  kMrSn,
  kMrOldeps,
  kMrDelta,
  kMrGamma,
  kMrPhi,
  kMinresStates
};
/// GMRES scalars (T); kGmOne / kGmZero / kGmMinusOne are gemv's alpha / beta (device pointers).
enum GmresScalar : int { kGmHn, kGmRnorm, kGmResid, kGmOne, kGmZero, kGmMinusOne, kGmresScalars };

// ---- BiCGSTAB, iteration k (1-based), in this order ----
/// rho_new bad: breakdown -10; else beta = (rho_new / rho) (alpha / omega), rho = rho_new.
template <class T>
void bicgstab_rho(T* sc, int64_t k, int64_t* status, cudaStream_t st);
/// p = r (first) or r + beta (p - omega v).
template <class T>
void bicgstab_update_p(int64_t n, const T* sc, bool first, const T* r, const T* v, T* p,
                       const int64_t* status, cudaStream_t st);
/// rv bad: breakdown -10; else alpha = rho / rv.
template <class T>
void bicgstab_alpha(T* sc, int64_t k, int64_t* status, cudaStream_t st);
/// s = r - alpha v.
template <class T>
void bicgstab_update_s(int64_t n, const T* sc, const T* r, const T* v, T* s, const int64_t* status,
                       cudaStream_t st);
/// iterations = k; ||s|| <= tol: converged at k (kStepDone = k).
template <class T>
void bicgstab_check_s(T* sc, double tol, int64_t k, int64_t* status, cudaStream_t st);
/// Only if kStepDone == k: x += alpha ph, r = s.
template <class T>
void bicgstab_finish_s(int64_t n, const T* sc, int64_t k, const T* ph, const T* s, T* x, T* r,
                       const int64_t* status, cudaStream_t st);
/// t.t <= 0: breakdown -11; else omega = t.s / t.t.
template <class T>
void bicgstab_omega(T* sc, int64_t* status, cudaStream_t st);
/// x += alpha ph + omega sh, r = s - omega t.
template <class T>
void bicgstab_update_xr(int64_t n, const T* sc, const T* ph, const T* sh, const T* s, const T* t,
                        T* x, T* r, const int64_t* status, cudaStream_t st);
/// ||r|| <= tol: converged; else omega bad: breakdown -11.
template <class T>
void bicgstab_check(T* sc, double tol, int64_t k, int64_t* status, cudaStream_t st);

// ---- MINRES, iteration k ----
/// v = y / beta.
template <class T>
void minres_scale_v(int64_t n, const double* ds, const T* y, T* v, const int64_t* status,
                    cudaStream_t st);
/// y = av - (beta / oldb) r1 (the second term from k = 2 on).
template <class T>
void minres_lanczos1(int64_t n, const double* ds, bool first, const T* av, const T* r1, T* y,
                     const int64_t* status, cudaStream_t st);
/// y -= (alfa / beta) r2.
template <class T>
void minres_lanczos2(int64_t n, const T* ts, const double* ds, const T* r2, T* y,
                     const int64_t* status, cudaStream_t st);
/// beta = sqrt(r2 . M^-1 r2) (negative or not finite: breakdown -1) and the Givens step.
template <class T>
void minres_givens(const T* ts, double* ds, int64_t k, int64_t* status, cudaStream_t st);
/// w, aw from v, av and the last two; x += phi w, r -= phi aw.
template <class T>
void minres_update(int64_t n, const double* ds, const T* v, const T* av, const T* w1, const T* w2,
                   const T* aw1, const T* aw2, T* w, T* aw, T* x, T* r, const int64_t* status,
                   cudaStream_t st);
/// ||r|| <= tol: converged; else beta == 0: breakdown -1.
template <class T>
void minres_check(T* ts, const double* ds, double tol, int64_t k, int64_t* status, cudaStream_t st);

// ---- GMRES(m), H column-major (m + 1) x m, V column-major n x (m + 1) ----
/// g = (beta, 0, ...), beta = the residual norm; opens the cycle's Arnoldi loop.
template <class T>
void gmres_start_cycle(int64_t m, const T* sc, T* g, int64_t* status, cudaStream_t st);
/// out = in / *den where *den > 0 (V[0] = r / beta, V[k+1] = w / h[k+1, k]); skipped once the
/// cycle's Arnoldi loop has ended.
template <class T>
void gmres_scale(int64_t n, const T* den, const T* in, T* out, const int64_t* status,
                 cudaStream_t st);
/// Arnoldi step k: H[:, k] += h2 (second Gram-Schmidt pass), H[k+1, k] = ||w||, the earlier
/// rotations, a new one (zero or non-finite: breakdown -1), g rotated; ends the cycle's loop
/// when ||w|| = 0, k + 1 = m or |g[k+1]| <= tol.
template <class T>
void gmres_givens(int64_t k, int64_t m, double tol, T* h, const T* h2, T* cs, T* sn, T* g,
                  const T* sc, int64_t* status, cudaStream_t st);
/// y[0:ke] = H[0:ke, 0:ke]^-1 g[0:ke] (upper triangular), y[ke:m] = 0, ke = status[kCycleEnd].
template <class T>
void gmres_solve_y(int64_t m, const T* h, const T* g, T* y, const int64_t* status, cudaStream_t st);
/// x += z.
template <class T>
void krylov_add(int64_t n, const T* z, T* x, const int64_t* status, cudaStream_t st);
/// End of cycle c: resid = ||r||; converged, or breakdown -1 if not finite.
template <class T>
void gmres_check(T* sc, double tol, int64_t cycle, int64_t* status, cudaStream_t st);

}  // namespace gpula::detail::cuda
