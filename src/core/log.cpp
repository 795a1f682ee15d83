#include <gpula/log.h>

#include <atomic>
#include <iostream>
#include <mutex>

namespace gpula {
namespace {

std::mutex g_sink_mutex;
LogSink g_sink;  // empty: stderr
std::atomic<int> g_level{static_cast<int>(LogLevel::warning)};

const char* level_name(LogLevel l) {
  switch (l) {
    case LogLevel::debug: return "DEBUG";
    case LogLevel::info: return "INFO";
    case LogLevel::warning: return "WARNING";
    case LogLevel::error: return "ERROR";
    default: return "";
  }
}

}  // namespace

void set_log_sink(LogSink sink) {
  std::lock_guard lock(g_sink_mutex);
  g_sink = std::move(sink);
}

void set_log_level(LogLevel level) { g_level = static_cast<int>(level); }
LogLevel log_level() { return static_cast<LogLevel>(g_level.load()); }

void log(LogLevel level, const std::string& message, const LogSink& sink) {
  if (sink) {
    sink(level, message);  // a per-call logger filters by its own level
    return;
  }
  if (static_cast<int>(level) < g_level.load()) return;
  LogSink global;
  {
    std::lock_guard lock(g_sink_mutex);
    global = g_sink;
  }
  if (global)
    global(level, message);
  else
    std::cerr << "gpula " << level_name(level) << ": " << message << "\n";
}

}  // namespace gpula
