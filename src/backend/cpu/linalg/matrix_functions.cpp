// CPU backend of the matrix functions' element-wise passes (matrix_functions_backend.h): plain
// loops over the batch. f16 and bf16 go through half.h's conversions (round to nearest even).
#include <cmath>
#include <complex>
#include <cstdint>

#include "backend/cpu/base/half.h"
#include "core/dtype_dispatch.h"
#include "linalg/matrix_functions_backend.h"

namespace gpula::detail::cpu {
namespace {

// Element i of a float16, bfloat16, float32 or float64 array, as double; and its store.
double load(DType t, const void* p, int64_t i) {
  switch (t) {
    case DType::f16:
      return f16_to_float(static_cast<const uint16_t*>(p)[i]);
    case DType::bf16:
      return bf16_to_float(static_cast<const uint16_t*>(p)[i]);
    case DType::f32:
      return static_cast<const float*>(p)[i];
    default:
      return static_cast<const double*>(p)[i];
  }
}

void store(DType t, void* p, int64_t i, double v) {
  switch (t) {
    case DType::f16:
      static_cast<uint16_t*>(p)[i] = float_to_f16(static_cast<float>(v));
      break;
    case DType::bf16:
      static_cast<uint16_t*>(p)[i] = float_to_bf16(static_cast<float>(v));
      break;
    case DType::f32:
      static_cast<float*>(p)[i] = static_cast<float>(v);
      break;
    default:
      static_cast<double*>(p)[i] = v;
  }
}

class CpuMatrixFunctions final : public MatrixFunctionsBackend {
 public:
  void frobenius_normalize(const DenseBatch& x, const DenseBatch& y, double eps,
                           const LinalgCall&) const override {
    const int64_t size = x.rows * x.cols;
    for (int64_t b = 0; b < x.count; ++b) {
      double sum = 0.0;
      for (int64_t i = b * size; i < (b + 1) * size; ++i) {
        const double v = load(x.dtype, x.data, i);
        sum += v * v;
      }
      const double d = std::sqrt(sum) + eps;
      for (int64_t i = b * size; i < (b + 1) * size; ++i)
        store(y.dtype, y.data, i, load(x.dtype, x.data, i) / d);
    }
  }

  void convert(const DenseBatch& x, const DenseBatch& y, const LinalgCall&) const override {
    const int64_t n = x.rows * x.cols * x.count;
    for (int64_t i = 0; i < n; ++i) store(y.dtype, y.data, i, load(x.dtype, x.data, i));
  }

  void scale_columns(const DenseBatch& v, const void* f, bool conj, void* out,
                     const LinalgCall&) const override {
    visit_float(v.dtype, [&](auto zero) {
      using T = decltype(zero);
      const T* src = static_cast<const T*>(v.data);
      const auto* fr = static_cast<const real_t<T>*>(f);
      T* dst = static_cast<T*>(out);
      const int64_t rows = v.rows, cols = v.cols;
      for (int64_t b = 0; b < v.count; ++b)
        for (int64_t i = 0; i < rows; ++i)
          for (int64_t j = 0; j < cols; ++j) {
            const int64_t k = (b * rows + i) * cols + j;
            dst[k] = conj_if(src[k], conj) * fr[b * cols + j];
          }
    });
  }

  void hermitian_part(const SquareBatch& p, const LinalgCall&) const override {
    visit_float(p.dtype, [&](auto zero) {
      using T = decltype(zero);
      using R = real_t<T>;
      T* a = static_cast<T*>(p.data);
      const int64_t n = p.n;
      const R half = R(0.5);
      for (int64_t b = 0; b < p.count; ++b) {
        T* m = a + b * n * n;
        for (int64_t i = 0; i < n; ++i) {
          m[i * n + i] = (m[i * n + i] + conj_if(m[i * n + i], true)) * half;
          for (int64_t j = i + 1; j < n; ++j) {
            const T h = (m[i * n + j] + conj_if(m[j * n + i], true)) * half;
            m[i * n + j] = h;
            m[j * n + i] = conj_if(h, true);
          }
        }
      }
    });
  }
};

}  // namespace

const MatrixFunctionsBackend& matrix_functions_backend() {
  static const CpuMatrixFunctions backend;
  return backend;
}

}  // namespace gpula::detail::cpu
