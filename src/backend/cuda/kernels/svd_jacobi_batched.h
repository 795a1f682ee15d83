#pragma once
// Batched one-sided (Hestenes) Jacobi SVD of small real matrices, one thread block per matrix
// with the matrix and its right rotations held in shared memory. cuSOLVER's batched Jacobi
// (gesvdjBatched) stops at 32 x 32; past that it only has the approximate gesvdaStridedBatched,
// so batches of matrices up to a few hundred elements a side take this kernel.
//
// It orthogonalizes the columns of M (rows x cols, rows >= cols): M V = G with V orthogonal,
// then sigma_j = ||g_j|| sorted descending, left vectors g_j / sigma_j (an orthonormal
// completion, by Gram-Schmidt on unit vectors, where sigma_j <= rows * eps * sigma_max), right
// vectors V's columns. Rotations use the parallel round-robin ordering (cols / 2 disjoint pairs
// per step); a sweep is cols - 1 steps; converged when no pair of a sweep had
// |g_p . g_q| > sqrt(rows) eps ||g_p|| ||g_q||.
#include <cuda_runtime.h>

#include <cstdint>

namespace gpula::detail::cuda {

// Element (i, j) of item b of a strided batch: base[b * batch + i * row + j * col].
struct Strided3 {
  int64_t batch = 0, row = 0, col = 0;
};

// Shared memory one matrix needs (bytes), or 0 when it exceeds the device's opt-in maximum.
size_t svd_jacobi_shared_bytes(int rows, int cols, size_t elem_size, int device);

// For each of `count` matrices M (rows x cols, rows >= cols, read through `m`):
// left vectors (rows x cols) to u (may be null: not written), singular values (cols,
// contiguous per item) to s, right vectors (cols x cols, column j = vector j) to v (may be
// null), info[b] = 0, or 1 when max_sweeps did not converge (NaN/Inf input included; then the
// outputs are NaN). T is float or double.
template <class T>
void svd_jacobi_batched(const T* m, Strided3 m_st, int64_t count, int rows, int cols, T* u,
                        Strided3 u_st, T* s, T* v, Strided3 v_st, int32_t* info, int max_sweeps,
                        cudaStream_t stream);

}  // namespace gpula::detail::cuda
