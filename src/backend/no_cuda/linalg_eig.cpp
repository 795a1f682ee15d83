// Built when gpula has no CUDA backend: the general eigensolver backend is not there.
#include <gpula/error.h>

#include "linalg_eig_problem.h"

namespace gpula::detail::cuda {

const EigBackend& eig_backend() { throw NotCompiled("cuda"); }

}  // namespace gpula::detail::cuda
