// CPU backend of the planned SpMM: a row-parallel CSR gather over B's rows; for op != none the
// plan forms the (conjugated) transpose of A as CSR once and multiplies with it.
#include <algorithm>
#include <vector>

#include "backend/cpu/base/parallel.h"
#include "core/dtype_dispatch.h"
#include "sparse/spmm_backend.h"

namespace gpula::sparse::detail::cpu {

namespace {

constexpr const char* kOp = "sparse.spmm";

template <class I, class V>
void spmm_kernel(const CsrView& a, const TensorView& b, const TensorView& c, V alpha, V beta) {
  const auto* ptr = static_cast<const I*>(a.indptr.data);
  const auto* ind = static_cast<const I*>(a.indices.data);
  const auto* val = static_cast<const V*>(a.values.data);
  const auto* bp = static_cast<const V*>(b.data);
  auto* cp = static_cast<V*>(c.data);
  const int64_t rows = c.shape[0], n = c.shape[1];
  const int64_t bs0 = b.strides[0], bs1 = b.strides[1];
  const int64_t cs0 = c.strides[0], cs1 = c.strides[1];
  const bool unit = (n <= 1) || (bs1 == 1 && cs1 == 1);
  const bool zero_beta = beta == V{};
  const bool pool = gpula::detail::cpu::parallel_worth(double(a.nnz() + rows) * double(n));
#pragma omp parallel for schedule(dynamic, 64) if (pool)
  for (int64_t i = 0; i < rows; ++i) {
    V* ci = cp + i * cs0;
    if (unit) {
      for (int64_t j = 0; j < n; ++j) ci[j] = zero_beta ? V{} : beta * ci[j];
      for (I k = ptr[i]; k < ptr[i + 1]; ++k) {
        const V s = alpha * val[k];
        const V* bj = bp + static_cast<int64_t>(ind[k]) * bs0;
        for (int64_t j = 0; j < n; ++j) ci[j] += s * bj[j];
      }
    } else {
      for (int64_t j = 0; j < n; ++j) ci[j * cs1] = zero_beta ? V{} : beta * ci[j * cs1];
      for (I k = ptr[i]; k < ptr[i + 1]; ++k) {
        const V s = alpha * val[k];
        const V* bj = bp + static_cast<int64_t>(ind[k]) * bs0;
        for (int64_t j = 0; j < n; ++j) ci[j * cs1] += s * bj[j * bs1];
      }
    }
  }
}

template <class I, class V>
CsrMatrix transpose_typed(const CsrView& a, bool conjugate) {
  const auto* ptr = static_cast<const I*>(a.indptr.data);
  const auto* ind = static_cast<const I*>(a.indices.data);
  const auto* val = static_cast<const V*>(a.values.data);
  const int64_t nnz = a.nnz();
  const Stream host{Device::cpu(), nullptr};
  Tensor tp = Tensor::empty({a.cols + 1}, a.index_dtype(), host);
  Tensor ti = Tensor::empty({nnz}, a.index_dtype(), host);
  Tensor tv = Tensor::empty({nnz}, a.dtype(), host);
  auto* p = static_cast<I*>(tp.data());
  auto* q = static_cast<I*>(ti.data());
  auto* w = static_cast<V*>(tv.data());
  std::fill(p, p + a.cols + 1, I{0});
  for (int64_t k = 0; k < nnz; ++k) ++p[ind[k] + 1];
  for (int64_t j = 0; j < a.cols; ++j) p[j + 1] += p[j];
  // Rows of A in order: each row of A^T receives its columns sorted.
  std::vector<I> next(p, p + a.cols);
  for (int64_t i = 0; i < a.rows; ++i) {
    for (I k = ptr[i]; k < ptr[i + 1]; ++k) {
      const I dst = next[ind[k]]++;
      q[dst] = static_cast<I>(i);
      w[dst] = gpula::detail::conj_if(val[k], conjugate);
    }
  }
  return CsrMatrix::from_csr(a.cols, a.rows, tp, ti, tv, kOp);
}

// The CSR of A^T (conjugate: of A^H), with A's index and value dtypes.
CsrMatrix transpose(const CsrView& a, bool conjugate) {
  CsrMatrix out;
  gpula::detail::visit_float_index(a.dtype(), a.index_dtype(), [&](auto v, auto i) {
    out = transpose_typed<decltype(i), decltype(v)>(a, conjugate);
  });
  return out;
}

class CpuSpmmPlan final : public SpmmBackendPlan {
 public:
  CpuSpmmPlan(const CsrView& a, Op op) : a_(a), transposed_(op != Op::none) {
    if (transposed_) {
      const bool complex = a.dtype() == DType::c64 || a.dtype() == DType::c128;
      at_ = transpose(a, complex && op == Op::conjugate_transpose);
    }
  }
  void execute(const TensorView& b, const TensorView& c, double alpha, double beta,
               Stream) override {
    const CsrView a = transposed_ ? at_.view() : a_;
    if (a.cols == 0 || a.nnz() == 0) {
      scale(c, beta);
      return;
    }
    gpula::detail::visit_float_index(a.dtype(), a.index_dtype(), [&](auto v, auto i) {
      using V = decltype(v);
      spmm_kernel<decltype(i), V>(a, b, c, V(alpha), V(beta));
    });
  }

 private:
  CsrView a_;
  bool transposed_;
  CsrMatrix at_;  // op != none: the (conjugated) transpose of A
};

}  // namespace

std::unique_ptr<SpmmBackendPlan> make_spmm_plan(const CsrView& a, Op op) {
  return std::make_unique<CpuSpmmPlan>(a, op);
}

void scale(const TensorView& c, double beta) {
  if (c.numel() == 0 || beta == 1.0) return;
  gpula::detail::visit_float(c.dtype, [&](auto zero) {
    using V = decltype(zero);
    auto* p = static_cast<V*>(c.data);
    const V be(beta);
    for (int64_t i = 0; i < c.shape[0]; ++i) {
      for (int64_t j = 0; j < c.shape[1]; ++j) {
        V& e = p[i * c.strides[0] + j * c.strides[1]];
        e = beta == 0.0 ? V{} : be * e;
      }
    }
  });
}

}  // namespace gpula::sparse::detail::cpu
