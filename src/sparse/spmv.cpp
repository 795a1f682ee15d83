// The planned SpMV front: argument checks, then the backend plan for A's device.
#include <gpula/sparse.h>

#include "core/format.h"
#include "sparse/check.h"
#include "sparse/spmv_backend.h"

namespace gpula::sparse {

namespace {

constexpr const char* kOp = "sparse.SpMV";

void check_vector(const TensorView& t, const char* name, int64_t length, const CsrView& a) {
  using gpula::detail::throw_error;
  if (t.ndim() != 1 || t.shape[0] != length) {
    throw_error<InvalidArgument>(kOp, name, " must have shape (", length, ",), got ",
                                 t.shape_str());
  }
  if (length > 1 && t.strides[0] != 1) {
    throw_error<InvalidArgument>(kOp, name, " must be contiguous, got stride ", t.strides[0]);
  }
  if (t.dtype != a.dtype()) {
    throw_error<DTypeError>(kOp, name, " must have A's dtype ", gpula::name(a.dtype()), ", got ",
                            gpula::name(t.dtype));
  }
  if (t.device != a.device()) {
    throw_error<InvalidArgument>(kOp, name, " must be on A's device ", to_string(a.device()),
                                 ", got ", to_string(t.device));
  }
}

std::unique_ptr<detail::SpmvBackendPlan> make_plan(const CsrView& a, Op op) {
  return a.device().is_cuda() ? detail::cuda::make_spmv_plan(a, op)
                              : detail::cpu::make_spmv_plan(a, op);
}

}  // namespace

struct SpMV::Impl : detail::PlannedProduct<detail::SpmvBackendPlan> {};

SpMV::SpMV(const CsrView& a, Op op, const CommonOptions& options, Stream)
    : impl_(detail::plan_product<Impl>(a, nullptr, op, options, kOp, make_plan)) {}

SpMV::SpMV(const CsrMatrix& a, Op op, const CommonOptions& options, Stream)
    : impl_(detail::plan_product<Impl>(a.view(), &a, op, options, kOp, make_plan)) {}

SpMV::~SpMV() = default;
SpMV::SpMV(SpMV&&) noexcept = default;
SpMV& SpMV::operator=(SpMV&&) noexcept = default;

void SpMV::execute(const TensorView& x, const TensorView& y, double alpha, double beta,
                   Stream stream) {
  const CsrView& a = impl_->a;
  const bool t = impl_->op != Op::none;
  check_vector(x, "x", t ? a.rows : a.cols, a);
  check_vector(y, "y", t ? a.cols : a.rows, a);
  impl_->plan->execute(x, y, alpha, beta, detail::on_device(stream, a.device()));
}

}  // namespace gpula::sparse
