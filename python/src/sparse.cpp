// gpula::sparse matrices and products for Python. A SparseCsrMatrix is the C++ CsrMatrix behind a
// gl.sparse.csr_matrix (python/gpula/sparse/_matrix.py): validated and canonicalized once when
// built, its pattern its own, its values shared with the caller's array. SpMV / SpMM plans and
// the SDDMM / SpGEMM products take it, so they do not validate again. Arrays arrive as exported
// by python/gpula/_interop.py; results go back in the caller's package (no copies).
#include <gpula/sparse.h>

#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>

#include <memory>
#include <string>

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
}

}  // namespace gpula::python
