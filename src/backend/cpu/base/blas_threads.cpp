// blas::SerialScope (backend/cpu/base/blas.h): gpula's OpenBLAS on one thread while any loop that
// calls it from several OpenMP threads runs.
#include <cblas.h>  // scipy-openblas32's: scipy_openblas_get/set_num_threads

#include <mutex>

#include "backend/cpu/base/blas.h"

namespace gpula::detail::cpu::blas {
namespace {

std::mutex scope_mutex;
int scope_depth = 0;     // SerialScopes alive, over all threads
int saved_threads = 1;   // what the first of them found

}  // namespace

SerialScope::SerialScope(bool active) : active_(active) {
  if (!active_) return;
  const std::lock_guard<std::mutex> lock(scope_mutex);
  if (scope_depth++ == 0) {
    saved_threads = scipy_openblas_get_num_threads();
    if (saved_threads > 1) scipy_openblas_set_num_threads(1);
  }
}

SerialScope::~SerialScope() {
  if (!active_) return;
  const std::lock_guard<std::mutex> lock(scope_mutex);
  if (--scope_depth == 0 && saved_threads > 1) scipy_openblas_set_num_threads(saved_threads);
}

}  // namespace gpula::detail::cpu::blas
