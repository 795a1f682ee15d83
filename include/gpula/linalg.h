#pragma once
/// @file linalg.h
/// Dense decompositions and solvers (cuSOLVER/cuBLAS on a GPU, LAPACK on the CPU). Every function
/// takes a batch (..., n, n) of float32, float64, complex64 or complex128 matrices with any
/// strides; conventions follow NumPy/SciPy. Inputs are copied into the factorization's workspace
/// and never written. Results are new contiguous row-major Tensors on the device of the data,
/// produced on `stream` (asynchronously on a GPU unless options.blocking or a check needs the
/// info arrays).
///
/// Right-hand sides follow numpy.linalg.solve (NumPy 2): a 1-D b of shape (n,) is one vector
/// shared by every matrix of the batch and gives x of shape (..., n); otherwise b is a stack
/// (..., n, k) whose batch dimensions broadcast against a's, and x is (..., n, k).
///
/// Failures: with check_info (the default) a failed factorization raises NotPositiveDefinite or
/// SingularMatrix naming the batch item; the *_ex forms and cholesky/lu_factor also return the
/// int32 info arrays (0: success; LAPACK's meaning otherwise). NaN or Inf input never crashes or
/// hangs: cholesky raises NotPositiveDefinite where LAPACK/cuSOLVER flag the NaN pivot, or returns
/// NaN; the LU-based functions return NaN; lstsq on the CPU raises LinAlgError (LAPACK's gelsd
/// does not return on Inf). The C++ fronts do not scan their inputs otherwise: the Python layer's
/// check_finite (SciPy's rule, on by default) raises InvalidArgument before a call.
///
/// @code
///   gpula::Tensor l = gpula::linalg::cholesky(a).value;        // lower by default
///   gpula::Tensor x = gpula::linalg::cho_solve(l.view(), b);
///   gpula::Tensor y = gpula::linalg::solve(a, b, {.assume_a = gpula::linalg::Assume::pos});
/// @endcode
#include <gpula/options.h>
#include <gpula/tensor.h>

#include <array>
#include <optional>
#include <span>
#include <vector>

namespace gpula::linalg {

struct LinalgOptions : CommonOptions {
  /// Synchronize and raise LinAlgError subclasses when a factorization fails. With false, no
  /// synchronization happens and the int32 `info` arrays (batch shape) report failures instead.
  /// Functions that only apply a given factor (cho_solve, lu_solve) have no info to check.
  bool check_info = true;
};

/// A result and the per-matrix LAPACK-style info (0: success), int32 of the batch shape, on the
/// device of the data.
struct Factor {
  Tensor value;
  Tensor info;
};

/// Cholesky factor L (lower, a = L L^H) or U (upper, a = U^H U) of Hermitian positive definite
/// a; only that triangle of a is read and the other triangle of the result is zero.
/// info[i] = k > 0: the leading minor of order k is not positive definite.
Factor cholesky(const TensorView& a, bool lower = true, const LinalgOptions& options = {},
                Stream stream = {});
/// Solves a x = b given the Cholesky factor c of a (as cholesky returns it; the other triangle
/// of c is not read). b is (n,) or (..., n, k).
Tensor cho_solve(const TensorView& c, const TensorView& b, bool lower = true,
                 const LinalgOptions& options = {}, Stream stream = {});

/// LU with partial pivoting as scipy.linalg.lu_factor: packed L\U (unit L below the diagonal),
/// column-major per matrix as scipy returns it (strides {.., 1, n}: the layout LAPACK and
/// cuSOLVER leave it in; row-major where it is copied back from another device: device = cuda
/// for host data, fallback = cpu), and 0-based int32 pivots (row i was interchanged with row
/// pivots[i]), shape (..., n).
/// info[i] = k > 0: U[k-1, k-1] is exactly zero. The factorization is still complete, but with
/// check_info (the default) it raises SingularMatrix, as torch.linalg.lu_factor does (scipy only
/// warns); check_info = false returns it.
struct LU {
  Tensor lu;
  Tensor pivots;
  Tensor info;
};
LU lu_factor(const TensorView& a, const LinalgOptions& options = {}, Stream stream = {});
/// Solves a x = b from lu_factor's (lu, pivots); lu and pivots share one batch shape, which
/// broadcasts against b's. Pivots outside [0, n) raise InvalidArgument (on a GPU only with
/// check_info; without it they are read as "no interchange").
Tensor lu_solve(const TensorView& lu, const TensorView& pivots, const TensorView& b,
                const LinalgOptions& options = {}, Stream stream = {});

// ---- solve_triangular ----
/// Which system solve_triangular solves: a x = b, a^T x = b or a^H x = b (scipy's trans 0, 1, 2).
enum class Trans : uint8_t { none, transpose, conj_transpose };
struct TriangularOptions : LinalgOptions {
  /// Read a's lower triangle (else the upper, scipy's default); the other one is never read.
  bool lower = false;
  Trans trans = Trans::none;
  /// Take a's diagonal as ones without reading it.
  bool unit_diagonal = false;
};
/// x with op(a) x = b for triangular a, as scipy.linalg.solve_triangular (BLAS trsm / cuBLAS
/// trsm, trsmBatched). b is (n,) or (..., n, k); batch dimensions broadcast. info[i] = k > 0:
/// a[k-1, k-1] is exactly zero (the first such; never with unit_diagonal); x is then inf/NaN
/// there, and with check_info (the default) SingularMatrix is raised. a is read in place where
/// its matrices are contiguous, row- or column-major.
Factor solve_triangular_ex(const TensorView& a, const TensorView& b,
                           const TriangularOptions& options = {}, Stream stream = {});
/// solve_triangular_ex(...).value.
Tensor solve_triangular(const TensorView& a, const TensorView& b,
                        const TriangularOptions& options = {}, Stream stream = {});
// ---- end solve_triangular ----

/// gen: LU with partial pivoting. pos: Cholesky (a Hermitian positive definite). sym: a symmetric
/// (complex symmetric, a = a^T, for complex types): Bunch-Kaufman (sytrf) on the CPU; on a GPU
/// the chosen triangle is mirrored and LU is used (cuSOLVER has no symmetric indefinite solve).
enum class Assume : uint8_t { gen, pos, sym };
/// Iterative refinement for assume_a=gen: none; rbt, the randomized butterfly transformation
/// solve (on a GPU: a random depth-2 butterfly on each side, LU without pivoting, then refinement
/// in working precision against a until ||b - a x||_1 <= sqrt(n) eps ||a||_1 ||x||_1 for every
/// right-hand side, LAPACK dsgesv's test; where a pivot is at rounding level (a numerically
/// singular), or refinement stagnates (badly conditioned a, NaN/Inf), it falls back to LU with
/// partial pivoting, which raises SingularMatrix as the plain solve does, and logs that at info
/// level; it synchronizes the stream once per refinement step, also with check_info = false); automatic, the fastest choice that returns working-precision accuracy: rbt on a
/// GPU for n >= 512 (float64, 16 right-hand sides on an H200: n = 8192 16.6 ms against 45.1 ms
/// for the plain solve, n = 512 1.2 against 1.6 ms), else the plain solve; or a fixed lower inner precision through cuSOLVER IRS
/// (cusolverDnIRSXgesv, fallback to working precision enabled, iterations logged at info
/// level): f32 (float64 data), tf32, f16, bf16. Through IRS no lower precision is faster on the
/// H200 (n = 8192 float64: plain LU 42-45 ms; float32 factors 48-58 ms; tf32/f16/bf16 52-60 ms
/// when they converge, 230-300 ms when they fall back), so automatic never takes it. f32 for
/// float32/complex64 data is the plain solve. Refined results meet the stopping test above,
/// which can be a little less accurate than an unusually good plain solve. The CPU backend
/// accepts every value and computes the plain LU solve in working precision.
enum class Refine : uint8_t { none, automatic, f32, tf32, f16, bf16, rbt };

struct SolveOptions : LinalgOptions {
  Assume assume_a = Assume::gen;
  Refine refine = Refine::none;
  /// For assume_a pos and sym: read a's lower triangle (else the upper), as scipy.linalg.solve.
  bool lower = false;
};
/// x with a x = b. b is (n,) or (..., n, k); batch dimensions broadcast. info[i] = k > 0:
/// singular (U[k-1, k-1] or, for sym on the CPU, D[k-1, k-1] is exactly zero) or, for pos, not
/// positive definite at order k. info has the broadcast batch shape.
Factor solve_ex(const TensorView& a, const TensorView& b, const SolveOptions& options = {},
                Stream stream = {});
/// solve_ex(...).value.
Tensor solve(const TensorView& a, const TensorView& b, const SolveOptions& options = {},
             Stream stream = {});

/// Inverse of each matrix; info as lu_factor's. inv(...) is inv_ex(...).value.
Factor inv_ex(const TensorView& a, const LinalgOptions& options = {}, Stream stream = {});
Tensor inv(const TensorView& a, const LinalgOptions& options = {}, Stream stream = {});

/// Determinant from the LU factorization (same dtype as a; 1 for n = 0). Singular matrices give
/// 0, never an error.
Tensor det(const TensorView& a, const LinalgOptions& options = {}, Stream stream = {});
/// sign (same dtype as a: +-1, a unit complex number for complex a, 0 when singular) and
/// log|det| (real dtype, -inf when singular), as numpy.linalg.slogdet.
struct Slogdet {
  Tensor sign;
  Tensor logabsdet;
};
Slogdet slogdet(const TensorView& a, const LinalgOptions& options = {}, Stream stream = {});

/// QR of each (..., m, n) matrix, as numpy.linalg.qr (k = min(m, n)): reduced gives q (..., m, k)
/// and r (..., k, n); complete gives q (..., m, m) and r (..., m, n); r gives r (..., k, n) only
/// (q undefined). q has orthonormal columns, r is upper triangular (zero below the diagonal);
/// signs follow LAPACK's Householder QR (geqrf), which may differ from other libraries.
enum class QrMode : uint8_t { reduced, complete, r };
struct QR {
  Tensor q;
  Tensor r;
};
QR qr(const TensorView& a, QrMode mode = QrMode::reduced, const LinalgOptions& options = {},
      Stream stream = {});

/// Least squares for each (..., m, n) matrix a, as numpy.linalg.lstsq (batches as
/// torch.linalg.lstsq): x minimizes ||a x - b|| (minimum-norm when a is rank-deficient or m < n).
/// b is (m,) (shared by the batch; x is (..., n)) or (..., m, k) with batch dimensions
/// broadcasting against a's (x is (..., n, k)).
/// CPU: LAPACK ?gelsd (SVD, any rank); singular values s[i] <= rcond * s[0] count as zero, with
/// rcond = eps * max(m, n) by default (NumPy's; a negative rcond means eps); a containing Inf or
/// NaN raises LinAlgError naming the batch item (a is scanned first: gelsd would not return).
/// rank (int32, batch shape) and the singular values s (real dtype, batch + (min(m, n),),
/// descending) come with x.
/// GPU: Householder QR (m >= n: geqrf, ormqr/unmqr, trsm; m < n: the same on a^H), which assumes
/// a has full rank: rank-deficient input gives Inf/NaN or meaningless values, never an error;
/// rcond is not used, and rank and s are undefined (torch's "gels" driver).
/// The sums of squared residuals ||a x - b||^2 per column are not returned (the Python layer
/// computes them from x).
struct LstsqOptions : LinalgOptions {
  /// Relative cut-off for small singular values (CPU); nullopt: eps * max(m, n).
  std::optional<double> rcond;
};
struct Lstsq {
  Tensor x;
  Tensor rank;  ///< undefined on a GPU
  Tensor s;     ///< undefined on a GPU
};
Lstsq lstsq_ex(const TensorView& a, const TensorView& b, const LstsqOptions& options = {},
               Stream stream = {});
/// lstsq_ex(...).x.
Tensor lstsq(const TensorView& a, const TensorView& b, const LstsqOptions& options = {},
             Stream stream = {});

/// Eigenvalues and eigenvectors of each Hermitian (real symmetric) matrix, as numpy.linalg.eigh
/// / scipy.linalg.eigh: w (real dtype of a, shape (..., n)) ascending, and v (a's dtype, shape
/// (..., n, n)) whose column j is the unit eigenvector of w[..., j] (a v = v diag(w), v^H v = I;
/// each column's sign/phase is the library's). Only the lower (or upper) triangle of a is read.
/// eigvals_only leaves v undefined (not computed). CPU: LAPACK ?syevd/?heevd. GPU:
/// cusolverDnXsyevd, or cusolverDn<t>syevjBatched (Jacobi) for batches of order <= 32.
/// info (int32, batch shape): k > 0 where the algorithm did not converge; with check_info (the
/// default) that raises LinAlgError naming the batch item. NaN or Inf input never crashes: it
/// gives NaN results (or LinAlgError / info > 0 where the solver reports it).
/// Full spectrum only: selecting a subset (top-k, index or value ranges) is not there yet.
struct Eigh {
  Tensor w;
  Tensor v;
  Tensor info;
};
Eigh eigh(const TensorView& a, bool lower = true, bool eigvals_only = false,
          const LinalgOptions& options = {}, Stream stream = {});
/// eigh(a, lower, true, ...).w.
Tensor eigvalsh(const TensorView& a, bool lower = true, const LinalgOptions& options = {},
                Stream stream = {});

/// Eigenvalues and right eigenvectors of each general (non-symmetric) square matrix, as
/// numpy.linalg.eig / torch.linalg.eig: w (complex, shape (..., n): complex64 for float32 and
/// complex64 input, complex128 for float64 and complex128) and v (same complex dtype, shape
/// (..., n, n)) whose column j is a unit (2-norm) right eigenvector of w[..., j], so
/// a v = v diag(w). Unlike NumPy, w is complex even when every eigenvalue is real. Order and
/// phases are LAPACK's: eigenvalues are not sorted; for real a the complex eigenvalues come in
/// conjugate pairs (positive imaginary part first, exactly conjugate) and so do their
/// eigenvectors, whose largest component is real. Defective matrices (a Jordan block) give
/// finite w and (nearly) parallel columns of v. eigvals_only leaves v undefined (not computed).
/// CPU: LAPACK ?geev (jobvl 'N'). GPU: cusolverDnXgeev (CUDA 12.6+) per matrix of the batch,
/// real input in LAPACK's real packed form, unpacked to complex on the device (a real dtype that
/// this cuSOLVER refuses in its workspace query is widened to complex and solved as such, logged
/// at debug level; its pairs are then conjugate only to rounding).
/// info (int32, batch shape): k > 0 where the QR algorithm did not converge (then w and v of
/// that matrix are undefined); with check_info (the default) that raises LinAlgError naming the
/// batch item. NaN or Inf input never crashes: that matrix's w and v are NaN (info 0).
struct Eig {
  Tensor w;
  Tensor v;
  Tensor info;
};
Eig eig(const TensorView& a, bool eigvals_only = false, const LinalgOptions& options = {},
        Stream stream = {});
/// Eigenvalues only (v not computed) and info, as eig(a, true, ...) but with messages naming
/// linalg.eigvals. eigvals(...) is eigvals_ex(...).value.
Factor eigvals_ex(const TensorView& a, const LinalgOptions& options = {}, Stream stream = {});
Tensor eigvals(const TensorView& a, const LinalgOptions& options = {}, Stream stream = {});
/// Singular value decomposition of each (..., m, n) matrix, as numpy.linalg.svd (K = min(m, n)):
/// a = u diag(s) vh with s (real dtype of a, shape (..., K)) descending and non-negative;
/// full_matrices (the default, as NumPy's) gives the square unitary u (..., m, m) and vh
/// (..., n, n), full_matrices = false the economy u (..., m, K) with orthonormal columns and vh
/// (..., K, n) with orthonormal rows. compute_uv = false computes s only (u and vh undefined).
/// Signs/phases of singular vector pairs are the solver's. Empty matrices (K = 0) give an empty
/// s, and with full_matrices identity u and vh, as NumPy.
/// CPU: LAPACK ?gesdd (divide and conquer) for every method; the method is ignored there.
/// GPU (cuSOLVER), by method:
///  - gesvd: cusolverDnXgesvd (QR iteration), looped over the batch.
///  - gesvdj: one-sided Jacobi, cusolverDn<t>gesvdj per matrix; batches of m, n <= 32 take
///    cusolverDn<t>gesvdjBatched in one call.
///  - gesvdp: cusolverDnXgesvdp (polar decomposition + eigensolver), looped; it synchronizes
///    once per matrix and may shift singular values near zero by a small perturbation (its
///    h_err_sigma is logged at debug level). An item whose h_err_sigma is past sqrt(eps) s[0]
///    is unreliable (seen: Gaussian float32 matrices of order >= 2048, reconstruction errors
///    50-80): it gets info = min(m, n) + 1, a "did not converge" LinAlgError with check_info,
///    and a warning naming h_err_sigma.
///  - gesvda: cusolverDn<t>gesvdaStridedBatched, approximate (through a^H a; singular values to
///    about single precision relative to s[0], u of tiny singular values inaccurate), one call for
///    the batch; economy u/vh only: full_matrices with m != n raises NotSupported.
///  - jacobi_batched: gpula's own batched one-sided Jacobi kernel (one thread block per
///    matrix, held in shared memory; real float32/float64 batches whose matrix and right
///    vectors fit in a block's shared memory, e.g. up to 128 x 128 float32 or 90 x 90 float64;
///    economy u/vh, or full when m == n). cuSOLVER has no batched SVD past 32 x 32 other than the
///    approximate gesvda. Accuracy as gesvdj's: orthogonality and reconstruction to a few
///    sqrt(m) eps; zero singular values get an orthonormal completion of u. Other shapes and
///    types raise NotSupported.
///  - automatic: gesvdjBatched for batches of m, n <= 32; jacobi_batched for other batches it
///    takes; gesvd for min(m, n) >= 1024 (gesvdj's default 100 sweeps left an orthogonality
///    error of 1.3e-1 at 4096^2 float32 on an H200); gesvdj otherwise; the choice is logged at
///    debug level. (Python's method="auto" first tries its float64 Gram method for large
///    float32 / complex64 GPU matrices: python/gpula/_linalg_svd_gram.py.)
/// gesvd, gesvdp and gesvda need m >= n; a wide matrix is decomposed through its transpose
/// (a^T = v s u^T), invisible to the caller. Workspaces come from the stream-ordered pool.
/// info (int32, batch shape): k > 0 where the algorithm did not converge; with check_info (the
/// default) that raises LinAlgError naming the batch item. NaN or Inf input never crashes: the
/// CPU returns NaN s, u and vh for such a matrix; the GPU returns NaN results or info > 0.
enum class SvdMethod : uint8_t { automatic, gesvd, gesvdj, gesvdp, gesvda, jacobi_batched };
struct Svd {
  Tensor u;
  Tensor s;
  Tensor vh;
  Tensor info;
};
Svd svd(const TensorView& a, bool full_matrices = true, bool compute_uv = true,
        SvdMethod method = SvdMethod::automatic, const LinalgOptions& options = {},
        Stream stream = {});
/// svd(a, false, false, method, ...).s: the singular values (..., K), descending.
Tensor svdvals(const TensorView& a, SvdMethod method = SvdMethod::automatic,
               const LinalgOptions& options = {}, Stream stream = {});

// ---- eigh_generalized, ldl_factor (issue 22) -------------------------------------------------

/// The generalized symmetric-definite eigenproblem of each pair (a, b), as scipy.linalg.eigh(a,
/// b, type=...): type 1 solves a v = w b v, type 2 a b v = w v, type 3 b a v = w v, with a
/// Hermitian and b Hermitian positive definite (only the lower, or upper, triangle of each is
/// read). w (real dtype, shape (..., n)) ascending; v (a's dtype) with columns normalized as
/// LAPACK does: v^H b v = I (types 1 and 2), v^H inv(b) v = I (type 3). a and b share dtype and
/// device; their batch dimensions broadcast. CPU: LAPACK ?sygvd/?hegvd; GPU: cusolverDn<t>sygvd
/// (hegvd) per matrix. info (int32, batch shape): k in 1..n where the eigensolver did not
/// converge, n + k where b's leading minor of order k is not positive definite; with check_info
/// (the default) those raise LinAlgError and NotPositiveDefinite naming the batch item.
Eigh eigh_generalized(const TensorView& a, const TensorView& b, int type = 1, bool lower = true,
                      bool eigvals_only = false, const LinalgOptions& options = {},
                      Stream stream = {});

/// Bunch-Kaufman (diagonal pivoting) factorization of each symmetric, or with `hermitian`
/// Hermitian, matrix, as LAPACK ?sytrf/?hetrf return it (scipy.linalg.ldl's first step): ldu
/// (a's dtype, row-major) holds D's blocks and the multipliers of L (lower) or U below (above)
/// the diagonal, the other triangle undefined; pivots (int32, (..., n)) are LAPACK's 1-based
/// ipiv (negative pairs mark 2 x 2 blocks). For real a, `hermitian` does not matter. info
/// (int32, batch shape): k > 0 where D[k-1, k-1] is exactly zero; the factorization is complete
/// and no error is raised (scipy's rule). CPU: LAPACK; GPU: cusolverDn<t>sytrf, except complex
/// Hermitian input (cuSOLVER has no hetrf), which is factored on the host (logged at info level).
struct Ldl {
  Tensor ldu;
  Tensor pivots;
  Tensor info;
};
Ldl ldl_factor(const TensorView& a, bool lower = true, bool hermitian = true,
               const LinalgOptions& options = {}, Stream stream = {});

// ---- matrix functions for second-order optimizers; grouped calls (issue 20) ------------------

/// Muon's Newton-Schulz coefficients (a, b, c) (Jordan et al.'s quintic iteration).
inline constexpr std::array<double, 3> kMuonCoefficients{3.4445, -4.7750, 2.0315};

struct OrthogonalizeOptions : CommonOptions {
  /// Newton-Schulz steps (>= 0).
  int steps = 5;
  /// (a, b, c) of each step X <- a X + (b A + c A A) X, A = X X^T; finite.
  std::array<double, 3> coefficients = kMuonCoefficients;
  /// The dtype the iteration runs in: bf16 (Muon's), f16, f32, f64, or nullopt for g's own. On
  /// a GPU the three products of a step run in it (cuBLASLt, float32 accumulation for bf16 and
  /// f16). On the CPU bf16 and f16 iterate in float32 (the CPU has no faster half-precision
  /// path; rounding to bf16 after each product would only lose accuracy), so CPU and GPU
  /// results differ by bf16 rounding.
  std::optional<DType> dtype = DType::bf16;
  /// Added to each matrix's Frobenius norm before the division (finite, >= 0).
  double eps = 1e-7;
  /// X X^T and A A (symmetric) as the blocks of their lower triangle only: 4 row blocks (10 of
  /// 16 blocks: 62.5% of their FLOPs), one strided-batched matmul per block diagonal of a single
  /// matrix (per block below the main diagonal of a stack, which a matmul's one batch stride
  /// cannot cover without copying), mirrored by strided copies. nullopt: on a GPU for iterates
  /// of >= 2048 rows (a multiple of 64), where the blocks stay large GEMMs; true: always (the
  /// iterate's rows, min(m, n), a multiple of 4); false: never. On the CPU it loses (1.35x
  /// slower at 1024^2 float32 on 2 cores: smaller GEMMs, and the mirroring copies cost more
  /// than the FLOPs saved).
  std::optional<bool> symmetric_products;
};
/// The Newton-Schulz approximation of the orthogonal polar factor of each (..., m, n) matrix of
/// g that Muon applies to its updates: X = G / (||G||_F + eps) (the norm summed in double),
/// transposed when m > n (X X^T is then the smaller square), then `steps` times A = X X^T,
/// B = c A A + b A, X = B X + a X, each a single gpula::matmul with the sums folded into its
/// alpha and beta (in options.dtype). The result, (..., m, n) in g's dtype (f16, bf16, f32 or
/// f64; complex and integer g raise DTypeError), has singular values near 1 (about 0.7 to 1.2
/// with Muon's coefficients), not exactly 1. g may have any strides; empty g gives an empty
/// result. The normalisation and the dtype conversions are element-wise passes (a kernel on a
/// GPU); nothing synchronizes unless options.blocking.
Tensor orthogonalize(const TensorView& g, const OrthogonalizeOptions& options = {},
                     Stream stream = {});

struct InvRootOptions : CommonOptions {
  /// Raise eigenvalues at or below the rounding floor (see inv_root) to that floor instead of
  /// raising NotPositiveDefinite.
  bool clip = false;
};
/// (A + eps I)^(-1/p) of each symmetric (Hermitian) positive definite (..., n, n) matrix, p >= 1,
/// eps finite >= 0 (Shampoo's preconditioner), as V diag((w + eps)^(-1/p)) V^H from eigh (only
/// the lower triangle of a is read; the eigenvalues of a + eps I are taken as w + eps). The
/// floor of each matrix is n eps_dtype max|w + eps| (eps_dtype: the machine epsilon of a's
/// real type): an item whose smallest eigenvalue is at or below it raises NotPositiveDefinite
/// ("a (+ eps I) is not positive definite: smallest eigenvalue ... (batch index b)";
/// batch_index() = b, the flat batch position, 0 for a single matrix; order() = 0: no leading
/// minor), unless options.clip raises such eigenvalues to the floor. f32, f64, c64, c128.
/// The eigenvalues are read on the host (one synchronization) and an eigh that did not
/// converge always raises LinAlgError. n = 0 or an empty batch gives an empty result.
Tensor inv_root(const TensorView& a, int p, double eps = 0.0, const InvRootOptions& options = {},
                Stream stream = {});

struct SqrtmPsdOptions : CommonOptions {
  /// Count negative eigenvalues as zero; with false, one below -floor (inv_root's floor)
  /// raises NotPositiveDefinite ("a is not positive semidefinite ...").
  bool clip = true;
};
/// The positive semidefinite square root V diag(sqrt(max(w, 0))) V^H of each symmetric
/// (Hermitian) positive semidefinite (..., n, n) matrix, from eigh (lower triangle read), as
/// scipy.linalg.sqrtm on such input. Dtypes, synchronization and errors as inv_root's.
Tensor sqrtm_psd(const TensorView& a, const SqrtmPsdOptions& options = {}, Stream stream = {});

/// Which side p stands on: a = u p (right, p (..., n, n)) or a = p u (left, p (..., m, m)).
enum class PolarSide : uint8_t { right, left };
struct Polar {
  Tensor u;  // (..., m, n): orthonormal columns (m >= n) or rows (m < n)
  Tensor p;  // Hermitian positive semidefinite
};
/// The polar decomposition of each (..., m, n) matrix, as scipy.linalg.polar: from the thin SVD
/// a = W S V^H (svd, full_matrices=false, SvdMethod::automatic), u = W V^H and p = V S V^H
/// (right) or W S W^H (left), each product one gpula::matmul, then p made exactly Hermitian,
/// (p + p^H) / 2 (an element-wise pass; a kernel on a GPU). f32, f64, c64, c128, any strides.
/// An SVD that did not converge always raises LinAlgError. Empty a gives u of a's shape and a
/// zero p (an empty batch: empty results). Nothing synchronizes but that info check.
Polar polar(const TensorView& a, PolarSide side = PolarSide::right,
            const CommonOptions& options = {}, Stream stream = {});

/// Grouped forms: a list of matrices (or batches) of different shapes, one result per item in
/// the list's order, computed by one batched call per distinct (shape, dtype, device): the
/// items of such a bucket are stacked (copied into one (k, ...) batch on their device) and the
/// results are views of the batched results (an item alone in its bucket is computed as it
/// is). An item that is not a matrix (fewer than two dimensions) raises InvalidArgument naming
/// it ("a[i]"); an error of a batched call gets " (list item i)" appended (its class and
/// fields kept): the item is found from the error's batch index (batch_index() becomes i where
/// the item is one matrix, else the index within the item), or, where the error has none, by
/// running the bucket's items one at a time; " (list items i, j, ...)" when none of them fails
/// alone. An empty list gives an empty vector.
std::vector<Eigh> eigh(std::span<const TensorView> a, bool lower = true, bool eigvals_only = false,
                       const LinalgOptions& options = {}, Stream stream = {});
std::vector<Factor> cholesky(std::span<const TensorView> a, bool lower = true,
                             const LinalgOptions& options = {}, Stream stream = {});
std::vector<Tensor> orthogonalize(std::span<const TensorView> g,
                                  const OrthogonalizeOptions& options = {}, Stream stream = {});
std::vector<Tensor> inv_root(std::span<const TensorView> a, int p, double eps = 0.0,
                             const InvRootOptions& options = {}, Stream stream = {});
std::vector<Tensor> sqrtm_psd(std::span<const TensorView> a, const SqrtmPsdOptions& options = {},
                              Stream stream = {});
std::vector<Polar> polar(std::span<const TensorView> a, PolarSide side = PolarSide::right,
                         const CommonOptions& options = {}, Stream stream = {});

}  // namespace gpula::linalg
