// Arrays from Python (DLPack / buffer protocol, no copies) as gpula::TensorView; devices.
#include <nanobind/stl/string.h>

#include <string>

#include "common.h"

namespace gpula::python {
namespace {

using Array = nb::ndarray<nb::ro>;  // read-only suffices for inputs; accepts read-only arrays

std::string type_name_of(nb::handle obj) {
  return nb::cast<std::string>(nb::type_name(obj.type()));
}

Device device_of(const Array& a, const char* op, const char* arg) {
  switch (a.device_type()) {
    case nb::device::cpu::value:
    case nb::device::cuda_host::value:
      return Device::cpu();
    case nb::device::cuda::value:
    case nb::device::cuda_managed::value:
      return Device::cuda(a.device_id());
    default:
      throw NotSupported("[" + std::string(op) + "] " + arg + " is on DLPack device type " +
                         std::to_string(a.device_type()) + "; gpula takes CPU and CUDA memory");
  }
}

}  // namespace

namespace {

std::string where(const char* op, const char* arg) { return "[" + std::string(op) + "] " + arg; }

// Why `obj`, which nanobind could not take as an array, is refused: NumPy's dtypes without a
// DLPack equivalent (non-native byte order, object, str, void, datetime), else the producer's own
// complaint from __dlpack__ (say, strides that are not a multiple of the item size).
std::string why_not_an_array(nb::handle obj) {
  try {
    if (nb::hasattr(obj, "dtype")) {
      nb::object dt = obj.attr("dtype");
      if (nb::hasattr(dt, "isnative") && nb::hasattr(dt, "kind")) {  // a NumPy dtype
        const std::string text = nb::cast<std::string>(nb::str(dt));
        if (!nb::cast<bool>(dt.attr("isnative"))) {
          const std::string order = nb::cast<std::string>(dt.attr("byteorder"));
          return "dtype " + nb::cast<std::string>(dt.attr("str")) +
                 (order == ">" ? " (big-endian)" : " (little-endian)") +
                 " is not supported; convert to native byte order first "
                 "(x.astype(x.dtype.newbyteorder('=')))";
        }
        const std::string kind = nb::cast<std::string>(dt.attr("kind"));
        if (kind.find_first_of("OUSVMm") != std::string::npos)
          return "dtype " + text + " is not supported";
      }
    }
    if (nb::hasattr(obj, "__dlpack__")) obj.attr("__dlpack__")();
  } catch (nb::python_error& e) {
    return std::string("it cannot be exported through DLPack: ") + e.what();
  }
  return {};
}

// Whether `obj` is a torch tensor with the negative bit set (a lazy view such as
// torch._neg_view or conj().imag). torch's __dlpack__ exports its memory without the bit, so
// reading it in place would silently flip signs; the Python layer exports such tensors as a
// materialized copy (python/gpula/_interop/torch.py), and a raw one reaching here is refused.
// NumPy arrays, the common raw operand, are recognized by their type and not asked.
bool negative_view(nb::handle obj) {
  static PyTypeObject* ndarray = nullptr;
  if (ndarray == nullptr) {
    ndarray = reinterpret_cast<PyTypeObject*>(nb::module_::import_("numpy").attr("ndarray").ptr());
  }
  if (Py_TYPE(obj.ptr()) == ndarray) return false;
  nb::object is_neg = nb::getattr(obj, "is_neg", nb::none());
  return !is_neg.is_none() && nb::cast<bool>(is_neg());
}

Shape int_sequence(nb::handle seq) {
  Shape out;
  out.reserve(nb::len(seq));
  for (nb::handle d : seq) out.push_back(nb::cast<int64_t>(d));
  return out;
}

// (owner, address, dtype name, shape, strides in elements, DLPack device type, device id): what
// the Python layer passes for torch and CuPy arrays, cheaper than a DLPack round trip. `owner`
// keeps the memory alive on the Python side and is not read here.
TensorView from_raw(const nb::tuple& t, const char* op, const char* arg) {
  TensorView v;
  v.data = reinterpret_cast<void*>(nb::cast<uintptr_t>(t[1]));
  v.dtype = dtype_named(nb::cast<std::string>(t[2]), op, arg);
  v.shape = int_sequence(t[3]);
  v.strides = int_sequence(t[4]);
  if (v.shape.size() != v.strides.size())
    throw InvalidArgument(where(op, arg) + ": shape and strides differ in length");
  const int kind = nb::cast<int>(t[5]), id = nb::cast<int>(t[6]);
  if (kind == nb::device::cpu::value || kind == nb::device::cuda_host::value)
    v.device = Device::cpu();
  else if (kind == nb::device::cuda::value || kind == nb::device::cuda_managed::value)
    v.device = Device::cuda(id);
  else
    throw NotSupported(where(op, arg) + " is on DLPack device type " + std::to_string(kind) +
                       "; gpula takes CPU and CUDA memory");
  return v;
}

}  // namespace

DType dtype_named(const std::string& s, const char* op, const char* arg) {
  try {
    return dtype_from_name(s);
  } catch (const DTypeError&) {
    throw DTypeError(where(op, arg) + ": unknown dtype '" + s + "'");
  }
}

TensorView to_view(nb::handle obj, const char* op, const char* arg) {
  nb::handle array = obj;
  const char* override_name = nullptr;
  std::string override_storage;
  if (nb::isinstance<nb::tuple>(obj)) {
    nb::tuple t = nb::borrow<nb::tuple>(obj);
    const std::size_t n = nb::len(t);
    if (n == 7) return from_raw(t, op, arg);
    if (n != 2 || !nb::isinstance<nb::str>(t[1]))
      throw InvalidArgument(where(op, arg) + ": expected an array or (array, dtype name)");
    array = t[0];
    override_storage = nb::cast<std::string>(t[1]);
    override_name = override_storage.c_str();
  }
  if (negative_view(array)) {
    throw InvalidArgument(where(op, arg) +
                          ": a torch tensor with the negative bit set (a lazy view) cannot be "
                          "read in place; pass x.resolve_neg()");
  }
  Array a;
  if (!nb::try_cast<Array>(array, a, /*convert=*/false)) {
    const std::string why = why_not_an_array(array);
    if (!why.empty()) throw DTypeError(where(op, arg) + ": " + why);
    throw DTypeError(where(op, arg) +
                     " must be an array with DLPack or the buffer protocol (NumPy, CuPy, "
                     "PyTorch, ...), got " + type_name_of(array));
  }
  TensorView v;
  v.data = const_cast<void*>(static_cast<const void*>(a.data()));
  v.device = device_of(a, op, arg);
  const auto dt = a.dtype();
  if (override_name) {
    v.dtype = dtype_named(override_storage, op, arg);
    if (size_of(v.dtype) * 8 != dt.bits)
      throw DTypeError(where(op, arg) + ": dtype override " + override_name + " needs a " +
                       std::to_string(size_of(v.dtype) * 8) + "-bit view, got " +
                       std::to_string(dt.bits) + " bits");
  } else {
    try {
      v.dtype = dtype_from_dlpack(dt.code, dt.bits, dt.lanes);
    } catch (const DTypeError& e) {
      throw DTypeError(where(op, arg) + ": " + e.what());
    }
  }
  const size_t nd = a.ndim();
  v.shape.resize(nd);
  v.strides.resize(nd);
  for (size_t i = 0; i < nd; ++i) v.shape[i] = static_cast<int64_t>(a.shape(i));
  if (a.stride_ptr()) {
    for (size_t i = 0; i < nd; ++i) v.strides[i] = a.stride(i);  // elements, as in DLPack
  } else {
    v.strides = contiguous_strides(v.shape);
  }
  return v;
}

Device parse_device(std::string_view s, const char* op) {
  if (s == "cpu") return Device::cpu();
  if (s == "cuda") return Device::cuda(0);
  if (s.substr(0, 5) == "cuda:" && s.size() > 5) {
    int idx = 0;
    for (char ch : s.substr(5)) {
      if (ch < '0' || ch > '9' || idx > 100000) goto bad;  // no overflow on "cuda:99999999999"
      idx = idx * 10 + (ch - '0');
    }
    return Device::cuda(idx);
  }
bad:
  throw InvalidArgument("[" + std::string(op) + "] device must be None, 'cpu', 'cuda' or " +
                        "'cuda:N', got '" + std::string(s) + "'");
}

void init_tensor(nb::module_& m) {
  m.def(
      "parse_device",
      [](const std::string& s, const std::string& op) {
        const Device d = parse_device(s, op.c_str());
        return nb::make_tuple(d.is_cuda() ? "cuda" : "cpu", d.index);
      },
      nb::arg("device"), nb::arg("op"),
      "The device a `device=` string names, as (kind, index); InvalidArgument naming op for "
      "anything but 'cpu', 'cuda' or 'cuda:N'. The one parser of device strings.");
  m.def("cuda_compiled", &cuda_compiled, "Whether gpula was compiled with its CUDA backend.");
  m.def("cuda_device_count", &cuda_device_count,
        "Number of usable CUDA devices (0 when not compiled, or no driver or GPU).");
  m.def("describe_devices", &describe_devices,
        "One line per backend: library versions and the GPUs seen.");
  m.def(
      "describe_array",
      [](nb::handle obj) { return to_view(obj, "describe_array", "x").describe(); },
      nb::arg("x"), "How gpula sees an array: \"float32 (3, 4) on cpu\" (no copy is made).");
}

}  // namespace gpula::python
