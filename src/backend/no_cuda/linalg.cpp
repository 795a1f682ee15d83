// Built when gpula has no CUDA backend: every linalg backend entry throws NotCompiled("cuda").
#include <gpula/error.h>

#include "linalg/eig_backend.h"
#include "linalg/eigh_backend.h"
#include "linalg/eigh_generalized_backend.h"
#include "linalg/ldl_backend.h"
#include "linalg/matrix_functions_backend.h"
#include "linalg/qr_backend.h"
#include "linalg/solve_backend.h"
#include "linalg/svd_backend.h"
#include "linalg/triangular_backend.h"

namespace gpula::detail::cuda {

const SolveBackend& solve_backend() { throw NotCompiled("cuda"); }
const EigBackend& eig_backend() { throw NotCompiled("cuda"); }
const EighBackend& eigh_backend() { throw NotCompiled("cuda"); }
const QrBackend& qr_backend() { throw NotCompiled("cuda"); }
const SvdBackend& svd_backend() { throw NotCompiled("cuda"); }
const TriangularBackend& triangular_backend() { throw NotCompiled("cuda"); }
const EighGeneralizedBackend& eigh_generalized_backend() { throw NotCompiled("cuda"); }
const LdlBackend& ldl_backend() { throw NotCompiled("cuda"); }
const MatrixFunctionsBackend& matrix_functions_backend() { throw NotCompiled("cuda"); }

}  // namespace gpula::detail::cuda
