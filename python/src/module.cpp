// gpula._gpula: the native half of the gpula Python package.
#include "common.h"

namespace gpula::python {
void init_linalg(nb::module_& m);  // linalg.cpp
void init_linalg_qr(nb::module_& m);  // linalg_qr.cpp
void init_linalg_eigh(nb::module_& m);  // linalg_eigh.cpp
void init_linalg_eig(nb::module_& m);  // linalg_eig.cpp
void init_linalg_svd(nb::module_& m);  // linalg_svd.cpp
void init_sparse(nb::module_& m);  // sparse.cpp
void init_sparse_direct(nb::module_& m);  // sparse_direct.cpp
void init_sparse_iterative(nb::module_& m);  // sparse_iterative.cpp
void init_distributed(nb::module_& m);  // distributed.cpp
}  // namespace gpula::python

NB_MODULE(_gpula, m) {
  using namespace gpula::python;
  m.doc() = "gpula native extension; use the `gpula` package instead of importing this directly.";
  m.attr("__version__") = GPULA_VERSION;
  init_errors(m);
  init_log(m);
  init_tensor(m);
  init_matmul(m);
  init_linalg(m);
  init_linalg_qr(m);
  init_linalg_eigh(m);
  init_linalg_eig(m);
  init_linalg_svd(m);
  init_sparse(m);
  init_sparse_direct(m);
  init_sparse_iterative(m);
  init_distributed(m);
}
