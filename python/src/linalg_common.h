#pragma once
// Shared by the linalg binding files (linalg.cpp, linalg_eigh.cpp, linalg_eig.cpp,
// linalg_qr.cpp): handing gpula-allocated results to the caller's package zero-copy, option parsing, the caller's stream.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common.h"

namespace gpula::python {

// Which package a result goes to; matches python/gpula/_interop/base.py's FRAMEWORK.
enum Framework : int { kNumpy = 0, kTorch = 1, kCupy = 2, kDLPack = 3 };

template <class Fw>
nb::object wrap_as(const Tensor& t) {
  const TensorView& v = t.view();
  const size_t nd = v.shape.size();
  std::vector<size_t> shape(nd);
  for (size_t i = 0; i < nd; ++i) shape[i] = static_cast<size_t>(v.shape[i]);
  nb::dlpack::dtype dt;
  dtype_to_dlpack(v.dtype, dt.code, dt.bits, dt.lanes);
  // The capsule owns a copy of the Tensor (a shared owner), released with the array.
  auto* keep = new Tensor(t);
  nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  const int device_type = v.device.is_cuda() ? nb::device::cuda::value : nb::device::cpu::value;
  const int device_id = v.device.is_cuda() ? v.device.index : 0;
  nb::ndarray<Fw> arr(v.data, nd, shape.data(), owner, v.strides.data(), dt, device_type,
                      device_id);
  return nb::cast(arr, nb::rv_policy::reference);
}

/// `t` as an array of package `fw` (a Framework); None where `t` is undefined.
inline nb::object wrap(const Tensor& t, int fw) {
  if (!t.defined()) return nb::none();
  switch (fw) {
    case kNumpy:
      return wrap_as<nb::numpy>(t);
    case kTorch:
      return wrap_as<nb::pytorch>(t);
    case kCupy:
      return wrap_as<nb::cupy>(t);
    default:
      return wrap_as<nb::ro>(t);  // a generic ndarray (DLPack); the Python layer converts it
  }
}

/// The options every linalg binding takes; `op` is the full name ("linalg.qr") for messages.
inline linalg::LinalgOptions linalg_options(bool check_info,
                                            const std::optional<std::string>& device,
                                            bool fallback_cpu, const char* op) {
  linalg::LinalgOptions o;
  o.check_info = check_info;
  if (device) o.device = parse_device(*device, op);
  o.fallback = fallback_cpu ? Fallback::cpu : Fallback::none;
  return o;
}

/// The caller's stream (a cudaStream_t as an int) on the device of the data; 0: the default.
inline Stream stream_of(const TensorView& data, uintptr_t handle) {
  if (handle == 0 || !data.device.is_cuda()) return Stream{};
  return Stream{data.device, reinterpret_cast<void*>(handle)};
}

/// fn() with the GIL released; its result is returned once the GIL is held again.
template <class Fn>
auto without_gil(Fn&& fn) {
  nb::gil_scoped_release release;
  return std::forward<Fn>(fn)();
}

}  // namespace gpula::python
