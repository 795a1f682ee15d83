// Built when gpula has no CUDA backend: the QR backend is not there.
#include <gpula/error.h>

#include "linalg_qr_problem.h"

namespace gpula::detail::cuda {

const QrBackend& qr_backend() { throw NotCompiled("cuda"); }

}  // namespace gpula::detail::cuda
