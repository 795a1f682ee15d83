// SpMM C = alpha op(A) B + beta C: the front (argument checks, layouts, dispatch), the checks of
// dense operands shared with SDDMM, and the CPU kernels (row-parallel CSR gather, CSR transpose).
#include <gpula/sparse.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "core/format.h"
#include "sparse/dispatch.h"
#include "sparse/products_backend.h"

namespace gpula::sparse {

namespace {

constexpr const char* kOp = "sparse.spmm";

using gpula::detail::throw_error;

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
#pragma omp parallel for schedule(dynamic, 64)
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
      w[dst] = detail::conj_if(val[k], conjugate);
    }
  }
  return CsrMatrix::from_csr(a.cols, a.rows, tp, ti, tv, kOp);
}

// C = beta C where no product term exists (k = 0 or nnz = 0): on the host; on a GPU, zero by
// memset for beta = 0, otherwise through a host copy (a rare edge case, kept simple).
void scale_only(const TensorView& c, double beta, Stream s) {
  if (c.numel() == 0 || beta == 1.0) return;
  if (c.device.is_cuda()) {
    Tensor h = Tensor::empty(c.shape, c.dtype, Stream{Device::cpu(), nullptr});
    if (beta != 0.0) copy(c, h.view(), s);
    scale_only(h.view(), beta, {});
    copy(h.view(), c, s);
    return;
  }
  detail::dispatch_value_type(c.dtype, [&](auto zero) {
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

}  // namespace

namespace detail {

void check_dense(const TensorView& t, const char* op, const char* name, int64_t rows,
                 int64_t cols, DType dtype, Device device, const char* what_shape) {
  if (t.ndim() != 2) {
    throw_error<InvalidArgument>(op, name, " must be 2-D, got shape ", t.shape_str());
  }
  if (t.dtype != dtype) {
    throw_error<DTypeError>(op, name, " must have A's dtype ", gpula::name(dtype), ", got ",
                            gpula::name(t.dtype));
  }
  if (t.device != device) {
    throw_error<InvalidArgument>(op, name, " must be on A's device ", to_string(device), ", got ",
                                 to_string(t.device));
  }
  if ((rows >= 0 && t.shape[0] != rows) || (cols >= 0 && t.shape[1] != cols)) {
    throw_error<InvalidArgument>(op, name, " must have shape ", what_shape, ", got ",
                                 t.shape_str());
  }
  if (t.numel() > 0 && t.data == nullptr) throw_error<InvalidArgument>(op, name, " has no data");
}

bool is_row_major(const TensorView& t) {
  if (t.ndim() != 2) return false;
  const bool inner = t.shape[1] <= 1 || t.strides[1] == 1;
  const bool outer = t.shape[0] <= 1 || t.strides[0] >= std::max<int64_t>(1, t.shape[1]);
  return inner && outer;
}

int64_t row_major_ld(const TensorView& t) {
  const int64_t minimum = std::max<int64_t>(1, t.shape[1]);
  return t.shape[0] <= 1 ? minimum : std::max(minimum, t.strides[0]);
}

void cpu_spmm(const CsrView& a, const TensorView& b, const TensorView& c, double alpha,
              double beta) {
  dispatch_value_index(a.dtype(), a.index_dtype(), [&](auto v, auto i) {
    using V = decltype(v);
    using I = decltype(i);
    spmm_kernel<I, V>(a, b, c, V(alpha), V(beta));
  });
}

CsrMatrix cpu_transpose(const CsrView& a, bool conjugate) {
  CsrMatrix out;
  dispatch_value_index(a.dtype(), a.index_dtype(), [&](auto v, auto i) {
    out = transpose_typed<decltype(i), decltype(v)>(a, conjugate);
  });
  return out;
}

}  // namespace detail

struct SpMM::Impl {
  CsrView a;
  Op op = Op::none;
  CommonOptions options;
  CsrMatrix keep;  // the matrix a views, when built from one
  CsrMatrix at;    // CPU, op != none: the (conjugated) transpose of A
  std::shared_ptr<detail::CudaSpmmPlan> cuda;

  // A checked (validated) view: the plan.
  Impl(const CsrView& v, Op o, const CommonOptions& opts) : a(v), op(o), options(opts) {
    if (o != Op::none && o != Op::transpose && o != Op::conjugate_transpose) {
      throw_error<InvalidArgument>(kOp, "op must be none, transpose or conjugate_transpose, got ",
                                   static_cast<int>(o));
    }
    if (a.device().is_cuda()) {
      cuda = detail::cuda_spmm_plan(a, op);
    } else if (op != Op::none) {
      const bool complex = a.dtype() == DType::c64 || a.dtype() == DType::c128;
      at = detail::cpu_transpose(a, complex && op == Op::conjugate_transpose);
    }
  }
};

SpMM::SpMM(const CsrView& a, Op op, const CommonOptions& options, Stream stream) {
  (void)stream;
  validate_csr(a, kOp);
  impl_ = std::make_unique<Impl>(a, op, options);
}

SpMM::SpMM(const CsrMatrix& a, Op op, const CommonOptions& options, Stream stream) {
  (void)stream;
  impl_ = std::make_unique<Impl>(a.view(), op, options);
  impl_->keep = a;
}

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
  Stream s = stream;
  if (a.device().is_cuda()) s.device = a.device();
  if (c.numel() == 0) return;
  if (k == 0 || a.nnz() == 0) {
    scale_only(c, beta, s);
    return;
  }
  if (!a.device().is_cuda()) {
    detail::cpu_spmm(t ? impl_->at.view() : a, b, c, alpha, beta);
    return;
  }
  TensorView bv = b, cv = c;
  Tensor bt, ct;
  if (!detail::is_row_major(b)) {
    bt = Tensor::empty(b.shape, b.dtype, s);
    copy(b, bt.view(), s);
    bv = bt.view();
  }
  if (!detail::is_row_major(c)) {
    ct = Tensor::empty(c.shape, c.dtype, s);
    if (beta != 0.0) copy(c, ct.view(), s);
    cv = ct.view();
  }
  detail::cuda_spmm_execute(*impl_->cuda, bv, cv, alpha, beta, s);
  if (ct.defined()) copy(ct.view(), c, s);
}

namespace {

// A one-off product with a made plan.
Tensor spmm_with(SpMM& plan, const CsrView& a, const TensorView& b, Op op, Stream stream) {
  const int64_t m = op != Op::none ? a.cols : a.rows;
  const int64_t n = b.ndim() == 2 ? b.shape[1] : 0;
  Stream s = stream;
  if (a.device().is_cuda()) s.device = a.device();
  Tensor c = Tensor::empty({m, n}, a.dtype(), a.device().is_cuda() ? s : Stream{});
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
