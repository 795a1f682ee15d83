// CPU backend of the planned SpMV: a row-parallel CSR kernel for op = none, a serial scatter
// over A's rows for the transposed products (no atomics; A^T is not formed).
#include "backend/cpu/base/parallel.h"
#include "core/dtype_dispatch.h"
#include "sparse/spmv_backend.h"

namespace gpula::sparse::detail::cpu {

namespace {

using gpula::detail::conj_if;

template <class I, class V>
void spmv_kernel(const CsrView& a, Op op, const V* x, V* y, V alpha, V beta) {
  const auto* ptr = static_cast<const I*>(a.indptr.data);
  const auto* ind = static_cast<const I*>(a.indices.data);
  const auto* val = static_cast<const V*>(a.values.data);
  const int64_t rows = a.rows;
  if (op == Op::none) {
    // A gather (~1 ns, 5 units) an element of A: small products stay on the calling thread.
    const bool pool = gpula::detail::cpu::parallel_worth(5.0 * double(a.nnz()) + double(rows));
#pragma omp parallel for schedule(dynamic, 256) if (pool)
    for (int64_t i = 0; i < rows; ++i) {
      V acc{};
      for (I k = ptr[i]; k < ptr[i + 1]; ++k) acc += val[k] * x[ind[k]];
      y[i] = (beta == V{} ? V{} : beta * y[i]) + alpha * acc;
    }
    return;
  }
  const bool c = op == Op::conjugate_transpose;
  for (int64_t j = 0; j < a.cols; ++j) y[j] = beta == V{} ? V{} : beta * y[j];
  for (int64_t i = 0; i < rows; ++i) {
    const V xi = alpha * x[i];
    for (I k = ptr[i]; k < ptr[i + 1]; ++k) y[ind[k]] += conj_if(val[k], c) * xi;
  }
}

class CpuSpmvPlan final : public SpmvBackendPlan {
 public:
  CpuSpmvPlan(const CsrView& a, Op op) : a_(a), op_(op) {}
  void execute(const TensorView& x, const TensorView& y, double alpha, double beta,
               Stream) override {
    gpula::detail::visit_float_index(a_.dtype(), a_.index_dtype(), [&](auto v, auto i) {
      using V = decltype(v);
      spmv_kernel<decltype(i), V>(a_, op_, static_cast<const V*>(x.data), static_cast<V*>(y.data),
                                  V(alpha), V(beta));
    });
  }

 private:
  CsrView a_;
  Op op_;
};

}  // namespace

std::unique_ptr<SpmvBackendPlan> make_spmv_plan(const CsrView& a, Op op) {
  return std::make_unique<CpuSpmvPlan>(a, op);
}

}  // namespace gpula::sparse::detail::cpu
