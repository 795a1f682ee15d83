// gpula::linalg::qr and lstsq for Python (see linalg.cpp for the conventions: operands as
// exported by python/gpula/_interop.py, results handed to the caller's package zero-copy).
#include <string>

#include "linalg_common.h"

namespace gpula::python {
namespace {

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
        const auto o = linalg_options(/*check_info=*/true, device, fallback_cpu, "linalg.qr");
        const linalg::QR f =
            without_gil([&] { return linalg::qr(av, md, o, stream_of(av, stream)); });
        return nb::make_tuple(wrap(f.q, fw), wrap(f.r, fw));
      },
      nb::arg("a"), nb::arg("mode") = "reduced", nb::arg("device") = nb::none(),
      nb::arg("fallback_cpu") = false, nb::arg("framework") = 0, nb::arg("stream") = 0,
      "gpula::linalg::qr: (q or None, r).");

  m.def(
      "linalg_lstsq",
      [](nb::handle a, nb::handle b, optional<double> rcond, optional<string> device,
         bool fallback_cpu, int fw, uintptr_t stream) {
        const TensorView av = to_view(a, "linalg.lstsq", "a");
        const TensorView bv = to_view(b, "linalg.lstsq", "b");
        linalg::LstsqOptions o;
        static_cast<linalg::LinalgOptions&>(o) =
            linalg_options(/*check_info=*/true, device, fallback_cpu, "linalg.lstsq");
        o.rcond = rcond;
        const linalg::Lstsq r =
            without_gil([&] { return linalg::lstsq_ex(av, bv, o, stream_of(av, stream)); });
        return nb::make_tuple(wrap(r.x, fw), wrap(r.rank, fw), wrap(r.s, fw));
      },
      nb::arg("a"), nb::arg("b"), nb::arg("rcond") = nb::none(), nb::arg("device") = nb::none(),
      nb::arg("fallback_cpu") = false, nb::arg("framework") = 0, nb::arg("stream") = 0,
      "gpula::linalg::lstsq_ex: (x, rank or None, s or None).");
}

}  // namespace gpula::python
