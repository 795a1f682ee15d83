// gpula::sparse matrices and products for Python. A SparseCsrMatrix is the C++ CsrMatrix behind a
// gl.sparse.csr_matrix (python/gpula/sparse/_matrix.py): validated and canonicalized once when
// built, its pattern its own, its values shared with the caller's array. SpMV / SpMM plans and
// the SDDMM / SpGEMM products take it, so they do not validate again. Arrays arrive as exported
// by python/gpula/_interop/; results go back in the caller's package (no copies).
#include <gpula/sparse.h>

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <memory>
#include <string>
#include <nanobind/stl/optional.h>
#include <optional>

#include "linalg_common.h"

namespace gpula::python {

namespace {

// An owner that keeps a Python object alive for a Tensor; the reference is dropped with the
// GIL held, from whichever thread releases the last Tensor (leaked once the interpreter is gone).
std::shared_ptr<void> python_owner(nb::handle obj) {
  return std::shared_ptr<void>(obj.inc_ref().ptr(), [](void* p) noexcept {
    if (!g_python_alive.load()) return;
    nb::gil_scoped_acquire gil;
    nb::handle(static_cast<PyObject*>(p)).dec_ref();
  });
}

// The array `obj` as a Tensor that keeps `obj` alive (no copy).
Tensor tensor_of(nb::handle obj, const char* op, const char* arg) {
  return Tensor(to_view(obj, op, arg), python_owner(obj));
}

sparse::Op op_of(int op, const char* name) {
  if (op < 0 || op > 2) {
    throw InvalidArgument("[" + std::string(name) + "] op must be 0 (A), 1 (A^T) or 2 (A^H), got " +
                          std::to_string(op));
  }
  return static_cast<sparse::Op>(op);
}

}  // namespace

namespace {

// ---- sparse_direct (DirectSolver, spsolve) ----

namespace {

sparse::MatrixType parse_matrix_type(const std::string& s) {
  if (s == "gen") return sparse::MatrixType::general;
  if (s == "sym") return sparse::MatrixType::symmetric;
  if (s == "pos") return sparse::MatrixType::positive_definite;
  if (s == "her") return sparse::MatrixType::hermitian;
  throw InvalidArgument(
      "[sparse.DirectSolver] assume_a must be 'gen', 'sym', 'pos' or 'her', got '" + s + "'");
}

sparse::StoredTriangle parse_triangle(const std::string& s) {
  if (s == "full") return sparse::StoredTriangle::full;
  if (s == "lower") return sparse::StoredTriangle::lower;
  if (s == "upper") return sparse::StoredTriangle::upper;
  throw InvalidArgument("[sparse.DirectSolver] triangle must be 'full', 'lower' or 'upper', got '" +
                        s + "'");
}

sparse::Ordering parse_ordering(const std::string& s) {
  if (s == "auto") return sparse::Ordering::automatic;
  if (s == "library") return sparse::Ordering::library;
  if (s == "level_set") return sparse::Ordering::level_set;
  throw InvalidArgument(
      "[sparse.DirectSolver] ordering must be 'auto', 'library' or 'level_set', got '" + s + "'");
}

sparse::CsrView csr_of(int64_t rows, int64_t cols, nb::handle indptr, nb::handle indices,
                       nb::handle values) {
  sparse::CsrView a;
  a.rows = rows;
  a.cols = cols;
  a.indptr = to_view(indptr, "sparse.DirectSolver", "indptr");
  a.indices = to_view(indices, "sparse.DirectSolver", "indices");
  a.values = to_view(values, "sparse.DirectSolver", "data");
  return a;
}

}  // namespace

void def_sparse_direct(nb::module_& m) {
  nb::class_<sparse::DirectSolver>(m, "SparseDirectSolver")
      .def(
          "__init__",
          [](sparse::DirectSolver* self, int64_t rows, int64_t cols, nb::handle indptr,
             nb::handle indices, nb::handle values, const std::string& assume_a,
             const std::string& triangle, const std::string& ordering) {
            sparse::DirectSolverOptions o;
            o.matrix_type = parse_matrix_type(assume_a);
            o.triangle = parse_triangle(triangle);
            o.ordering = parse_ordering(ordering);
            new (self) sparse::DirectSolver(csr_of(rows, cols, indptr, indices, values), o);
          },
          nb::arg("rows"), nb::arg("cols"), nb::arg("indptr"), nb::arg("indices"), nb::arg("data"),
          nb::arg("assume_a") = "gen", nb::arg("triangle") = "full", nb::arg("ordering") = "auto")
      .def("plan",
           [](sparse::DirectSolver& s) {
             nb::gil_scoped_release r;
             s.plan();
           })
      .def("factorize",
           [](sparse::DirectSolver& s) {
             nb::gil_scoped_release r;
             s.factorize();
           })
      .def("solve",
           [](sparse::DirectSolver& s, nb::handle b, nb::handle x) {
             const TensorView bv = to_view(b, "sparse.DirectSolver", "b");
             const TensorView xv = to_view(x, "sparse.DirectSolver", "x");
             nb::gil_scoped_release r;
             s.solve(bv, xv);
           })
      .def("reset_values",
           [](sparse::DirectSolver& s, nb::handle values) {
             s.reset_values(to_view(values, "sparse.DirectSolver", "data"));
           })
      .def("reset_matrix",
           [](sparse::DirectSolver& s, int64_t rows, int64_t cols, nb::handle indptr,
              nb::handle indices,
              nb::handle values) { s.reset_matrix(csr_of(rows, cols, indptr, indices, values)); })
      .def("free", &sparse::DirectSolver::free)
      .def_prop_ro("planned", &sparse::DirectSolver::planned)
      .def_prop_ro("factorized", &sparse::DirectSolver::factorized)
      .def_prop_ro("ordering", &sparse::DirectSolver::ordering);
}

// ---- sparse_iterative (Krylov solvers) ----

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

void def_sparse_iterative(nb::module_& m) {
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

}  // namespace

void init_sparse(nb::module_& m) {
  nb::class_<sparse::CsrMatrix>(m, "SparseCsrMatrix")
      .def_static(
          "from_csr",
          [](nb::handle indptr, nb::handle indices, nb::handle values, int64_t rows, int64_t cols,
             const std::string& op) {
            const Tensor v = tensor_of(values, op.c_str(), "data");
            sparse::CsrMatrix a = sparse::CsrMatrix::from_csr(
                rows, cols, tensor_of(indptr, op.c_str(), "indptr"),
                tensor_of(indices, op.c_str(), "indices"), v, op);
            const bool shared = a.values().data() == v.data();
            return nb::make_tuple(nb::cast(std::move(a)), shared);
          },
          nb::arg("indptr"), nb::arg("indices"), nb::arg("values"), nb::arg("rows"),
          nb::arg("cols"), nb::arg("op"),
          "CsrMatrix::from_csr: (matrix, whether its values are the given array's).")
      .def_static(
          "from_coo",
          [](nb::handle row, nb::handle col, nb::handle values, int64_t rows, int64_t cols,
             const std::string& op) {
            return sparse::CsrMatrix::from_coo(rows, cols, to_view(row, op.c_str(), "row"),
                                               to_view(col, op.c_str(), "col"),
                                               to_view(values, op.c_str(), "data"), op);
          },
          nb::arg("row"), nb::arg("col"), nb::arg("values"), nb::arg("rows"), nb::arg("cols"),
          nb::arg("op"), "CsrMatrix::from_coo: duplicates summed, always new arrays.")
      .def(
          "with_values",
          [](const sparse::CsrMatrix& a, nb::handle values, const std::string& op) {
            return a.with_values(tensor_of(values, op.c_str(), "data"), op);
          },
          nb::arg("values"), nb::arg("op"), "This pattern (shared) with other values.")
      .def(
          "arrays",
          [](const sparse::CsrMatrix& a, int framework) {
            return nb::make_tuple(wrap(a.values(), framework), wrap(a.indices(), framework),
                                  wrap(a.indptr(), framework));
          },
          nb::arg("framework") = 0,
          "(data, indices, indptr) in package `framework` (0 numpy, 1 torch, 2 cupy), no copy.")
      .def_prop_ro("shape",
                   [](const sparse::CsrMatrix& a) { return nb::make_tuple(a.rows(), a.cols()); });

  // Plans kept by a csr_matrix across its products; each keeps the matrix alive.
  nb::class_<sparse::SpMV>(m, "SparseSpMV")
      .def(
          "__init__",
          [](sparse::SpMV* self, const sparse::CsrMatrix& a, int op) {
            new (self) sparse::SpMV(a, op_of(op, "sparse.matmul"));
          },
          nb::arg("a"), nb::arg("op") = 0)
      .def(
          "execute",
          [](sparse::SpMV& p, nb::handle x, nb::handle y, double alpha, double beta,
             uintptr_t stream) {
            const TensorView xv = to_view(x, "sparse.matmul", "x");
            const TensorView yv = to_view(y, "sparse.matmul", "y");
            const Stream s = stream_of(xv, stream);
            nb::gil_scoped_release r;
            p.execute(xv, yv, alpha, beta, s);
          },
          nb::arg("x"), nb::arg("y"), nb::arg("alpha") = 1.0, nb::arg("beta") = 0.0,
          nb::arg("stream") = 0);
  nb::class_<sparse::SpMM>(m, "SparseSpMM")
      .def(
          "__init__",
          [](sparse::SpMM* self, const sparse::CsrMatrix& a, int op) {
            new (self) sparse::SpMM(a, op_of(op, "sparse.spmm"));
          },
          nb::arg("a"), nb::arg("op") = 0)
      .def(
          "execute",
          [](sparse::SpMM& p, nb::handle b, nb::handle c, double alpha, double beta,
             uintptr_t stream) {
            const TensorView bv = to_view(b, "sparse.spmm", "b");
            const TensorView cv = to_view(c, "sparse.spmm", "c");
            const Stream s = stream_of(bv, stream);
            nb::gil_scoped_release r;
            p.execute(bv, cv, alpha, beta, s);
          },
          nb::arg("b"), nb::arg("c"), nb::arg("alpha") = 1.0, nb::arg("beta") = 0.0,
          nb::arg("stream") = 0);
  m.def(
      "sparse_sddmm",
      [](const sparse::CsrMatrix& mask, nb::handle a, nb::handle b, int framework,
         uintptr_t stream) {
        const char* name = "sparse.sddmm";
        const TensorView av = to_view(a, name, "a");
        const TensorView bv = to_view(b, name, "b");
        sparse::CsrMatrix c =
            without_gil([&] { return sparse::sddmm(mask, av, bv, stream_of(av, stream)); });
        nb::object values = wrap(c.values(), framework);
        return nb::make_tuple(nb::cast(std::move(c)), values);
      },
      nb::arg("mask"), nb::arg("a"), nb::arg("b"), nb::arg("framework") = 0,
      nb::arg("stream") = 0,
      "gpula::sparse::sddmm: (C, C's values in package `framework`), C sharing mask's pattern.");
  m.def(
      "sparse_spgemm",
      [](const sparse::CsrMatrix& a, const sparse::CsrMatrix& b, uintptr_t stream) {
        return without_gil(
            [&] { return sparse::spgemm(a, b, stream_of(a.values().view(), stream)); });
      },
      nb::arg("a"), nb::arg("b"), nb::arg("stream") = 0, "gpula::sparse::spgemm: C = A B.");
  def_sparse_direct(m);
  def_sparse_iterative(m);
}

}  // namespace gpula::python
