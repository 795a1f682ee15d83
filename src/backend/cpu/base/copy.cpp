#include "backend/cpu_api.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

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

struct alignas(8) Bytes16 {
  uint64_t lo, hi;
};

// Transposing copies (the unit-stride dimension differs between src and dst, as in row-major
// <-> column-major staging for LAPACK): 32 x 32 tiles, so that both sides stay in cache, and
// the tiles spread over OpenMP threads. Dimension a has unit dst stride, b unit src stride.
template <class T>
void transpose_tiles(const T* s, T* d, const Shape& shape, const Shape& ss, const Shape& ds,
                     std::size_t a, std::size_t b) {
  constexpr int64_t kTile = 32;
  const int64_t na = shape[a], nb = shape[b];
  Shape outer_shape, outer_ss, outer_ds;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    if (k == a || k == b) continue;
    outer_shape.push_back(shape[k]);
    outer_ss.push_back(ss[k]);
    outer_ds.push_back(ds[k]);
  }
  std::vector<std::pair<int64_t, int64_t>> items;  // (src, dst) offsets of each outer index
  if (outer_shape.empty()) {
    items.emplace_back(0, 0);
  } else {
    for_each_offset(outer_shape, outer_ss, outer_ds,
                    [&](int64_t o1, int64_t o2) { items.emplace_back(o1, o2); });
  }
  const int64_t ta = (na + kTile - 1) / kTile, tb = (nb + kTile - 1) / kTile;
  const int64_t tiles = static_cast<int64_t>(items.size()) * ta * tb;
  const int64_t sa = ss[a], db = ds[b];
#pragma omp parallel for schedule(static) if (tiles * kTile * kTile > (1 << 16))
  for (int64_t t = 0; t < tiles; ++t) {
    const int64_t item = t / (ta * tb), r = t % (ta * tb);
    const int64_t a0 = (r % ta) * kTile, b0 = (r / ta) * kTile;
    const T* si = s + items[static_cast<std::size_t>(item)].first;
    T* di = d + items[static_cast<std::size_t>(item)].second;
    const int64_t a1 = std::min(a0 + kTile, na), b1 = std::min(b0 + kTile, nb);
    for (int64_t ia = a0; ia < a1; ++ia)
      for (int64_t ib = b0; ib < b1; ++ib) di[ia + ib * db] = si[ib + ia * sa];
  }
}

// The tiled path where it applies (both unit-stride dimensions exist, differ and are >= 8
// long; element size 2, 4, 8 or 16); false otherwise.
bool tiled_transpose(const TensorView& src, const TensorView& dst) {
  const Shape& shape = dst.shape;
  std::size_t a = shape.size(), b = shape.size();
  for (std::size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == 1) continue;
    if (dst.strides[k] == 1 && a == shape.size()) a = k;
    if (src.strides[k] == 1 && b == shape.size()) b = k;
  }
  if (a == shape.size() || b == shape.size() || a == b || shape[a] < 8 || shape[b] < 8)
    return false;
  const Shape& ss = src.strides;
  const Shape& ds = dst.strides;
  switch (size_of(dst.dtype)) {
    case 2:
      transpose_tiles(static_cast<const uint16_t*>(src.data), static_cast<uint16_t*>(dst.data),
                      shape, ss, ds, a, b);
      return true;
    case 4:
      transpose_tiles(static_cast<const uint32_t*>(src.data), static_cast<uint32_t*>(dst.data),
                      shape, ss, ds, a, b);
      return true;
    case 8:
      transpose_tiles(static_cast<const uint64_t*>(src.data), static_cast<uint64_t*>(dst.data),
                      shape, ss, ds, a, b);
      return true;
    case 16:
      transpose_tiles(static_cast<const Bytes16*>(src.data), static_cast<Bytes16*>(dst.data),
                      shape, ss, ds, a, b);
      return true;
    default:
      return false;
  }
}

// Non-transposing strided copies (a dimension of unit stride on both sides, as in a column-major
// window into another column-major workspace): one memcpy per run along that dimension, the runs
// spread over OpenMP threads. False where no such dimension, at least 8 long, exists.
bool run_copy(const TensorView& src, const TensorView& dst) {
  const Shape& shape = dst.shape;
  std::size_t u = shape.size();
  for (std::size_t k = 0; k < shape.size(); ++k)
    if (shape[k] >= 8 && src.strides[k] == 1 && dst.strides[k] == 1) u = k;
  if (u == shape.size()) return false;
  Shape outer_shape, outer_ss, outer_ds;
  for (std::size_t k = 0; k < shape.size(); ++k) {
    if (k == u) continue;
    outer_shape.push_back(shape[k]);
    outer_ss.push_back(src.strides[k]);
    outer_ds.push_back(dst.strides[k]);
  }
  std::vector<std::pair<int64_t, int64_t>> runs;  // (src, dst) element offsets of each run
  if (outer_shape.empty()) {
    runs.emplace_back(0, 0);
  } else {
    for_each_offset(outer_shape, outer_ss, outer_ds,
                    [&](int64_t o1, int64_t o2) { runs.emplace_back(o1, o2); });
  }
  const int64_t es = static_cast<int64_t>(size_of(dst.dtype)), len = shape[u] * es;
  const int64_t count = static_cast<int64_t>(runs.size());
  auto* s = static_cast<const char*>(src.data);
  auto* d = static_cast<char*>(dst.data);
#pragma omp parallel for schedule(static) if (count * len > (1 << 20))
  for (int64_t r = 0; r < count; ++r) {
    const auto [os, od] = runs[static_cast<std::size_t>(r)];
    std::memcpy(d + od * es, s + os * es, static_cast<std::size_t>(len));
  }
  return true;
}

// Element by element (what no faster path above covers), with a fixed-size copy per element.
template <class T>
void element_copy(const TensorView& src, const TensorView& dst) {
  auto* s = static_cast<const T*>(src.data);
  auto* d = static_cast<T*>(dst.data);
  for_each_offset(dst.shape, src.strides, dst.strides,
                  [&](int64_t os, int64_t od) { d[od] = s[os]; });
}

}  // namespace

void copy(const TensorView& src, const TensorView& dst) {
  const std::size_t es = size_of(dst.dtype);
  if (src.is_contiguous() && dst.is_contiguous()) {
    std::memmove(dst.data, src.data, es * dst.numel());
    return;
  }
  if (dst.numel() == 0) return;
  if (run_copy(src, dst) || tiled_transpose(src, dst)) return;
  switch (es) {
    case 1:
      return element_copy<uint8_t>(src, dst);
    case 2:
      return element_copy<uint16_t>(src, dst);
    case 4:
      return element_copy<uint32_t>(src, dst);
    case 8:
      return element_copy<uint64_t>(src, dst);
    case 16:
      return element_copy<Bytes16>(src, dst);
    default: {
      auto* s = static_cast<const char*>(src.data);
      auto* d = static_cast<char*>(dst.data);
      for_each_offset(dst.shape, src.strides, dst.strides, [&](int64_t os, int64_t od) {
        std::memcpy(d + od * static_cast<int64_t>(es), s + os * static_cast<int64_t>(es), es);
      });
    }
  }
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
