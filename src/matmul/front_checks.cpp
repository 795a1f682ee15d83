#include "matmul/front_checks.h"

#include "core/format.h"

namespace gpula::detail {

Stream exec_stream(const char* op, Device exec, Stream s) {
  if (!exec.is_cuda()) return {exec, nullptr};
  if (s.device.is_cuda() && s.device != exec)
    throw_error<InvalidArgument>(op, "stream is on ", to_string(s.device), ", the work runs on ",
                                 to_string(exec));
  return {exec, s.device.is_cuda() ? s.handle : nullptr};
}

void check_output_bytes(const char* op, const std::vector<OutputSpec>& specs) {
  for (const OutputSpec& spec : specs) {
    int64_t bytes = 0;
    if (__builtin_mul_overflow(checked_numel(op, spec.name.c_str(), spec.shape),
                               static_cast<int64_t>(size_of(spec.dtype)), &bytes))
      throw_error<OutOfMemory>(op, "output '", spec.name, "' of shape ", shape_str(spec.shape),
                               " would need more than 2^63 bytes");
  }
}

}  // namespace gpula::detail
