#pragma once
/// @file sparse_direct.h
/// Sparse direct solver A x = b for a CSR matrix A, in three phases that can be repeated
/// separately: plan() (fill-reducing reordering + symbolic analysis), factorize() (numeric
/// factorization) and solve(). reset_values() swaps in new values of the same pattern, so the
/// next factorize() reuses the plan (refactorization). CPU: SuiteSparse, CHOLMOD supernodal
/// Cholesky for MatrixType::positive_definite and UMFPACK LU for the other types (both in
/// double precision: float32/complex64 are widened and the result rounded back). CUDA: cuDSS
/// (a build without it throws NotCompiled("cudss") for a CUDA matrix).
#include <gpula/sparse.h>

#include <cstdint>
#include <memory>
#include <string>

namespace gpula::sparse {

/// What is known about A (the factorization the backend may use). positive_definite: real
/// symmetric or complex Hermitian positive definite; on the CPU (CHOLMOD) only the entries on
/// and below the diagonal are read, and factorize() throws NotPositiveDefinite when A is not.
enum class MatrixType : uint8_t { general, symmetric, positive_definite, hermitian };

/// Which part of A the CSR arrays hold. Only `full` is supported for now.
enum class StoredTriangle : uint8_t { full, lower, upper };

/// The fill-reducing ordering plan() uses.
/// - automatic: on the GPU, gpula's level-set nested dissection (parallel on the host, much
///   faster than cuDSS's own reordering on large mesh-like matrices) for n >= 131072 when its
///   separators pass the quality check (root separator <= 10% of n, every separator <= 35% of
///   its subgraph: level sets make poor separators on graphs of small diameter), else cuDSS's
///   own; on the CPU, SuiteSparse's own.
/// - library: always the backend library's own (cuDSS's nested dissection, CHOLMOD's, UMFPACK's).
/// - level_set: gpula's nested dissection at any size and without the quality check, as long as
///   it fills its dissection tree (else cuDSS's own, logged at WARNING). GPU only: a CPU matrix
///   throws NotSupported.
/// plan() logs the choice at INFO; DirectSolver::ordering() says which one was used.
enum class Ordering : uint8_t { automatic, library, level_set };

struct DirectSolverOptions {
  MatrixType matrix_type = MatrixType::general;
  StoredTriangle triangle = StoredTriangle::full;
  Ordering ordering = Ordering::automatic;
};

/// A's arrays are validated (validate_csr: InvalidArgument naming the array and position) and
/// copied at construction (the solver owns its pattern and values); b and x of
/// solve() are (n,) or (n, k) contiguous arrays of A's dtype and device. Phases out of order
/// (solve before factorize, ...) throw InvalidArgument naming the missing phase; a numerically
/// singular matrix throws SingularMatrix naming the library's status (positive_definite: a
/// matrix that is not throws NotPositiveDefinite, order() the failed leading minor of the
/// reordered matrix).
class DirectSolver {
 public:
  explicit DirectSolver(const CsrView& a, const DirectSolverOptions& options = {},
                        Stream stream = {});
  ~DirectSolver();
  DirectSolver(DirectSolver&&) noexcept;
  DirectSolver& operator=(DirectSolver&&) noexcept;
  DirectSolver(const DirectSolver&) = delete;
  DirectSolver& operator=(const DirectSolver&) = delete;

  void plan();
  void factorize();
  void solve(const TensorView& b, const TensorView& x);
  /// New values (nnz,) for the same pattern; the next factorize() reuses the plan.
  void reset_values(const TensorView& values);
  /// A new matrix that must have the planned pattern (indptr and indices equal): InvalidArgument
  /// naming what changed otherwise.
  void reset_matrix(const CsrView& a);
  /// Releases the factorization; the solver can only be destroyed afterwards.
  void free();

  bool planned() const;
  bool factorized() const;
  /// The ordering the last plan() used: "level_set" (gpula's nested dissection), or the
  /// library's own: "cudss", "cholmod", "umfpack"; "" before plan().
  std::string ordering() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpula::sparse
