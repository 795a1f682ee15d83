// Built when gpula has no CUDA backend: the cuSPARSE products and the device-resident Krylov
// loop throw NotCompiled("cuda").
#include <gpula/error.h>

#include "sparse/iterative_backend.h"
#include "sparse/sddmm_backend.h"
#include "sparse/spgemm_backend.h"
#include "sparse/spmm_backend.h"
#include "sparse/spmv_backend.h"

namespace gpula::sparse::detail::cuda {

std::unique_ptr<SpmvBackendPlan> make_spmv_plan(const CsrView&, Op) { throw NotCompiled("cuda"); }
std::unique_ptr<SpmmBackendPlan> make_spmm_plan(const CsrView&, Op) { throw NotCompiled("cuda"); }
std::unique_ptr<SddmmBackendPlan> make_sddmm_plan(const CsrView&) { throw NotCompiled("cuda"); }
CsrMatrix spgemm(const CsrView&, const CsrView&, Stream) { throw NotCompiled("cuda"); }

IterativeResult iterative_solve(const IterativeProblem&, const TensorView&, const TensorView&,
                                const IterativeOptions&, Stream) {
  throw NotCompiled("cuda");
}

}  // namespace gpula::sparse::detail::cuda
