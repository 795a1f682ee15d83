// CPU backend of the planned SDDMM: one dot product per stored value of C, rows in parallel.
#include "backend/cpu/base/parallel.h"
#include "core/dtype_dispatch.h"
#include "sparse/sddmm_backend.h"

namespace gpula::sparse::detail::cpu {

namespace {

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
  const bool pool = gpula::detail::cpu::parallel_worth(double(c.nnz()) * double(k));
#pragma omp parallel for schedule(dynamic, 64) if (pool)
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

// Nothing to plan: the kernel reads C's pattern as it is.
class CpuSddmmPlan final : public SddmmBackendPlan {
 public:
  explicit CpuSddmmPlan(const CsrView& c) : c_(c) {}
  void execute(const TensorView& a, const TensorView& b, double alpha, double beta,
               Stream) override {
    sddmm(c_, a, b, alpha, beta);
  }

 private:
  CsrView c_;
};

}  // namespace

std::unique_ptr<SddmmBackendPlan> make_sddmm_plan(const CsrView& c) {
  return std::make_unique<CpuSddmmPlan>(c);
}

void sddmm(const CsrView& c, const TensorView& a, const TensorView& b, double alpha, double beta) {
  gpula::detail::visit_float_index(c.dtype(), c.index_dtype(), [&](auto v, auto i) {
    using V = decltype(v);
    sddmm_kernel<decltype(i), V>(c, a, b, V(alpha), V(beta));
  });
}

}  // namespace gpula::sparse::detail::cpu
