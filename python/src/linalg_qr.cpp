// gpula::linalg::qr and lstsq for Python (see linalg.cpp for the conventions: operands as
// exported by python/gpula/_interop.py, results handed to the caller's package zero-copy).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <string>

#include "common.h"

namespace gpula::python {
namespace {

// Which package a result goes to; matches _linalg.py's _FRAMEWORK.
enum Framework : int { kNumpy = 0, kTorch = 1, kCupy = 2 };

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

linalg::LinalgOptions options(const std::optional<std::string>& device, bool fallback_cpu,
                              const char* op) {
  linalg::LinalgOptions o;
  if (device) o.device = parse_device(*device, op);
  o.fallback = fallback_cpu ? Fallback::cpu : Fallback::none;
  return o;
}

Stream stream_of(const TensorView& data, uintptr_t handle) {
  if (handle == 0 || !data.device.is_cuda()) return Stream{};
  return Stream{data.device, reinterpret_cast<void*>(handle)};
}

linalg::QrMode parse_mode(const std::string& s) {
  if (s == "reduced") return linalg::QrMode::reduced;
  if (s == "complete") return linalg::QrMode::complete;
  if (s == "r") return linalg::QrMode::r;
  throw InvalidArgument("[linalg.qr] mode must be 'reduced', 'complete' or 'r', got '" + s + "'");
}

}  // namespace

void init_linalg_qr(nb::module_& m) {
  using std::optional;
  using std::string;

  m.def(
      "linalg_qr",
      [](nb::handle a, const string& mode, optional<string> device, bool fallback_cpu, int fw,
         uintptr_t stream) {
        const linalg::QrMode md = parse_mode(mode);
        const TensorView av = to_view(a, "linalg.qr", "a");
        const auto o = options(device, fallback_cpu, "linalg.qr");
        linalg::QR f;
        {
          nb::gil_scoped_release release;
          f = linalg::qr(av, md, o, stream_of(av, stream));
        }
        return nb::make_tuple(wrap(f.q, fw), wrap(f.r, fw));
      },
      nb::arg("a"), nb::arg("mode") = "reduced", nb::arg("device") = nb::none(),
      nb::arg("fallback_cpu") = false, nb::arg("framework") = 0, nb::arg("stream") = 0,
      "gpula::linalg::qr: (q or None, r).");

  m.def(
      "linalg_lstsq",
      [](nb::handle a, nb::handle b, optional<string> device, bool fallback_cpu, int fw,
         uintptr_t stream) {
        const TensorView av = to_view(a, "linalg.lstsq", "a");
        const TensorView bv = to_view(b, "linalg.lstsq", "b");
        const auto o = options(device, fallback_cpu, "linalg.lstsq");
        Tensor x;
        {
          nb::gil_scoped_release release;
          x = linalg::lstsq(av, bv, o, stream_of(av, stream));
        }
        return wrap(x, fw);
      },
      nb::arg("a"), nb::arg("b"), nb::arg("device") = nb::none(), nb::arg("fallback_cpu") = false,
      nb::arg("framework") = 0, nb::arg("stream") = 0, "gpula::linalg::lstsq: x.");
}

}  // namespace gpula::python
