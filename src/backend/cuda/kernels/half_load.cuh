#pragma once
// Element i of a float16 / bfloat16 / float32 array as float, the type named by `kind`
// (0 float16, 1 bfloat16, 2 float32): the inputs of quantize_fp8.cu and amax.cu.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

namespace gpula::detail::cuda {

__device__ inline float load_as_float(const void* x, int kind, int64_t i) {
  if (kind == 0) return __half2float(static_cast<const __half*>(x)[i]);
  if (kind == 1) return __bfloat162float(static_cast<const __nv_bfloat16*>(x)[i]);
  return static_cast<const float*>(x)[i];
}

}  // namespace gpula::detail::cuda
