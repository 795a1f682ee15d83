#include "backend/cpu/blas_info.h"

#include <cblas.h>
#include <gpula/log.h>

#include <mutex>
#include <sstream>

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

}  // namespace

std::string blas_description() {
  std::istringstream config(openblas_get_config());  // "OpenBLAS 0.3.21 DYNAMIC_ARCH ..."
  std::string name, version;
  config >> name >> version;
  std::ostringstream s;
  s << name << ' ' << version << " (core " << openblas_get_corename() << ", "
    << openblas_get_num_threads() << " threads)";
  return s.str();
}

std::optional<std::string> blas_core_warning() {
  const std::string core = openblas_get_corename(), best = best_core();
  if (core != "Prescott" || best.empty()) return std::nullopt;
  return "OpenBLAS did not recognize this CPU and runs its generic SSE3 kernels (2-3x slower "
         "dense linear algebra); set OPENBLAS_CORETYPE=" +
         best + " in the environment before the process starts";
}

void warn_blas_core_once() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (auto w = blas_core_warning())
      log(LogLevel::warning, "[cpu] " + blas_description() + ": " + *w);
  });
}

}  // namespace gpula::detail::cpu
