// CPU DirectSolver (SuiteSparse UMFPACK for general matrices, CHOLMOD for positive definite
// ones): solutions checked by their complex128 residual on random well-conditioned sparse
// matrices, several right-hand sides, refactorization with new values, and every documented
// error.
#include <gpula/error.h>
#include <gpula/log.h>
#include <gpula/sparse.h>
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <complex>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "support/sparse.h"

namespace {

using sparse_test::view_1d;

using gpula::DType;
using gpula::TensorView;
using gpula::sparse::CsrView;
using gpula::sparse::DirectSolver;
using gpula::sparse::DirectSolverOptions;
using gpula::sparse::MatrixType;
using cd = std::complex<double>;

// A random n x n CSR pattern (diagonal always present) with complex128 values, diagonally
// dominant so that it is well conditioned; symmetric patterns/values when `symmetric`.
struct HostCsr {
  int64_t n = 0;
  std::vector<int64_t> indptr, indices;
  std::vector<cd> values;
};

HostCsr random_csr(int64_t n, double density, bool complex_values, uint32_t seed,
                   double diag_scale = 1.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0), pick(0.0, 1.0);
  HostCsr a;
  a.n = n;
  a.indptr.push_back(0);
  for (int64_t i = 0; i < n; ++i) {
    double off = 0;
    int64_t diag_at = -1;
    for (int64_t j = 0; j < n; ++j) {
      if (j != i && pick(rng) > density) continue;
      a.indices.push_back(j);
      if (j == i) diag_at = static_cast<int64_t>(a.values.size());
      cd v(u(rng), complex_values ? u(rng) : 0.0);
      a.values.push_back(v);
      if (j != i) off += std::abs(v);
    }
    a.values[diag_at] = cd((off + 1.0) * diag_scale, 0.0);
    a.indptr.push_back(static_cast<int64_t>(a.indices.size()));
  }
  return a;
}

// Arrays in the requested dtypes, owning their memory.
struct Arrays {
  std::vector<unsigned char> indptr, indices, values;
  CsrView view;
};

std::vector<unsigned char> pack_values(const std::vector<cd>& v, DType t) {
  const bool cplx = gpula::is_complex(t), single = t == DType::f32 || t == DType::c64;
  std::vector<unsigned char> out(v.size() * gpula::size_of(t));
  for (std::size_t e = 0; e < v.size(); ++e) {
    const double parts[2] = {v[e].real(), v[e].imag()};
    for (int c = 0; c < (cplx ? 2 : 1); ++c) {
      const std::size_t at = e * (cplx ? 2 : 1) + c;
      if (single)
        reinterpret_cast<float*>(out.data())[at] = static_cast<float>(parts[c]);
      else
        reinterpret_cast<double*>(out.data())[at] = parts[c];
    }
  }
  return out;
}

Arrays make_arrays(const HostCsr& a, DType t, DType index) {
  Arrays r;
  auto pack_index = [&](const std::vector<int64_t>& x) {
    std::vector<unsigned char> out(x.size() * gpula::size_of(index));
    for (std::size_t e = 0; e < x.size(); ++e) {
      if (index == DType::i32)
        reinterpret_cast<int32_t*>(out.data())[e] = static_cast<int32_t>(x[e]);
      else
        reinterpret_cast<int64_t*>(out.data())[e] = x[e];
    }
    return out;
  };
  r.indptr = pack_index(a.indptr);
  r.indices = pack_index(a.indices);
  r.values = pack_values(a.values, t);
  r.view.rows = r.view.cols = a.n;
  r.view.indptr = view_1d(r.indptr.data(), index, a.n + 1);
  r.view.indices = view_1d(r.indices.data(), index, static_cast<int64_t>(a.indices.size()));
  r.view.values = view_1d(r.values.data(), t, static_cast<int64_t>(a.values.size()));
  return r;
}

cd read(const std::vector<unsigned char>& buf, DType t, std::size_t e) {
  const bool cplx = gpula::is_complex(t), single = t == DType::f32 || t == DType::c64;
  auto at = [&](std::size_t k) {
    return single ? static_cast<double>(reinterpret_cast<const float*>(buf.data())[k])
                  : reinterpret_cast<const double*>(buf.data())[k];
  };
  return cplx ? cd(at(2 * e), at(2 * e + 1)) : cd(at(e), 0.0);
}

// max over columns of ||A x - b|| / ||b|| (b, x: (n, k) row-major).
double relative_residual(const HostCsr& a, const std::vector<unsigned char>& b,
                         const std::vector<unsigned char>& x, DType t, int64_t k) {
  double worst = 0;
  for (int64_t j = 0; j < k; ++j) {
    double rn = 0, bn = 0;
    for (int64_t i = 0; i < a.n; ++i) {
      cd s = 0;
      for (int64_t p = a.indptr[i]; p < a.indptr[i + 1]; ++p) {
        s += a.values[p] * read(x, t, static_cast<std::size_t>(a.indices[p] * k + j));
      }
      const cd bi = read(b, t, static_cast<std::size_t>(i * k + j));
      rn += std::norm(s - bi);
      bn += std::norm(bi);
    }
    worst = std::max(worst, std::sqrt(rn / bn));
  }
  return worst;
}

std::vector<cd> random_rhs(int64_t count, bool cplx, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<cd> v(static_cast<std::size_t>(count));
  for (auto& e : v) e = cd(u(rng), cplx ? u(rng) : 0.0);
  return v;
}

TensorView view2d(void* data, DType t, int64_t n, int64_t k) {
  TensorView v = view_1d(data, t, n);
  if (k > 0) {
    v.shape = {n, k};
    v.strides = {k, 1};
  }
  return v;
}

struct Case {
  DType dtype;
  DType index;
};

// Solves k = 0 (b of shape (n,)), then several right-hand sides; b must stay unmodified.
void expect_solves(DirectSolver& solver, const HostCsr& a, DType t, int64_t n,
                   std::initializer_list<int64_t> ks, uint32_t seed, double tol) {
  const bool cplx = gpula::is_complex(t);
  for (int64_t k : ks) {
    const int64_t cols = k == 0 ? 1 : k;
    auto b = pack_values(random_rhs(n * cols, cplx, seed + static_cast<uint32_t>(k)), t);
    std::vector<unsigned char> x(b.size(), 0xFF);  // poisoned
    const auto b_before = b;
    solver.solve(view2d(b.data(), t, n, k), view2d(x.data(), t, n, k));
    EXPECT_EQ(b, b_before) << "b was modified";
    EXPECT_LT(relative_residual(a, b, x, t, cols), tol) << "k=" << k;
  }
}

// reset_matrix(a2) (same pattern) refactorizes: k right-hand sides against a2; then
// reset_values back to a's values and the same right-hand sides against a.
void expect_refactorizes(DirectSolver& solver, const HostCsr& a, const Arrays& arr,
                         const HostCsr& a2, DType t, DType index, int64_t n, int64_t k,
                         uint32_t seed, double tol) {
  Arrays arr2 = make_arrays(a2, t, index);
  solver.reset_matrix(arr2.view);
  EXPECT_FALSE(solver.factorized());
  solver.factorize();
  auto b = pack_values(random_rhs(n * k, gpula::is_complex(t), seed), t);
  std::vector<unsigned char> x(b.size(), 0xFF);
  solver.solve(view2d(b.data(), t, n, k), view2d(x.data(), t, n, k));
  EXPECT_LT(relative_residual(a2, b, x, t, k), tol);
  solver.reset_values(arr.view.values);
  solver.factorize();
  solver.solve(view2d(b.data(), t, n, k), view2d(x.data(), t, n, k));
  EXPECT_LT(relative_residual(a, b, x, t, k), tol);
}

class SparseDirectCpu : public ::testing::TestWithParam<Case> {};

TEST_P(SparseDirectCpu, SolvesSeveralRightHandSidesAndRefactorizes) {
  const auto [t, index] = GetParam();
  const bool cplx = gpula::is_complex(t);
  const double tol = (t == DType::f32 || t == DType::c64) ? 1e-4 : 1e-11;
  const int64_t n = 60;
  HostCsr a = random_csr(n, 0.08, cplx, 11);
  Arrays arr = make_arrays(a, t, index);
  DirectSolver solver(arr.view);
  solver.plan();
  solver.factorize();
  expect_solves(solver, a, t, n, {0, 1, 3}, 5, tol);
  // Refactorization: new values, same pattern.
  HostCsr a2 = random_csr(n, 0.08, cplx, 11, 3.0);
  for (std::size_t e = 0; e < a2.values.size(); ++e) {
    if (std::abs(a2.values[e]) < 1.0) a2.values[e] *= -2.0;
  }
  expect_refactorizes(solver, a, arr, a2, t, index, n, 2, 99, tol);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, SparseDirectCpu,
                         ::testing::Values(Case{DType::f64, DType::i32},
                                           Case{DType::f32, DType::i32},
                                           Case{DType::c128, DType::i32},
                                           Case{DType::c64, DType::i64},
                                           Case{DType::f64, DType::i64}));

TEST(SparseDirectCpuEdge, OneByOne) {
  HostCsr a;
  a.n = 1;
  a.indptr = {0, 1};
  a.indices = {0};
  a.values = {cd(4.0, 0.0)};
  Arrays arr = make_arrays(a, DType::f64, DType::i32);
  DirectSolver s(arr.view);
  s.plan();
  s.factorize();
  double b = 2.0, x = 0;
  s.solve(view_1d(&b, DType::f64, 1), view_1d(&x, DType::f64, 1));
  EXPECT_DOUBLE_EQ(x, 0.5);
}

TEST(SparseDirectCpuErrors, PhaseOrder) {
  HostCsr a = random_csr(8, 0.3, false, 1);
  Arrays arr = make_arrays(a, DType::f64, DType::i32);
  DirectSolver s(arr.view);
  EXPECT_THROW(s.factorize(), gpula::InvalidArgument);
  std::vector<double> b(8, 1.0), x(8);
  EXPECT_THROW(s.solve(view_1d(b.data(), DType::f64, 8), view_1d(x.data(), DType::f64, 8)),
               gpula::InvalidArgument);
  s.plan();
  EXPECT_THROW(s.solve(view_1d(b.data(), DType::f64, 8), view_1d(x.data(), DType::f64, 8)),
               gpula::InvalidArgument);
  s.factorize();
  s.free();
  EXPECT_THROW(s.factorize(), gpula::InvalidArgument);
}

TEST(SparseDirectCpuErrors, ShapeDtypeAndPattern) {
  HostCsr a = random_csr(8, 0.3, false, 2);
  Arrays arr = make_arrays(a, DType::f64, DType::i32);
  DirectSolver s(arr.view);
  s.plan();
  s.factorize();
  std::vector<double> b(9, 1.0), x(9);
  EXPECT_THROW(s.solve(view_1d(b.data(), DType::f64, 9), view_1d(x.data(), DType::f64, 9)),
               gpula::InvalidArgument);
  std::vector<float> bf(8, 1.0f), xf(8);
  EXPECT_THROW(s.solve(view_1d(bf.data(), DType::f32, 8), view_1d(xf.data(), DType::f32, 8)),
               gpula::DTypeError);
  EXPECT_THROW(s.solve(view_1d(b.data(), DType::f64, 8), view2d(x.data(), DType::f64, 8, 1)),
               gpula::InvalidArgument);
  // A different pattern (one more stored entry) and a moved column index.
  HostCsr other = random_csr(8, 0.3, false, 3);
  Arrays arr_other = make_arrays(other, DType::f64, DType::i32);
  if (other.indices.size() != a.indices.size()) {
    EXPECT_THROW(s.reset_matrix(arr_other.view), gpula::InvalidArgument);
  }
  Arrays moved = make_arrays(a, DType::f64, DType::i32);
  auto* idx = reinterpret_cast<int32_t*>(moved.indices.data());
  idx[0] = idx[0] == 0 ? 7 : 0;
  try {
    s.reset_matrix(moved.view);
    FAIL() << "expected InvalidArgument";
  } catch (const gpula::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("indices"), std::string::npos) << e.what();
  }
  // Wrong values dtype.
  std::vector<float> vf(a.values.size());
  EXPECT_THROW(s.reset_values(view_1d(vf.data(), DType::f32, static_cast<int64_t>(vf.size()))),
               gpula::DTypeError);
  // Non-square matrix.
  CsrView rect = arr.view;
  rect.cols = 9;
  EXPECT_THROW(DirectSolver{rect}, gpula::InvalidArgument);
  // Integer values.
  CsrView ints = arr.view;
  ints.values.dtype = DType::i32;
  EXPECT_THROW(DirectSolver{ints}, gpula::DTypeError);
}

TEST(SparseDirectCpuErrors, SingularMatrix) {
  HostCsr a = random_csr(6, 0.5, false, 4);
  // Make row 2 equal to row 0 in value by zeroing row 2: a zero row is structurally present.
  for (int64_t p = a.indptr[2]; p < a.indptr[3]; ++p) a.values[p] = 0.0;
  Arrays arr = make_arrays(a, DType::f64, DType::i32);
  DirectSolver s(arr.view);
  s.plan();
  try {
    s.factorize();
    FAIL() << "expected SingularMatrix";
  } catch (const gpula::SingularMatrix& e) {
    EXPECT_NE(std::string(e.what()).find("UMFPACK"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(s.factorized());
}

TEST(SparseDirectCpuErrors, NaNDoesNotCrash) {
  HostCsr a = random_csr(6, 0.5, false, 5);
  a.values[0] = std::nan("");
  Arrays arr = make_arrays(a, DType::f64, DType::i32);
  DirectSolver s(arr.view);
  s.plan();
  try {
    s.factorize();
    std::vector<double> b(6, 1.0), x(6);
    s.solve(view_1d(b.data(), DType::f64, 6), view_1d(x.data(), DType::f64, 6));
  } catch (const gpula::LinAlgError&) {
    // reporting the NaN as a failed factorization is fine too
  }
}

// ---- positive definite: CHOLMOD ----------------------------------------------------------------

// A random Hermitian (symmetric when real) pattern and values, fully stored, with a positive
// diagonal dominating its row: Hermitian positive definite. Off-diagonal values times off_scale.
HostCsr random_hpd(int64_t n, double density, bool complex_values, uint32_t seed,
                   double off_scale = 1.0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0), pick(0.0, 1.0);
  std::vector<std::vector<std::pair<int64_t, cd>>> rows(static_cast<std::size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = i + 1; j < n; ++j) {
      if (pick(rng) > density) continue;
      const cd v = off_scale * cd(u(rng), complex_values ? u(rng) : 0.0);
      rows[i].push_back({j, v});
      rows[j].push_back({i, std::conj(v)});
    }
  }
  HostCsr a;
  a.n = n;
  a.indptr.push_back(0);
  for (int64_t i = 0; i < n; ++i) {
    auto& r = rows[i];
    double off = 0;
    for (const auto& e : r) off += std::abs(e.second);
    r.push_back({i, cd(off + 1.0 + 0.1 * static_cast<double>(i % 7), 0.0)});
    std::sort(r.begin(), r.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    for (const auto& e : r) {
      a.indices.push_back(e.first);
      a.values.push_back(e.second);
    }
    a.indptr.push_back(static_cast<int64_t>(a.indices.size()));
  }
  return a;
}

// 2-D 5-point Poisson on an m x m grid (SPD).
HostCsr poisson2d(int64_t m) {
  HostCsr a;
  a.n = m * m;
  a.indptr.push_back(0);
  for (int64_t r = 0; r < m; ++r) {
    for (int64_t c = 0; c < m; ++c) {
      const int64_t i = r * m + c;
      auto put = [&](int64_t j, double v) {
        a.indices.push_back(j);
        a.values.push_back(cd(v, 0.0));
      };
      if (r > 0) put(i - m, -1.0);
      if (c > 0) put(i - 1, -1.0);
      put(i, 4.0);
      if (c + 1 < m) put(i + 1, -1.0);
      if (r + 1 < m) put(i + m, -1.0);
      a.indptr.push_back(static_cast<int64_t>(a.indices.size()));
    }
  }
  return a;
}

DirectSolverOptions pd() {
  DirectSolverOptions o;
  o.matrix_type = MatrixType::positive_definite;
  return o;
}

class SparseDirectCpuCholmod : public ::testing::TestWithParam<Case> {};

// Malformed arrays are rejected at construction, on every backend (the front's validate_csr;
// the level-set ordering and cuDSS rely on it), with the array and the position named.
TEST(SparseDirectCpuErrors, MalformedArraysNameThePosition) {
  auto message = [](std::vector<int32_t> indptr, std::vector<int32_t> indices,
                    const DirectSolverOptions& options) {
    std::vector<double> values(indices.size(), 1.0);
    const auto nnz = static_cast<int64_t>(indices.size());
    const CsrView a{2, 2, view_1d(indptr.data(), DType::i32, 3),
                    view_1d(indices.data(), DType::i32, nnz),
                    view_1d(values.data(), DType::f64, nnz)};
    try {
      DirectSolver s(a, options);
    } catch (const gpula::InvalidArgument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  for (const DirectSolverOptions& o : {DirectSolverOptions{}, pd()}) {
    EXPECT_NE(message({0, 1, 2}, {0, 2}, o).find("[sparse.DirectSolver] indices[1] = 2 is out of range [0, 2)"),
              std::string::npos);
    EXPECT_NE(message({0, 1, 2}, {-1, 1}, o).find("indices[0] = -1 is out of range"),
              std::string::npos);
    EXPECT_NE(message({1, 1, 2}, {0, 1}, o).find("indptr[0] must be 0, got 1"), std::string::npos);
    EXPECT_NE(message({0, 2, 1}, {0, 1}, o).find("indptr must be non-decreasing: indptr[2] = 1"),
              std::string::npos);
  }
}

// No stored entry at all: singular (nothing to pivot on), named at plan() on both backends, not
// a vendor error from the analysis of an empty pattern.
TEST(SparseDirectCpuErrors, ZeroNnzIsSingular) {
  std::vector<int32_t> indptr(5, 0), indices;
  std::vector<double> values;
  const CsrView a{4, 4, view_1d(indptr.data(), DType::i32, 5),
                  view_1d(indices.data(), DType::i32, 0), view_1d(values.data(), DType::f64, 0)};
  for (const DirectSolverOptions& o : {DirectSolverOptions{}, pd()}) {
    DirectSolver s(a, o);
    try {
      s.plan();
      FAIL() << "expected SingularMatrix";
    } catch (const gpula::SingularMatrix& e) {
      EXPECT_NE(std::string(e.what()).find("[sparse.DirectSolver] A is singular: it has no stored "
                                           "entries"),
                std::string::npos)
          << e.what();
    }
    EXPECT_FALSE(s.planned());
  }
}

TEST_P(SparseDirectCpuCholmod, SolvesSeveralRightHandSidesAndRefactorizes) {
  const auto [t, index] = GetParam();
  const bool cplx = gpula::is_complex(t);
  const double tol = (t == DType::f32 || t == DType::c64) ? 1e-4 : 1e-11;
  const int64_t n = 80;
  HostCsr a = random_hpd(n, 0.08, cplx, 21);
  Arrays arr = make_arrays(a, t, index);
  DirectSolver solver(arr.view, pd());
  solver.plan();
  solver.factorize();
  expect_solves(solver, a, t, n, {0, 1, 4}, 7, tol);
  // Refactorization: new Hermitian positive definite values, same pattern.
  HostCsr a2 = random_hpd(n, 0.08, cplx, 21, -0.5);
  ASSERT_EQ(a2.indices, a.indices);
  expect_refactorizes(solver, a, arr, a2, t, index, n, 3, 98, tol);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, SparseDirectCpuCholmod,
                         ::testing::Values(Case{DType::f64, DType::i32},
                                           Case{DType::f64, DType::i64},
                                           Case{DType::f32, DType::i32},
                                           Case{DType::c128, DType::i32},
                                           Case{DType::c128, DType::i64},
                                           Case{DType::c64, DType::i64}));

TEST(SparseDirectCpuCholmodEdge, Poisson2dInt64) {
  HostCsr a = poisson2d(40);  // n = 1600
  Arrays arr = make_arrays(a, DType::f64, DType::i64);
  DirectSolver s(arr.view, pd());
  s.plan();
  s.factorize();
  auto b = pack_values(random_rhs(a.n * 2, false, 3), DType::f64);
  std::vector<unsigned char> x(b.size());
  s.solve(view2d(b.data(), DType::f64, a.n, 2), view2d(x.data(), DType::f64, a.n, 2));
  EXPECT_LT(relative_residual(a, b, x, DType::f64, 2), 1e-12);
}

TEST(SparseDirectCpuCholmodEdge, OneByOne) {
  HostCsr a;
  a.n = 1;
  a.indptr = {0, 1};
  a.indices = {0};
  a.values = {cd(4.0, 0.0)};
  Arrays arr = make_arrays(a, DType::f64, DType::i32);
  DirectSolver s(arr.view, pd());
  s.plan();
  s.factorize();
  double b = 2.0, x = 0;
  s.solve(view_1d(&b, DType::f64, 1), view_1d(&x, DType::f64, 1));
  EXPECT_DOUBLE_EQ(x, 0.5);
  double neg = -1.0;
  s.reset_values(view_1d(&neg, DType::f64, 1));
  EXPECT_THROW(s.factorize(), gpula::NotPositiveDefinite);
}

TEST(SparseDirectCpuCholmodEdge, EmptyIsNotSupported) {
  HostCsr a;
  a.indptr = {0};
  Arrays arr = make_arrays(a, DType::f64, DType::i32);
  EXPECT_THROW(DirectSolver(arr.view, pd()), gpula::NotSupported);
}

// Only the entries on and below the diagonal are read: those above are taken as the conjugate
// transpose of the ones below, whatever is stored there.
TEST(SparseDirectCpuCholmodEdge, ReadsTheLowerTriangle) {
  HostCsr a = random_hpd(30, 0.2, true, 5);
  HostCsr garbled = a;
  for (int64_t i = 0; i < a.n; ++i) {
    for (int64_t p = a.indptr[i]; p < a.indptr[i + 1]; ++p) {
      if (a.indices[p] > i) garbled.values[p] = cd(100.0, -7.0);
    }
  }
  Arrays arr = make_arrays(garbled, DType::c128, DType::i32);
  DirectSolver s(arr.view, pd());
  s.plan();
  s.factorize();
  auto b = pack_values(random_rhs(a.n, true, 1), DType::c128);
  std::vector<unsigned char> x(b.size());
  s.solve(view_1d(b.data(), DType::c128, a.n), view_1d(x.data(), DType::c128, a.n));
  EXPECT_LT(relative_residual(a, b, x, DType::c128, 1), 1e-11);
}

TEST(SparseDirectCpuCholmodErrors, NotPositiveDefiniteThenRecovers) {
  HostCsr a = random_hpd(50, 0.1, false, 8);
  HostCsr bad = a;
  for (int64_t p = bad.indptr[17]; p < bad.indptr[18]; ++p) {
    if (bad.indices[p] == 17) bad.values[p] = -1.0;  // a negative diagonal entry: indefinite
  }
  Arrays arr_bad = make_arrays(bad, DType::f64, DType::i32);
  DirectSolver s(arr_bad.view, pd());
  s.plan();
  try {
    s.factorize();
    FAIL() << "expected NotPositiveDefinite";
  } catch (const gpula::NotPositiveDefinite& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("sparse.DirectSolver"), std::string::npos) << what;
    EXPECT_NE(what.find("not positive definite: leading minor of order"), std::string::npos)
        << what;
    EXPECT_GE(e.order(), 1);
    EXPECT_LE(e.order(), 50);
    EXPECT_EQ(e.batch_index(), -1);
  }
  EXPECT_FALSE(s.factorized());
  std::vector<double> b(50, 1.0), x(50);
  EXPECT_THROW(s.solve(view_1d(b.data(), DType::f64, 50), view_1d(x.data(), DType::f64, 50)),
               gpula::InvalidArgument);
  // New positive definite values: the same plan factorizes them.
  Arrays arr = make_arrays(a, DType::f64, DType::i32);
  s.reset_values(arr.view.values);
  s.factorize();
  std::vector<unsigned char> bb(50 * sizeof(double)), xb(bb.size());
  std::memcpy(bb.data(), b.data(), bb.size());
  s.solve(view_1d(bb.data(), DType::f64, 50), view_1d(xb.data(), DType::f64, 50));
  EXPECT_LT(relative_residual(a, bb, xb, DType::f64, 1), 1e-11);
}

TEST(SparseDirectCpuCholmodErrors, IndefiniteComplexAndLinAlgError) {
  // [[1, 2i], [-2i, 1]]: Hermitian, eigenvalues -1 and 3.
  HostCsr a;
  a.n = 2;
  a.indptr = {0, 2, 4};
  a.indices = {0, 1, 0, 1};
  a.values = {cd(1, 0), cd(0, 2), cd(0, -2), cd(1, 0)};
  Arrays arr = make_arrays(a, DType::c64, DType::i64);
  DirectSolver s(arr.view, pd());
  s.plan();
  EXPECT_THROW(s.factorize(), gpula::LinAlgError);
  EXPECT_FALSE(s.factorized());
}

TEST(SparseDirectCpuCholmodErrors, BadPatternIsInvalidArgument) {
  HostCsr a = random_hpd(10, 0.3, false, 9);
  Arrays arr = make_arrays(a, DType::f64, DType::i32);
  reinterpret_cast<int32_t*>(arr.indices.data())[3] = 10;  // out of range
  EXPECT_THROW(DirectSolver(arr.view, pd()), gpula::InvalidArgument);
  Arrays dup = make_arrays(a, DType::f64, DType::i32);
  auto* idx = reinterpret_cast<int32_t*>(dup.indices.data());
  idx[1] = idx[0];  // a duplicate entry in row 0 (row 0 holds its diagonal and more)
  ASSERT_GT(a.indptr[1], 1);
  EXPECT_THROW(DirectSolver(dup.view, pd()), gpula::InvalidArgument);
}

// A - I for the 2-D Poisson A (eigenvalues in (0, 8)): indefinite, with its first leading minors
// positive, on a factor large enough for CHOLMOD's supernodal method; NaN does not crash either.
TEST(SparseDirectCpuCholmodErrors, IndefinitePoissonAndNaN) {
  HostCsr a = poisson2d(40);
  HostCsr shifted = a;
  for (int64_t i = 0; i < a.n; ++i) {
    for (int64_t p = a.indptr[i]; p < a.indptr[i + 1]; ++p) {
      if (a.indices[p] == i) shifted.values[p] -= 1.0;
    }
  }
  Arrays arr = make_arrays(shifted, DType::f64, DType::i64);
  DirectSolver s(arr.view, pd());
  s.plan();
  try {
    s.factorize();
    FAIL() << "expected NotPositiveDefinite";
  } catch (const gpula::NotPositiveDefinite& e) {
    EXPECT_GT(e.order(), 1) << e.what();
    EXPECT_LE(e.order(), a.n) << e.what();
  }
  EXPECT_FALSE(s.factorized());
  Arrays good = make_arrays(a, DType::f64, DType::i64);
  s.reset_values(good.view.values);
  s.factorize();
  auto b = pack_values(random_rhs(a.n, false, 4), DType::f64);
  std::vector<unsigned char> x(b.size());
  s.solve(view_1d(b.data(), DType::f64, a.n), view_1d(x.data(), DType::f64, a.n));
  EXPECT_LT(relative_residual(a, b, x, DType::f64, 1), 1e-12);
  HostCsr nan = a;
  nan.values[5] = std::nan("");
  Arrays arr_nan = make_arrays(nan, DType::f64, DType::i64);
  s.reset_values(arr_nan.view.values);
  try {
    s.factorize();
    s.solve(view_1d(b.data(), DType::f64, a.n), view_1d(x.data(), DType::f64, a.n));
  } catch (const gpula::LinAlgError&) {
    // reporting the NaN as a failed factorization is fine too
  }
}

// plan() logs (level info) the ordering and method chosen: on 2-D Poisson CHOLMOD keeps AMD
// (METIS is tried only when AMD's fill is high) and, at this size, factorizes supernodally; UMFPACK
// takes its symmetric strategy (AMD on A + A^T) for this structurally symmetric matrix under
// `general` too.
class SparseDirectCpuLog : public ::testing::Test {
 protected:
  void TearDown() override {
    gpula::set_log_sink(nullptr);
    gpula::set_log_level(gpula::LogLevel::warning);
  }
};

TEST_F(SparseDirectCpuLog, PlanNamesTheOrdering) {
  std::vector<std::string> got;
  // The solver's lines only: the first CPU solve in a process may also log a "[cpu]" warning
  // about OpenBLAS's kernels (blas_info.h).
  gpula::set_log_sink([&](gpula::LogLevel, const std::string& m) {
    if (m.rfind("[cpu]", 0) != 0) got.push_back(m);
  });
  gpula::set_log_level(gpula::LogLevel::info);
  HostCsr a = poisson2d(80);  // n = 6400: past CHOLMOD's flops / nnz(L) switch to supernodal
  Arrays arr = make_arrays(a, DType::f64, DType::i32);
  for (MatrixType type :
       {MatrixType::positive_definite, MatrixType::general, MatrixType::symmetric}) {
    got.clear();
    DirectSolverOptions o;
    o.matrix_type = type;
    DirectSolver s(arr.view, o);
    s.plan();
    s.factorize();
    ASSERT_EQ(got.size(), 1u) << "one decision line per plan, none per factorization";
    const std::string& m = got[0];
    if (type == MatrixType::positive_definite) {
      EXPECT_NE(m.find("[sparse.DirectSolver] CHOLMOD analysis: ordering AMD, supernodal"),
                std::string::npos)
          << m;
      EXPECT_NE(m.find("nnz(L)"), std::string::npos) << m;
    } else {
      EXPECT_NE(m.find("[sparse.DirectSolver] UMFPACK analysis: symmetric strategy, ordering AMD"),
                std::string::npos)
          << m;
    }
  }
}

// CHOLMOD's OpenMP loops run on the calling thread alone during factorize(); the thread's
// OpenMP setting is restored afterwards, also when the factorization throws.
TEST(SparseDirectCpuCholmodEdge, RestoresOpenMpMaxActiveLevels) {
  const int before = omp_get_max_active_levels();
  omp_set_max_active_levels(2);
  HostCsr a = poisson2d(30);
  Arrays arr = make_arrays(a, DType::f64, DType::i32);
  DirectSolver s(arr.view, pd());
  s.plan();
  s.factorize();
  EXPECT_EQ(omp_get_max_active_levels(), 2);
  HostCsr bad = a;
  for (auto& v : bad.values) v = -v;  // negative definite
  Arrays arr_bad = make_arrays(bad, DType::f64, DType::i32);
  s.reset_values(arr_bad.view.values);
  EXPECT_THROW(s.factorize(), gpula::NotPositiveDefinite);
  EXPECT_EQ(omp_get_max_active_levels(), 2);
  // From inside a parallel region too (each thread its own solver and setting).
  int failures = 0;
#pragma omp parallel num_threads(2) reduction(+ : failures)
  {
    DirectSolver t(arr.view, pd());
    t.plan();
    t.factorize();
    auto b = pack_values(random_rhs(a.n, false, 8), DType::f64);
    std::vector<unsigned char> x(b.size());
    t.solve(view_1d(b.data(), DType::f64, a.n), view_1d(x.data(), DType::f64, a.n));
    if (!(relative_residual(a, b, x, DType::f64, 1) < 1e-12)) ++failures;
  }
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(omp_get_max_active_levels(), 2);
  omp_set_max_active_levels(before);
}

}  // namespace
