#include <gpula/device.h>

#include "backend/cpu_api.h"
#include "backend/cuda_api.h"

namespace gpula {

std::string to_string(Device d) {
  return d.is_cuda() ? "cuda:" + std::to_string(d.index) : std::string("cpu");
}

bool cuda_compiled() { return detail::cuda::compiled(); }
int cuda_device_count() { return detail::cuda::device_count(); }

std::string describe_devices() {
  std::string cpu = "cpu: " + detail::cpu::blas_description();
  if (auto w = detail::cpu::blas_core_warning()) cpu += ": " + *w;
  return cpu + "\n" + detail::cuda::describe();
}

}  // namespace gpula
