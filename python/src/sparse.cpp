// gpula::sparse::SpMV for Python: y = alpha op(A) x + beta y written into the caller's y. The
// arrays arrive as exported by python/gpula/_interop.py (no copies).
#include <gpula/sparse.h>

#include "linalg_common.h"

namespace gpula::python {

void init_sparse(nb::module_& m) {
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
}

}  // namespace gpula::python
