#include <gpula/device.h>

#include "backend/cuda_api.h"

namespace gpula {

std::string to_string(Device d) {
  return d.is_cuda() ? "cuda:" + std::to_string(d.index) : std::string("cpu");
}

bool cuda_compiled() { return detail::cuda::compiled(); }
int cuda_device_count() { return detail::cuda::device_count(); }

std::string describe_devices() {
  return "cpu: OpenBLAS\n" + detail::cuda::describe();
}

}  // namespace gpula
