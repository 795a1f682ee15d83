#pragma once
// Backends of the planned SDDMM c.values = alpha (A B) o spy(C) + beta c.values: gpula's OpenMP
// kernel on the CPU, cuSPARSE on a GPU. One factory per backend makes the plan for a validated C
// with stored values (the front skips nnz = 0).
#include <gpula/sparse.h>

#include <memory>

namespace gpula::sparse::detail {

class SddmmBackendPlan {
 public:
  virtual ~SddmmBackendPlan() = default;
  // A (m, k) and B (k, n) checked by the front (C's dtype and device, any strides); `stream` on
  // C's device.
  virtual void execute(const TensorView& a, const TensorView& b, double alpha, double beta,
                       Stream stream) = 0;
};

namespace cpu {
std::unique_ptr<SddmmBackendPlan> make_sddmm_plan(const CsrView& c);
// The kernel itself, on host arrays (the CUDA plan's k = 0 case runs it on a host copy of C).
void sddmm(const CsrView& c, const TensorView& a, const TensorView& b, double alpha, double beta);
}  // namespace cpu
namespace cuda {
std::unique_ptr<SddmmBackendPlan> make_sddmm_plan(const CsrView& c);
}

}  // namespace gpula::sparse::detail
