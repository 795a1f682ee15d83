// gpula::linalg for Python: dense factorizations and solvers. Operands arrive as exported by
// python/gpula/_interop/; results are gpula-allocated Tensors handed to the caller's package
// zero-copy (an nb::ndarray whose owner capsule keeps the Tensor alive).
#include <string>
#include <string_view>

#include "linalg_common.h"

namespace gpula::python {
namespace {

std::string opname(const char* op) { return std::string("linalg.") + op; }

linalg::LinalgOptions base_options(bool check_info, const std::optional<std::string>& device,
                                   bool fallback_cpu, const char* op) {
  return linalg_options(check_info, device, fallback_cpu, opname(op).c_str());
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
  if (s == "rbt") return linalg::Refine::rbt;
  throw InvalidArgument(
      "[linalg.solve] refine must be None, 'auto', 'rbt', 'f32', 'tf32', 'f16' or 'bf16', got '" +
      std::string(s) + "'");
}

#define GPULA_LINALG_COMMON_ARGS                                                                 \
  nb::arg("check_info") = true, nb::arg("device") = nb::none(), nb::arg("fallback_cpu") = false, \
  nb::arg("framework") = 0, nb::arg("stream") = 0

// A binding of a one-operand op: `call(a, options, stream)` runs without the GIL and
// `out(result, fw)` hands its result to the caller's package.
template <class Call, class Out>
void def_unary(nb::module_& m, const char* name, const char* op, Call call, Out out,
               const char* doc) {
  m.def(
      name,
      [op, call, out](nb::handle a, bool check_info, std::optional<std::string> device,
                      bool fallback_cpu, int fw, uintptr_t stream) -> nb::object {
        const TensorView av = to_view(a, opname(op).c_str(), "a");
        const auto o = base_options(check_info, device, fallback_cpu, op);
        const auto r = without_gil([&] { return call(av, o, stream_of(av, stream)); });
        return out(r, fw);
      },
      nb::arg("a"), GPULA_LINALG_COMMON_ARGS, doc);
}

}  // namespace

namespace {

// ---- linalg_qr (qr, lstsq) ----

namespace {

linalg::QrMode parse_mode(const std::string& s) {
  if (s == "reduced") return linalg::QrMode::reduced;
  if (s == "complete") return linalg::QrMode::complete;
  if (s == "r") return linalg::QrMode::r;
  throw InvalidArgument("[linalg.qr] mode must be 'reduced', 'complete' or 'r', got '" + s + "'");
}

}  // namespace

void def_linalg_qr(nb::module_& m) {
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

// ---- linalg_eigh (eigh, eigvalsh) ----

void def_linalg_eigh(nb::module_& m) {
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

// ---- linalg_eig (eig, eigvals) ----

void def_linalg_eig(nb::module_& m) {
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

// ---- linalg_eigh_generalized, linalg_ldl (eigh(a, b), ldl) ----

void def_linalg_eigh_generalized_ldl(nb::module_& m) {
  using std::optional;
  using std::string;

  m.def(
      "linalg_eigh_generalized",
      [](nb::handle a, nb::handle b, int type, bool lower, bool eigvals_only, bool check_info,
         optional<string> device, bool fallback_cpu, int fw, uintptr_t stream) {
        const TensorView av = to_view(a, "linalg.eigh", "a");
        const TensorView bv = to_view(b, "linalg.eigh", "b");
        const auto o = linalg_options(check_info, device, fallback_cpu, "linalg.eigh");
        const linalg::Eigh r = without_gil([&] {
          return linalg::eigh_generalized(av, bv, type, lower, eigvals_only, o,
                                          stream_of(av, stream));
        });
        return nb::make_tuple(wrap(r.w, fw), wrap(r.v, fw), wrap(r.info, fw));
      },
      nb::arg("a"), nb::arg("b"), nb::arg("type") = 1, nb::arg("lower") = true,
      nb::arg("eigvals_only") = false, GPULA_LINALG_COMMON_ARGS,
      "gpula::linalg::eigh_generalized: (w, v or None, info).");
  m.def(
      "linalg_ldl",
      [](nb::handle a, bool lower, bool hermitian, optional<string> device, bool fallback_cpu,
         int fw, uintptr_t stream) {
        const TensorView av = to_view(a, "linalg.ldl", "a");
        const auto o = linalg_options(/*check_info=*/false, device, fallback_cpu, "linalg.ldl");
        const linalg::Ldl r = without_gil(
            [&] { return linalg::ldl_factor(av, lower, hermitian, o, stream_of(av, stream)); });
        return nb::make_tuple(wrap(r.ldu, fw), wrap(r.pivots, fw), wrap(r.info, fw));
      },
      nb::arg("a"), nb::arg("lower") = true, nb::arg("hermitian") = true,
      nb::arg("device") = nb::none(), nb::arg("fallback_cpu") = false, nb::arg("framework") = 0,
      nb::arg("stream") = 0, "gpula::linalg::ldl_factor: (ldu, 1-based LAPACK pivots, info).");
}

// ---- linalg_svd (svd, svdvals) ----

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

void def_linalg_svd(nb::module_& m) {
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

}  // namespace

// ---- linalg_orthogonalize, linalg_inv_root, linalg_sqrtm_psd, linalg_polar (matrix functions)

// An operation's options from the ones every linalg binding takes (device, fallback).
template <class O>
O with_common(const linalg::LinalgOptions& lo) {
  O o;
  static_cast<CommonOptions&>(o) = lo;
  return o;
}

void def_linalg_matrix_functions(nb::module_& m) {
  using std::optional;
  using std::string;

  m.def(
      "linalg_orthogonalize",
      [](nb::handle g, int steps, double a, double b, double c, optional<string> dtype, double eps,
         optional<bool> symmetric_products, optional<string> device, bool fallback_cpu, int fw,
         uintptr_t stream) {
        constexpr const char* op = "linalg.orthogonalize";
        const TensorView gv = to_view(g, op, "g");
        auto o = with_common<linalg::OrthogonalizeOptions>(
            linalg_options(true, device, fallback_cpu, op));
        o.steps = steps;
        o.coefficients = {a, b, c};
        o.dtype = dtype ? optional<DType>(dtype_named(*dtype, op, "dtype")) : std::nullopt;
        o.eps = eps;
        o.symmetric_products = symmetric_products;
        return wrap(without_gil([&] { return linalg::orthogonalize(gv, o, stream_of(gv, stream)); }),
                    fw);
      },
      nb::arg("g"), nb::arg("steps"), nb::arg("a"), nb::arg("b"), nb::arg("c"),
      nb::arg("dtype").none(), nb::arg("eps"), nb::arg("symmetric_products").none(),
      nb::arg("device") = nb::none(),
      nb::arg("fallback_cpu") = false, nb::arg("framework") = 0, nb::arg("stream") = 0,
      "gpula::linalg::orthogonalize: the Newton-Schulz iterate, in g's dtype.");
  m.def(
      "linalg_inv_root",
      [](nb::handle a, int p, double eps, bool clip, optional<string> device, bool fallback_cpu,
         int fw, uintptr_t stream) {
        constexpr const char* op = "linalg.inv_root";
        const TensorView av = to_view(a, op, "a");
        auto o = with_common<linalg::InvRootOptions>(linalg_options(true, device, fallback_cpu, op));
        o.clip = clip;
        return wrap(
            without_gil([&] { return linalg::inv_root(av, p, eps, o, stream_of(av, stream)); }), fw);
      },
      nb::arg("a"), nb::arg("p"), nb::arg("eps"), nb::arg("clip"), nb::arg("device") = nb::none(),
      nb::arg("fallback_cpu") = false, nb::arg("framework") = 0, nb::arg("stream") = 0,
      "gpula::linalg::inv_root: (a + eps I)^(-1/p) by eigh.");
  m.def(
      "linalg_sqrtm_psd",
      [](nb::handle a, bool clip, optional<string> device, bool fallback_cpu, int fw,
         uintptr_t stream) {
        constexpr const char* op = "linalg.sqrtm_psd";
        const TensorView av = to_view(a, op, "a");
        auto o = with_common<linalg::SqrtmPsdOptions>(linalg_options(true, device, fallback_cpu, op));
        o.clip = clip;
        return wrap(without_gil([&] { return linalg::sqrtm_psd(av, o, stream_of(av, stream)); }),
                    fw);
      },
      nb::arg("a"), nb::arg("clip"), nb::arg("device") = nb::none(),
      nb::arg("fallback_cpu") = false, nb::arg("framework") = 0, nb::arg("stream") = 0,
      "gpula::linalg::sqrtm_psd: a^(1/2) by eigh.");
  m.def(
      "linalg_polar",
      [](nb::handle a, const string& side, optional<string> device, bool fallback_cpu, int fw,
         uintptr_t stream) {
        constexpr const char* op = "linalg.polar";
        if (side != "right" && side != "left")
          throw InvalidArgument("[linalg.polar] side must be 'right' or 'left', got '" + side +
                                "'");
        const linalg::PolarSide sd =
            side == "right" ? linalg::PolarSide::right : linalg::PolarSide::left;
        const TensorView av = to_view(a, op, "a");
        const auto o = with_common<CommonOptions>(linalg_options(true, device, fallback_cpu, op));
        const linalg::Polar r =
            without_gil([&] { return linalg::polar(av, sd, o, stream_of(av, stream)); });
        return nb::make_tuple(wrap(r.u, fw), wrap(r.p, fw));
      },
      nb::arg("a"), nb::arg("side") = "right", nb::arg("device") = nb::none(),
      nb::arg("fallback_cpu") = false, nb::arg("framework") = 0, nb::arg("stream") = 0,
      "gpula::linalg::polar: (u, p) from the thin SVD.");
}

void init_linalg(nb::module_& m) {
  using std::optional;
  using std::string;

  m.def(
      "linalg_cholesky",
      [](nb::handle a, bool lower, bool check_info, optional<string> device, bool fallback_cpu,
         int fw, uintptr_t stream) {
        const TensorView av = to_view(a, "linalg.cholesky", "a");
        const auto o = base_options(check_info, device, fallback_cpu, "cholesky");
        const linalg::Factor f =
            without_gil([&] { return linalg::cholesky(av, lower, o, stream_of(av, stream)); });
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
        const Tensor x =
            without_gil([&] { return linalg::cho_solve(cv, bv, lower, o, stream_of(cv, stream)); });
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
        const linalg::LU f =
            without_gil([&] { return linalg::lu_factor(av, o, stream_of(av, stream)); });
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
        const Tensor x =
            without_gil([&] { return linalg::lu_solve(lv, pv, bv, o, stream_of(lv, stream)); });
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
        const linalg::Factor f =
            without_gil([&] { return linalg::solve_ex(av, bv, o, stream_of(av, stream)); });
        return nb::make_tuple(wrap(f.value, fw), wrap(f.info, fw));
      },
      nb::arg("a"), nb::arg("b"), nb::arg("assume_a") = "gen", nb::arg("refine") = "none",
      nb::arg("lower") = false, GPULA_LINALG_COMMON_ARGS, "gpula::linalg::solve_ex: (x, info).");

  def_unary(
      m, "linalg_inv", "inv",
      [](const TensorView& a, const linalg::LinalgOptions& o, const Stream& s) {
        return linalg::inv_ex(a, o, s);
      },
      [](const linalg::Factor& f, int fw) {
        return nb::make_tuple(wrap(f.value, fw), wrap(f.info, fw));
      },
      "gpula::linalg::inv_ex: (inverse, info).");
  def_unary(
      m, "linalg_det", "det",
      [](const TensorView& a, const linalg::LinalgOptions& o, const Stream& s) {
        return linalg::det(a, o, s);
      },
      [](const Tensor& d, int fw) { return wrap(d, fw); }, "gpula::linalg::det.");
  def_unary(
      m, "linalg_slogdet", "slogdet",
      [](const TensorView& a, const linalg::LinalgOptions& o, const Stream& s) {
        return linalg::slogdet(a, o, s);
      },
      [](const linalg::Slogdet& r, int fw) {
        return nb::make_tuple(wrap(r.sign, fw), wrap(r.logabsdet, fw));
      },
      "gpula::linalg::slogdet: (sign, logabsdet).");
  // ---- solve_triangular ----
  m.def(
      "linalg_solve_triangular",
      [](nb::handle a, nb::handle b, int trans, bool lower, bool unit_diagonal, bool check_info,
         optional<string> device, bool fallback_cpu, int fw, uintptr_t stream) {
        const TensorView av = to_view(a, "linalg.solve_triangular", "a");
        const TensorView bv = to_view(b, "linalg.solve_triangular", "b");
        if (trans < 0 || trans > 2)
          throw InvalidArgument("[linalg.solve_triangular] trans must be 0, 1 or 2, got " +
                                std::to_string(trans));
        linalg::TriangularOptions o;
        static_cast<linalg::LinalgOptions&>(o) =
            base_options(check_info, device, fallback_cpu, "solve_triangular");
        o.trans = static_cast<linalg::Trans>(trans);
        o.lower = lower;
        o.unit_diagonal = unit_diagonal;
        const linalg::Factor f = without_gil(
            [&] { return linalg::solve_triangular_ex(av, bv, o, stream_of(av, stream)); });
        return nb::make_tuple(wrap(f.value, fw), wrap(f.info, fw));
      },
      nb::arg("a"), nb::arg("b"), nb::arg("trans") = 0, nb::arg("lower") = false,
      nb::arg("unit_diagonal") = false, GPULA_LINALG_COMMON_ARGS,
      "gpula::linalg::solve_triangular_ex: (x, info).");
  // ---- end solve_triangular ----
  def_linalg_qr(m);
  def_linalg_eigh(m);
  def_linalg_eig(m);
  def_linalg_svd(m);
  def_linalg_eigh_generalized_ldl(m);
  def_linalg_matrix_functions(m);
}

#undef GPULA_LINALG_COMMON_ARGS

}  // namespace gpula::python
