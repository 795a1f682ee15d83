// SpMM, SDDMM and SpGEMM on the CPU against dense float64 / complex128 references: every value
// and index dtype, transposed ops, strided operands, empty rows, 0-size shapes, and the errors.
#include <gpula/error.h>
#include <gpula/sparse.h>
#include <gtest/gtest.h>

#include <complex>
#include <functional>
#include <string>
#include <vector>

#include "support/sparse_products.h"

namespace {

using namespace sparse_products_test;
using gpula::Device;
using namespace gpula::sparse;

template <class E = gpula::InvalidArgument>
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "no error";
}

// op(A)[i, j] from A's dense copy.
template <class I, class V>
cd op_at(const RandomCsr<I, V>& a, Op op, int64_t i, int64_t j) {
  if (op == Op::none) return a.at(i, j);
  const cd v = a.at(j, i);
  return op == Op::conjugate_transpose ? std::conj(v) : v;
}

template <class I, class V>
void spmm_case(Op op, int64_t m, int64_t k, int64_t n, int b_layout, int c_layout, double alpha,
               double beta, uint32_t seed) {
  RandomCsr<I, V> a(m, k, 0.3, seed);
  CsrMatrix am = a.matrix();
  const bool t = op != Op::none;
  const int64_t rows = t ? k : m, inner = t ? m : k;
  Dense<V> b(inner, n, b_layout, seed + 1), c(rows, n, c_layout, seed + 2);
  std::vector<cd> c0(static_cast<size_t>(rows * n));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < n; ++j) c0[i * n + j] = c.get(i, j);
  SpMM plan(am.view(), op);
  plan.execute(b.view, c.view, alpha, beta);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      cd acc = 0;
      for (int64_t l = 0; l < inner; ++l) acc += op_at(a, op, i, l) * b.get(l, j);
      const cd want = alpha * acc + beta * c0[i * n + j];
      ASSERT_LE(std::abs(c.get(i, j) - want), tolerance<V>() * (1 + std::abs(want)))
          << "C[" << i << ", " << j << "] op " << static_cast<int>(op);
    }
  }
}

TEST(SparseProducts, SpMMAllTypesOpsAndLayouts) {
  uint32_t seed = 10;
  for (Op op : {Op::none, Op::transpose, Op::conjugate_transpose}) {
    for (int bl : {0, 1, 2}) {
      const int cl = (bl + 1) % 3;
      spmm_case<int32_t, float>(op, 29, 17, 5, bl, cl, 1.0, 0.0, ++seed);
      spmm_case<int64_t, double>(op, 29, 17, 6, bl, cl, -0.5, 2.0, ++seed);
      spmm_case<int32_t, std::complex<float>>(op, 13, 21, 4, bl, cl, 1.0, 0.0, ++seed);
      spmm_case<int64_t, std::complex<double>>(op, 13, 21, 3, bl, cl, 2.0, -1.0, ++seed);
    }
  }
}

TEST(SparseProducts, SpMMZeroSizesAndEmptyMatrix) {
  spmm_case<int32_t, double>(Op::none, 0, 5, 3, 0, 0, 1.0, 0.0, 1);   // no rows
  spmm_case<int32_t, double>(Op::none, 6, 5, 0, 0, 0, 1.0, 0.0, 2);   // no columns in B
  spmm_case<int32_t, double>(Op::none, 6, 0, 3, 0, 0, 1.0, 2.0, 3);   // k = 0: C = beta C
  spmm_case<int64_t, double>(Op::transpose, 6, 0, 3, 0, 0, 1.0, 0.5, 4);
  spmm_case<int32_t, double>(Op::none, 1, 1, 1, 0, 0, 1.0, 0.0, 5);   // 1x1
  // nnz = 0 with beta = 0: poisoned C becomes 0.
  RandomCsr<int32_t, double> z(4, 3, 0.0, 6);
  CsrMatrix zm = z.matrix();
  Dense<double> b(3, 2, 0, 7), c(4, 2, 0, 8);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 2; ++j) c.at(i, j) = std::numeric_limits<double>::quiet_NaN();
  SpMM(zm.view()).execute(b.view, c.view);
  for (int64_t i = 0; i < 4; ++i)
    for (int64_t j = 0; j < 2; ++j) EXPECT_EQ(c.get(i, j), cd(0));
}

TEST(SparseProducts, SpMMOneOffFunctionAndPoisonedOutput) {
  RandomCsr<int32_t, double> a(9, 7, 0.4, 20);
  CsrMatrix am = a.matrix();
  Dense<double> b(7, 4, 2, 21);  // column-major B
  Tensor c = spmm(am.view(), b.view);
  ASSERT_EQ(c.shape(), (gpula::Shape{9, 4}));
  const auto* cp = static_cast<const double*>(c.data());
  for (int64_t i = 0; i < 9; ++i) {
    for (int64_t j = 0; j < 4; ++j) {
      cd acc = 0;
      for (int64_t l = 0; l < 7; ++l) acc += a.at(i, l) * b.get(l, j);
      EXPECT_NEAR(cp[i * 4 + j], acc.real(), 1e-12);
    }
  }
  // beta = 0 never reads C: NaN in, finite out.
  Dense<double> p(9, 4, 0, 22);
  for (int64_t i = 0; i < 9; ++i)
    for (int64_t j = 0; j < 4; ++j) p.at(i, j) = std::numeric_limits<double>::quiet_NaN();
  SpMM(am.view()).execute(b.view, p.view, 1.0, 0.0);
  for (int64_t i = 0; i < 9; ++i)
    for (int64_t j = 0; j < 4; ++j) EXPECT_NEAR(p.get(i, j).real(), cp[i * 4 + j], 1e-14);
}

TEST(SparseProducts, SpMMErrors) {
  RandomCsr<int32_t, double> a(3, 4, 0.5, 30);
  CsrMatrix am = a.matrix();
  SpMM plan(am.view());
  Dense<double> b_bad(3, 2, 0, 31), b(4, 2, 0, 32), c(3, 2, 0, 33), c_bad(3, 5, 0, 34);
  EXPECT_EQ(error_of([&] { plan.execute(b_bad.view, c.view); }),
            "[sparse.spmm] b must have shape (4, n) (op(A) is (3, 4)), got (3, 2)");
  EXPECT_EQ(error_of([&] { plan.execute(b.view, c_bad.view); }),
            "[sparse.spmm] c must have shape (3, 2) = (op(A).rows, b.cols), got (3, 5)");
  SpMM tplan(am.view(), Op::transpose);
  EXPECT_EQ(error_of([&] { tplan.execute(b.view, c.view); }),
            "[sparse.spmm] b must have shape (3, n) (op(A) is (4, 3)), got (4, 2)");
  TensorView v1 = b.view;
  v1.shape = {8};
  v1.strides = {1};
  EXPECT_EQ(error_of([&] { plan.execute(v1, c.view); }),
            "[sparse.spmm] b must be 2-D, got shape (8,)");
  Dense<float> bf(4, 2, 0, 35);
  EXPECT_EQ(error_of<gpula::DTypeError>([&] { plan.execute(bf.view, c.view); }),
            "[sparse.spmm] b must have A's dtype float64, got float32");
  TensorView on_gpu = b.view;
  on_gpu.device = Device::cuda(0);
  EXPECT_EQ(error_of([&] { plan.execute(on_gpu, c.view); }),
            "[sparse.spmm] b must be on A's device cpu, got cuda:0");
  EXPECT_EQ(error_of([&] { SpMM(am.view(), static_cast<Op>(7)); }),
            "[sparse.spmm] op must be none, transpose or conjugate_transpose, got 7");
}

template <class I, class V>
void sddmm_case(int64_t m, int64_t k, int64_t n, int a_layout, int b_layout, double alpha,
                double beta, uint32_t seed) {
  RandomCsr<I, V> mask(m, n, 0.35, seed);
  CsrMatrix cm = mask.matrix();
  const std::vector<V> before = read<V>(cm.values());
  Dense<V> a(m, k, a_layout, seed + 1), b(k, n, b_layout, seed + 2);
  SDDMM(cm.view()).execute(a.view, b.view, alpha, beta);
  const std::vector<V> got = read<V>(cm.values());
  size_t e = 0;
  for (int64_t i = 0; i < m; ++i) {
    for (I q = mask.p[i]; q < mask.p[i + 1]; ++q, ++e) {
      const int64_t j = mask.ind[q];
      cd acc = 0;
      for (int64_t l = 0; l < k; ++l) acc += a.get(i, l) * b.get(l, j);
      const cd want = alpha * acc + beta * cd(before[e]);
      ASSERT_LE(std::abs(cd(got[e]) - want), tolerance<V>() * (1 + std::abs(want)))
          << "C[" << i << ", " << j << "]";
    }
  }
}

TEST(SparseProducts, SDDMMAllTypesAndLayouts) {
  uint32_t seed = 100;
  for (int al : {0, 1, 2}) {
    const int bl = (al + 2) % 3;
    sddmm_case<int32_t, float>(23, 9, 17, al, bl, 1.0, 0.0, ++seed);
    sddmm_case<int64_t, double>(23, 9, 17, al, bl, 0.5, -2.0, ++seed);
    sddmm_case<int32_t, std::complex<float>>(11, 5, 13, al, bl, 1.0, 0.0, ++seed);
    sddmm_case<int64_t, std::complex<double>>(11, 5, 13, al, bl, -1.0, 0.5, ++seed);
  }
  sddmm_case<int32_t, double>(0, 4, 5, 0, 0, 1.0, 0.0, 1);  // no rows
  sddmm_case<int32_t, double>(6, 0, 5, 0, 0, 1.0, 2.0, 2);  // k = 0: C = beta C
  sddmm_case<int32_t, double>(1, 1, 1, 0, 0, 1.0, 0.0, 3);
}

TEST(SparseProducts, SDDMMFunctionSharesPatternAndIgnoresMaskValues) {
  RandomCsr<int32_t, double> mask(8, 6, 0.5, 200);
  CsrMatrix cm = mask.matrix();
  Dense<double> a(8, 3, 0, 201), b(3, 6, 0, 202);
  CsrMatrix out = sddmm(cm, a.view, b.view);
  EXPECT_EQ(out.indptr().data(), cm.indptr().data());
  EXPECT_EQ(out.indices().data(), cm.indices().data());
  EXPECT_NE(out.values().data(), cm.values().data());
  EXPECT_EQ(read<double>(cm.values()), mask.val);  // the mask is untouched
  const auto got = read<double>(out.values());
  size_t e = 0;
  for (int64_t i = 0; i < 8; ++i) {
    for (int32_t q = mask.p[i]; q < mask.p[i + 1]; ++q, ++e) {
      double acc = 0;
      for (int64_t l = 0; l < 3; ++l) acc += a.get(i, l).real() * b.get(l, mask.ind[q]).real();
      EXPECT_NEAR(got[e], acc, 1e-12);
    }
  }
}

TEST(SparseProducts, SDDMMErrors) {
  RandomCsr<int32_t, double> mask(3, 4, 0.5, 300);
  CsrMatrix cm = mask.matrix();
  SDDMM plan(cm.view());
  Dense<double> a(3, 2, 0, 301), a_bad(4, 2, 0, 302), b(2, 4, 0, 303), b_bad(3, 4, 0, 304);
  EXPECT_EQ(error_of([&] { plan.execute(a_bad.view, b.view); }),
            "[sparse.sddmm] a must have shape (3, k) (C is (3, 4)), got (4, 2)");
  EXPECT_EQ(error_of([&] { plan.execute(a.view, b_bad.view); }),
            "[sparse.sddmm] b must have shape (2, 4) = (a.cols, C.cols), got (3, 4)");
  Dense<std::complex<double>> bc(2, 4, 0, 305);
  EXPECT_EQ(error_of<gpula::DTypeError>([&] { plan.execute(a.view, bc.view); }),
            "[sparse.sddmm] b must have A's dtype float64, got complex128");
  TensorView on_gpu = a.view;
  on_gpu.device = Device::cuda(0);
  EXPECT_EQ(error_of([&] { plan.execute(on_gpu, b.view); }),
            "[sparse.sddmm] a must be on A's device cpu, got cuda:0");
  Tensor short_values = host(std::vector<double>{1.0});
  EXPECT_EQ(error_of([&] { cm.with_values(short_values); }),
            "[sparse.with_values] values must have shape (" + std::to_string(cm.nnz()) +
                ",), got (1,)");
}

template <class I, class V>
void spgemm_case(int64_t m, int64_t k, int64_t n, double da, double db, uint32_t seed) {
  RandomCsr<I, V> a(m, k, da, seed), b(k, n, db, seed + 1, 5);
  CsrMatrix am = a.matrix(), bm = b.matrix();
  CsrMatrix c = spgemm(am.view(), bm.view());
  ASSERT_EQ(c.rows(), m);
  ASSERT_EQ(c.cols(), n);
  EXPECT_EQ(c.indptr().dtype(), dtype_of<I>());
  EXPECT_TRUE(is_canonical(c.view()));
  const auto p = read<I>(c.indptr());
  const auto ind = read<I>(c.indices());
  const auto val = read<V>(c.values());
  std::vector<cd> got(static_cast<size_t>(m * n));
  std::vector<bool> stored(static_cast<size_t>(m * n), false);
  for (int64_t i = 0; i < m; ++i) {
    for (I q = p[i]; q < p[i + 1]; ++q) {
      got[i * n + ind[q]] = cd(val[q]);
      stored[i * n + ind[q]] = true;
    }
  }
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      cd acc = 0;
      bool structural = false;
      for (int64_t l = 0; l < k; ++l) {
        acc += a.at(i, l) * b.at(l, j);
        // A structural product term: both entries stored (values never exactly 0 here).
        structural = structural || (a.at(i, l) != cd(0) && b.at(l, j) != cd(0));
      }
      EXPECT_EQ(stored[i * n + j], structural) << i << ", " << j;
      ASSERT_LE(std::abs(got[i * n + j] - acc), tolerance<V>() * (1 + std::abs(acc)))
          << "C[" << i << ", " << j << "]";
    }
  }
}

TEST(SparseProducts, SpGEMMAllTypes) {
  spgemm_case<int32_t, float>(31, 19, 23, 0.15, 0.2, 1);
  spgemm_case<int64_t, double>(31, 19, 23, 0.15, 0.2, 3);
  spgemm_case<int32_t, double>(40, 40, 40, 0.05, 0.05, 5);
  spgemm_case<int64_t, std::complex<float>>(17, 12, 9, 0.3, 0.3, 7);
  spgemm_case<int32_t, std::complex<double>>(17, 12, 9, 0.3, 0.3, 9);
  spgemm_case<int32_t, double>(1, 1, 1, 1.0, 1.0, 11);
}

TEST(SparseProducts, SpGEMMEmptyAndZeroSize) {
  spgemm_case<int32_t, double>(0, 5, 4, 0.5, 0.5, 20);
  spgemm_case<int32_t, double>(5, 0, 4, 0.5, 0.5, 21);
  spgemm_case<int32_t, double>(5, 4, 0, 0.5, 0.5, 22);
  spgemm_case<int64_t, double>(6, 5, 4, 0.0, 0.5, 23);  // A has no nonzeros
}

TEST(SparseProducts, SpGEMMErrors) {
  RandomCsr<int32_t, double> a(3, 4, 0.5, 40), b(3, 2, 0.5, 41), b_ok(4, 2, 0.5, 42);
  RandomCsr<int64_t, double> b64(4, 2, 0.5, 43);
  RandomCsr<int32_t, float> bf(4, 2, 0.5, 44);
  CsrMatrix am = a.matrix(), bm = b.matrix(), okm = b_ok.matrix(), b64m = b64.matrix(),
            bfm = bf.matrix();
  EXPECT_EQ(error_of([&] { spgemm(am.view(), bm.view()); }),
            "[sparse.spgemm] b must have 4 rows (A is (3, 4)), got shape (3, 2)");
  EXPECT_EQ(error_of<gpula::DTypeError>([&] { spgemm(am.view(), bfm.view()); }),
            "[sparse.spgemm] b must have A's dtype float64, got float32");
  EXPECT_EQ(error_of<gpula::DTypeError>([&] { spgemm(am.view(), b64m.view()); }),
            "[sparse.spgemm] b must have A's index dtype int32, got int64");
  CsrView on_gpu = okm.view();
  on_gpu.indptr.device = on_gpu.indices.device = on_gpu.values.device = Device::cuda(0);
  EXPECT_EQ(error_of([&] { spgemm(am.view(), on_gpu); }),
            "[sparse.spgemm] b must be on A's device cpu, got cuda:0");
}

}  // namespace
