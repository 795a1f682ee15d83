#pragma once
// Backends of the planned SpMV y = alpha op(A) x + beta y: gpula's OpenMP CSR kernel on the CPU,
// cuSPARSE on a GPU. One factory per backend makes the plan for a validated A and a checked op.
#include <gpula/sparse.h>

#include <memory>

namespace gpula::sparse::detail {

class SpmvBackendPlan {
 public:
  virtual ~SpmvBackendPlan() = default;
  // x and y checked by the front: 1-D, contiguous, A's dtype and device; `stream` on A's device.
  virtual void execute(const TensorView& x, const TensorView& y, double alpha, double beta,
                       Stream stream) = 0;
};

namespace cpu {
std::unique_ptr<SpmvBackendPlan> make_spmv_plan(const CsrView& a, Op op);
}
namespace cuda {
// The CSR descriptor made here; the vector descriptors, buffer and preprocessing on first execute.
std::unique_ptr<SpmvBackendPlan> make_spmv_plan(const CsrView& a, Op op);
}  // namespace cuda

}  // namespace gpula::sparse::detail
