#pragma once
/// @file device.h
/// Where data lives and where work runs.
#include <cstdint>
#include <string>

namespace gpula {

enum class DeviceKind : uint8_t { cpu, cuda };

/// A device: the host, or one CUDA GPU by ordinal.
struct Device {
  DeviceKind kind = DeviceKind::cpu;
  int index = 0;
  static Device cpu() { return {DeviceKind::cpu, 0}; }
  static Device cuda(int i = 0) { return {DeviceKind::cuda, i}; }
  bool is_cuda() const { return kind == DeviceKind::cuda; }
  bool operator==(const Device&) const = default;
};

/// "cpu" or "cuda:N".
std::string to_string(Device d);

/// A queue of device work: a cudaStream_t on a GPU (nullptr is the legacy default stream);
/// ignored on the CPU.
struct Stream {
  Device device{};
  void* handle = nullptr;
};

/// Whether gpula was compiled with its CUDA backend.
bool cuda_compiled();
/// Number of usable CUDA devices (0 when not compiled or no driver/GPU).
int cuda_device_count();
/// One line per backend: versions of the libraries in use, and the GPUs seen.
std::string describe_devices();

}  // namespace gpula
