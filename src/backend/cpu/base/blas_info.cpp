#include "backend/cpu_api.h"

#include <cblas.h>  // scipy-openblas32's: scipy_openblas_get_config, ...
#include <gpula/log.h>

#include <mutex>
#include <sstream>

#include "backend/cpu/base/system_openblas.h"


namespace gpula::detail::cpu {
namespace {

// The kernel set this CPU can run best among those OpenBLAS knows by name; empty if none
// better than the generic one.
std::string best_core() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq") &&
      __builtin_cpu_supports("avx512cd"))
    return "SkylakeX";
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return "Haswell";
#endif
  return {};
}

// "OpenBLAS 0.3.21 (core Prescott, 2 threads)" from openblas_get_config()'s "OpenBLAS 0.3.21
// DYNAMIC_ARCH ..." and the other two answers.
std::string describe(const char* config, const char* core, int threads) {
  std::istringstream words(config);
  std::string name, version;
  words >> name >> version;
  std::ostringstream s;
  s << name << ' ' << version << " (core " << core << ", " << threads << " threads)";
  return s.str();
}

}  // namespace

std::string blas_description() {
  return describe(scipy_openblas_get_config(), scipy_openblas_get_corename(),
                  scipy_openblas_get_num_threads()) +
         "; SuiteSparse: " +
         describe(openblas_get_config(), openblas_get_corename(), openblas_get_num_threads());
}

std::optional<std::string> blas_core_warning() {
  const std::string best = best_core();
  if (best.empty()) return std::nullopt;
  std::string slow;
  if (std::string(scipy_openblas_get_corename()) == "Prescott") slow = "dense linear algebra";
  if (std::string(openblas_get_corename()) == "Prescott")
    slow += slow.empty() ? "SuiteSparse (CPU sparse direct solver)" : " and SuiteSparse";
  if (slow.empty()) return std::nullopt;
  return "OpenBLAS did not recognize this CPU and runs its generic SSE3 kernels for " + slow +
         " (2-3x slower); set OPENBLAS_CORETYPE=" + best +
         " in the environment before the process starts";
}

void warn_blas_core_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (auto w = blas_core_warning())
      log(LogLevel::warning, "[cpu] " + blas_description() + ": " + *w);
  });
}

}  // namespace gpula::detail::cpu
