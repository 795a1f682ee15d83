#pragma once
// What the front of the iterative solvers hands a backend: a checked, square problem.
#include <gpula/sparse_iterative.h>

namespace gpula::sparse::detail {

enum class KrylovMethod : uint8_t { cg, gmres, bicgstab, minres };

struct IterativeProblem {
  const char* op = "";
  KrylovMethod method = KrylovMethod::cg;
  int64_t n = 0;
  DType dtype = DType::f64;
  const CsrView* csr = nullptr;  ///< set for a matrix, null for a LinearOperator
  OperatorFn matvec;             ///< set for a LinearOperator
  int64_t maxiter = 0;           ///< resolved (>= 0)
};

/// info of a run that reached its iteration limit without converging: maxiter, and 1 for
/// maxiter = 0 (no iteration run), so that info 0 always means converged.
inline int64_t not_converged_info(int64_t maxiter) { return maxiter > 0 ? maxiter : 1; }

/// The result for a b with Inf or NaN entries (||b|| not finite), before any iteration: a
/// breakdown (info -1, x left as x0). Every backend checks this first: with ||b|| = Inf the
/// tolerance rtol ||b|| would be Inf too and an Inf residual would pass the test.
inline IterativeResult non_finite_b(double residual_norm) { return {-1, 0, residual_norm}; }

namespace cpu {
IterativeResult iterative_solve(const IterativeProblem& p, const TensorView& b, const TensorView& x,
                                const IterativeOptions& options);
}  // namespace cpu

namespace cuda {
/// Device-resident loops (src/backend/cuda/sparse/iterative.cpp: cg; krylov.cpp:
/// bicgstab, gmres, minres); NotCompiled without CUDA, NotSupported for what is not written yet
/// (real CSR A only; M = None / jacobi, and for cg also ic0 with int32 indices).
IterativeResult iterative_solve(const IterativeProblem& p, const TensorView& b, const TensorView& x,
                                const IterativeOptions& options, Stream stream);
}  // namespace cuda

}  // namespace gpula::sparse::detail
