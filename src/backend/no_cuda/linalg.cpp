// Built when gpula has no CUDA backend: the linalg backend is not there.
#include <gpula/error.h>

#include "linalg_problem.h"

namespace gpula::detail::cuda {

const LinalgBackend& linalg_backend() { throw NotCompiled("cuda"); }

}  // namespace gpula::detail::cuda
