// Errors of the calls a composed operation makes, rethrown as that operation's: the class and
// fields (status, order, batch index) kept, the message edited.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

namespace gpula::detail {

// The error being handled (call inside a catch block), rethrown with edit(message);
// `batch_index` replaces a LinAlgError's batch index where it is >= 0. NotCompiled passes as is.
[[noreturn]] void rethrow_edited(const std::function<std::string(const std::string&)>& edit,
                                 int64_t batch_index = -1);

// The error being handled, rethrown with its leading "[inner op]" replaced by "[op]".
[[noreturn]] void rethrow_as(const char* op);

}  // namespace gpula::detail
