// Built when gpula has no CUDA backend: a cuBLASLt plan cannot be made.
#include <gpula/error.h>

#include "matmul/grouped_backend.h"
#include "matmul/matmul_backend.h"
#include "matmul/quantize_backend.h"

namespace gpula::detail::cuda {

std::unique_ptr<MatmulBackendPlan> make_matmul_plan(const MatmulProblem&, const PlanPreferences&,
                                                    int64_t, const LogSink&) {
  throw NotCompiled("cuda");
}

void quantize_fp8(const QuantizeProblem&, const void*, void*, float*, Stream) {
  throw NotCompiled("cuda");
}

std::unique_ptr<GroupedBackendPlan> make_grouped_plan(const GroupedProblem&, GroupedAlgo, int64_t,
                                                      const LogSink&) {
  throw NotCompiled("cuda");
}

}  // namespace gpula::detail::cuda
