// Grouped matmul on the CPU: BLAS per group, through the CPU matmul plans.
#include "core/format.h"
#include "matmul/grouped_per_group.h"

namespace gpula::detail::cpu {

std::unique_ptr<GroupedBackendPlan> make_grouped_plan(const GroupedProblem& p, GroupedAlgo algo) {
  if (algo == GroupedAlgo::grouped_gemm)
    throw_error<NotSupported>("grouped_matmul", "grouped_algo 'grouped_gemm' is a CUDA path; the "
                              "CPU runs 'per_group' (BLAS per group)");
  return std::make_unique<PerGroupPlan>(
      p, [](const MatmulProblem& mp) { return make_matmul_plan(mp, PlanPreferences{}); });
}

}  // namespace gpula::detail::cpu
