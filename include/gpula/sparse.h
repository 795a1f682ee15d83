#pragma once
/// @file sparse.h
/// Sparse matrices (CSR, with COO and CSC converted to it) and what runs on them: products
/// (cuSPARSE on a GPU, gpula's own multithreaded kernels on the CPU), direct solvers
/// (sparse_direct.h: cuDSS / SuiteSparse) and iterative solvers (sparse_iterative.h).
///
/// The unit every sparse operation takes is a CsrView: three 1-D contiguous arrays on one device.
/// indptr (rows + 1) and indices (nnz) share one index dtype (int32 or int64); values (nnz) are
/// float32, float64, complex64 or complex128.
///
/// Trust: every operation that takes a CsrView validates it in full (validate_csr: structure and
/// contents, O(nnz); GPU index arrays are copied to the host for it) before it reads an index:
/// a plan (SpMV, SpMM, SDDMM, DirectSolver) once at construction, a one-off function (spmm,
/// spgemm, the Krylov solvers) at every call. The arrays must then keep their pattern while a
/// plan uses them. A CsrMatrix is validated once, when built, and owns its pattern (indptr and
/// indices are copied then; values stay shared), so the overloads that take a CsrMatrix do not
/// validate again: they are the way to validate once and use many times.
#include <gpula/options.h>
#include <gpula/tensor.h>

#include <cstdint>
#include <memory>
#include <string_view>

namespace gpula::sparse {

/// Non-owning view of a CSR matrix's arrays.
struct CsrView {
  int64_t rows = 0;
  int64_t cols = 0;
  TensorView indptr;   ///< (rows + 1,), int32 or int64
  TensorView indices;  ///< (nnz,), indptr's dtype; column of each stored value
  TensorView values;   ///< (nnz,), f32 f64 c64 c128

  int64_t nnz() const { return values.shape.empty() ? 0 : values.shape[0]; }
  Device device() const { return values.device; }
  DType dtype() const { return values.dtype; }
  DType index_dtype() const { return indptr.dtype; }
};

/// Checks a CsrView's structure, not its contents: index and value dtypes, 1-D contiguous arrays
/// of non-negative lengths rows + 1, nnz, nnz, one device, rows/cols >= 0 (rows + 1 must fit in
/// int64). Throws InvalidArgument or
/// DTypeError whose message starts with "[op]" and names the array and the value.
void check_csr(const CsrView& a, std::string_view op);

/// Checks a CsrView's contents (after check_csr): indptr[0] == 0, indptr non-decreasing,
/// indptr[rows] == nnz, every index in [0, cols). GPU index arrays are copied to the host for
/// this (values are not read). Throws InvalidArgument naming the array and the position.
void validate_csr(const CsrView& a, std::string_view op);

/// Whether every row's column indices are strictly increasing (sorted, no duplicates). Host
/// arrays are read directly; GPU index arrays are copied to the host.
bool is_canonical(const CsrView& a);

/// A validated, canonical CSR matrix. It owns its pattern: the builders copy indptr and indices
/// (O(nnz), like the validation itself), so later writes to the caller's index arrays cannot
/// make it invalid. Values of canonical input are shared without a copy (in-place updates of
/// them are seen, e.g. for refactorization). Unsorted or duplicate entries are canonicalized
/// (columns sorted within rows, duplicates summed) into new arrays, values included.
/// Writing to the arrays indptr() and indices() return is not supported.
class CsrMatrix {
 public:
  CsrMatrix() = default;

  /// From CSR arrays: validated (validate_csr), the pattern copied, values shared when canonical
  /// (else a canonical copy of all three on the same device).
  static CsrMatrix from_csr(int64_t rows, int64_t cols, Tensor indptr, Tensor indices,
                            Tensor values, std::string_view op = "sparse.csr_matrix");
  /// From coordinates (row[k], col[k], values[k]); duplicates are summed. Always a copy.
  static CsrMatrix from_coo(int64_t rows, int64_t cols, const TensorView& row,
                            const TensorView& col, const TensorView& values,
                            std::string_view op = "sparse.csr_matrix");
  /// From CSC arrays (colptr: cols + 1, rowind: nnz). Always a copy.
  static CsrMatrix from_csc(int64_t rows, int64_t cols, const TensorView& colptr,
                            const TensorView& rowind, const TensorView& values,
                            std::string_view op = "sparse.csr_matrix");

  CsrView view() const;
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  int64_t nnz() const { return view().nnz(); }
  const Tensor& indptr() const { return indptr_; }
  const Tensor& indices() const { return indices_; }
  const Tensor& values() const { return values_; }

  /// This matrix's pattern (indptr and indices shared, no copy) with other values: a 1-D
  /// contiguous array of length nnz on the matrix's device, of any supported value dtype.
  /// Throws InvalidArgument / DTypeError naming `op` and "values".
  CsrMatrix with_values(Tensor values, std::string_view op = "sparse.with_values") const;

 private:
  // Arrays known to be a valid canonical CSR that no one else writes (built here): no checks.
  static CsrMatrix adopt(int64_t rows, int64_t cols, Tensor indptr, Tensor indices, Tensor values);

  int64_t rows_ = 0;
  int64_t cols_ = 0;
  Tensor indptr_, indices_, values_;
};

/// Which form of a sparse operand a product reads.
enum class Op : uint8_t { none, transpose, conjugate_transpose };

/// Planned sparse matrix-vector product y = alpha * op(A) x + beta * y, for loops that apply the
/// same matrix many times (iterative solvers): the cuSPARSE descriptors, buffer and
/// preprocessing are made once. x and y are 1-D contiguous arrays of A's dtype and device;
/// execute() is ordered on `stream` and does not synchronize. A view is validated at
/// construction and its arrays must outlive the plan; a CsrMatrix is kept alive by the plan.
class SpMV {
 public:
  SpMV(const CsrView& a, Op op = Op::none, const CommonOptions& options = {}, Stream stream = {});
  SpMV(const CsrMatrix& a, Op op = Op::none, const CommonOptions& options = {}, Stream stream = {});
  ~SpMV();
  SpMV(SpMV&&) noexcept;
  SpMV& operator=(SpMV&&) noexcept;
  SpMV(const SpMV&) = delete;
  SpMV& operator=(const SpMV&) = delete;

  void execute(const TensorView& x, const TensorView& y, double alpha = 1.0, double beta = 0.0,
               Stream stream = {});

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

/// Planned sparse-times-dense product C = alpha * op(A) B + beta * C (SpMM), for loops that
/// apply the same matrix to many right-hand blocks: on a GPU, the cuSPARSE descriptors, buffer and
/// preprocessing are made on the first execute and kept while B's and C's column count and leading
/// dimensions stay the same (made again when they change).
///
/// B is (op(A).cols, n) and C is (op(A).rows, n), 2-D arrays of A's dtype and device with any
/// strides. On a GPU, a B that is not row-major (strides (ld, 1)) is copied to a row-major
/// temporary first, and so is a C that is not (C is copied back after); cuSPARSE then runs
/// CUSPARSE_SPMM_CSR_ALG2 (row-major, deterministic) for op = none, ALG_DEFAULT otherwise.
/// On the CPU: gpula's OpenMP kernel, rows of C in parallel; op(A) = A^T / A^H is formed once per
/// plan as an explicit (conjugated) transposed CSR copy, so every product is a row-parallel
/// gather without atomics (memory: one more nnz-sized CSR). For real values A^H is A^T.
/// execute() is ordered on `stream` and does not synchronize. A view is validated at
/// construction and its arrays must outlive the plan; a CsrMatrix is kept alive by the plan.
/// Errors name "sparse.spmm", the argument ("b", "c") and the shape, dtype or device found.
class SpMM {
 public:
  SpMM(const CsrView& a, Op op = Op::none, const CommonOptions& options = {}, Stream stream = {});
  SpMM(const CsrMatrix& a, Op op = Op::none, const CommonOptions& options = {}, Stream stream = {});
  ~SpMM();
  SpMM(SpMM&&) noexcept;
  SpMM& operator=(SpMM&&) noexcept;
  SpMM(const SpMM&) = delete;
  SpMM& operator=(const SpMM&) = delete;

  void execute(const TensorView& b, const TensorView& c, double alpha = 1.0, double beta = 0.0,
               Stream stream = {});

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

/// C = op(A) B as a new row-major (op(A).rows, B.cols) tensor on A's device (a one-off SpMM;
/// a view is validated at every call).
Tensor spmm(const CsrView& a, const TensorView& b, Op op = Op::none, Stream stream = {});
Tensor spmm(const CsrMatrix& a, const TensorView& b, Op op = Op::none, Stream stream = {});

/// Planned sampled dense-dense product (SDDMM), cuSPARSE semantics:
///   C = alpha * (A B) o spy(C) + beta * C,
/// where C is a CSR matrix whose pattern is fixed at construction (its values are written),
/// A is dense (C.rows, k), B dense (k, C.cols), both of C's dtype and device, any strides, and
/// spy(C) is C's pattern (1 at stored positions). Each stored value c_ij becomes
/// alpha * sum_l A[i,l] B[l,j] + beta * c_ij; beta = 0 does not read C's values.
/// On a GPU: cusparseSDDMM (ALG_DEFAULT) with its buffer and cusparseSDDMM_preprocess made on the
/// first execute and kept while k and the leading dimensions stay the same; A or B that are not
/// row-major are copied to row-major temporaries. On the CPU: one dot product per stored value,
/// rows in parallel (OpenMP). Errors name "sparse.sddmm" and the argument ("a", "b", "c").
/// A view is validated at construction; a CsrMatrix is kept alive by the plan (its values are
/// the ones written).
class SDDMM {
 public:
  explicit SDDMM(const CsrView& c, const CommonOptions& options = {}, Stream stream = {});
  explicit SDDMM(const CsrMatrix& c, const CommonOptions& options = {}, Stream stream = {});
  ~SDDMM();
  SDDMM(SDDMM&&) noexcept;
  SDDMM& operator=(SDDMM&&) noexcept;
  SDDMM(const SDDMM&) = delete;
  SDDMM& operator=(const SDDMM&) = delete;

  /// Writes C's values (the view given at construction).
  void execute(const TensorView& a, const TensorView& b, double alpha = 1.0, double beta = 0.0,
               Stream stream = {});

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

/// mask's pattern with values (a b)[i, j] at the stored positions (mask's values are not read):
/// a new CsrMatrix sharing mask's indptr and indices (a one-off SDDMM with alpha 1, beta 0).
CsrMatrix sddmm(const CsrMatrix& mask, const TensorView& a, const TensorView& b,
                Stream stream = {});

/// Sparse-times-sparse product C = A B (SpGEMM) as a new canonical CsrMatrix on A's device.
/// A (m, k) and B (k, n) must share the value dtype, the index dtype and the device. C has their
/// index dtype; with int32 indices, nnz(C) must fit in int32 (else InvalidArgument; use int64).
/// Explicit zeros from cancellation are kept (the pattern is structural).
/// On a GPU: cusparseSpGEMM (ALG_DEFAULT: workEstimation, compute, copy; the nnz of C is read
/// back, so the call synchronizes `stream`). On the CPU: Gustavson's row-by-row algorithm,
/// rows in parallel (OpenMP), a dense accumulator of B.cols values per thread, a symbolic pass
/// to size C, column indices sorted within each row.
/// Errors name "sparse.spgemm" and the argument ("b") with the shape, dtype or device found.
/// Views are validated at every call; CsrMatrix operands were validated when built.
CsrMatrix spgemm(const CsrView& a, const CsrView& b, Stream stream = {});
CsrMatrix spgemm(const CsrMatrix& a, const CsrMatrix& b, Stream stream = {});

}  // namespace gpula::sparse
#include <gpula/sparse_direct.h>

#include <gpula/sparse_iterative.h>
