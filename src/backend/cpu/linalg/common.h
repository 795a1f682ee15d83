#pragma once
// Helpers shared by the CPU LAPACK backends (solve.cpp, qr.cpp, eigh.cpp, eig.cpp, svd.cpp):
// batch item addressing, the per-thread batching rule, LAPACK workspace sizes and info < 0, finite
// checks. DType dispatch: core/dtype_dispatch.h.
#include <gpula/error.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>

#include "backend/cpu/base/lapack.h"
#include "core/dtype_dispatch.h"
#include "core/format.h"
#include "linalg/batch.h"

namespace gpula::detail::cpu {

constexpr int64_t kSmallN = 64;  // matrices up to this order run one per thread

template <class T>
T* item(const SquareBatch& a, int64_t b) {
  return static_cast<T*>(a.data) + b * a.n * a.n;
}
template <class T>
T* item(const DenseBatch& x, int64_t b) {
  return static_cast<T*>(x.data) + b * x.rows * x.cols;
}

// Whether a batch of `count` matrices of order n runs one matrix per OpenMP thread.
inline bool parallel(int64_t count, int64_t n) { return count > 1 && n <= kSmallN; }

// A single matrix up to this order is factored on one BLAS thread (about a millisecond of work).
// Waking gpula's 16 OpenBLAS threads while NumPy's spin (~0.1 s after each NumPy call) costs
// 8-20 ms on a 16-core host (bench/probes/probe_cpu_wake.py, H100 host, 2026-12-07: a 128x256x512
// f32 product took 0.11 ms on 16 threads alone and 19.9 ms right after a NumPy a @ b; on one
// thread 0.27 and 0.48 ms).
constexpr int64_t kSerialN = 256;

// Whether gpula's OpenBLAS runs on one thread (blas::SerialScope) for this batch: one matrix
// per OpenMP thread, or one small matrix.
inline bool serial_blas(int64_t count, int64_t n) {
  return parallel(count, n) || (count == 1 && n <= kSerialN);
}

inline lapack::Int to_int(int64_t v, const LinalgCall& c, const char* what) {
  return blas::to_int(v, c.op, what);
}

// The lwork a LAPACK workspace query (lwork = -1) wrote into its first work element.
template <class T>
lapack::Int work_size(const T& query) {
  return std::max<lapack::Int>(1, static_cast<lapack::Int>(std::real(query)));
}

// LAPACK's info < 0 is an argument this backend passed wrong: an internal error.
inline void check_lapack(const LinalgCall& c, const char* routine, int64_t info) {
  if (info < 0)
    throw_error<Error>(c.op, "LAPACK ", routine, " rejected argument ", -info, " (internal error)");
}
inline void check_lapack(const LinalgCall& c, const char* routine, const int32_t* info,
                         int64_t count) {
  for (int64_t b = 0; b < count; ++b) check_lapack(c, routine, info[b]);
}

// Whether x (real or complex) is finite; whether the `count` elements at p all are.
template <class T>
bool finite(const T& x) {
  return std::isfinite(std::real(x)) && std::isfinite(std::imag(x));
}
template <class T>
bool all_finite(const T* p, int64_t count) {
  for (int64_t i = 0; i < count; ++i)
    if (!finite(p[i])) return false;
  return true;
}

}  // namespace gpula::detail::cpu
