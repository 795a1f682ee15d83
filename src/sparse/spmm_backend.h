#pragma once
// Backends of the planned SpMM C = alpha op(A) B + beta C: gpula's OpenMP kernel on the CPU,
// cuSPARSE on a GPU. One factory per backend makes the plan for a validated A and a checked op.
#include <gpula/sparse.h>

#include <memory>

namespace gpula::sparse::detail {

class SpmmBackendPlan {
 public:
  virtual ~SpmmBackendPlan() = default;
  // B (k, n) and C (m, n) checked by the front (A's dtype and device, any strides, C not empty);
  // `stream` on A's device.
  virtual void execute(const TensorView& b, const TensorView& c, double alpha, double beta,
                       Stream stream) = 0;
};

namespace cpu {
// For op != none the plan keeps the (conjugated) transpose of A as CSR.
std::unique_ptr<SpmmBackendPlan> make_spmm_plan(const CsrView& a, Op op);
// c = beta c on the host, any strides: where no product term exists (k = 0 or nnz = 0).
void scale(const TensorView& c, double beta);
}  // namespace cpu
namespace cuda {
std::unique_ptr<SpmmBackendPlan> make_spmm_plan(const CsrView& a, Op op);
}

}  // namespace gpula::sparse::detail
