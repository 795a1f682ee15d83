// gpula::sparse products for Python: SpMV and SpMM write into the caller's y / C, SDDMM into the
// caller's values array, SpGEMM returns C's three arrays in the caller's package. The arrays
// arrive as exported by python/gpula/_interop.py (no copies).
#include <gpula/sparse.h>

#include <nanobind/stl/tuple.h>

#include "linalg_common.h"

namespace gpula::python {

namespace {

sparse::CsrView csr_of(nb::handle indptr, nb::handle indices, nb::handle values, int64_t rows,
                       int64_t cols, const char* name) {
  return sparse::CsrView{rows, cols, to_view(indptr, name, "indptr"),
                         to_view(indices, name, "indices"), to_view(values, name, "data")};
}

}  // namespace

void init_sparse(nb::module_& m) {
  // Plans kept by a csr_matrix (python/gpula/sparse/_matrix.py) across its products; the
  // csr_matrix keeps the arrays the plan points to alive.
  nb::class_<sparse::SpMV>(m, "SparseSpMV")
      .def(
          "__init__",
          [](sparse::SpMV* self, nb::handle indptr, nb::handle indices, nb::handle values,
             int64_t rows, int64_t cols, int op) {
            new (self) sparse::SpMV(csr_of(indptr, indices, values, rows, cols, "sparse.matmul"),
                                    static_cast<sparse::Op>(op));
          },
          nb::arg("indptr"), nb::arg("indices"), nb::arg("values"), nb::arg("rows"),
          nb::arg("cols"), nb::arg("op") = 0)
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
          [](sparse::SpMM* self, nb::handle indptr, nb::handle indices, nb::handle values,
             int64_t rows, int64_t cols, int op) {
            new (self) sparse::SpMM(csr_of(indptr, indices, values, rows, cols, "sparse.spmm"),
                                    static_cast<sparse::Op>(op));
          },
          nb::arg("indptr"), nb::arg("indices"), nb::arg("values"), nb::arg("rows"),
          nb::arg("cols"), nb::arg("op") = 0)
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
      "sparse_spmv",
      [](nb::handle indptr, nb::handle indices, nb::handle values, int64_t rows, int64_t cols,
         nb::handle x, nb::handle y, int op, double alpha, double beta, uintptr_t stream) {
        const char* name = "sparse.matmul";
        const sparse::CsrView a{rows, cols, to_view(indptr, name, "indptr"),
                                to_view(indices, name, "indices"), to_view(values, name, "data")};
        const TensorView xv = to_view(x, name, "x");
        const TensorView yv = to_view(y, name, "y");
        without_gil([&] {
          const Stream s = stream_of(xv, stream);
          sparse::SpMV plan(a, static_cast<sparse::Op>(op), {}, s);
          plan.execute(xv, yv, alpha, beta, s);
        });
      },
      nb::arg("indptr"), nb::arg("indices"), nb::arg("values"), nb::arg("rows"), nb::arg("cols"),
      nb::arg("x"), nb::arg("y"), nb::arg("op") = 0, nb::arg("alpha") = 1.0, nb::arg("beta") = 0.0,
      nb::arg("stream") = 0,
      "gpula::sparse::SpMV: y = alpha op(A) x + beta y (op 0 none, 1 transpose, 2 "
      "conj-transpose).");
  m.def(
      "sparse_spmm",
      [](nb::handle indptr, nb::handle indices, nb::handle values, int64_t rows, int64_t cols,
         nb::handle b, nb::handle c, int op, double alpha, double beta, uintptr_t stream) {
        const char* name = "sparse.spmm";
        const sparse::CsrView a = csr_of(indptr, indices, values, rows, cols, name);
        const TensorView bv = to_view(b, name, "b");
        const TensorView cv = to_view(c, name, "c");
        without_gil([&] {
          const Stream s = stream_of(bv, stream);
          sparse::SpMM plan(a, static_cast<sparse::Op>(op), {}, s);
          plan.execute(bv, cv, alpha, beta, s);
        });
      },
      nb::arg("indptr"), nb::arg("indices"), nb::arg("values"), nb::arg("rows"), nb::arg("cols"),
      nb::arg("b"), nb::arg("c"), nb::arg("op") = 0, nb::arg("alpha") = 1.0, nb::arg("beta") = 0.0,
      nb::arg("stream") = 0,
      "gpula::sparse::SpMM: C = alpha op(A) B + beta C (op 0 none, 1 transpose, 2 "
      "conj-transpose), written into the caller's C.");
  m.def(
      "sparse_sddmm",
      [](nb::handle indptr, nb::handle indices, nb::handle values, int64_t rows, int64_t cols,
         nb::handle a, nb::handle b, double alpha, double beta, uintptr_t stream) {
        const char* name = "sparse.sddmm";
        const sparse::CsrView c = csr_of(indptr, indices, values, rows, cols, name);
        const TensorView av = to_view(a, name, "a");
        const TensorView bv = to_view(b, name, "b");
        without_gil([&] {
          const Stream s = stream_of(av, stream);
          sparse::SDDMM plan(c, {}, s);
          plan.execute(av, bv, alpha, beta, s);
        });
      },
      nb::arg("indptr"), nb::arg("indices"), nb::arg("values"), nb::arg("rows"), nb::arg("cols"),
      nb::arg("a"), nb::arg("b"), nb::arg("alpha") = 1.0, nb::arg("beta") = 0.0,
      nb::arg("stream") = 0,
      "gpula::sparse::SDDMM: values = alpha (a b) o spy(C) + beta values, in place.");
  m.def(
      "sparse_spgemm",
      [](nb::handle a_indptr, nb::handle a_indices, nb::handle a_values, int64_t a_rows,
         int64_t a_cols, nb::handle b_indptr, nb::handle b_indices, nb::handle b_values,
         int64_t b_rows, int64_t b_cols, int framework, uintptr_t stream) {
        const char* name = "sparse.spgemm";
        const sparse::CsrView a = csr_of(a_indptr, a_indices, a_values, a_rows, a_cols, name);
        const sparse::CsrView b = csr_of(b_indptr, b_indices, b_values, b_rows, b_cols, name);
        sparse::CsrMatrix c = without_gil([&] {
          return sparse::spgemm(a, b, stream_of(a.values, stream));
        });
        return nb::make_tuple(wrap(c.values(), framework), wrap(c.indices(), framework),
                              wrap(c.indptr(), framework));
      },
      nb::arg("a_indptr"), nb::arg("a_indices"), nb::arg("a_values"), nb::arg("a_rows"),
      nb::arg("a_cols"), nb::arg("b_indptr"), nb::arg("b_indices"), nb::arg("b_values"),
      nb::arg("b_rows"), nb::arg("b_cols"), nb::arg("framework") = 0, nb::arg("stream") = 0,
      "gpula::sparse::spgemm: (data, indices, indptr) of C = A B, in package `framework` (0 "
      "numpy, 1 torch, 2 cupy).");
}

}  // namespace gpula::python
