#pragma once
// What the fronts ask of the CPU backend beyond each area's contract (beside cuda_api.h): strided
// host copies, and what the two OpenBLAS libraries in a gpula process run on this machine (dense
// BLAS/LAPACK is scipy-openblas32, symbols prefixed scipy_; SuiteSparse calls the system's
// OpenBLAS). Defined in backend/cpu/base/.
#include <gpula/tensor.h>

#include <optional>
#include <string>

namespace gpula::detail::cpu {

// Strided host copy; src may broadcast (stride 0). Same shape and dtype.
void copy(const TensorView& src, const TensorView& dst);
void fill_zero(const TensorView& dst);

// "OpenBLAS 0.3.34 (core SapphireRapids, 16 threads); SuiteSparse: OpenBLAS 0.3.21 (core
// SkylakeX, 16 threads)".
std::string blas_description();
// Set when either library runs its generic SSE3 kernels (core Prescott: what a DYNAMIC_ARCH build
// picks for a CPU model newer than itself) on a CPU with AVX2 or AVX-512: names the library and
// the OPENBLAS_CORETYPE value that selects the fast kernels; empty otherwise.
std::optional<std::string> blas_core_warning();
// Logs blas_core_warning(), after blas_description(), once per process at level warning.
void warn_blas_core_once();

}  // namespace gpula::detail::cpu
