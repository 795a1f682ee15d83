#pragma once
// Checks every matmul-shaped front (Matmul, GroupedMatmul) makes the same way.
#include <gpula/matmul.h>

#include <vector>

namespace gpula::detail {

// The stream the work runs on: `s` where it is on the executing device (none on the CPU);
// InvalidArgument naming `op` for a stream of another GPU.
Stream exec_stream(const char* op, Device exec, Stream s);
// OutOfMemory naming `op` and the output whose bytes would not fit in an int64.
void check_output_bytes(const char* op, const std::vector<OutputSpec>& specs);

}  // namespace gpula::detail
