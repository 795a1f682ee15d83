#pragma once
// Shared by the sparse tests: host arrays seen as the 1-D views a CsrView is made of.
#include <gpula/tensor.h>

#include <cstdint>

namespace sparse_test {

// A contiguous 1-D view of n elements of dtype `dt` at `data` (host).
inline gpula::TensorView view_1d(void* data, gpula::DType dt, int64_t n) {
  return gpula::TensorView{data, dt, {n}, {1}, gpula::Device::cpu()};
}

}  // namespace sparse_test
