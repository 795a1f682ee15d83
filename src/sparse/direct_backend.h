#pragma once
// The interface between the DirectSolver front (argument and state checks) and a backend.
#include <gpula/sparse_direct.h>

#include "sparse/ordering.h"

#include <memory>
#include <string>

namespace gpula::sparse::detail {

/// One factorization of one matrix pattern. The front guarantees the phase order and the
/// shapes, dtypes and devices of every argument.
class DirectBackend {
 public:
  virtual ~DirectBackend() = default;
  virtual void analyze() = 0;                             // reordering + symbolic analysis
  virtual void factorize() = 0;                           // numeric (re)factorization
  virtual void set_values(const TensorView& values) = 0;  // (nnz,), A's dtype and device
  /// b and x: contiguous (n,) or (n, k) row-major.
  virtual void solve(const TensorView& b, const TensorView& x) = 0;
  /// The library's own ordering, by name ("cudss", "cholmod", "umfpack").
  virtual std::string library_ordering() const = 0;
  /// Whether use_ordering() is supported.
  virtual bool takes_ordering() const { return false; }
  /// For the next analyze(): gpula's nested dissection instead of the library's ordering.
  virtual void use_ordering(const NestedDissection& nd);
};

namespace cpu {
/// SuiteSparse: CHOLMOD supernodal Cholesky for MatrixType::positive_definite, UMFPACK LU for the
/// other types (the pattern's ordering and symbolic analysis kept between refactorizations).
std::unique_ptr<DirectBackend> make_direct_backend(const CsrView& a,
                                                   const DirectSolverOptions& options);
}  // namespace cpu

namespace cuda {
/// cuDSS (only built when cudss.h and libcudss were found: GPULA_WITH_CUDSS).
std::unique_ptr<DirectBackend> make_direct_backend(const CsrView& a,
                                                   const DirectSolverOptions& options,
                                                   Stream stream);
}  // namespace cuda

}  // namespace gpula::sparse::detail
