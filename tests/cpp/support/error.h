#pragma once
// What a call threw: the message the tests check error texts against.
#include <exception>
#include <functional>
#include <string>

#include "support/error.h"

namespace test_support {

// The what() of the exception f throws, or "" when it throws none.
inline using test_support::msg_of;

}  // namespace test_support
