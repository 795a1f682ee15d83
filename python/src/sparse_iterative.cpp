// gpula::sparse iterative solvers for Python. A is CSR arrays (host or GPU, as exported by
// python/gpula/_interop.py) or a Python callable f(x, y) writing y = A x; M is a name or a
// callable f(r, z) writing z = M^-1 r; the callback gets the iterate. Callables receive NumPy
// views valid for the call only. The GIL stays held: the Python callables run inside the loop.
#include <gpula/sparse.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <optional>
#include <string>

#include "linalg_common.h"

namespace gpula::python {

namespace {

nb::object numpy_view(const TensorView& v) {
  const size_t shape[1] = {static_cast<size_t>(v.shape[0])};
  nb::dlpack::dtype dt;
  switch (v.dtype) {
    case DType::f32:
      dt = nb::dtype<float>();
      break;
    case DType::f64:
      dt = nb::dtype<double>();
      break;
    case DType::c64:
      dt = nb::dlpack::dtype{static_cast<uint8_t>(nb::dlpack::dtype_code::Complex), 64, 1};
      break;
    default:
      dt = nb::dlpack::dtype{static_cast<uint8_t>(nb::dlpack::dtype_code::Complex), 128, 1};
      break;
  }
  return nb::cast(nb::ndarray<nb::numpy>(v.data, 1, shape, nb::handle(), nullptr, dt),
                  nb::rv_policy::reference);
}

sparse::OperatorFn python_operator(nb::object f) {
  return [f](const TensorView& x, const TensorView& y) { f(numpy_view(x), numpy_view(y)); };
}

}  // namespace

void init_sparse_iterative(nb::module_& m) {
  using std::optional;
  using std::string;
  m.def(
      "sparse_iterative",
      [](const string& method, int64_t n, nb::handle data, nb::handle indices, nb::handle indptr,
         nb::object matvec, const string& dtype, nb::handle b, nb::handle x, double rtol,
         double atol, optional<int64_t> maxiter, int64_t restart, optional<string> m_name,
         nb::object m_op, nb::object callback, int64_t triangular_sweeps, uintptr_t stream) {
        const string op = "sparse.linalg." + method;
        sparse::IterativeOptions o;
        o.triangular_sweeps = triangular_sweeps;
        o.rtol = rtol;
        o.atol = atol;
        o.maxiter = maxiter;
        o.restart = restart;
        if (!m_op.is_none()) {
          o.preconditioner = sparse::Preconditioner::custom;
          o.preconditioner_op = python_operator(m_op);
        } else if (m_name) {
          o.preconditioner = sparse::parse_preconditioner(*m_name, op);
        }
        if (!callback.is_none()) {
          o.callback = [callback](const TensorView& xk) {
            if (xk.device.is_cuda()) {
              callback(nb::none());  // the Python side copies its own device x
            } else {
              callback(numpy_view(xk));
            }
          };
        }
        const TensorView bv = to_view(b, op.c_str(), "b");
        const TensorView xv = to_view(x, op.c_str(), "x");
        const Stream s = stream_of(bv, stream);
        sparse::IterativeResult r;
        auto dispatch = [&](auto&& a) {
          if (method == "cg") return sparse::cg(a, bv, xv, o, s);
          if (method == "gmres") return sparse::gmres(a, bv, xv, o, s);
          if (method == "bicgstab") return sparse::bicgstab(a, bv, xv, o, s);
          return sparse::minres(a, bv, xv, o, s);
        };
        if (matvec.is_none()) {
          sparse::CsrView a;
          a.rows = a.cols = n;
          a.values = to_view(data, op.c_str(), "A.data");
          a.indices = to_view(indices, op.c_str(), "A.indices");
          a.indptr = to_view(indptr, op.c_str(), "A.indptr");
          r = dispatch(a);
        } else {
          sparse::LinearOperator a;
          a.rows = a.cols = n;
          a.dtype = dtype_from_name(dtype);
          a.matvec = python_operator(matvec);
          r = dispatch(a);
        }
        return nb::make_tuple(r.info, r.iterations, r.residual_norm);
      },
      nb::arg("method"), nb::arg("n"), nb::arg("data").none(), nb::arg("indices").none(),
      nb::arg("indptr").none(), nb::arg("matvec").none(), nb::arg("dtype"), nb::arg("b"),
      nb::arg("x"), nb::arg("rtol"), nb::arg("atol"), nb::arg("maxiter").none(), nb::arg("restart"),
      nb::arg("m_name").none(), nb::arg("m_op").none(), nb::arg("callback").none(),
      nb::arg("triangular_sweeps") = -1, nb::arg("stream") = 0,
      "gpula::sparse iterative solve, x updated in place: (info, iterations, residual_norm).");
}

}  // namespace gpula::python
