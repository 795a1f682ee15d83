// gpula::sparse cg, bicgstab, gmres and minres on a GPU (device-resident loops) against the CPU
// backend: 2-D Poisson, convection-diffusion (nonsymmetric) and a symmetric indefinite matrix,
// f64 and f32, M = None and jacobi (cg also ic0, int32 indices), int32 and int64 indices; x
// poisoned where it is an output; iterations close to the CPU's; info semantics (maxiter, exact
// x0, b = 0, breakdowns); the true residual ||b - A x||; the ic0 pivot errors; NotSupported for
// the rest.
#include <cuda_runtime.h>
#include <gpula/error.h>
#include <gpula/sparse.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
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
void compare(sp::Preconditioner prec, double rtol, std::optional<int64_t> maxiter, bool exact_x0,
             bool zero_b) {
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
    EXPECT_EQ(rg.info, maxiter.value_or(10 * m.n));
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
  compare<double>(sp::Preconditioner::none, 1e-10, std::nullopt, false, false);
  compare<double>(sp::Preconditioner::jacobi, 1e-10, std::nullopt, false, false);
  compare<float>(sp::Preconditioner::none, 1e-5, std::nullopt, false, false);
  compare<float>(sp::Preconditioner::jacobi, 1e-5, std::nullopt, false, false);
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
  compare<double>(sp::Preconditioner::none, 1e-8, std::nullopt, true, false);   // exact x0
  compare<double>(sp::Preconditioner::none, 1e-8, std::nullopt, false, true);   // b = 0
}

// ---- bicgstab, gmres and minres on the GPU against the CPU backend ----

enum class Method { bicgstab, gmres, minres };

const char* method_name(Method m) {
  return m == Method::bicgstab ? "bicgstab" : m == Method::gmres ? "gmres" : "minres";
}

sp::IterativeResult run(Method m, const sp::CsrView& a, const TensorView& b, const TensorView& x,
                        const sp::IterativeOptions& o) {
  switch (m) {
    case Method::bicgstab:
      return sp::bicgstab(a, b, x, o);
    case Method::gmres:
      return sp::gmres(a, b, x, o);
    default:
      return sp::minres(a, b, x, o);
  }
}

template <class T>
struct Matrix {
  int64_t n = 0;
  std::vector<int64_t> ptr{0}, col;
  std::vector<T> val;
  void add(int64_t c, double v) {
    col.push_back(c);
    val.push_back(T(v));
  }
  void end_row() { ptr.push_back(static_cast<int64_t>(col.size())); }
};

// 5-point stencil on a g x g grid with diagonal 4, 5, 6, 4, ... (so that M = jacobi is not a
// multiple of the identity): SPD for c = 0, else a central-difference convection-diffusion
// operator (nonsymmetric: west / south -1 - c, east / north -1 + c).
template <class T>
Matrix<T> stencil(int64_t g, double c) {
  Matrix<T> m;
  m.n = g * g;
  for (int64_t i = 0; i < g; ++i) {
    for (int64_t j = 0; j < g; ++j) {
      const int64_t r = i * g + j;
      if (i > 0) m.add(r - g, -1.0 - c);
      if (j > 0) m.add(r - 1, -1.0 - c);
      m.add(r, 4.0 + static_cast<double>(r % 3));
      if (j + 1 < g) m.add(r + 1, -1.0 + c);
      if (i + 1 < g) m.add(r + g, -1.0 + c);
      m.end_row();
    }
  }
  return m;
}

// Symmetric indefinite with a positive diagonal (M = jacobi is SPD): 2 x 2 blocks
// [[a, 3a], [3a, a]] (eigenvalues 4a and -2a, a in [1, 2]) coupled by |e| <= 0.3, so the
// spectrum lies in [-4.3, -1.7] U [3.7, 8.3].
template <class T>
Matrix<T> indefinite(int64_t blocks) {
  Matrix<T> m;
  m.n = 2 * blocks;
  auto a = [](int64_t j) { return 1.0 + 0.25 * static_cast<double>(j % 5); };
  auto e = [](int64_t j) { return 0.3 * std::sin(static_cast<double>(j) + 1.0); };
  for (int64_t j = 0; j < blocks; ++j) {
    if (j > 0) m.add(2 * j - 1, e(j - 1));
    m.add(2 * j, a(j));
    m.add(2 * j + 1, 3.0 * a(j));
    m.end_row();
    m.add(2 * j, 3.0 * a(j));
    m.add(2 * j + 1, a(j));
    if (j + 1 < blocks) m.add(2 * j + 2, e(j));
    m.end_row();
  }
  return m;
}

template <class T>
sp::CsrView cpu_view(Dev& d, const Matrix<T>& m) {
  return {m.n, m.n, up(d, m.ptr, DType::i64, false), up(d, m.col, DType::i64, false),
          up(d, m.val, dt<T>(), false)};
}

// A on the GPU with int32 or int64 indices.
template <class T>
struct GpuCsr {
  Dev p, c, v;
  sp::CsrView view;
  GpuCsr(const Matrix<T>& m, bool i32) {
    view.rows = view.cols = m.n;
    view.indptr = i32 ? up(p, narrow(m.ptr), DType::i32, true) : up(p, m.ptr, DType::i64, true);
    view.indices = i32 ? up(c, narrow(m.col), DType::i32, true) : up(c, m.col, DType::i64, true);
    view.values = up(v, m.val, dt<T>(), true);
  }
};

template <class T>
std::vector<T> down(const Dev& d, int64_t n) {
  std::vector<T> h(n);
  EXPECT_EQ(cudaMemcpy(h.data(), d.p, n * sizeof(T), cudaMemcpyDeviceToHost), cudaSuccess);
  return h;
}

// ||b - A x|| and ||b|| in double on the host.
template <class T>
std::pair<double, double> residual(const Matrix<T>& m, const std::vector<T>& b,
                                   const std::vector<T>& x) {
  double rn = 0, bn = 0;
  for (int64_t i = 0; i < m.n; ++i) {
    double s = double(b[i]);
    for (int64_t k = m.ptr[i]; k < m.ptr[i + 1]; ++k) s -= double(m.val[k]) * double(x[m.col[k]]);
    rn += s * s;
    bn += double(b[i]) * double(b[i]);
  }
  return {std::sqrt(rn), std::sqrt(bn)};
}

template <class T>
double rel_diff(const std::vector<T>& a, const std::vector<T>& b) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    num += (double(a[i]) - double(b[i])) * (double(a[i]) - double(b[i]));
    den += double(b[i]) * double(b[i]);
  }
  return std::sqrt(num / den);
}

struct Case {
  double rtol = 1e-10;
  std::optional<int64_t> maxiter;  // unset: the default (10 n)
  int64_t restart = 20;
  bool x0 = false;        // a nonzero initial guess (else zeros)
  bool callback = false;  // count callbacks (a host sync per iteration on the GPU)
};

// One solve on the CPU backend and one on the GPU from the same x0: info, iterations, callback
// count, the solution, the reported and the true residual.
template <class T>
void compare_method(Method meth, const Matrix<T>& m, sp::Preconditioner prec, bool i32,
                    const Case& c) {
  SCOPED_TRACE(std::string(method_name(meth)) + (std::is_same_v<T, float> ? " f32" : " f64") +
               (prec == sp::Preconditioner::jacobi ? " jacobi" : " none") +
               (i32 ? " int32" : " int64") + " n=" + std::to_string(m.n));
  std::vector<T> b(m.n), x0(m.n, T(0));
  for (int64_t i = 0; i < m.n; ++i) b[i] = T(std::sin(0.37 * i) + 0.1);
  if (c.x0) {
    for (int64_t i = 0; i < m.n; ++i) x0[i] = T(0.5 * std::cos(0.11 * i));
  }
  sp::IterativeOptions o;
  o.rtol = c.rtol;
  o.maxiter = c.maxiter;
  o.restart = c.restart;
  o.preconditioner = prec;
  int64_t cpu_calls = 0, gpu_calls = 0;
  if (c.callback) o.callback = [&](const TensorView&) { ++cpu_calls; };
  Dev d0;
  std::vector<T> xc = x0;
  const auto rc =
      run(meth, cpu_view(d0, m), up(d0, b, dt<T>(), false), up(d0, xc, dt<T>(), false), o);
  ASSERT_TRUE(rc.info == 0 || rc.info == c.maxiter) << "CPU info " << rc.info;
  if (c.callback) {
    o.callback = [&](const TensorView& xk) {
      EXPECT_TRUE(xk.device.is_cuda());
      ++gpu_calls;
    };
  }
  GpuCsr<T> a(m, i32);
  Dev db, dx;
  const TensorView bg = up(db, b, dt<T>(), true), xg = up(dx, x0, dt<T>(), true);
  const auto rg = run(meth, a.view, bg, xg, o);
  const std::vector<T> xh = down<T>(dx, m.n);
  EXPECT_EQ(rg.info, rc.info);
  const bool f32 = std::is_same_v<T, float>;
  if (rc.info > 0) {  // maxiter: the same few steps, so the same iterate
    EXPECT_EQ(rg.iterations, rc.iterations);
    EXPECT_LT(rel_diff(xh, xc), f32 ? 1e-4 : 1e-9);
    EXPECT_NEAR(rg.residual_norm, rc.residual_norm, (f32 ? 1e-4 : 1e-9) * rc.residual_norm);
    return;
  }
  const double slack_its =
      f32 ? std::max(3.0, 0.25 * rc.iterations) : std::max(2.0, 0.1 * rc.iterations);
  EXPECT_NEAR(static_cast<double>(rg.iterations), static_cast<double>(rc.iterations), slack_its);
  if (c.callback) {
    if (meth == Method::gmres) {  // once per restart cycle
      EXPECT_NEAR(static_cast<double>(gpu_calls), static_cast<double>(cpu_calls), 1.0);
    } else {  // once per iteration
      EXPECT_EQ(gpu_calls, rg.iterations);
    }
  }
  EXPECT_LT(rel_diff(xh, xc), f32 ? 2e-2 : 1e-6);
  const auto [rn, bn] = residual(m, b, xh);
  EXPECT_LE(rg.residual_norm, c.rtol * bn * 1.0001);  // the recurrence residual passed the test
  EXPECT_LE(rn, (f32 ? 100.0 : 10.0) * c.rtol * bn);  // and the true one is close to it
}

template <class T>
void compare_all(Method meth, const Matrix<T>& m, Case c) {
  if (std::is_same_v<T, float>) c.rtol = std::max(c.rtol, 1e-5);
  for (bool i32 : {false, true}) {
    for (auto prec : {sp::Preconditioner::none, sp::Preconditioner::jacobi}) {
      compare_method<T>(meth, m, prec, i32, c);
    }
  }
}

TEST(SparseIterativeCuda, BicgstabMatchesCpu) {
  if (!have_gpu()) GTEST_SKIP() << "no usable CUDA device";
  compare_all<double>(Method::bicgstab, stencil<double>(24, 0.0), {});
  compare_all<float>(Method::bicgstab, stencil<float>(24, 0.0), {});
  compare_all<double>(Method::bicgstab, stencil<double>(24, 0.4), {});
  compare_all<float>(Method::bicgstab, stencil<float>(24, 0.4), {});
}

TEST(SparseIterativeCuda, GmresMatchesCpu) {
  if (!have_gpu()) GTEST_SKIP() << "no usable CUDA device";
  compare_all<double>(Method::gmres, stencil<double>(20, 0.0), {.rtol = 1e-9, .restart = 10});
  compare_all<float>(Method::gmres, stencil<float>(20, 0.0), {.restart = 10});
  compare_all<double>(Method::gmres, stencil<double>(24, 0.4), {.rtol = 1e-9});
  compare_all<float>(Method::gmres, stencil<float>(24, 0.4), {});
  // restart > n (clamped to n = 16): one cycle, ending on a zero ||w|| or on the test
  compare_all<double>(Method::gmres, stencil<double>(4, 0.3), {.restart = 50});
}

TEST(SparseIterativeCuda, MinresMatchesCpu) {
  if (!have_gpu()) GTEST_SKIP() << "no usable CUDA device";
  compare_all<double>(Method::minres, stencil<double>(24, 0.0), {});
  compare_all<float>(Method::minres, stencil<float>(24, 0.0), {});
  compare_all<double>(Method::minres, indefinite<double>(300), {});
  compare_all<float>(Method::minres, indefinite<float>(300), {});
}

TEST(SparseIterativeCuda, KrylovX0CallbackAndMaxiter) {
  if (!have_gpu()) GTEST_SKIP() << "no usable CUDA device";
  const auto cd = stencil<double>(24, 0.4);
  const auto pd = stencil<double>(24, 0.0);
  const auto ind = indefinite<double>(300);
  for (bool i32 : {false, true}) {
    for (auto prec : {sp::Preconditioner::none, sp::Preconditioner::jacobi}) {
      // x0 given, with a callback (status read every iteration)
      compare_method<double>(Method::bicgstab, cd, prec, i32, {.x0 = true, .callback = true});
      compare_method<double>(Method::gmres, cd, prec, i32,
                             {.restart = 10, .x0 = true, .callback = true});
      compare_method<double>(Method::minres, ind, prec, i32, {.x0 = true, .callback = true});
      compare_method<float>(Method::minres, stencil<float>(24, 0.0), prec, i32,
                            {.rtol = 1e-5, .x0 = true, .callback = true});
      // maxiter reached (gmres: restart cycles): info = maxiter, the CPU's iterate
      compare_method<double>(Method::bicgstab, cd, prec, i32, {.rtol = 1e-14, .maxiter = 3});
      compare_method<double>(Method::gmres, cd, prec, i32,
                             {.rtol = 1e-14, .maxiter = 2, .restart = 5});
      compare_method<double>(Method::minres, pd, prec, i32, {.rtol = 1e-14, .maxiter = 3});
      compare_method<double>(Method::bicgstab, cd, prec, i32, {.rtol = 1e-14, .maxiter = 11});
    }
  }
}

// x0 that already passes the test: 0 iterations, x untouched; b = 0: x = 0 (poisoned first).
TEST(SparseIterativeCuda, KrylovExactX0AndZeroB) {
  if (!have_gpu()) GTEST_SKIP() << "no usable CUDA device";
  const auto m = stencil<double>(20, 0.3);
  std::vector<double> b(m.n);
  for (int64_t i = 0; i < m.n; ++i) b[i] = std::sin(0.37 * i) + 0.1;
  for (Method meth : {Method::bicgstab, Method::gmres, Method::minres}) {
    SCOPED_TRACE(method_name(meth));
    const auto& a = meth == Method::minres ? stencil<double>(20, 0.0) : m;
    sp::IterativeOptions o;
    o.rtol = 1e-13;
    Dev d0;
    std::vector<double> xs(m.n, 0.0);
    ASSERT_EQ(
        run(meth, cpu_view(d0, a), up(d0, b, DType::f64, false), up(d0, xs, DType::f64, false), o)
            .info,
        0);
    o.rtol = 1e-8;
    for (bool i32 : {false, true}) {
      GpuCsr<double> g(a, i32);
      Dev db, dx, dz, dxz;
      const auto r =
          run(meth, g.view, up(db, b, DType::f64, true), up(dx, xs, DType::f64, true), o);
      EXPECT_EQ(r.info, 0);
      EXPECT_EQ(r.iterations, 0);
      EXPECT_EQ(down<double>(dx, m.n), xs);
      std::vector<double> zero(m.n, 0.0), poison(m.n, std::nan(""));
      const auto rz =
          run(meth, g.view, up(dz, zero, DType::f64, true), up(dxz, poison, DType::f64, true), o);
      EXPECT_EQ(rz.info, 0);
      EXPECT_EQ(rz.iterations, 0);
      for (double v : down<double>(dxz, m.n)) EXPECT_EQ(v, 0.0);
    }
  }
}

// Breakdowns give the CPU's negative info and iteration count: bicgstab on [[0, 1], [1, 0]] with
// b = e0 (r^.A r = 0: -10), minres with an indefinite M (jacobi of diag(1, -1): -1), gmres on
// A = 0 (no rotation: -1).
TEST(SparseIterativeCuda, KrylovBreakdowns) {
  if (!have_gpu()) GTEST_SKIP() << "no usable CUDA device";
  struct Tiny {
    Method meth;
    sp::Preconditioner prec;
    std::vector<int64_t> col;
    std::vector<double> val, b;
  };
  const std::vector<Tiny> cases = {
      {Method::bicgstab, sp::Preconditioner::none, {1, 0}, {1.0, 1.0}, {1.0, 0.0}},
      {Method::minres, sp::Preconditioner::jacobi, {0, 1}, {1.0, -1.0}, {1.0, 1.0}},
      {Method::gmres, sp::Preconditioner::none, {0, 1}, {0.0, 0.0}, {1.0, 1.0}},
  };
  for (const Tiny& t : cases) {
    SCOPED_TRACE(method_name(t.meth));
    Matrix<double> m;
    m.n = 2;
    m.ptr = {0, 1, 2};
    m.col = t.col;
    m.val = t.val;
    sp::IterativeOptions o;
    o.preconditioner = t.prec;
    Dev d0;
    std::vector<double> xc(2, 0.0);
    const auto rc = run(t.meth, cpu_view(d0, m), up(d0, t.b, DType::f64, false),
                        up(d0, xc, DType::f64, false), o);
    ASSERT_LT(rc.info, 0);
    for (bool i32 : {false, true}) {
      GpuCsr<double> g(m, i32);
      Dev db, dx;
      const auto rg = run(t.meth, g.view, up(db, t.b, DType::f64, true),
                          up(dx, std::vector<double>(2, 0.0), DType::f64, true), o);
      EXPECT_EQ(rg.info, rc.info);
      EXPECT_EQ(rg.iterations, rc.iterations);
      EXPECT_NEAR(rg.residual_norm, rc.residual_norm, 1e-12);
      EXPECT_EQ(down<double>(dx, 2), xc);
    }
  }
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
  o.preconditioner = sp::Preconditioner::ic0;  // int64 indices: csric02 is 32-bit only
  EXPECT_THROW(sp::cg(ag, bg, xg, o), NotSupported);
  o.preconditioner = sp::Preconditioner::ilu0;
  EXPECT_THROW(sp::cg(ag, bg, xg, o), NotSupported);
  for (Method meth : {Method::bicgstab, Method::gmres, Method::minres}) {
    SCOPED_TRACE(method_name(meth));
    for (auto prec : {sp::Preconditioner::ic0, sp::Preconditioner::ilu0}) {
      o.preconditioner = prec;
      try {
        run(meth, ag, bg, xg, o);
        ADD_FAILURE() << "no error";
      } catch (const NotSupported& e) {
        EXPECT_NE(std::string(e.what()).find(method_name(meth)), std::string::npos) << e.what();
      }
    }
    o.preconditioner = sp::Preconditioner::custom;
    o.preconditioner_op = [](const TensorView&, const TensorView&) {};
    EXPECT_THROW(run(meth, ag, bg, xg, o), NotSupported);
    o.preconditioner_op = nullptr;
    o.preconditioner = sp::Preconditioner::none;
  }
  // complex A on a GPU
  using C = std::complex<double>;
  std::vector<C> cv(m.val.begin(), m.val.end()), cb(m.n, C(1.0, 0.5)), cx(m.n);
  Dev e3, eb, ex;
  sp::CsrView ac{m.n, m.n, ag.indptr, ag.indices, up(e3, cv, DType::c128, true)};
  EXPECT_THROW(sp::gmres(ac, up(eb, cb, DType::c128, true), up(ex, cx, DType::c128, true), o),
               NotSupported);
  // a matrix-free operator on a GPU
  sp::LinearOperator op{m.n, m.n, DType::f64, [](const TensorView&, const TensorView&) {}};
  EXPECT_THROW(sp::bicgstab(op, bg, xg, o), NotSupported);
}

}  // namespace
