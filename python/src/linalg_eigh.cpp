// gpula::linalg::eigh / eigvalsh for Python. As linalg.cpp: operands arrive as exported by
// python/gpula/_interop.py; results are gpula-allocated Tensors handed to the caller's package
// zero-copy (an nb::ndarray whose owner capsule keeps the Tensor alive).
#include <string>

#include "linalg_common.h"

namespace gpula::python {

void init_linalg_eigh(nb::module_& m) {
  using std::optional;
  using std::string;

  m.def(
      "linalg_eigh",
      [](nb::handle a, bool lower, bool eigvals_only, bool check_info, optional<string> device,
         bool fallback_cpu, int fw, uintptr_t stream) {
        const TensorView av = to_view(a, "linalg.eigh", "a");
        const auto o = linalg_options(check_info, device, fallback_cpu, "linalg.eigh");
        const linalg::Eigh r = without_gil(
            [&] { return linalg::eigh(av, lower, eigvals_only, o, stream_of(av, stream)); });
        return nb::make_tuple(wrap(r.w, fw), wrap(r.v, fw), wrap(r.info, fw));
      },
      nb::arg("a"), nb::arg("lower") = true, nb::arg("eigvals_only") = false,
      nb::arg("check_info") = true, nb::arg("device") = nb::none(), nb::arg("fallback_cpu") = false,
      nb::arg("framework") = 0, nb::arg("stream") = 0,
      "gpula::linalg::eigh: (w, v or None, info).");
  m.def(
      "linalg_eigvalsh",
      [](nb::handle a, bool lower, bool check_info, optional<string> device, bool fallback_cpu,
         int fw, uintptr_t stream) {
        constexpr const char* op = "linalg.eigvalsh";
        const TensorView av = to_view(a, op, "a");
        const auto o = linalg_options(check_info, device, fallback_cpu, op);
        // eigvalsh has no info to return: with check_info=False the info comes from eigh.
        if (!check_info) {
          const linalg::Eigh r =
              without_gil([&] { return linalg::eigh(av, lower, true, o, stream_of(av, stream)); });
          return nb::make_tuple(wrap(r.w, fw), wrap(r.info, fw));
        }
        const Tensor w =
            without_gil([&] { return linalg::eigvalsh(av, lower, o, stream_of(av, stream)); });
        return nb::make_tuple(wrap(w, fw), nb::none());
      },
      nb::arg("a"), nb::arg("lower") = true, nb::arg("check_info") = true,
      nb::arg("device") = nb::none(), nb::arg("fallback_cpu") = false, nb::arg("framework") = 0,
      nb::arg("stream") = 0, "gpula::linalg::eigvalsh: (w, info or None).");
}

}  // namespace gpula::python
