// The planned SpMV front (argument checks, dispatch) and its CPU kernel.
#include <gpula/sparse.h>

#include <complex>
#include <string>

#include "core/format.h"
#include "sparse/spmv_backend.h"

namespace gpula::sparse {

namespace {

constexpr const char* kOp = "sparse.SpMV";

template <class V>
V conj_if(V v, bool c) {
  if constexpr (std::is_floating_point_v<V>) {
    (void)c;
    return v;
  } else {
    return c ? std::conj(v) : v;
  }
}

template <class I, class V>
void spmv_kernel(const CsrView& a, Op op, const V* x, V* y, V alpha, V beta) {
  const auto* ptr = static_cast<const I*>(a.indptr.data);
  const auto* ind = static_cast<const I*>(a.indices.data);
  const auto* val = static_cast<const V*>(a.values.data);
  const int64_t rows = a.rows;
  if (op == Op::none) {
#pragma omp parallel for schedule(dynamic, 256)
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

template <class V>
void spmv_typed(const CsrView& a, Op op, const TensorView& x, const TensorView& y, double alpha,
                double beta) {
  const auto* xp = static_cast<const V*>(x.data);
  auto* yp = static_cast<V*>(y.data);
  if (a.index_dtype() == DType::i32) {
    spmv_kernel<int32_t, V>(a, op, xp, yp, V(alpha), V(beta));
  } else {
    spmv_kernel<int64_t, V>(a, op, xp, yp, V(alpha), V(beta));
  }
}

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

}  // namespace

namespace detail {

void cpu_spmv(const CsrView& a, Op op, const TensorView& x, const TensorView& y, double alpha,
              double beta) {
  switch (a.dtype()) {
    case DType::f32:
      spmv_typed<float>(a, op, x, y, alpha, beta);
      break;
    case DType::f64:
      spmv_typed<double>(a, op, x, y, alpha, beta);
      break;
    case DType::c64:
      spmv_typed<std::complex<float>>(a, op, x, y, alpha, beta);
      break;
    default:
      spmv_typed<std::complex<double>>(a, op, x, y, alpha, beta);
      break;
  }
}

}  // namespace detail

struct SpMV::Impl {
  CsrView a;
  Op op = Op::none;
  CommonOptions options;
  CsrMatrix keep;  // the matrix a views, when built from one
  std::shared_ptr<detail::CudaSpmvPlan> cuda;

  // A checked (validated) view: the plan.
  Impl(const CsrView& v, Op o, const CommonOptions& opts) : a(v), op(o), options(opts) {
    if (o != Op::none && o != Op::transpose && o != Op::conjugate_transpose) {
      gpula::detail::throw_error<InvalidArgument>(
          kOp, "op must be none, transpose or conjugate_transpose, got ", static_cast<int>(o));
    }
    if (a.device().is_cuda()) cuda = detail::cuda_spmv_plan(a, op);
  }
};

SpMV::SpMV(const CsrView& a, Op op, const CommonOptions& options, Stream stream) {
  (void)stream;
  validate_csr(a, kOp);
  impl_ = std::make_unique<Impl>(a, op, options);
}

SpMV::SpMV(const CsrMatrix& a, Op op, const CommonOptions& options, Stream stream) {
  (void)stream;
  impl_ = std::make_unique<Impl>(a.view(), op, options);
  impl_->keep = a;
}

SpMV::~SpMV() = default;
SpMV::SpMV(SpMV&&) noexcept = default;
SpMV& SpMV::operator=(SpMV&&) noexcept = default;

void SpMV::execute(const TensorView& x, const TensorView& y, double alpha, double beta,
                   Stream stream) {
  const CsrView& a = impl_->a;
  const bool t = impl_->op != Op::none;
  check_vector(x, "x", t ? a.rows : a.cols, a);
  check_vector(y, "y", t ? a.cols : a.rows, a);
  if (a.device().is_cuda()) {
    Stream s = stream;
    s.device = a.device();
    detail::cuda_spmv_execute(*impl_->cuda, x, y, alpha, beta, s);
  } else {
    detail::cpu_spmv(a, impl_->op, x, y, alpha, beta);
  }
}

}  // namespace gpula::sparse
