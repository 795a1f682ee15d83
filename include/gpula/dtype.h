#pragma once
/// @file dtype.h
/// Element types understood by gpula, with their DLPack codes.
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace gpula {

/// Element type of a tensor. `u8` is used for bit-packed auxiliary outputs (ReLU masks).
enum class DType : uint8_t { f16, bf16, f32, f64, c64, c128, f8_e4m3, f8_e5m2, i32, i64, u8 };

/// Bytes per element.
std::size_t size_of(DType t);
/// Short name, as in NumPy where it has one: "float16", "bfloat16", "float8_e4m3fn", ...
std::string_view name(DType t);
/// Parses a name produced by name(); throws DTypeError for anything else.
DType dtype_from_name(std::string_view s);

inline bool is_complex(DType t) { return t == DType::c64 || t == DType::c128; }
inline bool is_float8(DType t) { return t == DType::f8_e4m3 || t == DType::f8_e5m2; }
inline bool is_half(DType t) { return t == DType::f16 || t == DType::bf16; }
inline bool is_floating(DType t) {
  return t != DType::i32 && t != DType::i64 && t != DType::u8;
}
/// The real type underneath a complex type (c64 -> f32); identity otherwise.
DType real_type(DType t);

/// DLPack type triple (code, bits, lanes) <-> DType. Unknown triples throw DTypeError.
DType dtype_from_dlpack(uint8_t code, uint8_t bits, uint16_t lanes);
void dtype_to_dlpack(DType t, uint8_t& code, uint8_t& bits, uint16_t& lanes);

}  // namespace gpula
