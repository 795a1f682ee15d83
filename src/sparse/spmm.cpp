// The planned SpMM front C = alpha op(A) B + beta C: argument checks, then the backend plan for
// A's device.
#include <gpula/sparse.h>

#include <string>

#include "core/format.h"
#include "sparse/check.h"
#include "sparse/spmm_backend.h"

namespace gpula::sparse {

namespace {

constexpr const char* kOp = "sparse.spmm";

std::unique_ptr<detail::SpmmBackendPlan> make_plan(const CsrView& a, Op op) {
  return a.device().is_cuda() ? detail::cuda::make_spmm_plan(a, op)
                              : detail::cpu::make_spmm_plan(a, op);
}

}  // namespace

struct SpMM::Impl : detail::PlannedProduct<detail::SpmmBackendPlan> {};

SpMM::SpMM(const CsrView& a, Op op, const CommonOptions& options, Stream)
    : impl_(detail::plan_product<Impl>(a, nullptr, op, options, kOp, make_plan)) {}

SpMM::SpMM(const CsrMatrix& a, Op op, const CommonOptions& options, Stream)
    : impl_(detail::plan_product<Impl>(a.view(), &a, op, options, kOp, make_plan)) {}

SpMM::~SpMM() = default;
SpMM::SpMM(SpMM&&) noexcept = default;
SpMM& SpMM::operator=(SpMM&&) noexcept = default;

void SpMM::execute(const TensorView& b, const TensorView& c, double alpha, double beta,
                   Stream stream) {
  const CsrView& a = impl_->a;
  const bool t = impl_->op != Op::none;
  const int64_t m = t ? a.cols : a.rows, k = t ? a.rows : a.cols;
  const std::string bshape = gpula::detail::cat("(", k, ", n) (op(A) is (", m, ", ", k, "))");
  detail::check_dense(b, kOp, "b", k, -1, a.dtype(), a.device(), bshape.c_str());
  const std::string cshape = gpula::detail::cat("(", m, ", ", b.shape[1], ") = (op(A).rows, b.cols)");
  detail::check_dense(c, kOp, "c", m, b.shape[1], a.dtype(), a.device(), cshape.c_str());
  if (c.numel() == 0) return;
  impl_->plan->execute(b, c, alpha, beta, detail::on_device(stream, a.device()));
}

namespace {

// A one-off product with a made plan.
Tensor spmm_with(SpMM& plan, const CsrView& a, const TensorView& b, Op op, Stream stream) {
  const int64_t m = op != Op::none ? a.cols : a.rows;
  const int64_t n = b.ndim() == 2 ? b.shape[1] : 0;
  const Stream s = detail::on_device(stream, a.device());
  Tensor c = Tensor::empty({m, n}, a.dtype(), s);
  plan.execute(b, c.view(), 1.0, 0.0, s);
  return c;
}

}  // namespace

Tensor spmm(const CsrView& a, const TensorView& b, Op op, Stream stream) {
  SpMM plan(a, op, {}, stream);
  return spmm_with(plan, a, b, op, stream);
}

Tensor spmm(const CsrMatrix& a, const TensorView& b, Op op, Stream stream) {
  SpMM plan(a, op, {}, stream);
  return spmm_with(plan, a.view(), b, op, stream);
}

}  // namespace gpula::sparse
