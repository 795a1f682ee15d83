#pragma once
// Shared by the binding files: init functions, operand conversion, the GIL-aware logger.
#include <gpula/gpula.h>
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <atomic>
#include <string>

namespace gpula::python {

namespace nb = nanobind;

void init_errors(nb::module_& m);
void init_log(nb::module_& m);
void init_tensor(nb::module_& m);
void init_matmul(nb::module_& m);
void init_grouped_matmul(nb::module_& m);

/// A view of an operand as the Python layer hands it over: any object with DLPack or the buffer
/// protocol, or a tuple (array, "dtype name") that reinterprets the array's elements (NumPy
/// arrays of ml_dtypes' bfloat16/float8 and torch float8, passed as a uint8/uint16 view).
/// Nothing is copied; the caller keeps the object alive while the view is in use.
TensorView to_view(nb::handle obj, const char* op, const char* arg);

/// A dtype by gpula's name; DTypeError "[op] arg: unknown dtype 'x'" otherwise.
DType dtype_named(const std::string& s, const char* op, const char* arg);

/// "cpu" / "cuda" / "cuda:N" -> Device; throws InvalidArgument otherwise.
Device parse_device(std::string_view s, const char* op);

/// A LogSink that calls `logger.log(level, message)` with the GIL held. Safe to copy and destroy
/// from any thread, and a no-op once the interpreter is shutting down.
LogSink python_log_sink(nb::handle logger);

/// False once the interpreter has started to shut down (set from an atexit hook).
extern std::atomic<bool> g_python_alive;

}  // namespace gpula::python
