#include <gpula/tensor.h>

#include <cstdlib>
#include <cstring>

#include "backend/cpu/copy.h"
#include "backend/cuda_api.h"
#include "format.h"

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

Tensor Tensor::empty(const Shape& shape, DType dtype, Stream stream) {
  TensorView v{nullptr, dtype, shape, contiguous_strides(shape), stream.device};
  const std::size_t bytes = std::max<std::size_t>(1, size_of(dtype) * v.numel());
  if (stream.device.is_cuda()) {
    v.data = detail::cuda::allocate(bytes, stream);
    return Tensor(v, std::shared_ptr<void>(v.data, [stream](void* p) {
                    detail::cuda::deallocate(p, stream);
                  }));
  }
  // 64-byte aligned host memory.
  v.data = std::aligned_alloc(64, (bytes + 63) / 64 * 64);
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
