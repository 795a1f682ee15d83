// Built when gpula has no CUDA backend: the cuSPARSE SpMM / SDDMM / SpGEMM entry points throw
// NotCompiled.
#include <gpula/error.h>

#include "../../sparse_products_backend.h"

namespace gpula::sparse::detail {

struct CudaSpmmPlan {};
struct CudaSddmmPlan {};

std::shared_ptr<CudaSpmmPlan> cuda_spmm_plan(const CsrView&, Op) { throw NotCompiled("cuda"); }
void cuda_spmm_execute(CudaSpmmPlan&, const TensorView&, const TensorView&, double, double,
                       Stream) {
  throw NotCompiled("cuda");
}
std::shared_ptr<CudaSddmmPlan> cuda_sddmm_plan(const CsrView&) { throw NotCompiled("cuda"); }
void cuda_sddmm_execute(CudaSddmmPlan&, const TensorView&, const TensorView&, double, double,
                        Stream) {
  throw NotCompiled("cuda");
}
CsrMatrix cuda_spgemm(const CsrView&, const CsrView&, Stream) { throw NotCompiled("cuda"); }

}  // namespace gpula::sparse::detail
