#pragma once
/// @file linalg.h
/// Dense decompositions and solvers (cuSOLVER on a GPU, LAPACK on the CPU). Every function takes
/// a batch (..., m, n) and f32, f64, c64, c128; conventions follow NumPy/SciPy.
///
/// @code
///   gpula::Tensor c = gpula::linalg::cholesky(a);            // lower by default
///   gpula::Tensor x = gpula::linalg::cho_solve(c.view(), b);
/// @endcode
#include <gpula/options.h>
#include <gpula/tensor.h>

namespace gpula::linalg {

struct LinalgOptions : CommonOptions {
  /// Synchronize and raise LinAlgError subclasses when a factorization fails. With false, no
  /// synchronization happens and the int32 `info` arrays (batch shape) report failures instead.
  bool check_info = true;
};

/// A result and the per-matrix LAPACK-style info (0: success), shape = batch shape.
struct Factor {
  Tensor value;
  Tensor info;
};

/// Cholesky factor L (lower) or U (upper) of Hermitian positive definite a; the other triangle
/// is zero.
Factor cholesky(const TensorView& a, bool lower = true, const LinalgOptions& options = {},
                Stream stream = {});
/// Solves a x = b given the Cholesky factor c of a. b is (..., n) or (..., n, k).
Tensor cho_solve(const TensorView& c, const TensorView& b, bool lower = true,
                 const LinalgOptions& options = {}, Stream stream = {});

/// LU with partial pivoting: packed L\U and 0-based int32 pivots (as scipy.linalg.lu_factor).
struct LU {
  Tensor lu;
  Tensor pivots;
  Tensor info;
};
LU lu_factor(const TensorView& a, const LinalgOptions& options = {}, Stream stream = {});
Tensor lu_solve(const TensorView& lu, const TensorView& pivots, const TensorView& b,
                const LinalgOptions& options = {}, Stream stream = {});

enum class Assume : uint8_t { gen, pos, sym };
/// Mixed-precision iterative refinement: none, auto (the fastest lower precision that converges;
/// falls back to the plain solve), or a fixed inner precision.
enum class Refine : uint8_t { none, automatic, f32, tf32, f16, bf16 };

struct SolveOptions : LinalgOptions {
  Assume assume_a = Assume::gen;
  Refine refine = Refine::none;
};
/// x with a x = b. b is (..., n) or (..., n, k); batch dimensions broadcast.
Tensor solve(const TensorView& a, const TensorView& b, const SolveOptions& options = {},
             Stream stream = {});

Tensor inv(const TensorView& a, const LinalgOptions& options = {}, Stream stream = {});
Tensor det(const TensorView& a, const LinalgOptions& options = {}, Stream stream = {});
/// sign (same dtype as a; complex phase for complex a) and log|det| (real dtype).
struct Slogdet {
  Tensor sign;
  Tensor logabsdet;
};
Slogdet slogdet(const TensorView& a, const LinalgOptions& options = {}, Stream stream = {});

}  // namespace gpula::linalg
