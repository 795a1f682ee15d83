#pragma once
// float <-> fp8 (e4m3fn, e5m2) bit conversions and the quantization rule of quantize_fp8, written
// once for the CPU backend and the CUDA kernel (host and device code), so that both give the same
// bits. Integer arithmetic on the float's bits only: no rounding-mode or fast-math dependence.
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define GPULA_HD __host__ __device__ __forceinline__
#else
#define GPULA_HD inline
#endif

namespace gpula::detail::fp8 {

// One format: mantissa bits, exponent bias, the largest finite code (sign bit clear) and its value.
struct Format {
  int mant_bits;
  int bias;
  uint32_t max_code;
  float max_value;
  uint8_t nan_code;
};
GPULA_HD Format e4m3() { return {3, 7, 0x7E, 448.0f, 0x7F}; }
GPULA_HD Format e5m2() { return {2, 15, 0x7B, 57344.0f, 0x7E}; }

GPULA_HD uint32_t bits_of(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}
GPULA_HD float float_of(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}

GPULA_HD bool is_finite(float x) { return (bits_of(x) & 0x7f800000u) != 0x7f800000u; }

// x rounded to nearest even, saturated to +-max (Inf too), NaN to the format's NaN.
GPULA_HD uint8_t encode(float x, Format f) {
  const uint32_t u = bits_of(x);
  const uint32_t sign = (u >> 24) & 0x80u;
  const uint32_t mag = u & 0x7fffffffu;
  if (mag > 0x7f800000u) return static_cast<uint8_t>(sign | f.nan_code);
  const int emin = 1 - f.bias;  // smallest normal exponent
  const int exp = static_cast<int>(mag >> 23) - 127;
  uint32_t code;
  if (exp < emin) {
    // Subnormal in fp8 (or zero): a multiple of 2^(emin - mant_bits). Align the 24-bit significand
    // to that step and round to nearest even on the shifted-out bits.
    if (mag == 0) return static_cast<uint8_t>(sign);
    const uint32_t sig = (mag & 0x7fffffu) | (exp > -127 ? 0x800000u : 0u);
    const int e_unb = exp > -127 ? exp : -126;  // f32 subnormals: exponent -126, no hidden bit
    // value = sig * 2^(e_unb - 23); step = 2^(emin - mant_bits): code = sig * 2^(e_unb - 23 - emin + mant_bits)
    const int shift = 23 + emin - f.mant_bits - e_unb;  // > 0 here
    if (shift > 25) return static_cast<uint8_t>(sign);  // below half the smallest step
    const uint32_t q = sig >> shift;
    const uint32_t rem = sig & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1);
    code = q + ((rem > half || (rem == half && (q & 1u))) ? 1u : 0u);
  } else {
    // Normal: round the f32 mantissa to mant_bits (ties to even; a carry moves into the exponent),
    // then rebias the exponent.
    const int drop = 23 - f.mant_bits;
    const uint32_t r = mag + ((1u << (drop - 1)) - 1u) + ((mag >> drop) & 1u);
    const uint32_t rounded = r >> drop;  // f32 exponent and mant_bits of mantissa
    const uint32_t rebias = static_cast<uint32_t>(127 - f.bias) << f.mant_bits;
    code = rounded - rebias;
  }
  if (code > f.max_code) code = f.max_code;
  return static_cast<uint8_t>(sign | code);
}

GPULA_HD float decode(uint8_t c, Format f) {
  const uint32_t sign = static_cast<uint32_t>(c & 0x80u) << 24;
  const uint32_t mag = c & 0x7fu;
  const uint32_t exp_field = mag >> f.mant_bits;
  const uint32_t mant = mag & ((1u << f.mant_bits) - 1u);
  const uint32_t exp_max = (1u << (7 - f.mant_bits)) - 1u;
  if (mag > f.max_code) {
    if (f.mant_bits == 2 && exp_field == exp_max && mant == 0) return float_of(sign | 0x7f800000u);
    return float_of(0x7fc00000u);
  }
  if (exp_field == 0) {  // subnormal: mant * 2^(1 - bias - mant_bits), exact in f32
    const float step = float_of(static_cast<uint32_t>(127 + 1 - f.bias - f.mant_bits) << 23);
    return float_of(sign | bits_of(static_cast<float>(mant) * step));
  }
  const uint32_t e32 = exp_field - static_cast<uint32_t>(f.bias) + 127u;
  return float_of(sign | (e32 << 23) | (mant << (23 - f.mant_bits)));
}

// IEEE division rounded to nearest on both sides (whatever nvcc's -prec-div says).
GPULA_HD float div_rn(float x, float y) {
#if defined(__CUDA_ARCH__)
  return __fdiv_rn(x, y);
#else
  return x / y;
#endif
}

// The scale of a block whose largest finite |x| is amax: amax / max, or 1 for amax == 0 (and at
// least the smallest float32 subnormal, where amax / max would underflow to 0).
GPULA_HD float scale_for(float amax, Format f) {
  if (!(amax > 0.0f)) return 1.0f;
  const float s = div_rn(amax, f.max_value);
  return s > 0.0f ? s : float_of(1u);
}

// One element of a block with scale s.
GPULA_HD uint8_t quantize(float x, float s, Format f) { return encode(div_rn(x, s), f); }

}  // namespace gpula::detail::fp8
