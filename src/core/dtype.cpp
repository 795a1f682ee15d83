#include <gpula/dtype.h>
#include <gpula/error.h>

#include <array>
#include <string>

namespace gpula {
namespace {

struct DTypeInfo {
  DType type;
  std::string_view name;
  std::size_t size;
  uint8_t dl_code;  // DLPack 1.1 codes: 0 int, 1 uint, 2 float, 4 bfloat, 5 complex,
                    // 10 float8_e4m3fn, 12 float8_e5m2
  uint8_t dl_bits;
};

constexpr std::array<DTypeInfo, 11> kInfo{{
    {DType::f16, "float16", 2, 2, 16},
    {DType::bf16, "bfloat16", 2, 4, 16},
    {DType::f32, "float32", 4, 2, 32},
    {DType::f64, "float64", 8, 2, 64},
    {DType::c64, "complex64", 8, 5, 64},
    {DType::c128, "complex128", 16, 5, 128},
    {DType::f8_e4m3, "float8_e4m3fn", 1, 10, 8},
    {DType::f8_e5m2, "float8_e5m2", 1, 12, 8},
    {DType::i32, "int32", 4, 0, 32},
    {DType::i64, "int64", 8, 0, 64},
    {DType::u8, "uint8", 1, 1, 8},
}};

const DTypeInfo& info(DType t) { return kInfo[static_cast<std::size_t>(t)]; }

}  // namespace

std::size_t size_of(DType t) { return info(t).size; }
std::string_view name(DType t) { return info(t).name; }

DType dtype_from_name(std::string_view s) {
  for (const auto& i : kInfo)
    if (i.name == s) return i.type;
  throw DTypeError("[dtype] unknown dtype name '" + std::string(s) + "'");
}

DType real_type(DType t) {
  if (t == DType::c64) return DType::f32;
  if (t == DType::c128) return DType::f64;
  return t;
}

namespace {

// NumPy's name of a DLPack type ("int16", "bool", "complex32"), for messages.
std::string dlpack_type_name(uint8_t code, uint8_t bits, uint16_t lanes) {
  const char* kinds[] = {"int", "uint", "float", nullptr, "bfloat", "complex", "bool"};
  const char* kind = code < 7 ? kinds[code] : nullptr;
  std::string out =
      !kind ? "DLPack type code " + std::to_string(code) + " of " + std::to_string(bits) + " bits"
      : code == 6 && bits == 8 ? std::string("bool")
                               : kind + std::to_string(bits);
  return lanes == 1 ? out : out + " x" + std::to_string(lanes) + " (vector)";
}

}  // namespace

DType dtype_from_dlpack(uint8_t code, uint8_t bits, uint16_t lanes) {
  if (lanes == 1)
    for (const auto& i : kInfo)
      if (i.dl_code == code && i.dl_bits == bits) return i.type;
  throw DTypeError("dtype " + dlpack_type_name(code, bits, lanes) +
                   " is not supported; gpula takes float16, bfloat16, float32, float64, complex64, "
                   "complex128, float8_e4m3fn, float8_e5m2, int32, int64, uint8");
}

void dtype_to_dlpack(DType t, uint8_t& code, uint8_t& bits, uint16_t& lanes) {
  code = info(t).dl_code;
  bits = info(t).dl_bits;
  lanes = 1;
}

}  // namespace gpula
