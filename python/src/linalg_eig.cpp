// gpula::linalg::eig / eigvals for Python. As linalg.cpp: operands arrive as exported by
// python/gpula/_interop.py; results are gpula-allocated Tensors handed to the caller's package
// zero-copy (an nb::ndarray whose owner capsule keeps the Tensor alive).
#include <string>

#include "linalg_common.h"

namespace gpula::python {

void init_linalg_eig(nb::module_& m) {
  using std::optional;
  using std::string;

  m.def(
      "linalg_eig",
      [](nb::handle a, bool eigvals_only, bool check_info, optional<string> device,
         bool fallback_cpu, int fw, uintptr_t stream) {
        const char* op = eigvals_only ? "linalg.eigvals" : "linalg.eig";
        const TensorView av = to_view(a, op, "a");
        const auto o = linalg_options(check_info, device, fallback_cpu, op);
        const Stream s = stream_of(av, stream);
        const linalg::Eig r = without_gil([&] {
          if (!eigvals_only) return linalg::eig(av, false, o, s);
          const linalg::Factor f = linalg::eigvals_ex(av, o, s);  // messages name eigvals
          return linalg::Eig{f.value, Tensor{}, f.info};
        });
        return nb::make_tuple(wrap(r.w, fw), wrap(r.v, fw), wrap(r.info, fw));
      },
      nb::arg("a"), nb::arg("eigvals_only") = false, nb::arg("check_info") = true,
      nb::arg("device") = nb::none(), nb::arg("fallback_cpu") = false, nb::arg("framework") = 0,
      nb::arg("stream") = 0, "gpula::linalg::eig / eigvals_ex: (w, v or None, info).");
}

}  // namespace gpula::python
