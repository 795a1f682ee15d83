// gpula::sparse::DirectSolver for Python: the CSR arrays, b and x arrive as DLPack/buffer
// objects (python/gpula/sparse/_direct.py allocates x in the caller's package).
#include <gpula/sparse.h>
#include <nanobind/stl/string.h>

#include <string>

#include "common.h"

namespace gpula::python {
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

void init_sparse_direct(nb::module_& m) {
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

}  // namespace gpula::python
