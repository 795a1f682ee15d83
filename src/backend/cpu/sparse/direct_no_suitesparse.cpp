// Built when SuiteSparse was not found: the CPU DirectSolver backend throws NotCompiled.
#include <gpula/error.h>

#include "sparse/direct_backend.h"

namespace gpula::sparse::detail::cpu {

std::unique_ptr<DirectBackend> make_direct_backend(const CsrView&, const DirectSolverOptions&) {
  throw NotCompiled("suitesparse");
}

}  // namespace gpula::sparse::detail::cpu
