#pragma once
// f16 and bf16 <-> f32 conversions. The CPU backend computes half-precision work in f32: inputs are
// widened once, results narrowed once. Storage is the raw 16-bit pattern (uint16_t).
#include <bit>
#include <cstdint>
#include <cstring>

namespace gpula::detail::cpu {

// _Float16 conversions are IEEE: round to nearest even, NaN kept (quieted), overflow to inf.
// clang < 15 has no _Float16 on x86-64 (the GPULA_FUZZ build uses Debian's clang 14): its
// __fp16 storage type converts the same way (it cannot be returned, hence the memcpy).
#if defined(__clang__) && __clang_major__ < 15 && defined(__x86_64__)
inline float f16_to_float(uint16_t bits) {
  __fp16 h;
  std::memcpy(&h, &bits, sizeof h);
  return static_cast<float>(h);
}
inline uint16_t float_to_f16(float x) {
  const __fp16 h = static_cast<__fp16>(x);
  uint16_t bits;
  std::memcpy(&bits, &h, sizeof bits);
  return bits;
}
#else
inline float f16_to_float(uint16_t bits) {
  return static_cast<float>(std::bit_cast<_Float16>(bits));
}
inline uint16_t float_to_f16(float x) { return std::bit_cast<uint16_t>(static_cast<_Float16>(x)); }
#endif

inline float bf16_to_float(uint16_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}
inline uint16_t float_to_bf16(float x) {
  uint32_t u = std::bit_cast<uint32_t>(x);
  // A NaN whose payload sits in the low half would round or truncate to inf: keep its sign and
  // high payload bits and force the quiet bit instead.
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x0040u);
  u += 0x7fffu + ((u >> 16) & 1u);  // round to nearest, ties to even; carries into the exponent
  return static_cast<uint16_t>(u >> 16);
}

inline void f16_to_float(const uint16_t* src, float* dst, int64_t count) {
  for (int64_t i = 0; i < count; ++i) dst[i] = f16_to_float(src[i]);
}
inline void float_to_f16(const float* src, uint16_t* dst, int64_t count) {
  for (int64_t i = 0; i < count; ++i) dst[i] = float_to_f16(src[i]);
}
inline void bf16_to_float(const uint16_t* src, float* dst, int64_t count) {
  for (int64_t i = 0; i < count; ++i) dst[i] = bf16_to_float(src[i]);
}
inline void float_to_bf16(const float* src, uint16_t* dst, int64_t count) {
  for (int64_t i = 0; i < count; ++i) dst[i] = float_to_bf16(src[i]);
}

}  // namespace gpula::detail::cpu
