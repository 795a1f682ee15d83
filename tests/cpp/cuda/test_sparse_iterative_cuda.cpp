// gpula::sparse::cg on a GPU (device-resident loop) against the CPU backend: 2-D Poisson, f64
// and f32, M = None, jacobi and ic0 (int32 indices); x poisoned where it is an output; iterations
// equal up to the check granularity; info semantics (maxiter, exact x0, b = 0); the ic0 pivot
// errors; NotSupported for the rest.
#include <cuda_runtime.h>
#include <gpula/error.h>
#include <gpula/sparse.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

using namespace gpula;
namespace sp = gpula::sparse;

#define CU(call) ASSERT_EQ((call), cudaSuccess)

bool have_gpu() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

// ||x_gpu - x_cpu|| / ||x_cpu|| within 1e-3 (float) or 1e-8 (double); `loose`: 1e-2 / 1e-6,
// for two solves with different (both valid) preconditioners, whose iterates agree only to
// about cond(A) rtol.
template <class T>
void expect_close_to_cpu(const std::vector<T>& xh, const std::vector<T>& xc, bool loose = false) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < xc.size(); ++i) {
    num += (double(xh[i]) - double(xc[i])) * (double(xh[i]) - double(xc[i]));
    den += double(xc[i]) * double(xc[i]);
  }
  const double bound = std::is_same_v<T, float> ? (loose ? 1e-2 : 1e-3) : (loose ? 1e-6 : 1e-8);
  EXPECT_LT(std::sqrt(num / den), bound);
}

template <class T>
DType dt();
template <>
DType dt<float>() {
  return DType::f32;
}
template <>
DType dt<double>() {
  return DType::f64;
}

struct Dev {
  void* p = nullptr;
  ~Dev() { cudaFree(p); }
};

template <class V>
TensorView up(Dev& d, const std::vector<V>& h, DType type, bool gpu) {
  TensorView t;
  t.dtype = type;
  t.shape = {static_cast<int64_t>(h.size())};
  t.strides = {1};
  if (gpu) {
    cudaMalloc(&d.p, std::max<size_t>(h.size() * sizeof(V), 1));
    cudaMemcpy(d.p, h.data(), h.size() * sizeof(V), cudaMemcpyHostToDevice);
    t.data = d.p;
    t.device = Device{DeviceKind::cuda, 0};
  } else {
    t.data = const_cast<V*>(h.data());
  }
  return t;
}

template <class T>
struct Poisson {
  std::vector<int64_t> ptr{0}, col;
  std::vector<T> val;
  int64_t n;
  explicit Poisson(int64_t g) : n(g * g) {
    for (int64_t i = 0; i < g; ++i) {
      for (int64_t j = 0; j < g; ++j) {
        const int64_t r = i * g + j;
        auto add = [&](int64_t c, T v) {
          col.push_back(c);
          val.push_back(v);
        };
        if (i > 0) add(r - g, T(-1));
        if (j > 0) add(r - 1, T(-1));
        add(r, T(4));
        if (j + 1 < g) add(r + 1, T(-1));
        if (i + 1 < g) add(r + g, T(-1));
        ptr.push_back(static_cast<int64_t>(col.size()));
      }
    }
  }
};

template <class T>
void compare(sp::Preconditioner prec, double rtol, int64_t maxiter, bool exact_x0, bool zero_b) {
  Poisson<T> m(30);
  std::vector<T> b(m.n);
  for (int64_t i = 0; i < m.n; ++i) b[i] = zero_b ? T(0) : T(std::sin(0.37 * i) + 0.1);
  sp::IterativeOptions o;
  o.rtol = rtol;
  o.maxiter = maxiter;
  o.preconditioner = prec;
  // CPU reference
  Dev d0, d1, d2, d3, d4;
  sp::CsrView ac{m.n, m.n, up(d0, m.ptr, DType::i64, false), up(d0, m.col, DType::i64, false),
                 up(d0, m.val, dt<T>(), false)};
  std::vector<T> xc(m.n, T(0));
  const auto rc = sp::cg(ac, up(d0, b, dt<T>(), false), up(d0, xc, dt<T>(), false), o);
  std::vector<T> x0 = exact_x0 ? xc : std::vector<T>(m.n, T(0));
  if (exact_x0) {  // a second CPU solve from the converged x: 0 iterations
    const auto again = sp::cg(ac, up(d0, b, dt<T>(), false), up(d0, x0, dt<T>(), false), o);
    ASSERT_EQ(again.iterations, 0);
  }
  sp::CsrView ag{m.n, m.n, up(d1, m.ptr, DType::i64, true), up(d2, m.col, DType::i64, true),
                 up(d3, m.val, dt<T>(), true)};
  Dev db, dx;
  const TensorView bg = up(db, b, dt<T>(), true);
  std::vector<T> xinit = x0;
  if (zero_b) std::fill(xinit.begin(), xinit.end(), T(std::nan("")));  // poisoned: overwritten
  const TensorView xg = up(dx, xinit, dt<T>(), true);
  const auto rg = sp::cg(ag, bg, xg, o);
  std::vector<T> xh(m.n);
  CU(cudaMemcpy(xh.data(), dx.p, m.n * sizeof(T), cudaMemcpyDeviceToHost));
  EXPECT_EQ(rg.info == 0, rc.info == 0);
  if (exact_x0) {
    EXPECT_EQ(rg.iterations, 0);
    return;
  }
  if (zero_b) {
    EXPECT_EQ(rg.info, 0);
    for (T v : xh) EXPECT_EQ(v, T(0));
    return;
  }
  EXPECT_NEAR(static_cast<double>(rg.iterations), static_cast<double>(rc.iterations), 2.0);
  if (rc.info > 0) {
    EXPECT_EQ(rg.info, maxiter);
  }
  expect_close_to_cpu(xh, xc);
  double bn = 0;
  for (T v : b) bn += double(v) * double(v);
  if (rg.info == 0) {
    EXPECT_LE(rg.residual_norm, rtol * std::sqrt(bn) * 1.0001);
  }
}

TEST(SparseIterativeCuda, CgMatchesCpu) {
  if (!have_gpu()) GTEST_SKIP() << "no usable CUDA device";
  compare<double>(sp::Preconditioner::none, 1e-10, -1, false, false);
  compare<double>(sp::Preconditioner::jacobi, 1e-10, -1, false, false);
  compare<float>(sp::Preconditioner::none, 1e-5, -1, false, false);
  compare<float>(sp::Preconditioner::jacobi, 1e-5, -1, false, false);
}

std::vector<int32_t> narrow(const std::vector<int64_t>& v) {
  return std::vector<int32_t>(v.begin(), v.end());
}

// CG + ic0 on the GPU (int32 indices) against the CPU backend's ic0 (the same IC(0) on the pattern
// of A, as L D L^T there and L L^T in cuSPARSE): solution, residual, fewer iterations than
// M=None, and with exact triangular solves (sweeps == 0) the CPU's iteration count.
template <class T>
void compare_ic0(double rtol, int64_t sweeps) {
  SCOPED_TRACE(testing::Message() << "triangular_sweeps " << sweeps);
  Poisson<T> m(30);
  const std::vector<int32_t> ptr = narrow(m.ptr), col = narrow(m.col);
  std::vector<T> b(m.n);
  for (int64_t i = 0; i < m.n; ++i) b[i] = T(std::sin(0.37 * i) + 0.1);
  sp::IterativeOptions o;
  o.rtol = rtol;
  o.preconditioner = sp::Preconditioner::ic0;
  o.triangular_sweeps = sweeps;
  Dev d0;
  sp::CsrView ac{m.n, m.n, up(d0, ptr, DType::i32, false), up(d0, col, DType::i32, false),
                 up(d0, m.val, dt<T>(), false)};
  std::vector<T> xc(m.n, T(0));
  const auto rc = sp::cg(ac, up(d0, b, dt<T>(), false), up(d0, xc, dt<T>(), false), o);
  ASSERT_EQ(rc.info, 0);
  Dev d1, d2, d3, db, dx, dx2;
  sp::CsrView ag{m.n, m.n, up(d1, ptr, DType::i32, true), up(d2, col, DType::i32, true),
                 up(d3, m.val, dt<T>(), true)};
  const TensorView bg = up(db, b, dt<T>(), true);
  const TensorView xg = up(dx, std::vector<T>(m.n, T(0)), dt<T>(), true);
  const auto rg = sp::cg(ag, bg, xg, o);
  ASSERT_EQ(rg.info, 0);
  std::vector<T> xh(m.n), vals(m.val.size());
  CU(cudaMemcpy(xh.data(), dx.p, m.n * sizeof(T), cudaMemcpyDeviceToHost));
  CU(cudaMemcpy(vals.data(), d3.p, vals.size() * sizeof(T), cudaMemcpyDeviceToHost));
  EXPECT_EQ(vals, m.val);  // A's values are not modified by the factorization
  if (sweeps == 0) {
    EXPECT_NEAR(static_cast<double>(rg.iterations), static_cast<double>(rc.iterations), 2.0);
  }
  expect_close_to_cpu(xh, xc, sweeps != 0);
  // the true residual ||b - A x|| in double on the host
  double rn = 0, bn = 0;
  for (int64_t i = 0; i < m.n; ++i) {
    double s = double(b[i]);
    for (int64_t k = m.ptr[i]; k < m.ptr[i + 1]; ++k) s -= double(m.val[k]) * double(xh[m.col[k]]);
    rn += s * s;
    bn += double(b[i]) * double(b[i]);
  }
  EXPECT_LE(rg.residual_norm, rtol * std::sqrt(bn) * 1.0001);
  const double slack =
      std::is_same_v<T, float> ? 100.0 : 1.01;  // f32: rounding of the true residual
  EXPECT_LE(std::sqrt(rn), slack * rtol * std::sqrt(bn));
  o.preconditioner = sp::Preconditioner::none;  // ic0 needs fewer iterations than no M
  const TensorView xg2 = up(dx2, std::vector<T>(m.n, T(0)), dt<T>(), true);
  const auto rn0 = sp::cg(ag, bg, xg2, o);
  EXPECT_LT(rg.iterations, rn0.iterations);
}

TEST(SparseIterativeCuda, CgIc0MatchesCpu) {
  if (!have_gpu()) GTEST_SKIP() << "no usable CUDA device";
  for (int64_t sweeps : {0, -1, 1, 3}) {  // exact, the default (2), fewer, more
    compare_ic0<double>(1e-10, sweeps);
    compare_ic0<float>(1e-5, sweeps);
  }
}

TEST(SparseIterativeCuda, CgIc0PivotErrors) {
  if (!have_gpu()) GTEST_SKIP() << "no usable CUDA device";
  sp::IterativeOptions o;
  o.preconditioner = sp::Preconditioner::ic0;
  std::vector<double> b{1.0, 1.0}, x{0.0, 0.0};
  {  // [[1, 2], [2, 1]]: symmetric, indefinite; IC(0) pivot 1 is 1 - 4 < 0
    const std::vector<int32_t> ptr{0, 2, 4}, col{0, 1, 0, 1};
    const std::vector<double> val{1.0, 2.0, 2.0, 1.0};
    Dev d1, d2, d3, db, dx;
    sp::CsrView ag{2, 2, up(d1, ptr, DType::i32, true), up(d2, col, DType::i32, true),
                   up(d3, val, DType::f64, true)};
    try {
      sp::cg(ag, up(db, b, DType::f64, true), up(dx, x, DType::f64, true), o);
      ADD_FAILURE() << "no error";
    } catch (const NotPositiveDefinite& e) {
      EXPECT_NE(std::string(e.what()).find("M='ic0': pivot 1"), std::string::npos) << e.what();
    }
  }
  {  // a raw view with unsorted column indices in row 0: rejected, not factored wrongly
    const std::vector<int32_t> ptr{0, 2, 4}, col{1, 0, 0, 1};
    const std::vector<double> val{1.0, 4.0, 1.0, 4.0};
    Dev d1, d2, d3, db, dx;
    sp::CsrView ag{2, 2, up(d1, ptr, DType::i32, true), up(d2, col, DType::i32, true),
                   up(d3, val, DType::f64, true)};
    EXPECT_THROW(sp::cg(ag, up(db, b, DType::f64, true), up(dx, x, DType::f64, true), o),
                 InvalidArgument);
  }
  {  // [[1, 1], [1, .]]: A[1, 1] not stored (structural zero pivot)
    const std::vector<int32_t> ptr{0, 2, 3}, col{0, 1, 0};
    const std::vector<double> val{1.0, 1.0, 1.0};
    Dev d1, d2, d3, db, dx;
    sp::CsrView ag{2, 2, up(d1, ptr, DType::i32, true), up(d2, col, DType::i32, true),
                   up(d3, val, DType::f64, true)};
    EXPECT_THROW(sp::cg(ag, up(db, b, DType::f64, true), up(dx, x, DType::f64, true), o),
                 LinAlgError);
  }
}

TEST(SparseIterativeCuda, InfoSemantics) {
  if (!have_gpu()) GTEST_SKIP() << "no usable CUDA device";
  compare<double>(sp::Preconditioner::none, 1e-14, 5, false, false);  // maxiter reached
  compare<double>(sp::Preconditioner::none, 1e-8, -1, true, false);   // exact x0
  compare<double>(sp::Preconditioner::none, 1e-8, -1, false, true);   // b = 0
}

TEST(SparseIterativeCuda, NotSupportedYet) {
  if (!have_gpu()) GTEST_SKIP() << "no usable CUDA device";
  Poisson<double> m(4);
  Dev d1, d2, d3, db, dx;
  std::vector<double> b(m.n, 1.0), x(m.n, 0.0);
  sp::CsrView ag{m.n, m.n, up(d1, m.ptr, DType::i64, true), up(d2, m.col, DType::i64, true),
                 up(d3, m.val, DType::f64, true)};
  const TensorView bg = up(db, b, DType::f64, true), xg = up(dx, x, DType::f64, true);
  sp::IterativeOptions o;
  EXPECT_THROW(sp::gmres(ag, bg, xg, o), NotSupported);
  o.preconditioner = sp::Preconditioner::ic0;  // int64 indices: csric02 is 32-bit only
  EXPECT_THROW(sp::cg(ag, bg, xg, o), NotSupported);
  o.preconditioner = sp::Preconditioner::ilu0;
  EXPECT_THROW(sp::cg(ag, bg, xg, o), NotSupported);
}

}  // namespace
