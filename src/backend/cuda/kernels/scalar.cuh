#pragma once
// The element types of gpula's linalg kernels (batched_small.cu, rbt.cu): float, double and the
// complex Cx<float>, Cx<double> (the layout of cuComplex / cuDoubleComplex), their arithmetic,
// and with_type, which calls a functor with a value of the type an ElemType names.
#include <cuda_runtime.h>

#include <cmath>
#include <type_traits>

#include "backend/cuda/kernels/linalg.h"

namespace gpula::detail::cuda {

template <class R>
struct alignas(2 * sizeof(R)) Cx {
  R re, im;
};

template <class T>
struct RealOf {
  using type = T;
};
template <class R>
struct RealOf<Cx<R>> {
  using type = R;
};
template <class T>
using real_t = typename RealOf<T>::type;

template <class R>
__device__ inline Cx<R> operator+(Cx<R> a, Cx<R> b) {
  return {a.re + b.re, a.im + b.im};
}
template <class R>
__device__ inline Cx<R> operator-(Cx<R> a, Cx<R> b) {
  return {a.re - b.re, a.im - b.im};
}
template <class R>
__device__ inline Cx<R> operator*(Cx<R> a, Cx<R> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
template <class R>
__device__ inline Cx<R> operator*(Cx<R> a, R s) {
  return {a.re * s, a.im * s};
}
template <class R>
__device__ inline Cx<R>& operator-=(Cx<R>& a, Cx<R> b) {
  a.re -= b.re;
  a.im -= b.im;
  return a;
}

__device__ inline float conj_of(float x) { return x; }
__device__ inline double conj_of(double x) { return x; }
template <class R>
__device__ inline Cx<R> conj_of(Cx<R> a) {
  return {a.re, -a.im};
}

__device__ inline float real_of(float x) { return x; }
__device__ inline double real_of(double x) { return x; }
template <class R>
__device__ inline R real_of(Cx<R> a) {
  return a.re;
}

// LAPACK's pivot measure (i?amax): |x|, or |re| + |im|.
__device__ inline float abs1(float x) { return fabsf(x); }
__device__ inline double abs1(double x) { return fabs(x); }
template <class R>
__device__ inline R abs1(Cx<R> a) {
  return fabs(a.re) + fabs(a.im);
}

// |x|, the modulus for complex x.
__device__ inline float magnitude(float x) { return fabsf(x); }
__device__ inline double magnitude(double x) { return fabs(x); }
template <class R>
__device__ inline R magnitude(Cx<R> a) {
  return hypot(a.re, a.im);
}

__device__ inline bool is_zero(float x) { return x == 0.0f; }
__device__ inline bool is_zero(double x) { return x == 0.0; }
template <class R>
__device__ inline bool is_zero(Cx<R> a) {
  return a.re == R(0) && a.im == R(0);
}

template <class T>
__device__ inline T from_real(real_t<T> x) {
  if constexpr (std::is_same_v<T, real_t<T>>)
    return x;
  else
    return T{x, real_t<T>(0)};
}

__device__ inline float divide(float a, float b) { return a / b; }
__device__ inline double divide(double a, double b) { return a / b; }
// Smith's complex division: no overflow of |b|^2 on the way.
template <class R>
__device__ inline Cx<R> divide(Cx<R> a, Cx<R> b) {
  if (fabs(b.re) >= fabs(b.im)) {
    const R r = b.im / b.re, den = b.re + b.im * r;
    return {(a.re + a.im * r) / den, (a.im - a.re * r) / den};
  }
  const R r = b.re / b.im, den = b.im + b.re * r;
  return {(a.re * r + a.im) / den, (a.im * r - a.re) / den};
}

// f(T{}) for the element type t names; f returns a cudaError_t.
template <class F>
cudaError_t with_type(ElemType t, F&& f) {
  switch (t) {
    case ElemType::f32:
      return f(float{});
    case ElemType::f64:
      return f(double{});
    case ElemType::c64:
      return f(Cx<float>{});
    case ElemType::c128:
      return f(Cx<double>{});
  }
  return cudaErrorInvalidValue;
}

}  // namespace gpula::detail::cuda
