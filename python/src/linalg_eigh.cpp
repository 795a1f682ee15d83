// gpula::linalg::eigh / eigvalsh for Python. As linalg.cpp: operands arrive as exported by
// python/gpula/_interop.py; results are gpula-allocated Tensors handed to the caller's package
// zero-copy (an nb::ndarray whose owner capsule keeps the Tensor alive).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <string>

#include "common.h"

namespace gpula::python {
namespace {

// Which package a result goes to; matches _linalg.py's _FRAMEWORK.
enum Framework : int { kNumpy = 0, kTorch = 1, kCupy = 2, kDLPack = 3 };

template <class Fw>
nb::object wrap_as(const Tensor& t) {
  const TensorView& v = t.view();
  const size_t nd = v.shape.size();
  std::vector<size_t> shape(nd);
  for (size_t i = 0; i < nd; ++i) shape[i] = static_cast<size_t>(v.shape[i]);
  nb::dlpack::dtype dt;
  dtype_to_dlpack(v.dtype, dt.code, dt.bits, dt.lanes);
  auto* keep = new Tensor(t);
  nb::capsule owner(keep, [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  const int device_type = v.device.is_cuda() ? nb::device::cuda::value : nb::device::cpu::value;
  const int device_id = v.device.is_cuda() ? v.device.index : 0;
  nb::ndarray<Fw> arr(v.data, nd, shape.data(), owner, v.strides.data(), dt, device_type,
                      device_id);
  return nb::cast(arr, nb::rv_policy::reference);
}

nb::object wrap(const Tensor& t, int fw) {
  if (!t.defined()) return nb::none();
  switch (fw) {
    case kNumpy:
      return wrap_as<nb::numpy>(t);
    case kTorch:
      return wrap_as<nb::pytorch>(t);
    case kCupy:
      return wrap_as<nb::cupy>(t);
    default:
      return wrap_as<nb::ro>(t);
  }
}

Stream stream_of(const TensorView& data, uintptr_t handle) {
  if (handle == 0 || !data.device.is_cuda()) return Stream{};
  return Stream{data.device, reinterpret_cast<void*>(handle)};
}

}  // namespace

void init_linalg_eigh(nb::module_& m) {
  using std::optional;
  using std::string;

  m.def(
      "linalg_eigh",
      [](nb::handle a, bool lower, bool eigvals_only, bool check_info, optional<string> device,
         bool fallback_cpu, int fw, uintptr_t stream) {
        const TensorView av = to_view(a, "linalg.eigh", "a");
        linalg::LinalgOptions o;
        o.check_info = check_info;
        if (device) o.device = parse_device(*device, "linalg.eigh");
        o.fallback = fallback_cpu ? Fallback::cpu : Fallback::none;
        linalg::Eigh r;
        {
          nb::gil_scoped_release release;
          r = linalg::eigh(av, lower, eigvals_only, o, stream_of(av, stream));
        }
        return nb::make_tuple(wrap(r.w, fw), wrap(r.v, fw), wrap(r.info, fw));
      },
      nb::arg("a"), nb::arg("lower") = true, nb::arg("eigvals_only") = false,
      nb::arg("check_info") = true, nb::arg("device") = nb::none(),
      nb::arg("fallback_cpu") = false, nb::arg("framework") = 0, nb::arg("stream") = 0,
      "gpula::linalg::eigh: (w, v or None, info).");
}

}  // namespace gpula::python
