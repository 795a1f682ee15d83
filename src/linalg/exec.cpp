#include "linalg/exec.h"

#include <algorithm>
#include <complex>
#include <cstring>

#include "backend/cpu_api.h"
#include "backend/cuda_api.h"
#include "core/dtype_dispatch.h"
#include "linalg/solve_backend.h"

namespace gpula::detail {

LinalgExec::LinalgExec(const char* op, const char* arg, Device data,
                       const linalg::LinalgOptions& options, Stream caller,
                       std::optional<Device> force)
    : op_(op), arg_(arg), data_(data), caller_(caller), options_(&options) {
  exec_ = force.value_or(options.device.value_or(data));
  if (exec_.is_cuda() && !cuda::compiled()) throw NotCompiled(op, "device", "cuda");
  if (exec_.is_cuda() && exec_.index >= cuda::device_count())
    throw_error<NotSupported>(op, "device: no CUDA device ", to_string(exec_), " (",
                              cuda::device_count(), " visible)");
  if (exec_.is_cuda() && data_.is_cuda() && exec_ != data_)
    throw_error<NotSupported>(op, "data on ", to_string(data_), " cannot run on ",
                              to_string(exec_));
  if (exec_.is_cuda() && caller_.device.is_cuda() && caller_.device != exec_)
    throw_error<InvalidArgument>(op, "stream is on ", to_string(caller_.device),
                                 ", the work runs on ", to_string(exec_));
  stream_ = stream_for(exec_);
  if (!exec_.is_cuda()) cpu::warn_blas_core_once();
}

Stream LinalgExec::stream_for(Device d) const {
  if (!d.is_cuda()) return {d, nullptr};
  return {d, caller_.device == d ? caller_.handle : nullptr};
}

Tensor LinalgExec::allocate(const Shape& shape, DType t, Stream stream) const {
  try {
    return Tensor::empty(shape, t, stream);
  } catch (const OutOfMemory& e) {
    // Tensor::empty's own "[tensor.empty] " prefix gives way to the operation's.
    std::string why = e.what();
    if (why.rfind("[tensor.empty] ", 0) == 0) why.erase(0, 15);
    throw_error<OutOfMemory>(op_, arg_, ": out of memory for a ", name(t), " array of shape ",
                             shape_str(shape), " (the batch of ", arg_, "): ", why);
  }
}

Tensor LinalgExec::empty(const Shape& shape, DType t) const { return allocate(shape, t, stream_); }

void LinalgExec::copy(const TensorView& src, const TensorView& dst) const {
  if (dst.numel() == 0) return;
  const Device d = src.device.is_cuda() ? src.device : dst.device;
  gpula::copy(src, dst, stream_for(d));
}

void LinalgExec::zero(const TensorView& v) const {
  if (v.numel() == 0) return;
  if (v.device.is_cuda())
    cuda::fill_zero(v, stream_for(v.device));
  else
    cpu::fill_zero(v);
}

void LinalgExec::set_identity(const Tensor& t) const {
  zero(t.view());
  const int64_t n = t.shape().back();
  if (n == 0) return;
  Tensor one = filled({1}, t.dtype(), 1.0);
  TensorView diag = t.view();
  diag.shape.pop_back();
  diag.strides.pop_back();
  diag.strides.back() = n + 1;
  const TensorView src{one.data(), t.dtype(), diag.shape, Shape(diag.shape.size(), 0),
                       one.device()};
  copy(src, diag);
}

Tensor LinalgExec::result(const Tensor& t) const {
  if (exec_ == data_) return t;
  Tensor r = allocate(t.shape(), t.dtype(), stream_for(data_));
  copy(t.view(), r.view());
  return r;
}

Tensor LinalgExec::filled(const Shape& shape, DType t, double value) const {
  Tensor h = allocate(shape, t, Stream{});
  const int64_t n = h.view().numel();
  if (t == DType::i32) {
    std::fill_n(static_cast<int32_t*>(h.data()), n, static_cast<int32_t>(value));
  } else if (is_floating(t) && !is_half(t) && !is_float8(t)) {
    visit_float(t, [&](auto zero) {
      using T = decltype(zero);
      std::fill_n(static_cast<T*>(h.data()), n, T(static_cast<real_t<T>>(value)));
    });
  } else {
    throw_error<Error>(op_, "internal: cannot fill ", name(t));
  }
  if (!data_.is_cuda()) return h;
  Tensor d = allocate(shape, t, stream_for(data_));
  copy(h.view(), d.view());  // synchronous: h dies here
  return d;
}

int32_t LinalgExec::read_int(const void* p) const {
  int32_t v = 0;
  if (!exec_.is_cuda()) return *static_cast<const int32_t*>(p);
  TensorView src{const_cast<void*>(p), DType::i32, {1}, {1}, exec_};
  TensorView dst{&v, DType::i32, {1}, {1}, Device::cpu()};
  copy(src, dst);
  return v;
}

void LinalgExec::check(const Tensor& info, Failure what, int64_t n) const {
  const int64_t count = info.view().numel();
  if (count == 0) return;
  Tensor host = info;
  if (info.device().is_cuda()) {
    host = Tensor::empty(info.shape(), DType::i32, Stream{});
    copy(info.view(), host.view());  // the one synchronization
  }
  const auto* p = static_cast<const int32_t*>(host.data());
  for (int64_t b = 0; b < count; ++b) {
    if (p[b] == 0) continue;
    const std::string where = info.shape().empty() ? "" : cat(" (batch index ", b, ")");
    const int64_t k = p[b];
    if (k < 0) throw_error<Error>(op_, "internal: the backend rejected argument ", -k, where);
    switch (what) {
      case Failure::eig_not_converged:
        throw_error<LinAlgError>(op_, "eigenvalues did not converge (info ", k, ")", where);
      case Failure::svd_not_converged:
        throw_error<LinAlgError>(op_, "the SVD did not converge (info ", k, ")", where);
      case Failure::generalized_eig:
        if (k <= n)
          throw_error<LinAlgError>(op_, "eigenvalues did not converge (info ", k, ")", where);
        throw NotPositiveDefinite(cat("[", op_, "] b is not positive definite: leading minor of ",
                                      "order ", k - n, where),
                                  k - n, info.shape().empty() ? -1 : b);
      case Failure::not_positive_definite:
        throw NotPositiveDefinite(
            cat("[", op_, "] ", arg_, " is not positive definite: leading minor of order ", k,
                where),
            k, info.shape().empty() ? -1 : b);
      case Failure::zero_diagonal:
        throw SingularMatrix(cat("[", op_, "] ", arg_, " is singular: ", arg_, "[", k - 1, ",",
                                 k - 1, "] is exactly zero", where),
                             k - 1, info.shape().empty() ? -1 : b);
      case Failure::singular_u:
      case Failure::singular_d: {
        const char* f = what == Failure::singular_u ? "U" : "D";
        throw SingularMatrix(cat("[", op_, "] ", arg_, " is singular: ", f, "[", k - 1, ",", k - 1,
                                 "] is exactly zero", where),
                             k - 1, info.shape().empty() ? -1 : b);
      }
    }
  }
}

void LinalgExec::zero_triangle(const SquareBatch& a, bool upper) const {
  backend(cpu::solve_backend, cuda::solve_backend).zero_triangle(a, upper, call());
}

void LinalgExec::finish() const {
  if (options_->blocking && exec_.is_cuda()) cuda::synchronize(stream_);
}

// ---- shapes and layouts -------------------------------------------------------------------

Shape batch_of(const TensorView& v, std::size_t core) {
  return Shape(v.shape.begin(), v.shape.end() - static_cast<std::ptrdiff_t>(core));
}

Shape with(Shape s, std::initializer_list<int64_t> tail) {
  s.insert(s.end(), tail);
  return s;
}

int64_t product(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::optional<Shape> broadcast_batch(const Shape& x, const Shape& y) {
  const std::size_t nd = std::max(x.size(), y.size());
  Shape r(nd);
  for (std::size_t i = 0; i < nd; ++i) {
    const int64_t dx = i + x.size() >= nd ? x[i + x.size() - nd] : 1;
    const int64_t dy = i + y.size() >= nd ? y[i + y.size() - nd] : 1;
    if (dx != dy && dx != 1 && dy != 1) return std::nullopt;
    r[i] = dx == 1 ? dy : dx;
  }
  return r;
}

TensorView expand_batch(const TensorView& v, const Shape& batch, std::size_t core) {
  TensorView r = v;
  const std::size_t vb = v.shape.size() - core;
  r.shape = batch;
  r.strides.assign(batch.size(), 0);
  for (std::size_t i = 0; i < vb; ++i) {
    const std::size_t d = batch.size() - vb + i;
    if (v.shape[i] != 1) r.strides[d] = v.strides[i];
  }
  for (std::size_t i = vb; i < v.shape.size(); ++i) {
    r.shape.push_back(v.shape[i]);
    r.strides.push_back(v.strides[i]);
  }
  return r;
}

TensorView transposed(TensorView v) {
  const std::size_t nd = v.shape.size();
  std::swap(v.shape[nd - 1], v.shape[nd - 2]);
  std::swap(v.strides[nd - 1], v.strides[nd - 2]);
  return v;
}

TensorView square_dst(void* p, DType t, const Shape& batch, int64_t n, bool col_major, Device d) {
  Shape shape = batch;
  shape.push_back(n);
  shape.push_back(n);
  Shape strides = contiguous_strides(shape);
  if (col_major) std::swap(strides[strides.size() - 1], strides[strides.size() - 2]);
  return TensorView{p, t, shape, strides, d};
}

TensorView colmajor(void* base, DType t, const Shape& batch, int64_t item, int64_t ld, int64_t row0,
                    int64_t col0, int64_t rows, int64_t cols, Device d) {
  Shape strides = contiguous_strides(batch);
  for (auto& s : strides) s *= item;
  strides.push_back(1);
  strides.push_back(ld);
  char* p = static_cast<char*>(base) + (row0 + col0 * ld) * static_cast<int64_t>(size_of(t));
  return TensorView{p, t, with(batch, {rows, cols}), strides, d};
}

// ---- argument checks shared by the linalg fronts ------------------------------------------

void check_view(const char* op, const char* arg, const TensorView& v) {
  if (v.strides.size() != v.shape.size())
    throw_error<InvalidArgument>(op, arg, " has ", v.shape.size(), " dimensions but ",
                                 v.strides.size(), " strides");
  for (int64_t d : v.shape)
    if (d < 0) throw_error<InvalidArgument>(op, arg, " has a negative dimension: ", v.shape_str());
}

void check_float(const char* op, const char* arg, const TensorView& v) {
  const DType t = v.dtype;
  if (t != DType::f32 && t != DType::f64 && t != DType::c64 && t != DType::c128)
    throw_error<DTypeError>(op, "unsupported dtype ", name(t), " for ", arg,
                            "; linalg takes float32, float64, complex64, complex128");
}

int64_t check_square(const char* op, const char* arg, const TensorView& v) {
  check_view(op, arg, v);
  check_float(op, arg, v);
  const int64_t nd = v.ndim();
  if (nd < 2 || v.shape[nd - 1] != v.shape[nd - 2])
    throw_error<InvalidArgument>(op, "expected a square matrix for ", arg, ", got shape ",
                                 v.shape_str());
  return v.shape[nd - 1];
}

void check_pair(const char* op, const char* arg_a, const TensorView& a, const char* arg_b,
                const TensorView& b) {
  if (a.device != b.device)
    throw_error<InvalidArgument>(op, "operands on different devices: ", arg_a, " on ",
                                 to_string(a.device), ", ", arg_b, " on ", to_string(b.device));
  if (a.dtype != b.dtype)
    throw_error<DTypeError>(op, "dtype mismatch: ", arg_a, " is ", name(a.dtype), ", ", arg_b,
                            " is ", name(b.dtype));
}

}  // namespace gpula::detail
