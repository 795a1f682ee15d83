#pragma once
// DType -> CUDA library types, written once: cudaDataType for cuBLAS(Lt), cuSOLVER, cuSPARSE,
// cuDSS and the Mp libraries, and the cuComplex element types of typed calls.
#include <cuComplex.h>
#include <gpula/dtype.h>
#include <gpula/error.h>
#include <library_types.h>

#include "core/format.h"

namespace gpula::detail::cuda {

// The CUDA type of `t`; DTypeError naming `op` for a type CUDA libraries have no code for.
inline cudaDataType_t data_type(DType t, const char* op = "cuda") {
  switch (t) {
    case DType::f16:
      return CUDA_R_16F;
    case DType::bf16:
      return CUDA_R_16BF;
    case DType::f32:
      return CUDA_R_32F;
    case DType::f64:
      return CUDA_R_64F;
    case DType::c64:
      return CUDA_C_32F;
    case DType::c128:
      return CUDA_C_64F;
    case DType::f8_e4m3:
      return CUDA_R_8F_E4M3;
    case DType::f8_e5m2:
      return CUDA_R_8F_E5M2;
    case DType::i32:
      return CUDA_R_32I;
    case DType::i64:
      return CUDA_R_64I;
    case DType::u8:
      return CUDA_R_8U;
  }
  throw_error<DTypeError>(op, "no CUDA data type for ", name(t));
}

// Calls f(T{}) with T float, double, cuComplex or cuDoubleComplex for f32, f64, c64 and c128
// (the solver dtypes; any other is taken as c128), for the typed s/d/c/z library calls.
template <class F>
decltype(auto) visit_solver_type(DType t, F&& f) {
  switch (t) {
    case DType::f32:
      return f(float{});
    case DType::f64:
      return f(double{});
    case DType::c64:
      return f(cuComplex{});
    default:
      return f(cuDoubleComplex{});
  }
}

// The real type of a solver element type: float for cuComplex, double for cuDoubleComplex.
template <class T>
struct solver_real {
  using type = T;
};
template <>
struct solver_real<cuComplex> {
  using type = float;
};
template <>
struct solver_real<cuDoubleComplex> {
  using type = double;
};
template <class T>
using solver_real_t = typename solver_real<T>::type;

}  // namespace gpula::detail::cuda
