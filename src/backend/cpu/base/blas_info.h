#pragma once
// What the two OpenBLAS libraries in a gpula process run on this machine: their version, the
// kernel set ("core") each picked and their thread count, and a warning when one fell back to
// generic kernels on a CPU it did not recognize. Dense BLAS/LAPACK is scipy-openblas32 (symbols
// prefixed scipy_); SuiteSparse (the CPU sparse direct solver) calls the system's OpenBLAS.
#include <optional>
#include <string>

namespace gpula::detail::cpu {

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
