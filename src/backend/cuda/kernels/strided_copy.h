#pragma once
// Launcher of the strided copy kernel (kernels/strided_copy.cu).
#include <cuda_runtime.h>

#include <cstdint>

namespace gpula::detail::cuda {

constexpr int kMaxCopyDims = 8;

struct CopyParams {
  int ndim = 0;
  int64_t numel = 0;
  int64_t shape[kMaxCopyDims] = {};
  int64_t src_strides[kMaxCopyDims] = {};  // elements; 0 broadcasts
  int64_t dst_strides[kMaxCopyDims] = {};
};

// dst[i] = src[i] over every index of the shape; src == nullptr writes zeros. elem_size is
// 1, 2, 4, 8 or 16 bytes.
cudaError_t launch_strided_copy(const void* src, void* dst, int elem_size, const CopyParams& p,
                                cudaStream_t stream);

}  // namespace gpula::detail::cuda
