#pragma once
// Message helpers: every error names the operation, the argument and the value.
#include <gpula/error.h>
#include <gpula/tensor.h>

#include <sstream>
#include <string>

namespace gpula::detail {

std::string shape_str(const Shape& s);

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
