#pragma once
// Launchers of the matrix functions' element-wise kernels (matrix_functions.cu): per-item sums
// of squares (the Frobenius norms of orthogonalize), scaled dtype conversions, and the column
// scaling of eigenvector matrices (inv_root, sqrtm_psd). Items are contiguous.
#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/kernels/linalg.h"

namespace gpula::detail::cuda {

// The real storage types: float16, bfloat16, float32 (half_load.cuh's kinds 0, 1, 2), float64.
enum class RealKind : int { f16 = 0, bf16 = 1, f32 = 2, f64 = 3 };

// sums[b] += the sum of squares of item b of x (count items of `size` elements), in double;
// the caller zeroes sums. Blocks of one item fold into sums[b] with atomicAdd.
cudaError_t launch_sum_squares(const void* x, RealKind kind, int64_t count, int64_t size,
                               double* sums, cudaStream_t stream);
// y[i] = x[i] / (sqrt(sums[b]) + eps) for the elements of item b, or y[i] = x[i] where sums is
// null, computed in double and rounded (to nearest even) to y's kind.
cudaError_t launch_scale_convert(const void* x, RealKind x_kind, void* y, RealKind y_kind,
                                 int64_t count, int64_t size, const double* sums, double eps,
                                 cudaStream_t stream);
// out[b, i, j] = conj(v[b, i, j]) (without `conj`: v[b, i, j]) * f[b * cols + j] for `count`
// row-major rows x cols items; f holds reals of t's real type.
cudaError_t launch_scale_columns(const void* v, ElemType t, const void* f, int64_t rows,
                                 int64_t cols, int64_t count, bool conj, void* out,
                                 cudaStream_t stream);
// p = (p + p^H) / 2 in place for `count` n x n items (one thread per element of the upper
// triangle writes it and its mirror).
cudaError_t launch_hermitian_part(void* p, ElemType t, int64_t n, int64_t count,
                                  cudaStream_t stream);

}  // namespace gpula::detail::cuda
