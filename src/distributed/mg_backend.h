#pragma once
// The cusolverMg backend behind gpula::distributed (src/backend/cuda/distributed/mg.cpp; without
// CUDA, src/backend/no_cuda/distributed.cpp throws NotCompiled). Matrices arrive as host
// column-major n x ncols buffers (leading dimension n) that the backend spreads over the
// devices in 1-D block-cyclic column blocks and writes back; info is LAPACK's (host).
#include <gpula/dtype.h>

#include <cstdint>
#include <vector>

namespace gpula::detail::cuda {

struct MgCall {
  const char* op;
  std::vector<int> devices;  // empty: every visible device
  int64_t block_size;
};

// cusolverMg's potrf, potrs and syevd take the lower triangle only: the front stages a^T where
// the caller names the upper one.
// a (n x n) <- its Cholesky factor L in the lower triangle.
void mg_potrf(const MgCall& c, DType t, int64_t n, void* a, int* info);
// b (n x k) <- a^-1 b through potrf + potrs (lower); a is overwritten with the factor.
void mg_potrf_potrs(const MgCall& c, DType t, int64_t n, int64_t k, void* a, void* b, int* info);
// b (n x k) <- a^-1 b through getrf + getrs; a is overwritten with its LU factors.
void mg_getrf_getrs(const MgCall& c, DType t, int64_t n, int64_t k, void* a, void* b, int* info);
// Eigenvalues into w (host, n, ascending); with vectors, a <- the eigenvectors (columns). Only
// the lower triangle of a is read.
void mg_syevd(const MgCall& c, DType t, int64_t n, void* a, void* w, bool vectors, int* info);

}  // namespace gpula::detail::cuda
