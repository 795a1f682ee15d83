// SDDMM C = alpha (A B) o spy(C) + beta C: the front (checks, layouts, dispatch) and the CPU
// kernel (one dot product per stored value, rows in parallel).
#include <gpula/sparse.h>

#include <string>

#include "core/format.h"
#include "sparse/dispatch.h"
#include "sparse/products_backend.h"

namespace gpula::sparse {

namespace {

constexpr const char* kOp = "sparse.sddmm";

using gpula::detail::throw_error;

template <class I, class V>
void sddmm_kernel(const CsrView& c, const TensorView& a, const TensorView& b, V alpha, V beta) {
  const auto* ptr = static_cast<const I*>(c.indptr.data);
  const auto* ind = static_cast<const I*>(c.indices.data);
  auto* val = static_cast<V*>(c.values.data);
  const auto* ap = static_cast<const V*>(a.data);
  const auto* bp = static_cast<const V*>(b.data);
  const int64_t k = a.shape[1];
  const int64_t as0 = a.strides[0], as1 = a.strides[1];
  const int64_t bs0 = b.strides[0], bs1 = b.strides[1];
  const bool zero_beta = beta == V{};
#pragma omp parallel for schedule(dynamic, 64)
  for (int64_t i = 0; i < c.rows; ++i) {
    const V* ai = ap + i * as0;
    for (I e = ptr[i]; e < ptr[i + 1]; ++e) {
      const V* bj = bp + static_cast<int64_t>(ind[e]) * bs1;
      V acc{};
      for (int64_t l = 0; l < k; ++l) acc += ai[l * as1] * bj[l * bs0];
      val[e] = alpha * acc + (zero_beta ? V{} : beta * val[e]);
    }
  }
}

}  // namespace

namespace detail {

void cpu_sddmm(const CsrView& c, const TensorView& a, const TensorView& b, double alpha,
               double beta) {
  dispatch_value_index(c.dtype(), c.index_dtype(), [&](auto v, auto i) {
    using V = decltype(v);
    sddmm_kernel<decltype(i), V>(c, a, b, V(alpha), V(beta));
  });
}

}  // namespace detail

struct SDDMM::Impl {
  CsrView c;
  CommonOptions options;
  CsrMatrix keep;  // the matrix c views, when built from one
  std::shared_ptr<detail::CudaSddmmPlan> cuda;

  // A checked (validated) view: the plan.
  Impl(const CsrView& v, const CommonOptions& opts) : c(v), options(opts) {
    if (c.device().is_cuda() && c.nnz() > 0) cuda = detail::cuda_sddmm_plan(c);
  }
};

SDDMM::SDDMM(const CsrView& c, const CommonOptions& options, Stream stream) {
  (void)stream;
  validate_csr(c, kOp);
  impl_ = std::make_unique<Impl>(c, options);
}

SDDMM::SDDMM(const CsrMatrix& c, const CommonOptions& options, Stream stream) {
  (void)stream;
  impl_ = std::make_unique<Impl>(c.view(), options);
  impl_->keep = c;
}

SDDMM::~SDDMM() = default;
SDDMM::SDDMM(SDDMM&&) noexcept = default;
SDDMM& SDDMM::operator=(SDDMM&&) noexcept = default;

void SDDMM::execute(const TensorView& a, const TensorView& b, double alpha, double beta,
                    Stream stream) {
  const CsrView& c = impl_->c;
  const std::string ashape = gpula::detail::cat("(", c.rows, ", k) (C is (", c.rows, ", ",
                                                c.cols, "))");
  detail::check_dense(a, kOp, "a", c.rows, -1, c.dtype(), c.device(), ashape.c_str());
  const std::string bshape = gpula::detail::cat("(", a.shape[1], ", ", c.cols, ") = (a.cols, C.cols)");
  detail::check_dense(b, kOp, "b", a.shape[1], c.cols, c.dtype(), c.device(), bshape.c_str());
  if (c.nnz() == 0) return;
  if (!c.device().is_cuda()) {
    detail::cpu_sddmm(c, a, b, alpha, beta);
    return;
  }
  Stream s = stream;
  s.device = c.device();
  if (a.shape[1] == 0) {
    // No product terms: C = beta C. Through the CPU kernel on a host copy (rare edge case).
    Tensor h = Tensor::empty(c.values.shape, c.dtype(), Stream{Device::cpu(), nullptr});
    if (beta != 0.0) copy(c.values, h.view(), s);
    Tensor hp = Tensor::empty(c.indptr.shape, c.index_dtype(), Stream{Device::cpu(), nullptr});
    Tensor hi = Tensor::empty(c.indices.shape, c.index_dtype(), Stream{Device::cpu(), nullptr});
    copy(c.indptr, hp.view(), s);
    copy(c.indices, hi.view(), s);
    TensorView ha = a, hb = b;
    ha.device = hb.device = Device::cpu();
    ha.data = hb.data = nullptr;
    detail::cpu_sddmm(CsrView{c.rows, c.cols, hp.view(), hi.view(), h.view()}, ha, hb, alpha,
                      beta);
    copy(h.view(), c.values, s);
    return;
  }
  TensorView av = a, bv = b;
  Tensor at, bt;
  if (!detail::is_row_major(a)) {
    at = Tensor::empty(a.shape, a.dtype, s);
    copy(a, at.view(), s);
    av = at.view();
  }
  if (!detail::is_row_major(b)) {
    bt = Tensor::empty(b.shape, b.dtype, s);
    copy(b, bt.view(), s);
    bv = bt.view();
  }
  detail::cuda_sddmm_execute(*impl_->cuda, av, bv, alpha, beta, s);
}

CsrMatrix sddmm(const CsrMatrix& mask, const TensorView& a, const TensorView& b, Stream stream) {
  const CsrView m = mask.view();  // validated when mask was built
  Stream s = stream;
  if (m.device().is_cuda()) s.device = m.device();
  Tensor values = Tensor::empty({m.nnz()}, m.dtype(), m.device().is_cuda() ? s : Stream{});
  CsrMatrix out = mask.with_values(values, kOp);
  SDDMM plan(out, {}, s);
  plan.execute(a, b, 1.0, 0.0, s);
  return out;
}

}  // namespace gpula::sparse
