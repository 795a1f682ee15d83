#pragma once
/// @file tensor.h
/// TensorView (non-owning, maps onto DLPack's DLTensor) and Tensor (a view plus an owner).
#include <gpula/device.h>
#include <gpula/dtype.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

struct DLManagedTensor;

namespace gpula {

using Shape = std::vector<int64_t>;

/// A strided view of memory owned elsewhere. Strides are in elements, as in DLPack.
struct TensorView {
  void* data = nullptr;
  DType dtype = DType::f32;
  Shape shape;
  Shape strides;
  Device device{};

  int64_t ndim() const { return static_cast<int64_t>(shape.size()); }
  int64_t numel() const;
  /// Row-major contiguous (C order); size-1 dimensions may have any stride.
  bool is_contiguous() const;
  /// "(3, 4)"
  std::string shape_str() const;
  /// "float32 (3, 4) on cuda:0"
  std::string describe() const;
};

/// Row-major strides for a shape.
Shape contiguous_strides(const Shape& shape);

/// A view that keeps its memory alive.
class Tensor {
 public:
  Tensor() = default;
  Tensor(TensorView view, std::shared_ptr<void> owner)
      : view_(std::move(view)), owner_(std::move(owner)) {}

  /// Allocates uninitialized contiguous memory on `stream.device` (stream-ordered on a GPU).
  static Tensor empty(const Shape& shape, DType dtype, Stream stream);

  const TensorView& view() const { return view_; }
  void* data() const { return view_.data; }
  DType dtype() const { return view_.dtype; }
  const Shape& shape() const { return view_.shape; }
  Device device() const { return view_.device; }
  bool defined() const { return owner_ != nullptr || view_.data != nullptr; }

  /// Another view of this Tensor's memory, kept alive by the same owner (`v` must lie within it:
  /// a strided or reshaped view of the same buffer).
  Tensor alias(TensorView v) const { return Tensor(std::move(v), owner_); }

  /// Takes ownership of a DLPack tensor; its deleter runs when the last Tensor copy goes.
  static Tensor from_dlpack(DLManagedTensor* managed);
  /// A DLPack tensor sharing this memory; the consumer calls its deleter.
  DLManagedTensor* to_dlpack() const;

 private:
  TensorView view_;
  std::shared_ptr<void> owner_;
};

/// Copies `src` into `dst` (same shape and dtype; any strides; either device), ordered on
/// `stream`. `src` may broadcast (stride 0). Synchronous when a host buffer is involved.
void copy(const TensorView& src, const TensorView& dst, Stream stream = {});

}  // namespace gpula
