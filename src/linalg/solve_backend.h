#pragma once
// What the solve front (solve.cpp: cholesky, cho_solve, lu_factor, lu_solve, solve, inv, det,
// slogdet) asks of a backend, on the batches of batch.h.
//
// Row-major <-> column-major: a row-major n x n buffer read column-major is the transpose. The
// front uses that (factor A^T in place where A^T serves as well, copy transposed where it does
// not); see solve.cpp.
#include <gpula/linalg.h>

#include <cstdint>

#include "core/format.h"
#include "linalg/batch.h"

namespace gpula::detail {

// All pointers are on the device the backend runs on; int32 arrays hold `count` (info) or
// `count * n` (pivots) entries. Info follows LAPACK (0: success, k > 0: failed at order k).
class SolveBackend {
 public:
  virtual ~SolveBackend() = default;

  // Cholesky in place: a = U^H U (upper) or L L^H; reads and writes only that triangle.
  virtual void potrf(const SquareBatch& a, bool upper, int32_t* info,
                     const LinalgCall& c) const = 0;
  // Whether potrf is as fast on the upper triangle as on the lower for such a batch. Where it
  // is not (cuSOLVER's), the CUDA cholesky front factors the lower one of a transposed copy.
  virtual bool potrf_any_triangle(int64_t /*count*/, int64_t /*n*/) const { return true; }
  // Y M = B in place of y (rows = any, cols = f.n), M = F^H F (upper) or F F^H (lower) given
  // by potrf's factor F. f.count == y.count.
  virtual void potrs_right(const SquareBatch& f, bool upper, const DenseBatch& y,
                           const LinalgCall& c) const = 0;
  // LU with partial pivoting in place; ipiv 1-based (LAPACK), info k: U(k, k) == 0.
  virtual void getrf(const SquareBatch& a, int32_t* ipiv, int32_t* info,
                     const LinalgCall& c) const = 0;
  // op(A) X = B in place of b (rows = lu.n), A from getrf; op is A^T when `transpose`.
  // lu.count == b.count.
  virtual void getrs(const SquareBatch& lu, const int32_t* ipiv, bool transpose,
                     const DenseBatch& b, const LinalgCall& c) const = 0;
  // A X = B in place of b for symmetric A (complex symmetric, no conjugation) of which only the
  // triangle `upper` is read; a is destroyed. info k: singular at order k.
  virtual void sysv(const SquareBatch& a, bool upper, const DenseBatch& b, int32_t* info,
                    const LinalgCall& c) const = 0;
  // A X = B with iterative refinement: Refine::rbt, the RBT solve (GPU: solve_rbt.h, a is read
  // only), or a lower inner precision (GPU: cuSOLVER IRS, a is destroyed); b is read, x written.
  // The CPU computes the plain LU solve for every value (a is destroyed).
  virtual void gesv_refined(const SquareBatch& a, const DenseBatch& b, const DenseBatch& x,
                            linalg::Refine refine, int32_t* info, const LinalgCall& c) const = 0;
  // Whether refine=automatic should take the RBT solve for matrices of order n.
  virtual bool solve_prefers_rbt(int64_t /*n*/) const { return false; }
  // In place: a holds A on entry and inv(A) on exit (undefined where info != 0).
  virtual void inv(const SquareBatch& a, int32_t* info, const LinalgCall& c) const = 0;
  // det (dtype of a) or, when `logabs` is given, sign (dtype of a) and log|det| (real type) of
  // each matrix, through LU; a is destroyed.
  virtual void det(const SquareBatch& a, void* det_or_sign, void* logabs,
                   const LinalgCall& c) const = 0;

  // Zeroes the strict upper (`upper`) or strict lower triangle.
  virtual void zero_triangle(const SquareBatch& a, bool upper, const LinalgCall& c) const = 0;
  // dst[c, r] = src[r, c] for row-major items, on src's triangle c >= r (`src_upper`) or
  // c <= r, diagonal included; src's other triangle is never read; dst's other triangle is
  // zeroed (`zero_rest`) or left alone. dst holds src.count items of the same order. Only the
  // GPU's cholesky staging calls it (the CPU factors a plain copy in place).
  virtual void transpose_triangle(const SquareBatch& /*src*/, void* /*dst*/, bool /*src_upper*/,
                                  bool /*zero_rest*/, const LinalgCall& c) const {
    throw_error<NotSupported>(c.op, "transpose_triangle is a GPU backend step");
  }
  // p[i] += delta for `count` pivots of n x n matrices. The result must lie in [1, n] when
  // delta >= 0 (to LAPACK's 1-based pivots) and in [1 + delta, n + delta] when delta < 0
  // (delta = -1: to scipy's 0-based ones, where 0 is a valid pivot); entries that end outside
  // are replaced by their own position in that base (no interchange) and counted in *bad (one
  // int32, on the device; the front zeroes it first).
  virtual void shift_pivots(int32_t* p, int64_t count, int64_t n, int32_t delta, int32_t* bad,
                            const LinalgCall& c) const = 0;
};

namespace cpu {
const SolveBackend& solve_backend();
}
namespace cuda {
// Throws NotCompiled("cuda") in a build without CUDA.
const SolveBackend& solve_backend();
}  // namespace cuda

}  // namespace gpula::detail
