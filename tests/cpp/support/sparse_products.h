#pragma once
// Shared by the SpMM / SDDMM / SpGEMM tests (CPU and CUDA): random CSR matrices with their dense
// float64/complex128 copies, dense host operands with chosen strides, element reads.
#include <gpula/sparse.h>

#include <complex>
#include <cstring>
#include <random>
#include <type_traits>
#include <vector>

#include "core/dtype_dispatch.h"

namespace sparse_products_test {

using gpula::DType;
using gpula::Tensor;
using gpula::TensorView;
using cd = std::complex<double>;

using gpula::detail::dtype_of;

template <class V>
constexpr bool is_single() {
  return std::is_same_v<V, float> || std::is_same_v<V, std::complex<float>>;
}

template <class V>
double tolerance() {
  return is_single<V>() ? 2e-4 : 1e-11;
}

template <class V>
V random_value(std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1, 1);
  if constexpr (std::is_floating_point_v<V>) {
    return static_cast<V>(u(rng));
  } else {
    using R = typename V::value_type;
    const R re = static_cast<R>(u(rng));
    return V(re, static_cast<R>(u(rng)));
  }
}

template <class T>
Tensor host(const std::vector<T>& v) {
  Tensor t = Tensor::empty({static_cast<int64_t>(v.size())}, dtype_of<T>(), {});
  if (!v.empty()) std::memcpy(t.data(), v.data(), v.size() * sizeof(T));
  return t;
}

template <class T>
std::vector<T> read(const Tensor& t) {
  const auto n = static_cast<size_t>(t.view().numel());
  std::vector<T> v(n);
  if (n) std::memcpy(v.data(), t.data(), n * sizeof(T));
  return v;
}

// A random m x n CSR matrix (density `density`; rows in `empty_rows` % m stay empty) and its
// dense row-major copy.
template <class I, class V>
struct RandomCsr {
  int64_t m = 0, n = 0;
  std::vector<I> p, ind;
  std::vector<V> val;
  std::vector<cd> dense;

  RandomCsr(int64_t rows, int64_t cols, double density, uint32_t seed, int64_t empty_every = 7)
      : m(rows), n(cols), p{0}, dense(static_cast<size_t>(rows * cols)) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(0, 1);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        if (u(rng) >= density || (empty_every > 0 && i % empty_every == 3)) continue;
        const V v = random_value<V>(rng);
        ind.push_back(static_cast<I>(j));
        val.push_back(v);
        dense[i * n + j] = cd(v);
      }
      p.push_back(static_cast<I>(ind.size()));
    }
  }
  gpula::sparse::CsrMatrix matrix() const {
    return gpula::sparse::CsrMatrix::from_csr(m, n, host(p), host(ind), host(val));
  }
  cd at(int64_t i, int64_t j) const { return dense[i * n + j]; }
};

// A dense (rows, cols) host operand laid out with strides (s0, s1) inside a buffer big enough,
// filled with random values; `at` reads it back.
template <class V>
struct Dense {
  int64_t rows = 0, cols = 0, s0 = 0, s1 = 0;
  Tensor buffer;
  TensorView view;

  // layout 0: row-major; 1: row-major with a padded leading dimension; 2: column-major.
  Dense(int64_t r, int64_t c, int layout, uint32_t seed) : rows(r), cols(c) {
    if (layout == 0) {
      s0 = c;
      s1 = 1;
    } else if (layout == 1) {
      s0 = c + 3;
      s1 = 1;
    } else {
      s0 = 1;
      s1 = r + 2;
    }
    const int64_t size = std::max<int64_t>(1, (r - 1) * s0 + (c - 1) * s1 + 1);
    std::mt19937 rng(seed);
    std::vector<V> data(static_cast<size_t>(size));
    for (auto& e : data) e = random_value<V>(rng);
    buffer = host(data);
    view = buffer.view();
    view.shape = {r, c};
    view.strides = {s0, s1};
  }
  V& at(int64_t i, int64_t j) { return static_cast<V*>(buffer.data())[i * s0 + j * s1]; }
  cd get(int64_t i, int64_t j) const {
    return cd(static_cast<const V*>(buffer.data())[i * s0 + j * s1]);
  }
};

}  // namespace sparse_products_test
