// The type rules shared by the matmul-shaped fronts (see dtype_rules.h).
#include "matmul/dtype_rules.h"

#include <algorithm>
#include <cstdint>

#include "core/format.h"

namespace gpula::detail {

void check_matmul_operand_dtype(const char* op, const char* arg, DType t) {
  if (!is_floating(t))
    throw_error<DTypeError>(op, "unsupported dtype ", name(t), " for ", arg, "; ", op,
                            " takes float16, bfloat16, float32, float64, complex64, "
                            "complex128, float8_e4m3fn, float8_e5m2");
}

ComputeType default_compute(DType t) {
  return (t == DType::f64 || t == DType::c128) ? ComputeType::COMPUTE_64F : ComputeType::COMPUTE_32F;
}

bool compute_allowed(DType t, ComputeType c) {
  using C = ComputeType;
  switch (t) {
    case DType::f16:
      return c == C::COMPUTE_32F || c == C::COMPUTE_32F_PEDANTIC || c == C::COMPUTE_16F ||
             c == C::COMPUTE_16F_PEDANTIC;
    case DType::bf16:
      return c == C::COMPUTE_32F || c == C::COMPUTE_32F_PEDANTIC;
    case DType::f32:
    case DType::c64:
      return c == C::COMPUTE_32F || c == C::COMPUTE_32F_PEDANTIC || c == C::COMPUTE_32F_FAST_16F ||
             c == C::COMPUTE_32F_FAST_16BF || c == C::COMPUTE_32F_FAST_TF32;
    case DType::f64:
    case DType::c128:
      return c == C::COMPUTE_64F || c == C::COMPUTE_64F_PEDANTIC;
    case DType::f8_e4m3:
    case DType::f8_e5m2:
      return c == C::COMPUTE_32F;
    default:
      return false;
  }
}

DType scale_for(ComputeType c, DType in) {
  const bool cplx = is_complex(in);
  if (c == ComputeType::COMPUTE_16F || c == ComputeType::COMPUTE_16F_PEDANTIC) return DType::f16;
  if (c == ComputeType::COMPUTE_64F || c == ComputeType::COMPUTE_64F_PEDANTIC)
    return cplx ? DType::c128 : DType::f64;
  return cplx ? DType::c64 : DType::f32;
}

bool result_allowed(DType in, DType r) {
  if (r == in) return true;
  if (is_half(in)) return r == DType::f32;
  if (is_float8(in))
    return r == DType::bf16 || r == DType::f16 || r == DType::f32 || is_float8(r);
  return false;
}

int alignment(const void* p) {
  const auto v = reinterpret_cast<std::uintptr_t>(p);
  if (v == 0) return 256;
  return static_cast<int>(std::min<std::uintptr_t>(256, v & (~v + 1)));
}

}  // namespace gpula::detail
