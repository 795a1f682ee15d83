// The planned SDDMM front C = alpha (A B) o spy(C) + beta C: argument checks, then the backend
// plan for C's device.
#include <gpula/sparse.h>

#include <string>

#include "core/format.h"
#include "sparse/check.h"
#include "sparse/sddmm_backend.h"

namespace gpula::sparse {

namespace {

constexpr const char* kOp = "sparse.sddmm";

// No plan for a C without stored values: execute has nothing to compute.
std::unique_ptr<detail::SddmmBackendPlan> make_plan(const CsrView& c, Op) {
  if (c.nnz() == 0) return nullptr;
  return c.device().is_cuda() ? detail::cuda::make_sddmm_plan(c) : detail::cpu::make_sddmm_plan(c);
}

}  // namespace

struct SDDMM::Impl : detail::PlannedProduct<detail::SddmmBackendPlan> {};

SDDMM::SDDMM(const CsrView& c, const CommonOptions& options, Stream)
    : impl_(detail::plan_product<Impl>(c, nullptr, Op::none, options, kOp, make_plan)) {}

SDDMM::SDDMM(const CsrMatrix& c, const CommonOptions& options, Stream)
    : impl_(detail::plan_product<Impl>(c.view(), &c, Op::none, options, kOp, make_plan)) {}

SDDMM::~SDDMM() = default;
SDDMM::SDDMM(SDDMM&&) noexcept = default;
SDDMM& SDDMM::operator=(SDDMM&&) noexcept = default;

void SDDMM::execute(const TensorView& a, const TensorView& b, double alpha, double beta,
                    Stream stream) {
  const CsrView& c = impl_->a;
  const std::string ashape = gpula::detail::cat("(", c.rows, ", k) (C is (", c.rows, ", ",
                                                c.cols, "))");
  detail::check_dense(a, kOp, "a", c.rows, -1, c.dtype(), c.device(), ashape.c_str());
  const std::string bshape = gpula::detail::cat("(", a.shape[1], ", ", c.cols, ") = (a.cols, C.cols)");
  detail::check_dense(b, kOp, "b", a.shape[1], c.cols, c.dtype(), c.device(), bshape.c_str());
  if (c.nnz() == 0) return;
  impl_->plan->execute(a, b, alpha, beta, detail::on_device(stream, c.device()));
}

CsrMatrix sddmm(const CsrMatrix& mask, const TensorView& a, const TensorView& b, Stream stream) {
  const CsrView m = mask.view();  // validated when mask was built
  const Stream s = detail::on_device(stream, m.device());
  Tensor values = Tensor::empty({m.nnz()}, m.dtype(), s);
  CsrMatrix out = mask.with_values(values, kOp);
  SDDMM plan(out, {}, s);
  plan.execute(a, b, 1.0, 0.0, s);
  return out;
}

}  // namespace gpula::sparse
