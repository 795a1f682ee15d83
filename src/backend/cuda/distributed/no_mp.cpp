// Built when CMake did not find cuSOLVERMp, cuBLASMp and NCCL (>= 2.29), or without CUDA: the
// multi-process engines of gpula::distributed are not there.
#include <gpula/error.h>

#include "distributed/mp_backend.h"

namespace gpula::detail::mp {

namespace {
[[noreturn]] void missing() {
  throw NotCompiled(
      "cuSOLVERMp/cuBLASMp (configure with GPULA_CUSOLVERMP_ROOT, GPULA_CUBLASMP_ROOT and "
      "GPULA_NCCL_ROOT, see docs/distributed.md)");
}
}  // namespace

bool available() { return false; }
Communicator::UniqueId unique_id() { missing(); }
std::shared_ptr<Communicator::Impl> create(int, int, const Communicator::UniqueId&, int) {
  missing();
}
void potrf(const Communicator&, DType, bool, const BlockCyclic&, Local, int*) { missing(); }
void potrf_potrs(const Communicator&, DType, bool, const BlockCyclic&, Local, const BlockCyclic&,
                 Local, int*) {
  missing();
}
void getrf_getrs(const Communicator&, DType, const BlockCyclic&, Local, const BlockCyclic&, Local,
                 int*) {
  missing();
}
void syevd(const Communicator&, DType, const BlockCyclic&, Local, void*, Local, int*) {
  missing();
}
void gemm(const Communicator&, DType, const BlockCyclic&, Local, const BlockCyclic&, Local,
          const BlockCyclic&, Local, double, double) {
  missing();
}

}  // namespace gpula::detail::mp
