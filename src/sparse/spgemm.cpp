// The SpGEMM front C = A B: checks, the empty products, then the backend for A's device.
#include <gpula/sparse.h>

#include <cstring>

#include "core/format.h"
#include "sparse/check.h"
#include "sparse/spgemm_backend.h"

namespace gpula::sparse {

namespace {

constexpr const char* kOp = "sparse.spgemm";

using gpula::detail::throw_error;

CsrMatrix empty_product(const CsrView& a, const CsrView& b, Stream s) {
  const Stream host{Device::cpu(), nullptr};
  Tensor p = Tensor::empty({a.rows + 1}, a.index_dtype(), host);
  std::memset(p.data(), 0, static_cast<size_t>(a.rows + 1) * size_of(a.index_dtype()));
  Tensor i = Tensor::empty({0}, a.index_dtype(), host);
  Tensor v = Tensor::empty({0}, a.dtype(), host);
  if (a.device().is_cuda()) {
    Tensor dp = Tensor::empty(p.shape(), p.dtype(), s);
    copy(p.view(), dp.view(), s);
    p = dp;
    i = Tensor::empty({0}, a.index_dtype(), s);
    v = Tensor::empty({0}, a.dtype(), s);
  }
  return CsrMatrix::from_csr(a.rows, b.cols, p, i, v, kOp);
}

// Checks of b against a (after check_csr of both).
void check_pair(const CsrView& a, const CsrView& b) {
  if (b.rows != a.cols) {
    throw_error<InvalidArgument>(kOp, "b must have ", a.cols, " rows (A is (", a.rows, ", ", a.cols,
                                 ")), got shape (", b.rows, ", ", b.cols, ")");
  }
  if (b.dtype() != a.dtype()) {
    throw_error<DTypeError>(kOp, "b must have A's dtype ", name(a.dtype()), ", got ",
                            name(b.dtype()));
  }
  if (b.index_dtype() != a.index_dtype()) {
    throw_error<DTypeError>(kOp, "b must have A's index dtype ", name(a.index_dtype()), ", got ",
                            name(b.index_dtype()));
  }
  if (b.device() != a.device()) {
    throw_error<InvalidArgument>(kOp, "b must be on A's device ", to_string(a.device()), ", got ",
                                 to_string(b.device()));
  }
}

// C = A B for validated views.
CsrMatrix product(const CsrView& a, const CsrView& b, Stream stream) {
  const Stream s = detail::on_device(stream, a.device());
  if (a.nnz() == 0 || b.nnz() == 0 || a.rows == 0 || b.cols == 0) return empty_product(a, b, s);
  return a.device().is_cuda() ? detail::cuda::spgemm(a, b, s) : detail::cpu::spgemm(a, b);
}

}  // namespace

CsrMatrix spgemm(const CsrView& a, const CsrView& b, Stream stream) {
  check_csr(a, kOp);
  check_csr(b, kOp);
  check_pair(a, b);  // before the contents: cheap, and names the mismatch
  validate_csr(a, kOp);
  validate_csr(b, kOp);
  return product(a, b, stream);
}

CsrMatrix spgemm(const CsrMatrix& a, const CsrMatrix& b, Stream stream) {
  check_pair(a.view(), b.view());
  return product(a.view(), b.view(), stream);
}

}  // namespace gpula::sparse
