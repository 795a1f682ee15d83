// gpula::sparse iterative solvers on the CPU: cg, gmres, bicgstab, minres on 2-D Poisson, random
// SPD, nonsymmetric and symmetric indefinite matrices, with and without each preconditioner,
// against a dense partial-pivoting solve; info semantics; argument and factorization errors.
#include <gpula/error.h>
#include <gpula/sparse.h>
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "support/error.h"

namespace {

using namespace gpula;
namespace sp = gpula::sparse;
using cd = std::complex<double>;

template <class T>
DType dtype_of();
template <>
DType dtype_of<float>() {
  return DType::f32;
}
template <>
DType dtype_of<double>() {
  return DType::f64;
}
template <>
DType dtype_of<cd>() {
  return DType::c128;
}

template <class T>
TensorView vec(std::vector<T>& v) {
  TensorView t;
  t.data = v.data();
  t.dtype = dtype_of<T>();
  t.shape = {static_cast<int64_t>(v.size())};
  t.strides = {1};
  return t;
}
TensorView ivec(std::vector<int64_t>& v) {
  TensorView t;
  t.data = v.data();
  t.dtype = DType::i64;
  t.shape = {static_cast<int64_t>(v.size())};
  t.strides = {1};
  return t;
}

// Dense row-major n x n matrix and its CSR form (zeros dropped).
template <class T>
struct Mat {
  int64_t n = 0;
  std::vector<T> dense;
  std::vector<int64_t> ptr, col;
  std::vector<T> val;
  void build() {
    ptr.assign(1, 0);
    col.clear();
    val.clear();
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        if (dense[i * n + j] != T{}) {
          col.push_back(j);
          val.push_back(dense[i * n + j]);
        }
      }
      ptr.push_back(static_cast<int64_t>(col.size()));
    }
  }
  sp::CsrView view() {
    sp::CsrView v;
    v.rows = v.cols = n;
    v.indptr = ivec(ptr);
    v.indices = ivec(col);
    v.values = vec(val);
    return v;
  }
};

template <class T>
Mat<T> poisson2d(int64_t g) {
  Mat<T> m;
  m.n = g * g;
  m.dense.assign(m.n * m.n, T{});
  for (int64_t i = 0; i < g; ++i) {
    for (int64_t j = 0; j < g; ++j) {
      const int64_t r = i * g + j;
      m.dense[r * m.n + r] = T(4);
      if (i > 0) m.dense[r * m.n + r - g] = T(-1);
      if (i + 1 < g) m.dense[r * m.n + r + g] = T(-1);
      if (j > 0) m.dense[r * m.n + r - 1] = T(-1);
      if (j + 1 < g) m.dense[r * m.n + r + 1] = T(-1);
    }
  }
  m.build();
  return m;
}

// kind 0: SPD (sparse random symmetric + diagonal dominance), 1: nonsymmetric diagonally dominant,
// 2: symmetric indefinite (alternating-sign diagonal dominance).
template <class T>
Mat<T> random_sparse(int64_t n, int kind, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::bernoulli_distribution keep(0.15);
  Mat<T> m;
  m.n = n;
  m.dense.assign(n * n, T{});
  auto draw = [&]() {
    if constexpr (std::is_same_v<T, cd>)
      return cd(u(gen), u(gen));
    else
      return T(u(gen));
  };
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < i; ++j) {
      if (!keep(gen)) continue;
      const T v = draw();
      m.dense[i * n + j] = v;
      if (kind == 1)
        m.dense[j * n + i] = draw();
      else {
        if constexpr (std::is_same_v<T, cd>)
          m.dense[j * n + i] = std::conj(v);
        else
          m.dense[j * n + i] = v;
      }
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    double s = 0;
    for (int64_t j = 0; j < n; ++j) s += std::abs(m.dense[i * n + j]);
    double d = s + 1.0 + std::abs(u(gen));
    if (kind == 2 && (i % 2 == 1)) d = -d;
    m.dense[i * n + i] = T(d);
  }
  m.build();
  return m;
}

template <class T>
std::vector<T> dense_solve(const Mat<T>& m, std::vector<T> b) {
  const int64_t n = m.n;
  std::vector<T> a = m.dense;
  for (int64_t k = 0; k < n; ++k) {
    int64_t p = k;
    for (int64_t i = k + 1; i < n; ++i) {
      if (std::abs(a[i * n + k]) > std::abs(a[p * n + k])) p = i;
    }
    for (int64_t j = 0; j < n; ++j) std::swap(a[k * n + j], a[p * n + j]);
    std::swap(b[k], b[p]);
    for (int64_t i = k + 1; i < n; ++i) {
      const T f = a[i * n + k] / a[k * n + k];
      for (int64_t j = k; j < n; ++j) a[i * n + j] -= f * a[k * n + j];
      b[i] -= f * b[k];
    }
  }
  for (int64_t i = n - 1; i >= 0; --i) {
    T s = b[i];
    for (int64_t j = i + 1; j < n; ++j) s -= a[i * n + j] * b[j];
    b[i] = s / a[i * n + i];
  }
  return b;
}

template <class T>
std::vector<T> rhs(int64_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<T> b(n);
  for (auto& v : b) {
    if constexpr (std::is_same_v<T, cd>)
      v = cd(u(gen), u(gen));
    else
      v = T(u(gen));
  }
  return b;
}

template <class T>
double rel_err(const std::vector<T>& x, const std::vector<T>& ref) {
  double num = 0, den = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    num += std::norm(std::complex<double>(x[i]) - std::complex<double>(ref[i]));
    den += std::norm(std::complex<double>(ref[i]));
  }
  return std::sqrt(num / den);
}

using Solver = sp::IterativeResult (*)(const sp::CsrView&, const TensorView&, const TensorView&,
                                       const sp::IterativeOptions&, Stream);
sp::IterativeResult call(const std::string& method, const sp::CsrView& a, const TensorView& b,
                         const TensorView& x, const sp::IterativeOptions& o) {
  if (method == "cg") return sp::cg(a, b, x, o);
  if (method == "gmres") return sp::gmres(a, b, x, o);
  if (method == "bicgstab") return sp::bicgstab(a, b, x, o);
  return sp::minres(a, b, x, o);
}

const sp::Preconditioner kPrecs[] = {sp::Preconditioner::none, sp::Preconditioner::jacobi,
                                     sp::Preconditioner::ilu0, sp::Preconditioner::ic0};

template <class T>
void check_solves(Mat<T>& m, const std::vector<std::string>& methods, bool allow_ic0, double rtol,
                  double bound) {
  std::vector<T> b = rhs<T>(m.n, 7);
  const std::vector<T> ref = dense_solve(m, b);
  const std::vector<T> b_before = b;
  for (const auto& method : methods) {
    for (auto prec : kPrecs) {
      if (prec == sp::Preconditioner::ic0 && !allow_ic0) continue;
      if (method == "minres" && prec == sp::Preconditioner::ilu0) continue;  // needs SPD M
      if (method == "minres" && prec == sp::Preconditioner::jacobi && !allow_ic0) continue;
      sp::IterativeOptions o;
      o.rtol = rtol;
      o.maxiter = 2000;
      o.restart = 30;
      o.preconditioner = prec;
      std::vector<T> x(m.n, T{});
      const auto r = call(method, m.view(), vec(b), vec(x), o);
      SCOPED_TRACE(method + " prec " + std::to_string(static_cast<int>(prec)));
      EXPECT_EQ(r.info, 0);
      EXPECT_GT(r.iterations, 0);
      EXPECT_LT(rel_err(x, ref), bound);
      EXPECT_EQ(b, b_before);
    }
  }
}

TEST(SparseIterative, Poisson2dAllMethodsAndPreconditioners) {
  auto m = poisson2d<double>(12);
  check_solves(m, {"cg", "gmres", "bicgstab", "minres"}, true, 1e-10, 1e-7);
}

TEST(SparseIterative, RandomSpdFloat64AndComplex) {
  auto m = random_sparse<double>(60, 0, 1);
  check_solves(m, {"cg", "gmres", "bicgstab", "minres"}, true, 1e-10, 1e-8);
  auto c = random_sparse<cd>(50, 0, 2);
  check_solves(c, {"cg", "gmres", "bicgstab", "minres"}, true, 1e-10, 1e-8);
}

TEST(SparseIterative, NonsymmetricGmresBicgstab) {
  auto m = random_sparse<double>(70, 1, 3);
  check_solves(m, {"gmres", "bicgstab"}, false, 1e-10, 1e-8);
  auto c = random_sparse<cd>(40, 1, 4);
  check_solves(c, {"gmres", "bicgstab"}, false, 1e-10, 1e-8);
}

TEST(SparseIterative, SymmetricIndefiniteMinres) {
  auto m = random_sparse<double>(60, 2, 5);
  check_solves(m, {"minres", "gmres"}, false, 1e-10, 1e-8);
}

TEST(SparseIterative, Float32) {
  auto m = poisson2d<float>(8);
  check_solves(m, {"cg", "bicgstab", "gmres"}, true, 1e-5, 1e-3);
}

TEST(SparseIterative, InfoSemantics) {
  auto m = poisson2d<double>(10);
  std::vector<double> b = rhs<double>(m.n, 9);
  sp::IterativeOptions o;
  o.rtol = 1e-12;
  o.maxiter = 3;
  std::vector<double> x(m.n, 0.0);
  auto r = sp::cg(m.view(), vec(b), vec(x), o);
  EXPECT_EQ(r.info, 3);
  EXPECT_EQ(r.iterations, 3);
  // x0 = exact solution: 0 iterations
  std::vector<double> exact = dense_solve(m, b);
  o.rtol = 1e-8;
  o.maxiter.reset();  // the default, 10 n
  for (const char* method : {"cg", "gmres", "bicgstab", "minres"}) {
    std::vector<double> x0 = exact;
    r = call(method, m.view(), vec(b), vec(x0), o);
    EXPECT_EQ(r.info, 0) << method;
    EXPECT_EQ(r.iterations, 0) << method;
  }
  // b = 0: x = 0, info 0
  std::vector<double> zero(m.n, 0.0), x1(m.n, 3.0);
  r = sp::gmres(m.view(), vec(zero), vec(x1), o);
  EXPECT_EQ(r.info, 0);
  for (double v : x1) EXPECT_EQ(v, 0.0);
  // callback once per iteration
  int calls = 0;
  o.callback = [&](const TensorView& xk) {
    ++calls;
    EXPECT_EQ(xk.shape[0], m.n);
  };
  std::vector<double> x2(m.n, 0.0);
  r = sp::cg(m.view(), vec(b), vec(x2), o);
  EXPECT_EQ(r.info, 0);
  EXPECT_EQ(calls, r.iterations);
}

TEST(SparseIterative, LinearOperatorAndCustomPreconditioner) {
  auto m = poisson2d<double>(9);
  std::vector<double> b = rhs<double>(m.n, 11);
  const auto ref = dense_solve(m, b);
  sp::LinearOperator op;
  op.rows = op.cols = m.n;
  op.dtype = DType::f64;
  int matvecs = 0;
  op.matvec = [&](const TensorView& x, const TensorView& y) {
    ++matvecs;
    const double* xp = static_cast<const double*>(x.data);
    double* yp = static_cast<double*>(y.data);
    for (int64_t i = 0; i < m.n; ++i) {
      double s = 0;
      for (int64_t k = m.ptr[i]; k < m.ptr[i + 1]; ++k) s += m.val[k] * xp[m.col[k]];
      yp[i] = s;
    }
  };
  sp::IterativeOptions o;
  o.rtol = 1e-10;
  o.preconditioner = sp::Preconditioner::custom;
  o.preconditioner_op = [&](const TensorView& r, const TensorView& z) {  // z = r / 4
    for (int64_t i = 0; i < m.n; ++i)
      static_cast<double*>(z.data)[i] = static_cast<const double*>(r.data)[i] / 4.0;
  };
  for (const char* method : {"cg", "gmres", "bicgstab", "minres"}) {
    std::vector<double> x(m.n, 0.0);
    sp::IterativeResult r;
    const std::string s = method;
    if (s == "cg") r = sp::cg(op, vec(b), vec(x), o);
    if (s == "gmres") r = sp::gmres(op, vec(b), vec(x), o);
    if (s == "bicgstab") r = sp::bicgstab(op, vec(b), vec(x), o);
    if (s == "minres") r = sp::minres(op, vec(b), vec(x), o);
    EXPECT_EQ(r.info, 0) << method;
    EXPECT_LT(rel_err(x, ref), 1e-7) << method;
  }
  EXPECT_GT(matvecs, 0);
  o.preconditioner = sp::Preconditioner::jacobi;
  std::vector<double> x(m.n, 0.0);
  EXPECT_THROW(sp::cg(op, vec(b), vec(x), o), InvalidArgument);
}

using test_support::msg_of;

TEST(SparseIterative, Errors) {
  auto m = poisson2d<double>(4);
  std::vector<double> b(m.n, 1.0), x(m.n, 0.0), short_b(m.n - 1, 1.0);
  std::vector<float> xf(m.n, 0.0f);
  sp::IterativeOptions o;
  EXPECT_THROW(sp::cg(m.view(), vec(short_b), vec(x), o), InvalidArgument);
  EXPECT_THROW(sp::cg(m.view(), vec(b), vec(xf), o), DTypeError);
  EXPECT_NE(msg_of([&] { sp::cg(m.view(), vec(short_b), vec(x), o); }).find("[sparse.linalg.cg]"),
            std::string::npos);
  EXPECT_THROW(sp::parse_preconditioner("ilu1", "sparse.linalg.cg"), InvalidArgument);
  EXPECT_NE(msg_of([] { sp::parse_preconditioner("ilu1", "sparse.linalg.cg"); }).find("ilu1"),
            std::string::npos);
  EXPECT_EQ(sp::parse_preconditioner("ic0", "op"), sp::Preconditioner::ic0);
  sp::CsrView rect = m.view();
  rect.cols = m.n + 1;
  EXPECT_THROW(sp::cg(rect, vec(b), vec(x), o), InvalidArgument);
  o.restart = 0;
  EXPECT_THROW(sp::gmres(m.view(), vec(b), vec(x), o), InvalidArgument);
  o.restart = 20;
  o.rtol = -1;
  EXPECT_THROW(sp::cg(m.view(), vec(b), vec(x), o), InvalidArgument);
  o.rtol = 1e-5;
  // ic0 with a zero pivot (A[0,0] = 0), ilu0 likewise, jacobi with a zero diagonal
  Mat<double> z;
  z.n = 3;
  z.dense = {0, 1, 0, 1, 2, 0, 0, 0, 3};
  z.build();
  std::vector<double> b3(3, 1.0), x3(3, 0.0);
  o.preconditioner = sp::Preconditioner::ic0;
  EXPECT_THROW(sp::cg(z.view(), vec(b3), vec(x3), o), SingularMatrix);
  EXPECT_NE(msg_of([&] { sp::cg(z.view(), vec(b3), vec(x3), o); }).find("ic0"), std::string::npos);
  o.preconditioner = sp::Preconditioner::ilu0;
  EXPECT_THROW(sp::gmres(z.view(), vec(b3), vec(x3), o), SingularMatrix);
  o.preconditioner = sp::Preconditioner::jacobi;
  EXPECT_THROW(sp::gmres(z.view(), vec(b3), vec(x3), o), InvalidArgument);
  // ic0 on an indefinite matrix: a negative pivot
  Mat<double> ind;
  ind.n = 2;
  ind.dense = {1, 2, 2, 1};
  ind.build();
  std::vector<double> b2(2, 1.0), x2(2, 0.0);
  o.preconditioner = sp::Preconditioner::ic0;
  EXPECT_THROW(sp::cg(ind.view(), vec(b2), vec(x2), o), NotPositiveDefinite);
}

TEST(SparseIterative, NanInputDoesNotCrash) {
  auto m = poisson2d<double>(4);
  std::vector<double> b(m.n, 1.0), x(m.n, 0.0);
  b[3] = std::nan("");
  sp::IterativeOptions o;
  o.maxiter = 20;
  for (const char* method : {"cg", "gmres", "bicgstab", "minres"}) {
    std::fill(x.begin(), x.end(), 0.0);
    const auto r = call(method, m.view(), vec(b), vec(x), o);
    EXPECT_NE(r.info, 0) << method;
  }
}

}  // namespace

namespace {

TEST(SparseIterative, PreconditionersCutIterations) {
  auto m = poisson2d<double>(20);
  std::vector<double> b = rhs<double>(m.n, 13);
  int64_t its[4] = {};
  for (int k = 0; k < 4; ++k) {
    sp::IterativeOptions o;
    o.rtol = 1e-8;
    o.preconditioner = kPrecs[k];
    std::vector<double> x(m.n, 0.0);
    const auto r = sp::cg(m.view(), vec(b), vec(x), o);
    ASSERT_EQ(r.info, 0);
    its[k] = r.iterations;
  }
  EXPECT_LT(its[2], its[0]);  // ilu0
  EXPECT_LT(its[3], its[0]);  // ic0
  EXPECT_EQ(its[2], its[3]);  // the same factorization for a symmetric matrix
  EXPECT_LE(its[1], its[0]);  // jacobi: constant diagonal, same Krylov space
}

}  // namespace
