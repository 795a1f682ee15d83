#pragma once
// DType -> C++ element type, written once: the visitor every CPU kernel dispatches through, and
// the compile-time facts about those types (complex or not, the real type underneath).
#include <gpula/dtype.h>

#include <complex>
#include <cstdint>
#include <type_traits>

namespace gpula::detail {

template <class T>
struct is_complex_t : std::false_type {};
template <class T>
struct is_complex_t<std::complex<T>> : std::true_type {};
template <class T>
constexpr bool is_complex_v = is_complex_t<T>::value;

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

// The DType of a C++ element type (visit_float's inverse, and the index types).
template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, int32_t>) return DType::i32;
  else if constexpr (std::is_same_v<T, int64_t>) return DType::i64;
  else if constexpr (std::is_same_v<T, float>) return DType::f32;
  else if constexpr (std::is_same_v<T, double>) return DType::f64;
  else if constexpr (std::is_same_v<T, std::complex<float>>) return DType::c64;
  else {
    static_assert(std::is_same_v<T, std::complex<double>>, "not a gpula element type");
    return DType::c128;
  }
}

// Calls f(T{}) with T float, double, std::complex<float> or std::complex<double> for f32, f64,
// c64 and c128; the fronts admit only these four here (any other dtype is taken as c128).
template <class F>
decltype(auto) visit_float(DType t, F&& f) {
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

// f(V{}, I{}) over a value dtype (as visit_float) and an index dtype (i32, else i64).
template <class F>
void visit_float_index(DType v, DType idx, F&& f) {
  visit_float(v, [&](auto zero) {
    if (idx == DType::i32) {
      f(zero, int32_t{});
    } else {
      f(zero, int64_t{});
    }
  });
}

// conj(v) when `c` and V is complex; v otherwise.
template <class V>
V conj_if(V v, bool c) {
  if constexpr (is_complex_v<V>) {
    return c ? std::conj(v) : v;
  } else {
    (void)c;
    return v;
  }
}

}  // namespace gpula::detail
