// Built when gpula has no CUDA backend: the eigensolver backend is not there.
#include <gpula/error.h>

#include "linalg_eigh_problem.h"

namespace gpula::detail::cuda {

const EighBackend& eigh_backend() { throw NotCompiled("cuda"); }

}  // namespace gpula::detail::cuda
