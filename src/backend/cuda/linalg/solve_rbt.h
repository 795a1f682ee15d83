#pragma once
// The randomized butterfly transformation (RBT) solve on a GPU (solve_rbt.cpp): a x = b as
// (U^T a V) y = U^T b, x = V y, with U and V random depth-2 butterflies (Parker; Baboulin,
// Dongarra et al.), which make LU without pivoting safe with high probability; cuSOLVER's
// unpivoted getrf is about 3.4x faster than its pivoted one (n = 8192 fp64 on an H200: 11.4 vs
// 38.4 ms). The triangular solves go by 256-row blocks, right-looking, multiplying by inverted
// diagonal blocks (cuBLAS trsm with 16 right-hand sides is slow there: 9.5 ms over the whole
// order, 125-200 us per 256-row block). Iterative refinement in working precision against the
// original a runs until LAPACK's stopping test (as dsgesv's and cuSOLVER IRS's) ||b - a x||_1 <=
// sqrt(n) eps ||a||_1 ||x||_1 holds for every right-hand side. Where it does not (badly conditioned
// a, NaN/Inf, stagnation), or where a pivot is at rounding level (|u_kk| <= sqrt(N) eps max |u|: a
// is numerically singular), the caller falls back to LU with partial pivoting.
#include <gpula/tensor.h>

#include <cstdint>

#include "linalg/batch.h"

namespace gpula::detail::cuda {

// Workspaces for solves of order n with k right-hand sides, reused over a batch.
class RbtSolver {
 public:
  RbtSolver(DType t, int64_t n, int64_t k, const LinalgCall& c);
  // x = a^-1 b for one matrix (column-major a n x n, b and x n x k; a and b are read only).
  // Returns whether refinement met the stopping test; x is unspecified where it did not.
  // Synchronizes the stream once per refinement step.
  bool solve(const void* a, const void* b, void* x, int64_t item) const;

 private:
  // x (+)= V W^-1 U^T r for the factored W (`accumulate`: the refinement's correction).
  void apply(const void* r, void* x, bool accumulate) const;

  DType t_;
  int64_t n_, k_, big_n_, nb_, blocks_;
  const LinalgCall& c_;
  Tensor w_, inv_l_, inv_u_, t1_, t2_, r_, weights_, scalars_, info_, getrf_ws_;
  std::size_t getrf_dev_ = 0, getrf_host_ = 0;
};

}  // namespace gpula::detail::cuda
