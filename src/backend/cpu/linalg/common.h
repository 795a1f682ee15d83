#pragma once
// Helpers shared by the CPU LAPACK backends (linalg.cpp, linalg_eigh.cpp, linalg_qr.cpp): the
// real type of an element type, dispatch on DType, batch item addressing and the per-thread
// batching rule.
#include <complex>
#include <cstdint>

#include "backend/cpu/base/lapack.h"
#include "linalg/batch.h"

namespace gpula::detail::cpu {

constexpr int64_t kSmallN = 64;  // matrices up to this order run one per thread

template <class T>
struct real_of {
  using type = T;
};
template <class T>
struct real_of<std::complex<T>> {
  using type = T;
};
template <class T>
using real_t = typename real_of<T>::type;

// Calls f(T{}) with the element type of t (the front admits only these four).
template <class F>
void visit(DType t, F&& f) {
  switch (t) {
    case DType::f32:
      return f(float{});
    case DType::f64:
      return f(double{});
    case DType::c64:
      return f(std::complex<float>{});
    default:
      return f(std::complex<double>{});
  }
}

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

inline lapack::Int to_int(int64_t v, const LinalgCall& c, const char* what) {
  return blas::to_int(v, c.op, what);
}

}  // namespace gpula::detail::cpu
