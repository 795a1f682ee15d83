// Logging: gpula's C++ messages go to Python's logging.getLogger("gpula"), or to a per-call
// logging.Logger given as MatmulOptions.logger.
#include <memory>

#include "common.h"

namespace gpula::python {

std::atomic<bool> g_python_alive{false};

namespace {

// An owned reference to a Python logger. Only the last owner's destruction touches the
// refcount, with the GIL taken; after interpreter shutdown the reference is left alone.
class LoggerRef {
 public:
  explicit LoggerRef(nb::handle logger) : obj_(logger.inc_ref().ptr()) {}
  LoggerRef(const LoggerRef&) = delete;
  LoggerRef& operator=(const LoggerRef&) = delete;
  ~LoggerRef() {
    if (!g_python_alive.load()) return;
    nb::gil_scoped_acquire gil;
    Py_DECREF(obj_);
  }

  void log(LogLevel level, const std::string& message) const {
    if (!g_python_alive.load()) return;
    nb::gil_scoped_acquire gil;
    try {
      nb::handle(obj_).attr("log")(static_cast<int>(level), nb::str(message.c_str(), message.size()));
    } catch (nb::python_error& e) {
      e.discard_as_unraisable("gpula log sink");  // a broken handler must not break the op
    }
  }

 private:
  PyObject* obj_;
};

LogLevel level_from_int(int64_t level) {
  if (level <= static_cast<int>(LogLevel::debug)) return LogLevel::debug;
  if (level <= static_cast<int>(LogLevel::info)) return LogLevel::info;
  if (level <= static_cast<int>(LogLevel::warning)) return LogLevel::warning;
  if (level <= static_cast<int>(LogLevel::error)) return LogLevel::error;
  return LogLevel::off;
}

}  // namespace

LogSink python_log_sink(nb::handle logger) {
  // shared_ptr: copies of the std::function share one reference and need no GIL.
  auto ref = std::make_shared<const LoggerRef>(logger);
  return [ref](LogLevel level, const std::string& message) { ref->log(level, message); };
}

void init_log(nb::module_& m) {
  g_python_alive = true;
  nb::object logger = nb::module_::import_("logging").attr("getLogger")("gpula");
  // The process-wide sink lives as long as the process: its reference is never released.
  LogSink sink = python_log_sink(logger);
  set_log_sink(sink);
  // logging takes any int as a level; one past int64 is as good as "off".
  int overflow = 0;
  const nb::object level = logger.attr("getEffectiveLevel")();
  const long long value = PyLong_AsLongLongAndOverflow(level.ptr(), &overflow);
  if (value == -1 && PyErr_Occurred()) throw nb::python_error();
  set_log_level(overflow > 0   ? LogLevel::off
                : overflow < 0 ? LogLevel::debug
                               : level_from_int(value));

  m.def(
      "set_log_level", [](int64_t level) { set_log_level(level_from_int(level)); },
      nb::arg("level"),
      "Sets the C++ level below which messages are not even formatted (logging's numbers).");
  m.def(
      "log_level", []() { return static_cast<int>(log_level()); },
      "The C++ log level (logging's numbers; 100 is off).");

  // Before the interpreter goes: empty this thread's plan cache (it may hold per-call loggers)
  // and stop calling into Python from C++.
  nb::module_::import_("atexit").attr("register")(nb::cpp_function([]() {
    matmul_cache_clear();
    set_log_sink(nullptr);
    g_python_alive = false;
  }));
}

}  // namespace gpula::python
