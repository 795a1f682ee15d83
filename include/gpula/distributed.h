#pragma once
/// @file distributed.h
/// Beyond one GPU. Two parts:
///
/// 1. Block-cyclic distribution helpers (host only, always built): the ScaLAPACK conventions
///    (numroc, index maps) and scatter/gather between a global host matrix and one process's
///    local piece, stored column-major with leading dimension max(1, local rows).
/// 2. Solvers over several GPUs of one node through cusolverMg (CUDA toolkit): cholesky, solve
///    and eigh of one host-resident float32/float64 matrix, spread over `devices` in a 1-D
///    block-cyclic column distribution. Results are new host Tensors. The multi-node engines
///    (cuSOLVERMp / cuBLASMp over NCCL) are not implemented yet: matmul throws NotCompiled.
///
/// @code
///   gpula::Tensor l = gpula::distributed::cholesky(a, true, {.devices = {0, 1}});
///   int64_t rows = gpula::distributed::numroc(n, 64, myrow, 0, nprow);
/// @endcode
#include <gpula/linalg.h>
#include <gpula/tensor.h>

#include <cstdint>
#include <vector>

namespace gpula::distributed {

// ----- block-cyclic distribution (ScaLAPACK conventions, 0-based indices) -----

/// Number of rows (or columns) of an n-long dimension, cut into blocks of nb and dealt
/// round-robin over nprocs processes starting at isrcproc, that process iproc owns (numroc).
int64_t numroc(int64_t n, int64_t nb, int64_t iproc, int64_t isrcproc, int64_t nprocs);
/// The process that owns global index g (indxg2p).
int64_t owner(int64_t g, int64_t nb, int64_t isrcproc, int64_t nprocs);
/// Local index of global index g on its owner (indxg2l).
int64_t global_to_local(int64_t g, int64_t nb, int64_t nprocs);
/// Global index of local index l on process iproc (indxl2g).
int64_t local_to_global(int64_t l, int64_t nb, int64_t iproc, int64_t isrcproc, int64_t nprocs);

/// A 2-D block-cyclic layout of an m x n matrix over an nprow x npcol process grid, as a
/// ScaLAPACK descriptor (blocks mb x nb, first block on process (rsrc, csrc)).
struct BlockCyclic {
  int64_t m = 0, n = 0;
  int64_t mb = 64, nb = 64;
  int64_t nprow = 1, npcol = 1;
  int64_t rsrc = 0, csrc = 0;
};
/// Throws InvalidArgument when a field is out of range (negative sizes, blocks < 1, grid < 1,
/// source outside the grid).
void check_layout(const char* op, const BlockCyclic& d);
/// (local rows, local columns) of process (prow, pcol).
Shape local_shape(const BlockCyclic& d, int64_t prow, int64_t pcol);
/// Leading dimension of the local piece: max(1, local rows).
int64_t local_ld(const BlockCyclic& d, int64_t prow, int64_t pcol);
/// Copies process (prow, pcol)'s part of the host matrix `global` (m x n, any strides, any
/// dtype) into `local` (host, local_shape, same dtype, any strides; column-major with local_ld
/// is ScaLAPACK's). Throws InvalidArgument on shape, device or dtype mismatches.
void scatter(const TensorView& global, const BlockCyclic& d, int64_t prow, int64_t pcol,
             const TensorView& local);
/// The inverse of scatter: writes process (prow, pcol)'s entries of `global` from `local`.
void gather(const TensorView& local, const BlockCyclic& d, int64_t prow, int64_t pcol,
            const TensorView& global);

// ----- several GPUs of one node: cusolverMg -----

struct MgOptions {
  /// CUDA device ordinals; empty means every visible device.
  std::vector<int> devices;
  /// Column block size of the 1-D block-cyclic distribution.
  int64_t block_size = 256;
  /// Raise NotPositiveDefinite / SingularMatrix / LinAlgError when the solver reports failure.
  bool check_info = true;
};

/// Cholesky factor of a host float32/float64 symmetric positive definite (n, n) matrix a; only
/// the `lower` (else upper) triangle is read and the other triangle of the result is zero.
/// cusolverMgPotrf.
Tensor cholesky(const TensorView& a, bool lower = true, const MgOptions& options = {});
/// x with a x = b (b of shape (n,) or (n, k)): assume_a gen uses cusolverMgGetrf/Getrs (LU with
/// partial pivoting), pos cusolverMgPotrf/Potrs reading the `lower` (else upper) triangle.
/// sym is not offered by cusolverMg (NotSupported).
Tensor solve(const TensorView& a, const TensorView& b,
             linalg::Assume assume_a = linalg::Assume::gen, bool lower = false,
             const MgOptions& options = {});
/// Eigenvalues (ascending) and, unless eigvals_only, eigenvectors of a host float32/float64
/// symmetric matrix, as linalg::eigh (info is a host int32 scalar). cusolverMgSyevd.
linalg::Eigh eigh(const TensorView& a, bool lower = true, bool eigvals_only = false,
                  const MgOptions& options = {});

// ----- several nodes: cuBLASMp / cuSOLVERMp over NCCL -----

/// Whether this build has the cuSOLVERMp / cuBLASMp engines (false: not implemented yet).
bool has_mp();
/// Distributed matrix product (cuBLASMp pgemm). Not implemented yet: throws NotCompiled.
Tensor matmul(const TensorView& a, const TensorView& b);

}  // namespace gpula::distributed
