#include "backend/cpu/copy.h"

#include <cstring>

namespace gpula::detail::cpu {
namespace {

// Walks every index of `shape` (row-major), calling f(src_offset, dst_offset) in elements.
template <class F>
void for_each_offset(const Shape& shape, const Shape& s1, const Shape& s2, F&& f) {
  const std::size_t nd = shape.size();
  for (int64_t d : shape)
    if (d == 0) return;
  Shape idx(nd, 0);
  int64_t o1 = 0, o2 = 0;
  while (true) {
    f(o1, o2);
    std::size_t d = nd;
    while (d > 0) {
      --d;
      if (++idx[d] < shape[d]) {
        o1 += s1[d];
        o2 += s2[d];
        break;
      }
      o1 -= s1[d] * (shape[d] - 1);
      o2 -= s2[d] * (shape[d] - 1);
      idx[d] = 0;
      if (d == 0) return;
    }
    if (nd == 0) return;
  }
}

}  // namespace

void copy(const TensorView& src, const TensorView& dst) {
  const std::size_t es = size_of(dst.dtype);
  if (src.is_contiguous() && dst.is_contiguous()) {
    std::memmove(dst.data, src.data, es * dst.numel());
    return;
  }
  auto* s = static_cast<const char*>(src.data);
  auto* d = static_cast<char*>(dst.data);
  for_each_offset(dst.shape, src.strides, dst.strides, [&](int64_t os, int64_t od) {
    std::memcpy(d + od * static_cast<int64_t>(es), s + os * static_cast<int64_t>(es), es);
  });
}

void fill_zero(const TensorView& dst) {
  const std::size_t es = size_of(dst.dtype);
  if (dst.is_contiguous()) {
    std::memset(dst.data, 0, es * dst.numel());
    return;
  }
  auto* d = static_cast<char*>(dst.data);
  for_each_offset(dst.shape, dst.strides, dst.strides,
                  [&](int64_t, int64_t od) { std::memset(d + od * static_cast<int64_t>(es), 0, es); });
}

}  // namespace gpula::detail::cpu
