#pragma once
// Message helpers: every error names the operation, the argument and the value.
#include <gpula/error.h>
#include <gpula/tensor.h>

#include <sstream>
#include <string>

namespace gpula::detail {

std::string shape_str(const Shape& s);

// The number of elements of `shape`; InvalidArgument naming `op` and `arg` when a dimension is
// negative or the count overflows int64.
int64_t checked_numel(const char* op, const char* arg, const Shape& shape);

// A view a caller built is well formed: as many strides as dimensions, no negative dimension,
// an element count that fits int64, and data unless it is empty. InvalidArgument otherwise.
void check_tensor_view(const char* op, const char* arg, const TensorView& v);

template <class... Args>
std::string cat(const Args&... args) {
  std::ostringstream os;
  (os << ... << args);
  return os.str();
}

// throw_error<InvalidArgument>("matmul", "a has shape ", ...) -> "[matmul] a has shape ..."
template <class E, class... Args>
[[noreturn]] void throw_error(const char* op, const Args&... args) {
  throw E(cat("[", op, "] ", args...));
}

}  // namespace gpula::detail
