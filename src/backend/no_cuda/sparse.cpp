// Built when gpula has no CUDA backend: the cuSPARSE products and the device-resident Krylov
// loop throw NotCompiled("cuda").
#include <gpula/error.h>

#include "sparse/iterative_backend.h"
#include "sparse/products_backend.h"
#include "sparse/spmv_backend.h"

namespace gpula::sparse::detail {

struct CudaSpmvPlan {};
struct CudaSpmmPlan {};
struct CudaSddmmPlan {};

std::shared_ptr<CudaSpmvPlan> cuda_spmv_plan(const CsrView&, Op) { throw NotCompiled("cuda"); }
void cuda_spmv_execute(CudaSpmvPlan&, const TensorView&, const TensorView&, double, double,
                       Stream) {
  throw NotCompiled("cuda");
}
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

namespace gpula::sparse::cuda {

IterativeResult iterative_solve(const IterativeProblem&, const TensorView&, const TensorView&,
                                const IterativeOptions&, Stream) {
  throw NotCompiled("cuda");
}

}  // namespace gpula::sparse::cuda
