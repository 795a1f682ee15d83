#pragma once
// Compile-time facts about the element types the CPU kernels work in.
#include <complex>
#include <type_traits>

namespace gpula::detail::cpu {

template <class T>
struct is_complex_t : std::false_type {};
template <class T>
struct is_complex_t<std::complex<T>> : std::true_type {};
template <class T>
constexpr bool is_complex_v = is_complex_t<T>::value;

}  // namespace gpula::detail::cpu
