// gpula::linalg for Python: dense factorizations and solvers. Operands arrive as exported by
// python/gpula/_interop.py; results are gpula-allocated Tensors handed to the caller's package
// zero-copy (an nb::ndarray whose owner capsule keeps the Tensor alive).
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <string>
#include <string_view>

#include "common.h"

namespace gpula::python {
namespace {

// Which package a result goes to; matches _linalg.py's _FRAMEWORK.
enum Framework : int { kNumpy = 0, kTorch = 1, kCupy = 2, kDLPack = 3 };

std::string opname(const char* op) { return std::string("linalg.") + op; }

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
      return wrap_as<nb::ro>(t);  // a generic ndarray (DLPack); the Python layer converts it
  }
}

linalg::LinalgOptions base_options(bool check_info, const std::optional<std::string>& device,
                                   bool fallback_cpu, const char* op) {
  linalg::LinalgOptions o;
  o.check_info = check_info;
  if (device) o.device = parse_device(*device, opname(op).c_str());
  o.fallback = fallback_cpu ? Fallback::cpu : Fallback::none;
  return o;
}

// The caller's stream (a cudaStream_t as an int) on the device of the data; 0: the default.
Stream stream_of(const TensorView& data, uintptr_t handle) {
  if (handle == 0 || !data.device.is_cuda()) return Stream{};
  return Stream{data.device, reinterpret_cast<void*>(handle)};
}

linalg::Assume parse_assume(std::string_view s) {
  if (s == "gen") return linalg::Assume::gen;
  if (s == "pos") return linalg::Assume::pos;
  if (s == "sym") return linalg::Assume::sym;
  throw InvalidArgument("[linalg.solve] assume_a must be 'gen', 'pos' or 'sym', got '" +
                        std::string(s) + "'");
}

linalg::Refine parse_refine(std::string_view s) {
  if (s == "none") return linalg::Refine::none;
  if (s == "auto") return linalg::Refine::automatic;
  if (s == "f32") return linalg::Refine::f32;
  if (s == "tf32") return linalg::Refine::tf32;
  if (s == "f16") return linalg::Refine::f16;
  if (s == "bf16") return linalg::Refine::bf16;
  throw InvalidArgument(
      "[linalg.solve] refine must be None, 'auto', 'f32', 'tf32', 'f16' or 'bf16', got '" +
      std::string(s) + "'");
}

#define GPULA_LINALG_COMMON_ARGS                                                                 \
  nb::arg("check_info") = true, nb::arg("device") = nb::none(), nb::arg("fallback_cpu") = false, \
  nb::arg("framework") = 0, nb::arg("stream") = 0

}  // namespace

void init_linalg(nb::module_& m) {
  using std::optional;
  using std::string;

  m.def(
      "linalg_cholesky",
      [](nb::handle a, bool lower, bool check_info, optional<string> device, bool fallback_cpu,
         int fw, uintptr_t stream) {
        const TensorView av = to_view(a, "linalg.cholesky", "a");
        const auto o = base_options(check_info, device, fallback_cpu, "cholesky");
        linalg::Factor f;
        {
          nb::gil_scoped_release release;
          f = linalg::cholesky(av, lower, o, stream_of(av, stream));
        }
        return nb::make_tuple(wrap(f.value, fw), wrap(f.info, fw));
      },
      nb::arg("a"), nb::arg("lower") = true, GPULA_LINALG_COMMON_ARGS,
      "gpula::linalg::cholesky: (factor, info).");

  m.def(
      "linalg_cho_solve",
      [](nb::handle c, nb::handle b, bool lower, bool check_info, optional<string> device,
         bool fallback_cpu, int fw, uintptr_t stream) {
        const TensorView cv = to_view(c, "linalg.cho_solve", "c");
        const TensorView bv = to_view(b, "linalg.cho_solve", "b");
        const auto o = base_options(check_info, device, fallback_cpu, "cho_solve");
        Tensor x;
        {
          nb::gil_scoped_release release;
          x = linalg::cho_solve(cv, bv, lower, o, stream_of(cv, stream));
        }
        return wrap(x, fw);
      },
      nb::arg("c"), nb::arg("b"), nb::arg("lower") = true, GPULA_LINALG_COMMON_ARGS,
      "gpula::linalg::cho_solve: x.");

  m.def(
      "linalg_lu_factor",
      [](nb::handle a, bool check_info, optional<string> device, bool fallback_cpu, int fw,
         uintptr_t stream) {
        const TensorView av = to_view(a, "linalg.lu_factor", "a");
        const auto o = base_options(check_info, device, fallback_cpu, "lu_factor");
        linalg::LU f;
        {
          nb::gil_scoped_release release;
          f = linalg::lu_factor(av, o, stream_of(av, stream));
        }
        return nb::make_tuple(wrap(f.lu, fw), wrap(f.pivots, fw), wrap(f.info, fw));
      },
      nb::arg("a"), GPULA_LINALG_COMMON_ARGS, "gpula::linalg::lu_factor: (lu, pivots, info).");

  m.def(
      "linalg_lu_solve",
      [](nb::handle lu, nb::handle piv, nb::handle b, bool check_info, optional<string> device,
         bool fallback_cpu, int fw, uintptr_t stream) {
        const TensorView lv = to_view(lu, "linalg.lu_solve", "lu");
        const TensorView pv = to_view(piv, "linalg.lu_solve", "piv");
        const TensorView bv = to_view(b, "linalg.lu_solve", "b");
        const auto o = base_options(check_info, device, fallback_cpu, "lu_solve");
        Tensor x;
        {
          nb::gil_scoped_release release;
          x = linalg::lu_solve(lv, pv, bv, o, stream_of(lv, stream));
        }
        return wrap(x, fw);
      },
      nb::arg("lu"), nb::arg("piv"), nb::arg("b"), GPULA_LINALG_COMMON_ARGS,
      "gpula::linalg::lu_solve: x.");

  m.def(
      "linalg_solve",
      [](nb::handle a, nb::handle b, const string& assume_a, const string& refine, bool lower,
         bool check_info, optional<string> device, bool fallback_cpu, int fw, uintptr_t stream) {
        const TensorView av = to_view(a, "linalg.solve", "a");
        const TensorView bv = to_view(b, "linalg.solve", "b");
        linalg::SolveOptions o;
        static_cast<linalg::LinalgOptions&>(o) =
            base_options(check_info, device, fallback_cpu, "solve");
        o.assume_a = parse_assume(assume_a);
        o.refine = parse_refine(refine);
        o.lower = lower;
        linalg::Factor f;
        {
          nb::gil_scoped_release release;
          f = linalg::solve_ex(av, bv, o, stream_of(av, stream));
        }
        return nb::make_tuple(wrap(f.value, fw), wrap(f.info, fw));
      },
      nb::arg("a"), nb::arg("b"), nb::arg("assume_a") = "gen", nb::arg("refine") = "none",
      nb::arg("lower") = false, GPULA_LINALG_COMMON_ARGS, "gpula::linalg::solve_ex: (x, info).");

  m.def(
      "linalg_inv",
      [](nb::handle a, bool check_info, optional<string> device, bool fallback_cpu, int fw,
         uintptr_t stream) {
        const TensorView av = to_view(a, "linalg.inv", "a");
        const auto o = base_options(check_info, device, fallback_cpu, "inv");
        linalg::Factor f;
        {
          nb::gil_scoped_release release;
          f = linalg::inv_ex(av, o, stream_of(av, stream));
        }
        return nb::make_tuple(wrap(f.value, fw), wrap(f.info, fw));
      },
      nb::arg("a"), GPULA_LINALG_COMMON_ARGS, "gpula::linalg::inv_ex: (inverse, info).");

  m.def(
      "linalg_det",
      [](nb::handle a, bool check_info, optional<string> device, bool fallback_cpu, int fw,
         uintptr_t stream) {
        const TensorView av = to_view(a, "linalg.det", "a");
        const auto o = base_options(check_info, device, fallback_cpu, "det");
        Tensor d;
        {
          nb::gil_scoped_release release;
          d = linalg::det(av, o, stream_of(av, stream));
        }
        return wrap(d, fw);
      },
      nb::arg("a"), GPULA_LINALG_COMMON_ARGS, "gpula::linalg::det.");

  m.def(
      "linalg_slogdet",
      [](nb::handle a, bool check_info, optional<string> device, bool fallback_cpu, int fw,
         uintptr_t stream) {
        const TensorView av = to_view(a, "linalg.slogdet", "a");
        const auto o = base_options(check_info, device, fallback_cpu, "slogdet");
        linalg::Slogdet s;
        {
          nb::gil_scoped_release release;
          s = linalg::slogdet(av, o, stream_of(av, stream));
        }
        return nb::make_tuple(wrap(s.sign, fw), wrap(s.logabsdet, fw));
      },
      nb::arg("a"), GPULA_LINALG_COMMON_ARGS, "gpula::linalg::slogdet: (sign, logabsdet).");
}

#undef GPULA_LINALG_COMMON_ARGS

}  // namespace gpula::python
