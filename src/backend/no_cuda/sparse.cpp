// Built when gpula has no CUDA backend: the cuSPARSE entry points throw NotCompiled.
#include <gpula/error.h>

#include "../../sparse_spmv_backend.h"

namespace gpula::sparse::detail {

struct CudaSpmvPlan {};

std::shared_ptr<CudaSpmvPlan> cuda_spmv_plan(const CsrView&, Op) { throw NotCompiled("cuda"); }
void cuda_spmv_execute(CudaSpmvPlan&, const TensorView&, const TensorView&, double, double,
                       Stream) {
  throw NotCompiled("cuda");
}

}  // namespace gpula::sparse::detail
