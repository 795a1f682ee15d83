#pragma once
/// @file sparse_iterative.h
/// Krylov solvers for A x = b with a sparse (CsrView) or matrix-free (LinearOperator) A:
/// cg (Hermitian positive definite), gmres (restarted, any square A), bicgstab (any square A) and
/// minres (Hermitian, possibly indefinite). Semantics follow scipy.sparse.linalg:
///  - x holds the initial guess x0 on entry and the solution on return;
///  - convergence is ||b - A x||_2 <= max(rtol * ||b||_2, atol), tested on the true
///    (recurrence-updated, unpreconditioned) residual;
///  - info 0: converged; info > 0: the iteration limit reached without convergence (maxiter,
///    and 1 for maxiter = 0); info < 0: breakdown (a zero or non-finite scalar of the recurrence;
///    -1 before any iteration for a b with Inf or NaN entries).
///  - b = 0 returns x = 0 with info 0; an x0 that already satisfies the test returns after 0
///    iterations with info 0 (also for maxiter = 0, which runs no iteration).
///  - A CsrView is validated (validate_csr, O(nnz)) at every call before any index is read.
/// Preconditioners: jacobi (inverse diagonal), ilu0 (incomplete LU with A's pattern), ic0
/// (incomplete Cholesky, Hermitian positive pivots required) or any operator z = M^-1 r.
/// Backends: the CPU (OpenMP vector kernels, own CSR product, own factorizations) for everything;
/// CUDA (loops resident on the device: cuSPARSE SpMV, cuBLAS, small kernels) for a real
/// float32 / float64 CSR A with M = None or jacobi, and for cg also ic0 (int32 indices). Other
/// CUDA inputs (complex, LinearOperator, ilu0, operator M) raise NotSupported.
#include <gpula/sparse.h>

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>

namespace gpula::sparse {

/// y = op(x): x and y are 1-D contiguous arrays of the operator's length, dtype and device.
using OperatorFn = std::function<void(const TensorView& x, const TensorView& y)>;

/// A matrix-free square operator (rows == cols).
struct LinearOperator {
  int64_t rows = 0;
  int64_t cols = 0;
  DType dtype = DType::f64;
  OperatorFn matvec;
};

/// A built-in preconditioner, or `custom` for IterativeOptions::preconditioner_op.
enum class Preconditioner : uint8_t { none, jacobi, ic0, ilu0, custom };

/// "none" / "" / "jacobi" / "ic0" / "ilu0" to the enum; anything else raises InvalidArgument.
Preconditioner parse_preconditioner(std::string_view name, std::string_view op);

struct IterativeOptions {
  double rtol = 1e-5;
  double atol = 0.0;
  /// Iterations (gmres: restart cycles) before giving up, >= 0 (< 0 raises InvalidArgument);
  /// unset: 10 * n, as scipy.
  std::optional<int64_t> maxiter;
  /// gmres: Krylov dimension per cycle (clamped to n).
  int64_t restart = 20;
  Preconditioner preconditioner = Preconditioner::none;
  /// z = M^-1 r, used with Preconditioner::custom.
  OperatorFn preconditioner_op;
  /// Preconditioner::ic0 on a GPU: each triangular solve with the IC(0) factor is k > 0
  /// Jacobi sweeps (an approximate but fixed symmetric positive definite M, fast on a GPU),
  /// 0 the exact level-scheduled solve (cusparseSpSV; slow on matrices with many levels, such
  /// as PDE grids), < 0 the default (2 sweeps). The CPU always solves exactly.
  int64_t triangular_sweeps = -1;
  /// Called with the current iterate after every iteration (gmres: every restart cycle).
  std::function<void(const TensorView& x)> callback;
  CommonOptions common{};
};

struct IterativeResult {
  int64_t info = 0;            ///< 0 converged, > 0 iterations without convergence, < 0 breakdown
  int64_t iterations = 0;      ///< iterations done (gmres: inner Arnoldi steps in all cycles)
  double residual_norm = 0.0;  ///< ||b - A x||_2 from the recurrence at return
};

IterativeResult cg(const CsrView& a, const TensorView& b, const TensorView& x,
                   const IterativeOptions& options = {}, Stream stream = {});
IterativeResult gmres(const CsrView& a, const TensorView& b, const TensorView& x,
                      const IterativeOptions& options = {}, Stream stream = {});
IterativeResult bicgstab(const CsrView& a, const TensorView& b, const TensorView& x,
                         const IterativeOptions& options = {}, Stream stream = {});
IterativeResult minres(const CsrView& a, const TensorView& b, const TensorView& x,
                       const IterativeOptions& options = {}, Stream stream = {});

/// Matrix-free forms: jacobi / ic0 / ilu0 need the matrix and raise InvalidArgument here.
IterativeResult cg(const LinearOperator& a, const TensorView& b, const TensorView& x,
                   const IterativeOptions& options = {}, Stream stream = {});
IterativeResult gmres(const LinearOperator& a, const TensorView& b, const TensorView& x,
                      const IterativeOptions& options = {}, Stream stream = {});
IterativeResult bicgstab(const LinearOperator& a, const TensorView& b, const TensorView& x,
                         const IterativeOptions& options = {}, Stream stream = {});
IterativeResult minres(const LinearOperator& a, const TensorView& b, const TensorView& x,
                       const IterativeOptions& options = {}, Stream stream = {});

}  // namespace gpula::sparse
