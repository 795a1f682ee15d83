#pragma once
// Type dispatch shared by the CPU sparse kernels: value dtype -> C++ type, conjugation.
#include <gpula/dtype.h>

#include <complex>
#include <type_traits>

namespace gpula::sparse::detail {

// f(V{}) with V float, double, std::complex<float> or std::complex<double> for `v`.
template <class F>
void dispatch_value_type(DType v, F&& f) {
  switch (v) {
    case DType::f32:
      f(float{});
      break;
    case DType::f64:
      f(double{});
      break;
    case DType::c64:
      f(std::complex<float>{});
      break;
    default:
      f(std::complex<double>{});
      break;
  }
}

// f(V{}, I{}) over the value dtype and the index dtype (int32 / int64).
template <class F>
void dispatch_value_index(DType v, DType idx, F&& f) {
  dispatch_value_type(v, [&](auto zero) {
    if (idx == DType::i32) {
      f(zero, int32_t{});
    } else {
      f(zero, int64_t{});
    }
  });
}

template <class V>
V conj_if(V v, bool c) {
  if constexpr (std::is_floating_point_v<V>) {
    (void)c;
    return v;
  } else {
    return c ? std::conj(v) : v;
  }
}

}  // namespace gpula::sparse::detail
