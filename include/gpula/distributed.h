#pragma once
/// @file distributed.h
/// Beyond one GPU. Two parts:
///
/// 1. Block-cyclic distribution helpers (host only, always built): the ScaLAPACK conventions
///    (numroc, index maps) and scatter/gather between a global host matrix and one process's
///    local piece, stored column-major with leading dimension max(1, local rows).
/// 2. Solvers over several GPUs of one node through cusolverMg (CUDA toolkit): cholesky, solve
///    and eigh of one host-resident float32/float64 matrix, spread over `devices` in a 1-D
///    block-cyclic column distribution. Results are new host Tensors.
/// 3. Several processes, one GPU each, over NCCL (cuSOLVERMp / cuBLASMp, an optional build):
///    cholesky, solve, eigh and matmul of 2-D block-cyclic matrices, each rank passing its local
///    piece (device memory) and a Communicator.
///
/// @code
///   gpula::Tensor l = gpula::distributed::cholesky(a, true, {.devices = {0, 1}});
///   int64_t rows = gpula::distributed::numroc(n, 64, myrow, 0, nprow);
///   auto comm = gpula::distributed::Communicator::create(0, 1,
///                   gpula::distributed::Communicator::unique_id(), /*device=*/0);
///   gpula::distributed::cholesky(comm, local_a, {.m = n, .n = n, .mb = 64, .nb = 64});
/// @endcode
#include <gpula/linalg.h>
#include <gpula/tensor.h>

#include <array>
#include <cstdint>
#include <memory>
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

// ----- several processes (one GPU each, any number of nodes): cuSOLVERMp / cuBLASMp -----
//
// Every rank holds its local piece of each matrix: device memory on the communicator's GPU,
// column-major with a leading dimension >= max(1, local rows) (a TensorView of shape
// local_shape(layout, prow, pcol) and strides (1, ld)), laid out by a BlockCyclic layout whose
// grid has comm.size() processes. Rank r is process (r % nprow, r / nprow) (column-major
// grid mapping). The first block must be on process (0, 0) (cuSOLVERMp's restriction). Every
// rank calls with the same global arguments (collective). The calls are blocking: they wait
// for the device before starting (so data written on any stream is seen) and return when the
// result is in place.

/// An NCCL communicator over `size` processes, each with one GPU, plus the cuSOLVERMp and
/// cuBLASMp handles on it. Copies share one communicator (destroyed with the last copy). A
/// 1-rank communicator needs no launcher: create(0, 1, unique_id(), device).
class Communicator {
 public:
  /// ncclUniqueId's bytes: made by rank 0, sent to every rank by the caller (MPI, torch).
  using UniqueId = std::array<char, 128>;
  struct Impl;

  /// Undefined (defined() is false); the multi-process functions reject it.
  Communicator() = default;
  /// A fresh NCCL unique id (ncclGetUniqueId). NotCompiled without the cuSOLVERMp build.
  static UniqueId unique_id();
  /// Joins the communicator (ncclCommInitRank on `device`): collective over the `size`
  /// processes that got the same id. InvalidArgument on size < 1, rank outside [0, size) or a
  /// negative device; NotCompiled without the cuSOLVERMp / cuBLASMp build.
  static Communicator create(int rank, int size, const UniqueId& id, int device);

  bool defined() const { return impl_ != nullptr; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  int device() const { return device_; }
  const std::shared_ptr<Impl>& impl() const { return impl_; }

 private:
  Communicator(int rank, int size, int device, std::shared_ptr<Impl> impl)
      : rank_(rank), size_(size), device_(device), impl_(std::move(impl)) {}
  int rank_ = 0, size_ = 0, device_ = 0;
  std::shared_ptr<Impl> impl_;
};

struct MpOptions {
  /// Raise NotPositiveDefinite / SingularMatrix / LinAlgError when the solver reports failure.
  bool check_info = true;
};

/// Whether this build has the cuSOLVERMp / cuBLASMp engines (configured with
/// GPULA_CUSOLVERMP_ROOT / GPULA_CUBLASMP_ROOT, see docs/distributed.md).
bool has_mp();

/// In place: `a` (local piece of an n x n float32/float64 symmetric positive definite matrix,
/// square blocks mb == nb) <- its Cholesky factor in the `lower` (else upper) triangle
/// (cusolverMpPotrf). The other triangle is not referenced and keeps its input (ScaLAPACK's
/// convention). NotPositiveDefinite (order = the failing leading minor) when check_info.
void cholesky(const Communicator& comm, const TensorView& a, const BlockCyclic& layout,
              bool lower = true, const MpOptions& options = {});
/// In place: `b` (local piece of n x k, row blocks as a's) <- a^-1 b; `a` is overwritten by
/// its factors. assume_a gen: cusolverMpGetrf + Getrs (LU with partial pivoting); pos:
/// cusolverMpPotrf + Potrs reading the `lower` (else upper) triangle; sym: NotSupported.
/// cuSOLVERMp's solves take one right-hand side per call: k columns are k solve calls.
void solve(const Communicator& comm, const TensorView& a, const BlockCyclic& a_layout,
           const TensorView& b, const BlockCyclic& b_layout,
           linalg::Assume assume_a = linalg::Assume::gen, bool lower = false,
           const MpOptions& options = {});
/// Eigenvalues (ascending, w: device (n,) on every rank) and, unless eigvals_only, the local
/// piece of the eigenvectors (v: device, a's layout, column-major with ld max(1, local rows))
/// of a float32/float64 symmetric matrix (cusolverMpSyevd, lower triangle only: lower=false
/// is NotSupported). `a` is destroyed. info: host int32 scalar.
linalg::Eigh eigh(const Communicator& comm, const TensorView& a, const BlockCyclic& layout,
                  bool lower = true, bool eigvals_only = false, const MpOptions& options = {});
/// In place: c <- alpha a b + beta c (cublasMpGemm) over local pieces of a (m x k), b (k x n),
/// c (m x n), one dtype: float32, float64 or bfloat16 (bfloat16 accumulates in float32).
/// Blocks must chain: a's nb == b's mb, a's mb == c's mb, b's nb == c's nb.
void matmul(const Communicator& comm, const TensorView& a, const BlockCyclic& a_layout,
            const TensorView& b, const BlockCyclic& b_layout, const TensorView& c,
            const BlockCyclic& c_layout, double alpha = 1.0, double beta = 0.0);

}  // namespace gpula::distributed
