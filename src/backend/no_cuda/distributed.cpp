// Built when gpula has no CUDA backend: the cusolverMg solvers of gpula::distributed are not
// there.
#include <gpula/error.h>

#include "distributed_mg.h"

namespace gpula::detail::cuda {

void mg_potrf(const MgCall&, DType, int64_t, void*, int*) { throw NotCompiled("cuda"); }
void mg_potrf_potrs(const MgCall&, DType, int64_t, int64_t, void*, void*, int*) {
  throw NotCompiled("cuda");
}
void mg_getrf_getrs(const MgCall&, DType, int64_t, int64_t, void*, void*, int*) {
  throw NotCompiled("cuda");
}
void mg_syevd(const MgCall&, DType, int64_t, void*, void*, bool, int*) {
  throw NotCompiled("cuda");
}

}  // namespace gpula::detail::cuda
