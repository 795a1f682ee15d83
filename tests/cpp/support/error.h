#pragma once
// What a call threw: the message the tests check error texts against.
#include <exception>
#include <functional>
#include <string>

namespace test_support {

// The what() of the exception f throws, or "" when it throws none.
inline std::string msg_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace test_support
