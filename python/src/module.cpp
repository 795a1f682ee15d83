// gpula._gpula: the native half of the gpula Python package.
#include "common.h"

namespace gpula::python {
void init_linalg(nb::module_& m);  // linalg.cpp
void init_sparse(nb::module_& m);  // sparse.cpp
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
  init_grouped_matmul(m);
  init_linalg(m);
  init_sparse(m);
  init_distributed(m);
}
