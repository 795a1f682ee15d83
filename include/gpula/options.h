#pragma once
/// @file options.h
/// Option types shared by several operations.
#include <gpula/device.h>
#include <gpula/log.h>

#include <cstdint>
#include <optional>

namespace gpula {

/// What to do when a GPU call runs out of memory.
enum class Fallback : uint8_t { none, cpu };

/// A cap on the device memory an operation may take for itself (workspace, staging copies of
/// operands it cannot read in place): bytes, or a fraction of the device's total memory. Going
/// over it raises OutOfMemory (or falls back to the CPU with Fallback::cpu).
struct MemoryLimit {
  int64_t bytes = -1;       ///< used when >= 0
  double fraction = 0.8;    ///< of total device memory, used when bytes < 0
  static MemoryLimit of_bytes(int64_t b) { return {b, 0.0}; }
  static MemoryLimit of_fraction(double f) { return {-1, f}; }
};

/// Options every operation takes.
struct CommonOptions {
  MemoryLimit memory_limit{};
  /// Run here instead of where the data lives (host data on a GPU is copied in and out).
  std::optional<Device> device;
  Fallback fallback = Fallback::none;
  /// Wait for the device work before returning.
  bool blocking = false;
  /// Per-call logger; when empty, the process-wide sink (set_log_sink).
  LogSink logger;
};

}  // namespace gpula
