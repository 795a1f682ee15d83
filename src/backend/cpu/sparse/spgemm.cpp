// CPU backend of SpGEMM C = A B: Gustavson's row-by-row algorithm (a symbolic pass counts each
// row of C, a numeric pass fills it through a dense accumulator per thread and sorts its columns).
#include <algorithm>
#include <limits>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/format.h"
#include "sparse/spgemm_backend.h"

namespace gpula::sparse::detail::cpu {

namespace {

constexpr const char* kOp = "sparse.spgemm";

using gpula::detail::throw_error;

template <class I, class V>
CsrMatrix spgemm_kernel(const CsrView& a, const CsrView& b) {
  const auto* ap = static_cast<const I*>(a.indptr.data);
  const auto* ai = static_cast<const I*>(a.indices.data);
  const auto* av = static_cast<const V*>(a.values.data);
  const auto* bp = static_cast<const I*>(b.indptr.data);
  const auto* bi = static_cast<const I*>(b.indices.data);
  const auto* bv = static_cast<const V*>(b.values.data);
  const int64_t m = a.rows, n = b.cols;
  std::vector<int64_t> count(static_cast<size_t>(m) + 1, 0);
  // Symbolic: the number of distinct columns of each row of C (a marker array per thread).
#pragma omp parallel
  {
    std::vector<int64_t> mark(static_cast<size_t>(n), -1);
#pragma omp for schedule(dynamic, 64)
    for (int64_t i = 0; i < m; ++i) {
      int64_t c = 0;
      for (I k = ap[i]; k < ap[i + 1]; ++k) {
        const int64_t r = ai[k];
        for (I l = bp[r]; l < bp[r + 1]; ++l) {
          if (mark[bi[l]] != i) {
            mark[bi[l]] = i;
            ++c;
          }
        }
      }
      count[i + 1] = c;
    }
  }
  for (int64_t i = 0; i < m; ++i) count[i + 1] += count[i];
  const int64_t nnz = count[m];
  if (sizeof(I) == 4 && nnz > std::numeric_limits<int32_t>::max()) {
    throw_error<InvalidArgument>(kOp, "nnz(C) = ", nnz,
                                 " does not fit the int32 indices of A and B; use int64 indices");
  }
  const Stream host{Device::cpu(), nullptr};
  Tensor cp = Tensor::empty({m + 1}, a.index_dtype(), host);
  Tensor ci = Tensor::empty({nnz}, a.index_dtype(), host);
  Tensor cv = Tensor::empty({nnz}, a.dtype(), host);
  auto* p = static_cast<I*>(cp.data());
  auto* q = static_cast<I*>(ci.data());
  auto* w = static_cast<V*>(cv.data());
  for (int64_t i = 0; i <= m; ++i) p[i] = static_cast<I>(count[i]);
  // Numeric: accumulate row i of C densely, then gather its columns in increasing order.
#pragma omp parallel
  {
    std::vector<V> acc(static_cast<size_t>(n), V{});
    std::vector<int64_t> mark(static_cast<size_t>(n), -1);
#pragma omp for schedule(dynamic, 64)
    for (int64_t i = 0; i < m; ++i) {
      I* cols = q + count[i];
      int64_t c = 0;
      for (I k = ap[i]; k < ap[i + 1]; ++k) {
        const int64_t r = ai[k];
        const V s = av[k];
        for (I l = bp[r]; l < bp[r + 1]; ++l) {
          const I j = bi[l];
          if (mark[j] != i) {
            mark[j] = i;
            cols[c++] = j;
            acc[j] = s * bv[l];
          } else {
            acc[j] += s * bv[l];
          }
        }
      }
      std::sort(cols, cols + c);
      V* vals = w + count[i];
      for (int64_t e = 0; e < c; ++e) vals[e] = acc[cols[e]];
    }
  }
  return CsrMatrix::from_csr(m, n, cp, ci, cv, kOp);
}

}  // namespace

CsrMatrix spgemm(const CsrView& a, const CsrView& b) {
  CsrMatrix out;
  gpula::detail::visit_float_index(a.dtype(), a.index_dtype(), [&](auto v, auto i) {
    out = spgemm_kernel<decltype(i), decltype(v)>(a, b);
  });
  return out;
}

}  // namespace gpula::sparse::detail::cpu
