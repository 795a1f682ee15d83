// Copies involving device memory: strided device-to-device by kernel, host<->device through
// packed buffers.
#include <cstring>

#include "backend/cpu_api.h"
#include "backend/cuda/base/check.h"
#include "backend/cuda/kernels/strided_copy.h"
#include "backend/cuda_api.h"
#include "core/format.h"

namespace gpula::detail::cuda {
namespace {

CopyParams params(const TensorView& src, const TensorView& dst) {
  // Drop size-1 dimensions; they carry no offset.
  CopyParams p;
  p.numel = dst.numel();
  for (std::size_t d = 0; d < dst.shape.size(); ++d) {
    if (dst.shape[d] == 1) continue;
    if (p.ndim == kMaxCopyDims)
      throw_error<NotSupported>("copy", "more than ", kMaxCopyDims, " non-unit dimensions: ",
                                dst.shape_str());
    p.shape[p.ndim] = dst.shape[d];
    p.src_strides[p.ndim] = src.strides[d];
    p.dst_strides[p.ndim] = dst.strides[d];
    ++p.ndim;
  }
  return p;
}

void device_copy(const TensorView& src, const TensorView& dst, cudaStream_t s) {
  const std::size_t bytes = size_of(dst.dtype) * dst.numel();
  if (src.is_contiguous() && dst.is_contiguous()) {
    GPULA_CHECK("copy", cudaMemcpyAsync(dst.data, src.data, bytes, cudaMemcpyDefault, s));
    return;
  }
  GPULA_CHECK("copy", launch_strided_copy(src.data, dst.data, static_cast<int>(size_of(dst.dtype)),
                                          params(src, dst), s));
}

// A packed (contiguous) temporary with the shape of `like` on `device`.
struct Packed {
  TensorView view;
  Tensor owner;
};
Packed packed(const TensorView& like, Device device, Stream s) {
  Tensor t = Tensor::empty(like.shape, like.dtype, Stream{device, s.handle});
  return {t.view(), t};
}

}  // namespace

void copy(const TensorView& src, const TensorView& dst, Stream stream) {
  auto s = static_cast<cudaStream_t>(stream.handle);
  if (src.device.is_cuda() && dst.device.is_cuda()) {
    device_copy(src, dst, s);
    return;
  }
  const std::size_t bytes = size_of(dst.dtype) * dst.numel();
  if (!src.device.is_cuda()) {  // host -> device
    Packed host = packed(src, Device::cpu(), stream);
    cpu::copy(src, host.view);
    if (dst.is_contiguous()) {
      GPULA_CHECK("copy", cudaMemcpyAsync(dst.data, host.view.data, bytes, cudaMemcpyHostToDevice, s));
    } else {
      Packed dev = packed(dst, dst.device, stream);
      GPULA_CHECK("copy", cudaMemcpyAsync(dev.view.data, host.view.data, bytes,
                                          cudaMemcpyHostToDevice, s));
      device_copy(dev.view, dst, s);
      synchronize(stream);
      return;
    }
    synchronize(stream);  // the host buffer dies here
    return;
  }
  // device -> host
  Packed dev = packed(src, src.device, stream);
  device_copy(src, dev.view, s);
  Packed host = packed(dst, Device::cpu(), stream);
  GPULA_CHECK("copy", cudaMemcpyAsync(host.view.data, dev.view.data, bytes, cudaMemcpyDeviceToHost, s));
  synchronize(stream);
  cpu::copy(host.view, dst);
}

void fill_zero(const TensorView& dst, Stream stream) {
  auto s = static_cast<cudaStream_t>(stream.handle);
  if (dst.is_contiguous()) {
    GPULA_CHECK("fill", cudaMemsetAsync(dst.data, 0, size_of(dst.dtype) * dst.numel(), s));
    return;
  }
  GPULA_CHECK("fill", launch_strided_copy(nullptr, dst.data, static_cast<int>(size_of(dst.dtype)),
                                          params(dst, dst), s));
}

}  // namespace gpula::detail::cuda
