// DLPack import and export of Tensor (unversioned DLManagedTensor, the form every producer
// supports through __dlpack__).
#include <dlpack/dlpack.h>

#include <gpula/tensor.h>

#include "core/format.h"

namespace gpula {
namespace {

Device device_from_dl(DLDevice d) {
  switch (d.device_type) {
    case kDLCPU:
    case kDLCUDAHost:
      return Device::cpu();
    case kDLCUDA:
    case kDLCUDAManaged:
      return Device::cuda(d.device_id);
    default:
      detail::throw_error<NotSupported>("dlpack", "unsupported device type ",
                                        static_cast<int>(d.device_type),
                                        "; gpula takes CPU and CUDA memory");
  }
}

// Export: the Tensor copy and shape/stride arrays live in this context.
struct ExportContext {
  Tensor tensor;
  std::vector<int64_t> shape, strides;
  DLManagedTensor managed{};
};

}  // namespace

Tensor Tensor::from_dlpack(DLManagedTensor* managed) {
  if (!managed) detail::throw_error<InvalidArgument>("dlpack", "null DLManagedTensor");
  std::shared_ptr<void> owner(managed, [](void* p) {
    auto* m = static_cast<DLManagedTensor*>(p);
    if (m->deleter) m->deleter(m);
  });
  const DLTensor& t = managed->dl_tensor;
  TensorView v;
  try {
    v.dtype = dtype_from_dlpack(t.dtype.code, t.dtype.bits, t.dtype.lanes);
  } catch (const DTypeError& e) {
    detail::throw_error<DTypeError>("tensor.from_dlpack", e.what());
  }
  v.device = device_from_dl(t.device);
  v.shape.assign(t.shape, t.shape + t.ndim);
  v.strides = t.strides ? Shape(t.strides, t.strides + t.ndim) : contiguous_strides(v.shape);
  v.data = static_cast<char*>(t.data) + t.byte_offset;
  return Tensor(std::move(v), std::move(owner));
}

DLManagedTensor* Tensor::to_dlpack() const {
  auto* ctx = new ExportContext{*this, view_.shape, view_.strides, {}};
  DLTensor& t = ctx->managed.dl_tensor;
  t.data = view_.data;
  t.device = view_.device.is_cuda() ? DLDevice{kDLCUDA, view_.device.index} : DLDevice{kDLCPU, 0};
  t.ndim = static_cast<int32_t>(view_.shape.size());
  dtype_to_dlpack(view_.dtype, t.dtype.code, t.dtype.bits, t.dtype.lanes);
  t.shape = ctx->shape.data();
  t.strides = ctx->strides.data();
  t.byte_offset = 0;
  ctx->managed.manager_ctx = ctx;
  ctx->managed.deleter = [](DLManagedTensor* m) {
    delete static_cast<ExportContext*>(m->manager_ctx);
  };
  return &ctx->managed;
}

}  // namespace gpula
