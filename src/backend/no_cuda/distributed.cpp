// Built when gpula has no CUDA backend: the cusolverMg solvers of gpula::distributed are not
// there.
#include <gpula/error.h>

#include <string>

#include "distributed/mg_backend.h"

namespace gpula::detail::cuda {

namespace {

// NotCompiled naming the operation: "[distributed.cholesky] gpula was built without its cuda
// backend".
class MgNotCompiled final : public NotCompiled {
 public:
  explicit MgNotCompiled(const char* op)
      : NotCompiled("cuda"), msg_(std::string("[") + op + "] " + NotCompiled::what()) {}
  const char* what() const noexcept override { return msg_.c_str(); }

 private:
  std::string msg_;
};

}  // namespace

void mg_potrf(const MgCall& c, DType, int64_t, void*, int*) { throw MgNotCompiled(c.op); }
void mg_potrf_potrs(const MgCall& c, DType, int64_t, int64_t, void*, void*, int*) {
  throw MgNotCompiled(c.op);
}
void mg_getrf_getrs(const MgCall& c, DType, int64_t, int64_t, void*, void*, int*) {
  throw MgNotCompiled(c.op);
}
void mg_syevd(const MgCall& c, DType, int64_t, void*, void*, bool, int*) {
  throw MgNotCompiled(c.op);
}

}  // namespace gpula::detail::cuda
