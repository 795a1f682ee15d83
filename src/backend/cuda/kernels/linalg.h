#pragma once
// Launchers of the small device kernels around cuSOLVER/cuBLAS (kernels/linalg.cu). Matrices are
// `count` contiguous column-major n x n items.
#include <cuda_runtime.h>

#include <cstdint>

namespace gpula::detail::cuda {

enum class ElemType : int { f32, f64, c64, c128 };

// out[i] = base + i * stride_bytes: the pointer arrays of the batched APIs.
cudaError_t launch_fill_pointers(void** out, void* base, int64_t stride_bytes, int64_t count,
                                 cudaStream_t stream);
// Zeroes the strict upper (`upper`) or strict lower triangle. elem_size: 4, 8 or 16.
cudaError_t launch_zero_triangle(void* a, int elem_size, int64_t n, int64_t count, bool upper,
                                 cudaStream_t stream);
// dst[c, r] = src[r, c] for `count` row-major n x n items, on the triangle c >= r (`src_upper`,
// diagonal included) or c <= r of src; src's other triangle is never read, dst's other triangle
// gets zeros (`zero_rest`) or is left alone. 32 x 32 tiles through shared memory (coalesced
// both ways); tiles wholly outside the triangle read nothing. elem_size: 4, 8 or 16.
cudaError_t launch_transpose_triangle(const void* src, void* dst, int elem_size, int64_t n,
                                      int64_t count, bool src_upper, bool zero_rest,
                                      cudaStream_t stream);
// Copies the upper (`from_upper`) triangle onto the lower one, or the lower onto the upper,
// without conjugation.
cudaError_t launch_mirror_triangle(void* a, int elem_size, int64_t n, int64_t count,
                                   bool from_upper, cudaStream_t stream);
cudaError_t launch_set_identity(void* a, ElemType t, int64_t n, int64_t count, cudaStream_t stream);
// out[i] = in[i] + delta for pivots of n x n matrices (int32 or int64 each side; in may equal
// out). The output range is [1, n] for delta >= 0 and [1 + delta, n + delta] for delta < 0
// (delta = -1: LAPACK's 1-based pivots to scipy's 0-based ones); values outside it become
// their own position i % n in the output base (no interchange) and are counted in *bad when
// bad is given.
cudaError_t launch_convert_pivots(const void* in, bool in64, void* out, bool out64, int64_t count,
                                  int64_t n, int32_t delta, int32_t* bad, cudaStream_t stream);
// det (type t) or, with logabs, sign (type t) and log|det| (real type) of each LU factor from
// getrf (1-based int32 ipiv, info: nonzero is singular).
cudaError_t launch_lu_det(const void* lu, ElemType t, int64_t n, int64_t count, const int32_t* ipiv,
                          const int32_t* info, void* det_or_sign, void* logabs,
                          cudaStream_t stream);

}  // namespace gpula::detail::cuda
