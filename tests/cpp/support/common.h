#pragma once
// Helpers shared by the core C++ tests and the CUDA tests: host tensors with chosen layouts,
// element access in any dtype, and a float64/complex128 reference of numpy.matmul.
#include <gpula/gpula.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/base/half.h"

namespace core_test {

using gpula::DType;
using gpula::Shape;
using gpula::TensorView;
using cdouble = std::complex<double>;

inline int64_t product(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

// 256-byte aligned host memory, so that every operand falls in the same alignment class
// (the plan cache keys on alignment).
inline std::shared_ptr<std::byte> alloc_host(std::size_t bytes) {
  const std::size_t n = (std::max<std::size_t>(bytes, 1) + 255) / 256 * 256;
  void* p = std::aligned_alloc(256, n);
  if (!p) throw std::bad_alloc();
  std::memset(p, 0, n);
  return {static_cast<std::byte*>(p), [](std::byte* q) { std::free(q); }};
}

// ---- fp8 encodings (OCP FP8: e4m3fn has no infinities, e5m2 is IEEE-like) ----
inline float f8_e4m3_to_float(uint8_t v) {
  const int s = v >> 7, e = (v >> 3) & 0xF, m = v & 7;
  if (e == 15 && m == 7) return std::nanf("");
  const float mag = e == 0 ? std::ldexp(m / 8.0f, -6) : std::ldexp(1.0f + m / 8.0f, e - 7);
  return s ? -mag : mag;
}
inline float f8_e5m2_to_float(uint8_t v) {
  const int s = v >> 7, e = (v >> 2) & 0x1F, m = v & 3;
  float mag;
  if (e == 31)
    mag = m == 0 ? INFINITY : std::nanf("");
  else
    mag = e == 0 ? std::ldexp(m / 4.0f, -14) : std::ldexp(1.0f + m / 4.0f, e - 15);
  return s ? -mag : mag;
}
// Nearest finite code (ties to the lower code; tests only store exactly representable values).
inline uint8_t float_to_f8(float x, DType t) {
  int best = 0;
  float best_err = INFINITY;
  for (int c = 0; c < 256; ++c) {
    const float v = t == DType::f8_e4m3 ? f8_e4m3_to_float(static_cast<uint8_t>(c))
                                        : f8_e5m2_to_float(static_cast<uint8_t>(c));
    if (!std::isfinite(v)) continue;
    const float err = std::fabs(v - x);
    if (err < best_err) best_err = err, best = c;
  }
  return static_cast<uint8_t>(best);
}

// ---- element access through a view's dtype ----
inline cdouble load(DType t, const void* base, int64_t off) {
  using namespace gpula::detail::cpu;
  switch (t) {
    case DType::f16:
      return f16_to_float(static_cast<const uint16_t*>(base)[off]);
    case DType::bf16:
      return bf16_to_float(static_cast<const uint16_t*>(base)[off]);
    case DType::f32:
      return static_cast<const float*>(base)[off];
    case DType::f64:
      return static_cast<const double*>(base)[off];
    case DType::c64:
      return cdouble(static_cast<const std::complex<float>*>(base)[off]);
    case DType::c128:
      return static_cast<const cdouble*>(base)[off];
    case DType::f8_e4m3:
      return f8_e4m3_to_float(static_cast<const uint8_t*>(base)[off]);
    case DType::f8_e5m2:
      return f8_e5m2_to_float(static_cast<const uint8_t*>(base)[off]);
    case DType::i32:
      return static_cast<const int32_t*>(base)[off];
    case DType::i64:
      return static_cast<double>(static_cast<const int64_t*>(base)[off]);
    case DType::u8:
      return static_cast<const uint8_t*>(base)[off];
  }
  return 0.0;
}

inline void store(DType t, void* base, int64_t off, cdouble v) {
  using namespace gpula::detail::cpu;
  const double r = v.real();
  switch (t) {
    case DType::f16:
      static_cast<uint16_t*>(base)[off] = float_to_f16(static_cast<float>(r));
      break;
    case DType::bf16:
      static_cast<uint16_t*>(base)[off] = float_to_bf16(static_cast<float>(r));
      break;
    case DType::f32:
      static_cast<float*>(base)[off] = static_cast<float>(r);
      break;
    case DType::f64:
      static_cast<double*>(base)[off] = r;
      break;
    case DType::c64:
      static_cast<std::complex<float>*>(base)[off] = std::complex<float>(v);
      break;
    case DType::c128:
      static_cast<cdouble*>(base)[off] = v;
      break;
    case DType::f8_e4m3:
    case DType::f8_e5m2:
      static_cast<uint8_t*>(base)[off] = float_to_f8(static_cast<float>(r), t);
      break;
    case DType::i32:
      static_cast<int32_t*>(base)[off] = static_cast<int32_t>(r);
      break;
    case DType::i64:
      static_cast<int64_t*>(base)[off] = static_cast<int64_t>(r);
      break;
    case DType::u8:
      static_cast<uint8_t*>(base)[off] = static_cast<uint8_t>(r);
      break;
  }
}

inline int64_t offset_of(const TensorView& v, const Shape& idx) {
  int64_t o = 0;
  for (std::size_t i = 0; i < idx.size(); ++i) o += idx[i] * v.strides[i];
  return o;
}
inline cdouble at(const TensorView& v, const Shape& idx) {
  return load(v.dtype, v.data, offset_of(v, idx));
}
inline void put(const TensorView& v, const Shape& idx, cdouble x) {
  store(v.dtype, v.data, offset_of(v, idx), x);
}

// Calls f(idx) for every index of `shape`, row-major.
template <class F>
void for_each_index(const Shape& shape, F&& f) {
  if (product(shape) == 0) return;
  Shape idx(shape.size(), 0);
  while (true) {
    f(static_cast<const Shape&>(idx));
    std::size_t d = shape.size();
    while (d > 0) {
      --d;
      if (++idx[d] < shape[d]) break;
      idx[d] = 0;
      if (d == 0) return;
    }
    if (shape.empty()) return;
  }
}

// How a host tensor's storage is laid out under its (logical) shape.
enum class Layout {
  row,         // C order
  col,         // last two dims column-major: a transposed view of a C-order buffer
  padded,      // C order with the leading dimension 3 elements longer than needed
  col_padded,  // column-major with padding
  strided,     // C order, every other element of the last dim (a[..., ::2])
};

inline const char* layout_name(Layout l) {
  switch (l) {
    case Layout::row:
      return "row";
    case Layout::col:
      return "col";
    case Layout::padded:
      return "padded";
    case Layout::col_padded:
      return "col_padded";
    case Layout::strided:
      return "strided";
  }
  return "?";
}

// A host tensor that owns its storage; `view` is what gpula sees.
struct HostTensor {
  std::shared_ptr<std::byte> mem;
  int64_t storage_elems = 0;
  TensorView view;

  cdouble get(const Shape& idx) const { return at(view, idx); }
  void set(const Shape& idx, cdouble x) const { put(view, idx, x); }
  std::size_t storage_bytes() const { return storage_elems * gpula::size_of(view.dtype); }
};

inline HostTensor make_host(const Shape& shape, DType t, Layout layout = Layout::row) {
  HostTensor h;
  h.view.dtype = t;
  h.view.shape = shape;
  h.view.device = gpula::Device::cpu();
  const std::size_t nd = shape.size();
  Shape strides(nd, 1);
  const bool matrix = nd >= 2;
  const bool col = matrix && (layout == Layout::col || layout == Layout::col_padded);
  const int64_t pad = (layout == Layout::padded || layout == Layout::col_padded) ? 3 : 0;
  int64_t acc = 1;
  if (col) {
    const int64_t r = shape[nd - 2], c = shape[nd - 1];
    strides[nd - 2] = 1;
    strides[nd - 1] = r + pad;
    acc = (r + pad) * std::max<int64_t>(c, 1);
    for (std::size_t i = nd - 2; i-- > 0;) {
      strides[i] = acc;
      acc *= std::max<int64_t>(shape[i], 1);
    }
  } else {
    const int64_t step = layout == Layout::strided ? 2 : 1;
    for (std::size_t i = nd; i-- > 0;) {
      strides[i] = acc * (i + 1 == nd ? step : 1);
      int64_t extent = std::max<int64_t>(shape[i], 1) * (i + 1 == nd ? step : 1);
      if (i + 1 == nd && pad) extent += pad;
      acc = (i + 1 == nd) ? extent : acc * std::max<int64_t>(shape[i], 1);
    }
  }
  h.view.strides = strides;
  h.storage_elems = std::max<int64_t>(acc, 1);
  h.mem = alloc_host(h.storage_elems * gpula::size_of(t));
  h.view.data = h.mem.get();
  return h;
}

// A view that repeats dimension `dim` (of size 1) `size` times with stride 0.
inline TensorView broadcast_dim(TensorView v, std::size_t dim, int64_t size) {
  v.shape[dim] = size;
  v.strides[dim] = 0;
  return v;
}

// Random values: integers in [-lim, lim] (exact in every dtype, so CPU and GPU agree bit for bit
// where the sums fit the mantissa), or uniform in [-1, 1).
struct Filler {
  std::mt19937_64 rng;
  explicit Filler(uint64_t seed = 12345) : rng(seed) {}
  cdouble uniform(bool complex) {
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    return complex ? cdouble(u(rng), u(rng)) : cdouble(u(rng), 0.0);
  }
  cdouble integer(int lim, bool complex) {
    std::uniform_int_distribution<int> u(-lim, lim);
    return complex ? cdouble(u(rng), u(rng)) : cdouble(u(rng), 0.0);
  }
  void fill(const TensorView& v, bool integers = false, int lim = 2) {
    const bool cplx = gpula::is_complex(v.dtype);
    for_each_index(v.shape, [&](const Shape& idx) {
      put(v, idx, integers ? integer(lim, cplx) : uniform(cplx));
    });
  }
};

// numpy.matmul in complex128, with the magnitude sum |a||b| per element for tolerances.
struct Reference {
  Shape shape;
  std::vector<cdouble> value;
  std::vector<double> magnitude;
};

inline Reference reference_matmul(const TensorView& a_in, const TensorView& b_in,
                                  cdouble alpha = 1.0, const TensorView* c_in = nullptr,
                                  cdouble beta = 0.0) {
  TensorView a = a_in, b = b_in;
  if (a.ndim() == 1) a.shape.insert(a.shape.begin(), 1), a.strides.insert(a.strides.begin(), 0);
  if (b.ndim() == 1) b.shape.push_back(1), b.strides.push_back(0);
  const int64_t m = a.shape[a.ndim() - 2], k = a.shape[a.ndim() - 1], n = b.shape[b.ndim() - 1];
  const std::size_t na = a.shape.size() - 2, nb = b.shape.size() - 2, nbat = std::max(na, nb);
  Shape batch(nbat, 1);
  for (std::size_t i = 0; i < nbat; ++i) {
    const int64_t da = i + na >= nbat ? a.shape[i + na - nbat] : 1;
    const int64_t db = i + nb >= nbat ? b.shape[i + nb - nbat] : 1;
    batch[i] = da == 1 ? db : da;
  }
  Reference r;
  r.shape = batch;
  if (a_in.ndim() > 1) r.shape.push_back(m);
  if (b_in.ndim() > 1) r.shape.push_back(n);
  Shape full = batch;
  full.push_back(m);
  full.push_back(n);
  r.value.assign(product(full), 0.0);
  r.magnitude.assign(product(full), 0.0);
  auto sub = [&](const TensorView& v, std::size_t nv, const Shape& bidx, int64_t i, int64_t j) {
    Shape idx;
    for (std::size_t d = 0; d < nv; ++d) {
      const int64_t bi = bidx[nbat - nv + d];
      idx.push_back(v.shape[d] == 1 ? 0 : bi);
    }
    idx.push_back(i);
    idx.push_back(j);
    return at(v, idx);
  };
  int64_t flat = 0;
  for_each_index(full, [&](const Shape& idx) {
    const Shape bidx(idx.begin(), idx.end() - 2);
    const int64_t i = idx[nbat], j = idx[nbat + 1];
    cdouble s = 0.0;
    double mag = 0.0;
    for (int64_t p = 0; p < k; ++p) {
      const cdouble x = sub(a, na, bidx, i, p), y = sub(b, nb, bidx, p, j);
      s += x * y;
      mag += std::abs(x) * std::abs(y);
    }
    r.value[flat] = alpha * s;
    r.magnitude[flat] = std::abs(alpha) * mag;
    ++flat;
  });
  if (c_in && beta != 0.0) {
    // Broadcast c against the result shape (numpy rules, trailing dims aligned).
    const TensorView& c = *c_in;
    int64_t f = 0;
    const std::size_t nr = r.shape.size(), nc = c.shape.size();
    Shape rshape = r.shape;
    for_each_index(rshape, [&](const Shape& idx) {
      Shape cidx(nc);
      for (std::size_t d = 0; d < nc; ++d) cidx[d] = c.shape[d] == 1 ? 0 : idx[nr - nc + d];
      const cdouble cv = at(c, cidx);
      r.value[f] += beta * cv;
      r.magnitude[f] += std::abs(beta) * std::abs(cv);
      ++f;
    });
  }
  return r;
}

// EXPECTs every element of `got` (any layout, host memory) within rtol * (|a||b| sum) + atol.
inline void expect_close(const TensorView& got, const Reference& ref, double rtol,
                         double atol = 0.0, const std::string& what = "") {
  ASSERT_EQ(got.shape, ref.shape) << what;
  int64_t f = 0, bad = 0;
  for_each_index(got.shape, [&](const Shape& idx) {
    const cdouble g = at(got, idx), e = ref.value[f];
    const double tol = rtol * (ref.magnitude[f] + std::abs(e)) + atol;
    if (!(std::abs(g - e) <= tol) && bad++ < 5)
      ADD_FAILURE() << what << " element " << f << ": got (" << g.real() << ", " << g.imag()
                    << "), expected (" << e.real() << ", " << e.imag() << "), tol " << tol;
    ++f;
  });
  EXPECT_EQ(bad, 0) << what << ": " << bad << " elements out of tolerance";
}

// Machine epsilon of a dtype's storage (what one rounding costs).
inline double eps_of(DType t) {
  switch (t) {
    case DType::f16:
      return 9.8e-4;
    case DType::bf16:
      return 7.9e-3;
    case DType::f32:
    case DType::c64:
      return 1.2e-7;
    case DType::f64:
    case DType::c128:
      return 2.3e-16;
    default:
      return 0.125;
  }
}

inline std::string str(DType t) { return std::string(gpula::name(t)); }

}  // namespace core_test
