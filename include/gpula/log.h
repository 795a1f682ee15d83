#pragma once
/// @file log.h
/// Logging of decisions (algorithm choice, fallbacks, plan cache). Off below the set level.
#include <functional>
#include <string>

namespace gpula {

enum class LogLevel : int { debug = 10, info = 20, warning = 30, error = 40, off = 100 };

/// Receives one formatted message. Called from the thread that logs.
using LogSink = std::function<void(LogLevel, const std::string&)>;

/// Process-wide sink and level; the default sink writes to stderr at level warning and up.
void set_log_sink(LogSink sink);
void set_log_level(LogLevel level);
LogLevel log_level();

/// Sends a message to `sink` when given (a per-call logger), else to the process-wide sink.
void log(LogLevel level, const std::string& message, const LogSink& sink = nullptr);

}  // namespace gpula
