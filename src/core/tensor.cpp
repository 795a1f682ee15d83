#include <gpula/tensor.h>

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>

#include "backend/cpu_api.h"
#include "backend/cuda_api.h"
#include "core/format.h"

namespace gpula {

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

bool TensorView::is_contiguous() const {
  int64_t expected = 1;
  for (int64_t i = ndim() - 1; i >= 0; --i) {
    if (shape[i] != 1 && strides[i] != expected) return false;
    expected *= shape[i];
  }
  return true;
}

namespace detail {

int64_t checked_numel(const char* op, const char* arg, const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    if (d < 0)
      throw_error<InvalidArgument>(op, arg, " has a negative dimension: ", shape_str(shape));
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n))
      throw_error<InvalidArgument>(op, arg, " of shape ", shape_str(shape),
                                   " has more elements than fit in 64 bits");
  return n;
}

void check_tensor_view(const char* op, const char* arg, const TensorView& v) {
  if (v.strides.size() != v.shape.size())
    throw_error<InvalidArgument>(op, arg, " has ", v.shape.size(), " dimensions but ",
                                 v.strides.size(), " strides");
  if (checked_numel(op, arg, v.shape) > 0 && v.data == nullptr)
    throw_error<InvalidArgument>(op, arg, " of shape ", v.shape_str(), " has no data (null)");
}

}  // namespace detail

std::string TensorView::shape_str() const { return detail::shape_str(shape); }

std::string TensorView::describe() const {
  return detail::cat(name(dtype), " ", shape_str(), " on ", to_string(device));
}

Shape contiguous_strides(const Shape& shape) {
  Shape s(shape.size());
  int64_t acc = 1;
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    s[i] = acc;
    acc *= shape[i];
  }
  return s;
}

namespace {

// Host memory: 64-byte aligned; from 4 MiB on, 2 MiB aligned and advised to the kernel as
// transparent-huge-page memory, as NumPy does for its arrays. A fresh large buffer is mmapped
// and faults in on first touch: with 4 KiB pages a 32 MiB result costs 8192 faults (a 2048^2
// fp64 Cholesky spent more time in them than SciPy's whole copy), with 2 MiB pages 16.
void* host_allocate(std::size_t bytes) {
  constexpr std::size_t kHuge = std::size_t{2} << 20;
  if (bytes < 2 * kHuge) return std::aligned_alloc(64, (bytes + 63) / 64 * 64);
  const std::size_t size = (bytes + kHuge - 1) / kHuge * kHuge;
  void* p = std::aligned_alloc(kHuge, size);
#if defined(MADV_HUGEPAGE)
  if (p) madvise(p, size, MADV_HUGEPAGE);  // advice only: failure leaves 4 KiB pages
#endif
  return p;
}

}  // namespace

Tensor Tensor::empty(const Shape& shape, DType dtype, Stream stream) {
  TensorView v{nullptr, dtype, shape, contiguous_strides(shape), stream.device};
  int64_t nbytes = 0;
  if (__builtin_mul_overflow(detail::checked_numel("tensor.empty", "shape", shape),
                             static_cast<int64_t>(size_of(dtype)), &nbytes))
    detail::throw_error<OutOfMemory>("tensor.empty", "a ", name(dtype), " array of shape ",
                                     detail::shape_str(shape), " needs more than 2^63 bytes");
  const std::size_t bytes = std::max<std::size_t>(1, static_cast<std::size_t>(nbytes));
  if (stream.device.is_cuda()) {
    v.data = detail::cuda::allocate(bytes, stream);
    return Tensor(v, std::shared_ptr<void>(v.data, [stream](void* p) {
                    detail::cuda::deallocate(p, stream);
                  }));
  }
  v.data = host_allocate(bytes);
  if (!v.data)
    detail::throw_error<OutOfMemory>("tensor.empty", "could not allocate ", bytes,
                                     " bytes of host memory");
  return Tensor(v, std::shared_ptr<void>(v.data, [](void* p) { std::free(p); }));
}

void copy(const TensorView& src, const TensorView& dst, Stream stream) {
  if (src.shape != dst.shape)
    detail::throw_error<InvalidArgument>("copy", "shapes differ: src ", src.shape_str(), ", dst ",
                                         dst.shape_str());
  if (src.dtype != dst.dtype)
    detail::throw_error<DTypeError>("copy", "dtypes differ: src ", name(src.dtype), ", dst ",
                                    name(dst.dtype));
  if (dst.numel() == 0) return;
  if (!src.device.is_cuda() && !dst.device.is_cuda())
    detail::cpu::copy(src, dst);
  else
    detail::cuda::copy(src, dst, stream);
}

}  // namespace gpula
