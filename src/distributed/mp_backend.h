#pragma once
// The multi-process engines behind gpula::distributed's Communicator overloads: the argument
// checks of the fronts (src/distributed/mp.cpp; host code, testable without a GPU) and the
// backend interface, implemented over NCCL + cuSOLVERMp (src/backend/cuda/distributed/mp.cpp) and
// cuBLASMp (src/backend/cuda/distributed/mp_blas.cpp), or by src/backend/cuda/distributed/no_mp.cpp, which
// throws NotCompiled where those libraries were not found at configure time.
#include <gpula/distributed.h>

#include <cstdint>
#include <memory>

namespace gpula::detail::mp {

using distributed::BlockCyclic;
using distributed::Communicator;

// The calling process: its rank, the process count and its GPU.
struct Place {
  int rank = 0, size = 1, device = 0;
};
inline Place place_of(const Communicator& c) { return {c.rank(), c.size(), c.device()}; }

// A checked local piece: its device pointer and leading dimension (the descriptor's LLD).
struct Local {
  void* data = nullptr;
  int64_t ld = 1;
};

// ----- checks (throw InvalidArgument / DTypeError / NotSupported naming op and argument) -----

// Communicator::create's arguments.
void check_create(int rank, int size, int device);
// `name`'s layout: valid, its grid of place.size processes, first block on (0, 0).
void check_grid(const char* op, const char* name, const BlockCyclic& d, const Place& p);
// `name`'s local piece on this rank: on place.device, 2-D of local_shape, column-major with
// ld >= max(1, local rows). Returns the pointer and ld.
Local check_local(const char* op, const char* name, const TensorView& v, const BlockCyclic& d,
                  const Place& p);
// Whole-call checks of each front (dtype, shapes, block compatibility); return the pieces.
Local check_cholesky(const Place& p, const TensorView& a, const BlockCyclic& da);
struct Pair {
  Local a, b;
};
Pair check_solve(const Place& p, const TensorView& a, const BlockCyclic& da, const TensorView& b,
                 const BlockCyclic& db, linalg::Assume assume_a);
Local check_eigh(const Place& p, const TensorView& a, const BlockCyclic& da, bool lower);
struct Triple {
  Local a, b, c;
};
Triple check_matmul(const Place& p, const TensorView& a, const BlockCyclic& da,
                    const TensorView& b, const BlockCyclic& db, const TensorView& c,
                    const BlockCyclic& dc);

// ----- backend -----

bool available();
Communicator::UniqueId unique_id();
std::shared_ptr<Communicator::Impl> create(int rank, int size, const Communicator::UniqueId& id,
                                           int device);
// info: LAPACK's (0 ok, > 0 the failing minor / zero pivot, 1-based), as cuSOLVERMp reports it.
void potrf(const Communicator& c, DType t, bool lower, const BlockCyclic& da, Local a, int* info);
void potrf_potrs(const Communicator& c, DType t, bool lower, const BlockCyclic& da, Local a,
                 const BlockCyclic& db, Local b, int* info_potrf);
void getrf_getrs(const Communicator& c, DType t, const BlockCyclic& da, Local a,
                 const BlockCyclic& db, Local b, int* info_getrf);
// w: device, n elements of t; q: the eigenvectors' local piece (a's layout), null without.
void syevd(const Communicator& c, DType t, const BlockCyclic& da, Local a, void* w, Local q,
           int* info);
void gemm(const Communicator& c, DType t, const BlockCyclic& da, Local a, const BlockCyclic& db,
          Local b, const BlockCyclic& dc, Local cc, double alpha, double beta);

}  // namespace gpula::detail::mp
