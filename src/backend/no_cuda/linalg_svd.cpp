// Built when gpula has no CUDA backend: the SVD backend is not there.
#include <gpula/error.h>

#include "linalg_svd_problem.h"

namespace gpula::detail::cuda {

const SvdBackend& svd_backend() { throw NotCompiled("cuda"); }

}  // namespace gpula::detail::cuda
