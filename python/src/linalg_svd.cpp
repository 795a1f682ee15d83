// gpula::linalg::svd / svdvals for Python. As linalg.cpp: operands arrive as exported by
// python/gpula/_interop.py; results are gpula-allocated Tensors handed to the caller's package
// zero-copy (an nb::ndarray whose owner capsule keeps the Tensor alive).
#include <string>

#include "linalg_common.h"

namespace gpula::python {

namespace {

linalg::SvdMethod parse_method(const std::string& s) {
  if (s == "auto") return linalg::SvdMethod::automatic;
  if (s == "gesvd") return linalg::SvdMethod::gesvd;
  if (s == "gesvdj") return linalg::SvdMethod::gesvdj;
  if (s == "gesvdp") return linalg::SvdMethod::gesvdp;
  if (s == "gesvda") return linalg::SvdMethod::gesvda;
  if (s == "jacobi_batched") return linalg::SvdMethod::jacobi_batched;
  throw InvalidArgument("[linalg.svd] method must be 'auto', 'gesvd', 'gesvdj', 'gesvdp', "
                        "'gesvda' or 'jacobi_batched', got '" + s + "'");
}

}  // namespace

void init_linalg_svd(nb::module_& m) {
  using std::optional;
  using std::string;

  m.def(
      "linalg_svd",
      [](nb::handle a, bool full_matrices, bool compute_uv, const string& method, bool check_info,
         optional<string> device, bool fallback_cpu, int fw, uintptr_t stream) {
        const TensorView av = to_view(a, "linalg.svd", "a");
        const linalg::SvdMethod mt = parse_method(method);
        const auto o = linalg_options(check_info, device, fallback_cpu, "linalg.svd");
        const linalg::Svd r = without_gil([&] {
          return linalg::svd(av, full_matrices, compute_uv, mt, o, stream_of(av, stream));
        });
        return nb::make_tuple(wrap(r.u, fw), wrap(r.s, fw), wrap(r.vh, fw), wrap(r.info, fw));
      },
      nb::arg("a"), nb::arg("full_matrices") = true, nb::arg("compute_uv") = true,
      nb::arg("method") = "auto", nb::arg("check_info") = true, nb::arg("device") = nb::none(),
      nb::arg("fallback_cpu") = false, nb::arg("framework") = 0, nb::arg("stream") = 0,
      "gpula::linalg::svd: (u or None, s, vh or None, info).");
  m.def(
      "linalg_svdvals",
      [](nb::handle a, const string& method, bool check_info, optional<string> device,
         bool fallback_cpu, int fw, uintptr_t stream) {
        constexpr const char* op = "linalg.svdvals";
        const TensorView av = to_view(a, op, "a");
        const linalg::SvdMethod mt = parse_method(method);
        const auto o = linalg_options(check_info, device, fallback_cpu, op);
        // svdvals has no info to return: with check_info=False the info comes from svd.
        if (!check_info) {
          const linalg::Svd r = without_gil(
              [&] { return linalg::svd(av, false, false, mt, o, stream_of(av, stream)); });
          return nb::make_tuple(wrap(r.s, fw), wrap(r.info, fw));
        }
        const Tensor s =
            without_gil([&] { return linalg::svdvals(av, mt, o, stream_of(av, stream)); });
        return nb::make_tuple(wrap(s, fw), nb::none());
      },
      nb::arg("a"), nb::arg("method") = "auto", nb::arg("check_info") = true,
      nb::arg("device") = nb::none(), nb::arg("fallback_cpu") = false, nb::arg("framework") = 0,
      nb::arg("stream") = 0, "gpula::linalg::svdvals: (s, info or None).");
}

}  // namespace gpula::python
