#pragma once
// What OpenBLAS runs on this machine: its version, the kernel set ("core") it picked and its
// thread count, and a warning when it fell back to generic kernels on a CPU it did not recognize.
#include <optional>
#include <string>

namespace gpula::detail::cpu {

// "OpenBLAS 0.3.21 (core Prescott, 2 threads)".
std::string blas_description();
// Set when OpenBLAS runs its generic SSE3 kernels (core Prescott: what a DYNAMIC_ARCH build
// picks for a CPU model newer than itself) on a CPU with AVX2 or AVX-512, with the
// OPENBLAS_CORETYPE value that selects the fast kernels; empty otherwise.
std::optional<std::string> blas_core_warning();
// Logs blas_core_warning(), after blas_description(), once per process at level warning.
void warn_blas_core_once();

}  // namespace gpula::detail::cpu
