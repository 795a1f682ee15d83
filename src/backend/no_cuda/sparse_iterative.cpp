// Built when gpula has no CUDA backend: the device-resident Krylov loop is not there.
#include <gpula/error.h>

#include "sparse_iterative_problem.h"

namespace gpula::sparse::cuda {

IterativeResult iterative_solve(const IterativeProblem&, const TensorView&, const TensorView&,
                                const IterativeOptions&, Stream) {
  throw NotCompiled("cuda");
}

}  // namespace gpula::sparse::cuda
