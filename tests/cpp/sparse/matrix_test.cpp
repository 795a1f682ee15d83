// CsrMatrix builders, validation messages and the CPU SpMV against dense references.
#include <gpula/error.h>
#include <gpula/sparse.h>
#include <gtest/gtest.h>

#include <complex>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/dtype_dispatch.h"

namespace {

using gpula::DType;
using gpula::Tensor;
using gpula::TensorView;
using namespace gpula::sparse;

using gpula::detail::dtype_of;

template <class T>
Tensor host(const std::vector<T>& v) {
  Tensor t = Tensor::empty({static_cast<int64_t>(v.size())}, dtype_of<T>(), {});
  if (!v.empty()) std::memcpy(t.data(), v.data(), v.size() * sizeof(T));
  return t;
}

template <class T>
std::vector<T> read(const Tensor& t) {
  const auto n = static_cast<size_t>(t.shape()[0]);
  std::vector<T> v(n);
  if (n) std::memcpy(v.data(), t.data(), n * sizeof(T));
  return v;
}

template <class I = int32_t>
CsrMatrix csr(int64_t r, int64_t c, std::vector<I> p, std::vector<I> i, std::vector<double> v) {
  return CsrMatrix::from_csr(r, c, host(p), host(i), host(v));
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const gpula::InvalidArgument& e) {
    return e.what();
  }
  return "no error";
}

// The 3x4 matrix [[1 0 2 0] [0 0 0 0] [3 4 0 5]].
TEST(SparseMatrix, Builds3x4AndMultiplies) {
  CsrMatrix a = csr(3, 4, {0, 2, 2, 5}, {0, 2, 0, 1, 3}, {1, 2, 3, 4, 5});
  EXPECT_EQ(a.nnz(), 5);
  Tensor x = host(std::vector<double>{1, 2, 3, 4});
  Tensor y = host(std::vector<double>{9, 9, 9});
  SpMV(a.view()).execute(x.view(), y.view());
  EXPECT_EQ(read<double>(y), (std::vector<double>{7, 0, 31}));
  // y = 2 A x + 1 y
  SpMV(a.view()).execute(x.view(), y.view(), 2.0, 1.0);
  EXPECT_EQ(read<double>(y), (std::vector<double>{21, 0, 93}));
  // A^T [1 1 1]
  Tensor u = host(std::vector<double>{1, 1, 1});
  Tensor w = host(std::vector<double>(4, 7.0));
  SpMV(a.view(), Op::transpose).execute(u.view(), w.view());
  EXPECT_EQ(read<double>(w), (std::vector<double>{4, 4, 2, 5}));
}

TEST(SparseMatrix, CanonicalizesUnsortedAndDuplicates) {
  // Row 0 holds (2, 1.0), (0, 2.0), (2, 3.0): sorted and summed to (0, 2), (2, 4).
  CsrMatrix a = csr(1, 3, {0, 3}, {2, 0, 2}, {1, 2, 3});
  EXPECT_EQ(read<int32_t>(a.indices()), (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(read<double>(a.values()), (std::vector<double>{2, 4}));
  EXPECT_EQ(read<int32_t>(a.indptr()), (std::vector<int32_t>{0, 2}));
}

TEST(SparseMatrix, SharesCanonicalInput) {
  Tensor p = host(std::vector<int64_t>{0, 1}), i = host(std::vector<int64_t>{1});
  Tensor v = host(std::vector<double>{5});
  CsrMatrix a = CsrMatrix::from_csr(1, 2, p, i, v);
  EXPECT_EQ(a.values().data(), v.data());
  EXPECT_EQ(a.indptr().dtype(), DType::i64);
}

TEST(SparseMatrix, FromCooAndCsc) {
  // COO of the 3x4 matrix, shuffled, with a duplicate split of 4 = 1 + 3.
  CsrMatrix a = CsrMatrix::from_coo(3, 4, host(std::vector<int64_t>{2, 0, 2, 0, 2, 2}).view(),
                                    host(std::vector<int64_t>{3, 2, 1, 0, 0, 1}).view(),
                                    host(std::vector<double>{5, 2, 1, 1, 3, 3}).view());
  EXPECT_EQ(read<int64_t>(a.indptr()), (std::vector<int64_t>{0, 2, 2, 5}));
  EXPECT_EQ(read<int64_t>(a.indices()), (std::vector<int64_t>{0, 2, 0, 1, 3}));
  EXPECT_EQ(read<double>(a.values()), (std::vector<double>{1, 2, 3, 4, 5}));
  // CSC of the same matrix: columns [0: rows 0,2] [1: row 2] [2: row 0] [3: row 2].
  CsrMatrix b = CsrMatrix::from_csc(3, 4, host(std::vector<int32_t>{0, 2, 3, 4, 5}).view(),
                                    host(std::vector<int32_t>{0, 2, 2, 0, 2}).view(),
                                    host(std::vector<double>{1, 3, 4, 2, 5}).view());
  EXPECT_EQ(read<int32_t>(b.indptr()), (std::vector<int32_t>{0, 2, 2, 5}));
  EXPECT_EQ(read<int32_t>(b.indices()), (std::vector<int32_t>{0, 2, 0, 1, 3}));
  EXPECT_EQ(read<double>(b.values()), (std::vector<double>{1, 2, 3, 4, 5}));
}

TEST(SparseMatrix, EmptyShapes) {
  CsrMatrix a = csr(0, 5, {0}, {}, {});
  EXPECT_EQ(a.nnz(), 0);
  CsrMatrix b = csr(3, 2, {0, 0, 0, 0}, {}, {});
  Tensor x = host(std::vector<double>{1, 2});
  Tensor y = host(std::vector<double>{9, 9, 9});
  SpMV(b.view()).execute(x.view(), y.view());
  EXPECT_EQ(read<double>(y), (std::vector<double>{0, 0, 0}));
}

TEST(SparseMatrix, ValidationMessages) {
  EXPECT_EQ(error_of([] {
              csr(2, 2, {1, 1, 1}, {0}, {1});
            }),
            "[sparse.csr_matrix] indptr[0] must be 0, got 1");
  EXPECT_EQ(error_of([] {
              csr(2, 2, {0, 2, 1}, {0}, {1});
            }),
            "[sparse.csr_matrix] indptr must be non-decreasing: indptr[2] = 1 < indptr[1] = 2");
  EXPECT_EQ(error_of([] {
              csr(2, 2, {0, 1, 2}, {0}, {1, 1});
            }),
            "[sparse.csr_matrix] indices must have length nnz = 2, got 1");
  EXPECT_EQ(error_of([] {
              csr(2, 2, {0, 1, 1}, {2}, {1});
            }),
            "[sparse.csr_matrix] indices[0] = 2 is out of range [0, 2)");
  EXPECT_EQ(error_of([] {
              csr(2, 2, {0, 0, 0}, {5}, {1});
            }),
            "[sparse.csr_matrix] indptr[2] must equal nnz = 1, got 0");
  EXPECT_EQ(error_of([] {
              csr(2, 2, {0, 1}, {0}, {1});
            }),
            "[sparse.csr_matrix] indptr must have length 3, got 2");
  EXPECT_EQ(error_of([] {
              CsrMatrix::from_coo(2, 2, host(std::vector<int32_t>{0, 2}).view(),
                                  host(std::vector<int32_t>{0, 0}).view(),
                                  host(std::vector<double>{1, 1}).view());
            }),
            "[sparse.csr_matrix] row[1] = 2 is out of range [0, 2)");
  EXPECT_THROW(CsrMatrix::from_csr(1, 1, host(std::vector<double>{0, 0}),
                                   host(std::vector<double>{}), host(std::vector<double>{})),
               gpula::DTypeError);
}

// Found by fuzz/fuzz_sparse_validate (inputs fuzz/corpus/view_negative_lengths,
// coo_negative_lengths, csr_rows_int64_max): views whose indices and values share one negative
// length passed the length checks and reached std::vector(size_t(-n)) (std::length_error, not
// InvalidArgument); rows == INT64_MAX overflowed rows + 1 (UB) in check_csr, from_coo, from_csc.
TEST(SparseMatrix, RejectsNegativeLengthsAndRowsPlusOneOverflow) {
  Tensor p = host(std::vector<int32_t>{0, 0, 0});
  Tensor i = host(std::vector<int32_t>{});
  Tensor v = host(std::vector<double>{});
  TensorView neg_i = i.view(), neg_v = v.view();
  neg_i.shape = {-3};
  neg_v.shape = {-3};
  const CsrView bad{2, 3, p.view(), neg_i, neg_v};
  EXPECT_EQ(error_of([&] { check_csr(bad, "op"); }),
            "[op] indices must have a non-negative length, got -3");
  EXPECT_EQ(error_of([&] { validate_csr(bad, "op"); }),
            "[op] indices must have a non-negative length, got -3");
  EXPECT_EQ(error_of([&] { CsrMatrix::from_csc(3, 2, p.view(), neg_i, neg_v); }),
            "[sparse.csr_matrix] indices must have a non-negative length, got -3");
  TensorView neg_r = neg_i;
  EXPECT_EQ(error_of([&] { CsrMatrix::from_coo(2, 2, neg_r, neg_i, neg_v); }),
            "[sparse.csr_matrix] row, col and values must be 1-D contiguous of one length, got "
            "(-3,), (-3,), (-3,)");

  constexpr int64_t big = std::numeric_limits<int64_t>::max();
  Tensor p1 = host(std::vector<int64_t>{0});
  Tensor i64 = host(std::vector<int64_t>{});
  const std::string too_many = "[sparse.csr_matrix] shape (9223372036854775807, 2) has too many "
                               "rows: indptr would need rows + 1 entries";
  EXPECT_EQ(error_of([&] { CsrMatrix::from_csr(big, 2, p1, i64, v); }), too_many);
  EXPECT_EQ(error_of([&] { CsrMatrix::from_coo(big, 2, i64.view(), i64.view(), v.view()); }),
            too_many);
  Tensor cp = host(std::vector<int64_t>{0, 0, 0});
  EXPECT_EQ(error_of([&] { CsrMatrix::from_csc(big, 2, cp.view(), i64.view(), v.view()); }),
            too_many);
  // cols == INT64_MAX stays a valid CSR / COO shape (no array has cols + 1 entries).
  CsrMatrix wide = CsrMatrix::from_csr(1, big, host(std::vector<int64_t>{0, 1}),
                                       host(std::vector<int64_t>{big - 1}), host(std::vector<double>{2}));
  EXPECT_EQ(read<int64_t>(wide.indices()), (std::vector<int64_t>{big - 1}));
}

// Found by fuzz/fuzz_sparse_validate (fuzz/corpus/crash_coo_null_data): from_coo read a
// null col array (UB, a crash) instead of rejecting it like check_csr does for CSR arrays.
TEST(SparseMatrix, FromCooRejectsNullData) {
  Tensor r = host(std::vector<int64_t>{0, 1});
  Tensor c = host(std::vector<int64_t>{1, 0});
  Tensor v = host(std::vector<double>{1, 2});
  TensorView null_c = c.view();
  null_c.data = nullptr;
  EXPECT_EQ(error_of([&] { CsrMatrix::from_coo(2, 2, r.view(), null_c, v.view()); }),
            "[sparse.csr_matrix] col has no data");
  TensorView null_v = v.view();
  null_v.data = nullptr;
  EXPECT_EQ(error_of([&] { CsrMatrix::from_coo(2, 2, r.view(), c.view(), null_v); }),
            "[sparse.csr_matrix] values has no data");
}

TEST(SparseMatrix, SpMVArgumentErrors) {
  CsrMatrix a = csr(3, 4, {0, 2, 2, 5}, {0, 2, 0, 1, 3}, {1, 2, 3, 4, 5});
  SpMV p(a.view());
  Tensor x3 = host(std::vector<double>{1, 2, 3}), y = host(std::vector<double>{0, 0, 0});
  EXPECT_EQ(error_of([&] { p.execute(x3.view(), y.view()); }),
            "[sparse.SpMV] x must have shape (4,), got (3,)");
  Tensor xf = host(std::vector<float>{1, 2, 3, 4});
  EXPECT_THROW(p.execute(xf.view(), y.view()), gpula::DTypeError);
}

template <class I, class V>
void random_spmv_case(Op op, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  const int64_t m = 37, n = 23;
  std::vector<std::complex<double>> dense(m * n);
  std::vector<I> p{0}, ind;
  std::vector<V> val;
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      if (u(rng) < -0.6 || i == 5) continue;  // row 5 stays empty
      V v;
      if constexpr (std::is_floating_point_v<V>) {
        v = static_cast<V>(u(rng));
      } else {
        v = V(static_cast<typename V::value_type>(u(rng)),
              static_cast<typename V::value_type>(u(rng)));
      }
      dense[i * n + j] = std::complex<double>(v);
      ind.push_back(static_cast<I>(j));
      val.push_back(v);
    }
    p.push_back(static_cast<I>(ind.size()));
  }
  const bool t = op != Op::none;
  const int64_t nx = t ? m : n, ny = t ? n : m;
  std::vector<V> x(nx);
  for (auto& e : x) e = static_cast<V>(u(rng));
  CsrMatrix a = CsrMatrix::from_csr(m, n, host(p), host(ind), host(val));
  Tensor xt = host(x), yt = host(std::vector<V>(ny, V(3)));
  SpMV(a.view(), op).execute(xt.view(), yt.view(), 1.5, -0.5);
  const auto y = read<V>(yt);
  const double tol =
      sizeof(V) == 4 || (sizeof(V) == 8 && !std::is_same_v<V, double>) ? 1e-4 : 1e-12;
  for (int64_t r = 0; r < ny; ++r) {
    std::complex<double> acc = 0;
    for (int64_t k = 0; k < nx; ++k) {
      std::complex<double> aij = t ? dense[k * n + r] : dense[r * n + k];
      if (op == Op::conjugate_transpose) aij = std::conj(aij);
      acc += aij * std::complex<double>(x[k]);
    }
    const std::complex<double> want = 1.5 * acc - 0.5 * 3.0;
    EXPECT_NEAR(std::abs(std::complex<double>(y[r]) - want), 0.0, tol) << r;
  }
}

TEST(SparseMatrix, RandomSpMVAllTypes) {
  for (Op op : {Op::none, Op::transpose, Op::conjugate_transpose}) {
    random_spmv_case<int32_t, float>(op, 1);
    random_spmv_case<int32_t, double>(op, 2);
    random_spmv_case<int64_t, double>(op, 3);
    random_spmv_case<int64_t, std::complex<float>>(op, 4);
    random_spmv_case<int32_t, std::complex<double>>(op, 5);
  }
}

}  // namespace
