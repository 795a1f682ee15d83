// The CUDA dense solvers on device memory, checked against a complex128 reference (backward
// errors, reconstructions) and against the CPU backend on the same data. Sizes cover both GPU
// paths: batches of small matrices (gpula's batched_small kernels and matinvBatched at
// 1000 x 32x32; test_batched_small_cuda.cpp covers those kernels and the vendor batched
// routines at n = 33) and single large ones (X API at n = 512); IRS refinement and the RBT solve
// (padding, short last block, batches, singular and NaN fallbacks) vs the plain solve.
//
// Built only with CUDA; run by scripts/gpu_check.sh on the lent GPU.
#include <cuda_runtime.h>
#include <gpula/gpula.h>
#include <gpula/linalg.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "support/linalg.h"
#include "support/linalg_cuda.h"

namespace {

using namespace gpula;
using core_test::at;
using core_test::cdouble;
using core_test::eps_of;
using core_test::HostTensor;
using core_test::Layout;
using core_test::make_host;
using linalg_test::Kind;
using linalg_test::with;
namespace la = gpula::linalg;

using linalg_cuda_test::DeviceTensor;
using linalg_cuda_test::host_of;
using linalg_cuda_test::to_device;
using linalg_cuda_test::tol;
using linalg_cuda_test::unchanged;
using linalg_cuda_test::under_sanitizer;

using linalg_cuda_test::random_b;
using linalg_cuda_test::random_kind;

class CudaLinalg : public linalg_cuda_test::GpuDTypeTest {};

using linalg_cuda_test::Size;
// Batched small (the batched APIs), a small batch past the batched limit (looped X API), one
// large matrix (X API).
std::vector<Size> sizes() {
  if (under_sanitizer()) return {{{40}, 32}, {{2}, 130}, {{}, 96}};
  return {{{1000}, 32}, {{3}, 200}, {{}, 512}, {{}, 1}};
}

// Row-major contiguous input is staged by the triangle-only transposing copy, column-major input
// by the strided copy; both triangles each.
TEST_P(CudaLinalg, CholeskyBothPaths) {
  const DType t = GetParam();
  uint64_t seed = 1;
  for (const Size& s : sizes())
    for (bool lower : {true, false})
      for (Layout layout : {Layout::row, Layout::col}) {
        HostTensor a = random_kind(with(s.batch, {s.n, s.n}), t, Kind::spd, layout, seed++);
        linalg_test::poison_triangle(a, lower, NAN);
        DeviceTensor d = to_device(a);
        la::Factor f = la::cholesky(d.view, lower);
        EXPECT_EQ(f.value.device(), Device::cuda(0));
        EXPECT_EQ(f.info.device(), Device::cuda(0));
        HostTensor c = host_of(f.value);
        bool other_zero = false;
        EXPECT_LE(linalg_test::cholesky_error(a.view, c.view, lower, &other_zero), tol(t, s.n))
            << "n " << s.n << " batch " << core_test::product(s.batch) << " lower " << lower;
        EXPECT_TRUE(other_zero);
        EXPECT_TRUE(unchanged(d, a));
      }
}

TEST_P(CudaLinalg, SolveKindsBothPaths) {
  const DType t = GetParam();
  uint64_t seed = 100;
  for (const Size& s : sizes())
    for (la::Assume kind : {la::Assume::gen, la::Assume::pos, la::Assume::sym})
      for (int64_t k : {0, 1, 5}) {  // 0: a 1-D b
        const Kind mk = kind == la::Assume::pos   ? Kind::spd
                        : kind == la::Assume::sym ? Kind::symmetric
                                                  : Kind::general;
        HostTensor a = random_kind(with(s.batch, {s.n, s.n}), t, mk, Layout::col, seed++);
        if (kind != la::Assume::gen) linalg_test::poison_triangle(a, true, 1e6);
        HostTensor b = random_b(k == 0 ? Shape{s.n} : with(s.batch, {s.n, k}), t, seed++);
        DeviceTensor da = to_device(a), db = to_device(b);
        la::SolveOptions o;
        o.assume_a = kind;
        o.lower = true;
        la::Factor r = la::solve_ex(da.view, db.view, o);
        HostTensor x = host_of(r.value);
        const int tri = kind == la::Assume::gen ? -1 : 1;
        EXPECT_LE(linalg_test::backward_error(a.view, b.view, x.view, tri, kind == la::Assume::pos),
                  tol(t, s.n))
            << "assume " << int(kind) << " n " << s.n << " batch " << core_test::product(s.batch)
            << " k " << k;
        EXPECT_TRUE(unchanged(da, a) && unchanged(db, b));
      }
}

TEST_P(CudaLinalg, FoldedAndExpandedBroadcasts) {
  const DType t = GetParam();
  const int64_t n = 40;
  HostTensor a1 = random_kind({n, n}, t, Kind::general, Layout::row, 3);
  HostTensor b1 = random_b({4, n, 3}, t, 4);  // one matrix, a batch of b: folded
  HostTensor a2 = random_kind({2, 1, n, n}, t, Kind::spd, Layout::col, 5);
  HostTensor b2 = random_b({1, 3, n, 2}, t, 6);  // partial broadcast: expanded
  DeviceTensor da1 = to_device(a1), db1 = to_device(b1), da2 = to_device(a2), db2 = to_device(b2);
  for (la::Assume kind : {la::Assume::gen, la::Assume::pos}) {
    la::SolveOptions o;
    o.assume_a = kind;
    const TensorView& a = kind == la::Assume::gen ? da1.view : da2.view;
    const HostTensor& ah = kind == la::Assume::gen ? a1 : a2;
    for (const auto* bp : {&b1, &b2}) {
      const TensorView& b = bp == &b1 ? db1.view : db2.view;
      if (kind == la::Assume::gen && bp == &b2) continue;
      HostTensor x = host_of(la::solve(a, b, o));
      EXPECT_LE(
          linalg_test::backward_error(ah.view, bp->view, x.view, kind == la::Assume::pos ? 0 : -1,
                                      kind == la::Assume::pos),
          tol(t, n));
    }
  }
  Tensor c = la::cholesky(da2.view).value;
  HostTensor x = host_of(la::cho_solve(c.view(), db1.view));  // c (2, 1) vs b (4): expanded
  EXPECT_EQ(x.view.shape, (Shape{2, 4, n, 3}));
  EXPECT_LE(linalg_test::backward_error(a2.view, b1.view, x.view), tol(t, n));
}

TEST_P(CudaLinalg, ChoSolveAndLuSolveBothPaths) {
  const DType t = GetParam();
  uint64_t seed = 300;
  for (const Size& s : sizes())
    for (int64_t k : {0, 1, 3}) {
      HostTensor spd = random_kind(with(s.batch, {s.n, s.n}), t, Kind::spd, Layout::row, seed++);
      HostTensor gen =
          random_kind(with(s.batch, {s.n, s.n}), t, Kind::general, Layout::col, seed++);
      HostTensor b = random_b(k == 0 ? Shape{s.n} : with(s.batch, {s.n, k}), t, seed++);
      DeviceTensor ds = to_device(spd), dg = to_device(gen), db = to_device(b);
      for (bool lower : {true, false}) {
        Tensor c = la::cholesky(ds.view, lower).value;
        HostTensor x = host_of(la::cho_solve(c.view(), db.view, lower));
        EXPECT_LE(linalg_test::backward_error(spd.view, b.view, x.view), tol(t, s.n))
            << "cho_solve n " << s.n << " k " << k << " lower " << lower;
      }
      la::LU f = la::lu_factor(dg.view);
      HostTensor lu = host_of(f.lu), piv = host_of(f.pivots);
      EXPECT_LE(linalg_test::lu_reconstruction_error(gen.view, lu.view, piv.view), tol(t, s.n));
      // Partial pivoting: |L[i, j]| <= 1, or <= sqrt(2) for complex (LAPACK's izamax picks the
      // pivot by |re| + |im|; a library that picks it by |z| is as valid).
      const double lmax = linalg_test::max_abs_l(lu.view) - 1.0;
      EXPECT_LE(lmax, (gpula::is_complex(t) ? std::sqrt(2.0) - 1.0 : 0.0) + tol(t, s.n))
          << "n " << s.n;
      // Real types: scipy's (lu, piv) agree with the CPU backend's. Complex: cuBLAS's batched
      // getrf chooses other (equally valid) pivots than LAPACK for most matrices (seen on the
      // H200: ~70% of the entries differ, identically for complex64 and complex128), so only the
      // reconstruction above and the bound on L are required. (At n = 32 gpula's own kernel runs,
      // which picks LAPACK's pivots; test_batched_small_cuda.cpp checks that for complex too.)
      if (!gpula::is_complex(t)) {
        la::LU fc = la::lu_factor(gen.view);
        int64_t same_piv = 0;
        const int64_t np = piv.view.numel();
        for (int64_t i = 0; i < np; ++i)
          same_piv +=
              static_cast<int32_t*>(piv.view.data)[i] == static_cast<int32_t*>(fc.pivots.data())[i];
        EXPECT_GE(same_piv, np - np / 100) << "pivots differ from the CPU backend's";
      }
      HostTensor x = host_of(la::lu_solve(f.lu.view(), f.pivots.view(), db.view));
      EXPECT_LE(linalg_test::backward_error(gen.view, b.view, x.view), tol(t, s.n))
          << "lu_solve n " << s.n << " k " << k;
    }
}

TEST_P(CudaLinalg, InvDetSlogdetAllPaths) {
  const DType t = GetParam();
  uint64_t seed = 700;
  std::vector<Size> ss = sizes();
  ss.push_back({{500}, 16});  // matinvBatched
  ss.push_back({{200}, 64});  // getrf + getriBatched
  for (const Size& s : ss) {
    HostTensor a = random_kind(with(s.batch, {s.n, s.n}), t, Kind::general, Layout::col, seed++);
    DeviceTensor d = to_device(a);
    HostTensor inv = host_of(la::inv(d.view));
    EXPECT_LE(linalg_test::inverse_error(a.view, inv.view), tol(t, s.n)) << "inv n " << s.n;
    HostTensor det = host_of(la::det(d.view));
    la::Slogdet sl = la::slogdet(d.view);
    HostTensor sign = host_of(sl.sign), logabs = host_of(sl.logabsdet);
    Tensor det_cpu = la::det(a.view);
    la::Slogdet sl_cpu = la::slogdet(a.view);
    // Two LU factorizations that round differently (the GPU's and LAPACK's) give determinants
    // that differ relatively by up to about n eps cond(a): d log det = tr(a^-1 da), and LU's
    // backward error is da ~ n eps |a|. So: log|det| to rt absolutely, det to rt relatively,
    // the sign (phase for complex) to rt, with rt = 50 n eps + 4 n eps cond_inf(a) per matrix.
    // (A fixed 50 n eps failed on the H200 for the few ill-conditioned matrices of a batch of
    // 1000, e.g. float64 n = 32: relative 4e-13, float32: 2e-3, all with |det| ~1e-3 of the
    // typical size, i.e. small singular values.)
    const std::vector<double> cond = linalg_test::cond_inf(a.view);
    int64_t bad = 0, item = 0;
    core_test::for_each_index(s.batch, [&](const Shape& i) {
      const double ne = static_cast<double>(s.n) * eps_of(t);
      const double c = cond[static_cast<std::size_t>(item++)];
      const double rt = 50.0 * ne + 4.0 * ne * c;
      const cdouble g = det.get(i), w = at(det_cpu.view(), i);
      const double lg = logabs.get(i).real(), lw = at(sl_cpu.logabsdet.view(), i).real();
      const cdouble sg = sign.get(i), sw = at(sl_cpu.sign.view(), i);
      const bool ok = (std::isinf(std::abs(w)) && std::isinf(std::abs(g))) ||
                      std::abs(g - w) <= rt * std::abs(w);
      const bool ok2 = std::abs(lg - lw) <= rt &&
                       (gpula::is_complex(t) || rt >= 1.0 ? std::abs(sg - sw) <= rt : sg == sw);
      if ((!ok || !ok2) && bad++ < 3)
        ADD_FAILURE() << "det n " << s.n << " (cond_inf " << c << ", tolerance " << rt << "): gpu "
                      << g << " cpu " << w << " logabs " << lg << " vs " << lw << " sign " << sg
                      << " vs " << sw;
    });
    EXPECT_TRUE(unchanged(d, a));
  }
}

INSTANTIATE_TEST_SUITE_P(Types, CudaLinalg,
                         ::testing::Values(DType::f32, DType::f64, DType::c64, DType::c128),
                         [](const auto& info) { return core_test::str(info.param); });

// ---- refinement (cuSOLVER IRS) ---------------------------------------------------------------

class CudaLinalgIrs : public CudaLinalg {};

TEST_P(CudaLinalgIrs, RefinedSolveIsAsAccurateAsThePlainOne) {
  const DType t = GetParam();
  const int64_t n = under_sanitizer() ? 64 : 512;
  for (int64_t k : {1, 16}) {
    HostTensor a = random_kind({n, n}, t, Kind::general, Layout::row, 11);
    HostTensor b = random_b({n, k}, t, 12);
    DeviceTensor da = to_device(a), db = to_device(b);
    HostTensor plain = host_of(la::solve(da.view, db.view));
    const double e0 = linalg_test::backward_error(a.view, b.view, plain.view);
    for (la::Refine r : {la::Refine::automatic, la::Refine::f32, la::Refine::tf32, la::Refine::f16,
                         la::Refine::bf16}) {
      la::SolveOptions o;
      o.refine = r;
      std::vector<std::string> logs;
      o.logger = [&](LogLevel, const std::string& m) { logs.push_back(m); };
      HostTensor x = host_of(la::solve(da.view, db.view, o));
      const double e = linalg_test::backward_error(a.view, b.view, x.view);
      // IRS refines until ||r|| < sqrt(n) eps ||a|| ||x|| (cuSOLVER's default stopping test,
      // as LAPACK's dsgesv), with eps the working precision's; the plain solve may happen to be
      // better than that (float32 on the H200: plain 2.2e-7, bf16-refined 2.5e-6, the test's
      // sqrt(512) eps = 2.7e-6). So: as accurate as the plain solve, or as the stopping test
      // (twice it: our residual is exact, cuSOLVER's is rounded), and within the working
      // precision's n eps target the plain solves are held to.
      const double stop = std::sqrt(static_cast<double>(n)) * eps_of(t);
      EXPECT_LE(e, std::max(10.0 * e0, 2.0 * stop) + 2.0 * eps_of(t))
          << "refine " << int(r) << " k " << k;
      EXPECT_LE(e, tol(t, n)) << "refine " << int(r) << " k " << k;
      EXPECT_TRUE(unchanged(da, a) && unchanged(db, b));
    }
  }
}

TEST_P(CudaLinalgIrs, IllConditionedFallsBackToWorkingPrecision) {
  const DType t = GetParam();
  const int64_t n = 12;  // Hilbert matrix: cond ~ 1e16, no lower precision converges
  HostTensor a = make_host({n, n}, t);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) a.set({i, j}, 1.0 / (i + j + 1.0));
  HostTensor b = random_b({n}, t, 2);
  DeviceTensor da = to_device(a), db = to_device(b);
  la::SolveOptions o;
  o.refine = la::Refine::f16;
  HostTensor x = host_of(la::solve(da.view, db.view, o));
  EXPECT_LE(linalg_test::backward_error(a.view, b.view, x.view), 100.0 * n * eps_of(t));
}

INSTANTIATE_TEST_SUITE_P(Types, CudaLinalgIrs,
                         ::testing::Values(DType::f64, DType::c128, DType::f32),
                         [](const auto& info) { return core_test::str(info.param); });

// ---- RBT solve (random butterflies, LU without pivoting, refinement) --------------------------

class CudaLinalgRbt : public CudaLinalg {};

bool logged(const std::vector<std::string>& logs, const std::string& what) {
  for (const auto& m : logs)
    if (m.find(what) != std::string::npos) return true;
  return false;
}

// Orders 1, 3 and 6 pad to a multiple of 4; 257 and 600 leave a short last diagonal block.
TEST_P(CudaLinalgRbt, AsAccurateAsThePlainSolve) {
  const DType t = GetParam();
  for (int64_t n : {int64_t{1}, int64_t{3}, int64_t{6}, int64_t{257}, int64_t{600}}) {
    if (under_sanitizer() && n > 257) continue;
    for (int64_t k : {1, 5}) {
      HostTensor a = random_kind({n, n}, t, Kind::general, Layout::row, 31 + n);
      HostTensor b = random_b({n, k}, t, 32 + k);
      DeviceTensor da = to_device(a), db = to_device(b);
      const double e0 =
          linalg_test::backward_error(a.view, b.view, host_of(la::solve(da.view, db.view)).view);
      la::SolveOptions o;
      o.refine = la::Refine::rbt;
      std::vector<std::string> logs;
      o.logger = [&](LogLevel, const std::string& m) { logs.push_back(m); };
      HostTensor x = host_of(la::solve(da.view, db.view, o));
      const double e = linalg_test::backward_error(a.view, b.view, x.view);
      const double stop = std::sqrt(static_cast<double>(n)) * eps_of(t);
      EXPECT_LE(e, std::max(10.0 * e0, 2.0 * stop) + 2.0 * eps_of(t)) << "n " << n << " k " << k;
      EXPECT_LE(e, tol(t, n)) << "n " << n << " k " << k;
      EXPECT_TRUE(logged(logs, "RBT solve")) << "n " << n;
      // Double precision converges without the fallback; single precision may fall back to
      // pivoted LU (the inverted diagonal blocks of the unpivoted L cost accuracy there).
      if (t == DType::f64 || t == DType::c128) {
        EXPECT_FALSE(logged(logs, "falling back")) << "n " << n;
      }
      EXPECT_TRUE(unchanged(da, a) && unchanged(db, b));
    }
  }
}

TEST_P(CudaLinalgRbt, BatchAndBroadcastRightHandSide) {
  const DType t = GetParam();
  const int64_t n = under_sanitizer() ? 40 : 300;
  HostTensor a = random_kind({3, n, n}, t, Kind::general, Layout::row, 41);
  HostTensor b = random_b({n, 2}, t, 42);
  DeviceTensor da = to_device(a), db = to_device(b);
  la::SolveOptions o;
  o.refine = la::Refine::rbt;
  HostTensor x = host_of(la::solve(da.view, db.view, o));
  HostTensor plain = host_of(la::solve(da.view, db.view));
  for (int64_t i = 0; i < 3; ++i) {
    HostTensor ai = make_host({n, n}, t), xi = make_host({n, 2}, t), pi = make_host({n, 2}, t);
    for (int64_t r = 0; r < n; ++r) {
      for (int64_t c = 0; c < n; ++c) ai.set({r, c}, a.get({i, r, c}));
      for (int64_t c = 0; c < 2; ++c) {
        xi.set({r, c}, x.get({i, r, c}));
        pi.set({r, c}, plain.get({i, r, c}));
      }
    }
    const double e = linalg_test::backward_error(ai.view, b.view, xi.view);
    const double e0 = linalg_test::backward_error(ai.view, b.view, pi.view);
    EXPECT_LE(e, std::max(10.0 * e0, 2.0 * std::sqrt(double(n)) * eps_of(t)) + 2.0 * eps_of(t))
        << "item " << i;
  }
}

// A singular matrix defeats refinement: the solve falls back to pivoted LU, which names the
// zero pivot as the plain solve does, and the fallback is logged.
TEST_P(CudaLinalgRbt, SingularFallsBackAndRaises) {
  const DType t = GetParam();
  const int64_t n = 64;
  HostTensor a = make_host({2, n, n}, t);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t i = 0; i < n; ++i) a.set({b, i, i}, (b == 1 && i == 2) ? 0.0 : 2.0);
  HostTensor rhs = random_b({n}, t, 3);
  DeviceTensor da = to_device(a), dr = to_device(rhs);
  la::SolveOptions o;
  o.refine = la::Refine::rbt;
  std::vector<std::string> logs;
  o.logger = [&](LogLevel, const std::string& m) { logs.push_back(m); };
  try {
    la::solve(da.view, dr.view, o);
    ADD_FAILURE() << "no SingularMatrix";
  } catch (const SingularMatrix& e) {
    EXPECT_EQ(e.index(), 2);
    EXPECT_EQ(e.batch_index(), 1);
  }
  EXPECT_TRUE(logged(logs, "falling back to LU with partial pivoting (batch item 1)"));
  o.check_info = false;
  la::Factor f = la::solve_ex(da.view, dr.view, o);
  HostTensor info = host_of(f.info);
  EXPECT_EQ(info.get({0}), cdouble(0.0));
  EXPECT_EQ(info.get({1}), cdouble(3.0));
}

// NaN in a: no crash; refinement fails (NaN fails the stopping test), the fallback runs.
TEST_P(CudaLinalgRbt, NanFallsBack) {
  const DType t = GetParam();
  const int64_t n = 20;
  HostTensor a = random_kind({n, n}, t, Kind::general, Layout::row, 5);
  a.set({4, 7}, std::nan(""));
  HostTensor b = random_b({n}, t, 6);
  DeviceTensor da = to_device(a), db = to_device(b);
  la::SolveOptions o;
  o.refine = la::Refine::rbt;
  o.check_info = false;
  std::vector<std::string> logs;
  o.logger = [&](LogLevel, const std::string& m) { logs.push_back(m); };
  la::Factor f = la::solve_ex(da.view, db.view, o);
  CUDA_OK(cudaDeviceSynchronize());
  EXPECT_TRUE(logged(logs, "falling back"));
  EXPECT_TRUE(unchanged(da, a));
}

// refine=automatic takes the RBT solve from order 512 on a GPU, the plain solve below.
TEST_P(CudaLinalgRbt, AutomaticChoosesRbtFromOrder512) {
  if (under_sanitizer()) GTEST_SKIP() << "orders past 500 are slow under the sanitizer";
  const DType t = GetParam();
  for (int64_t n : {511, 512}) {
    HostTensor a = random_kind({n, n}, t, Kind::general, Layout::row, 7);
    HostTensor b = random_b({n, 3}, t, 8);
    DeviceTensor da = to_device(a), db = to_device(b);
    la::SolveOptions o;
    o.refine = la::Refine::automatic;
    std::vector<std::string> logs;
    o.logger = [&](LogLevel, const std::string& m) { logs.push_back(m); };
    HostTensor x = host_of(la::solve(da.view, db.view, o));
    EXPECT_EQ(logged(logs, "RBT solve"), n >= 512) << "n " << n;
    EXPECT_LE(linalg_test::backward_error(a.view, b.view, x.view), tol(t, n)) << "n " << n;
  }
}

INSTANTIATE_TEST_SUITE_P(Types, CudaLinalgRbt,
                         ::testing::Values(DType::f32, DType::f64, DType::c64, DType::c128),
                         [](const auto& info) { return core_test::str(info.param); });

// ---- info, errors, streams, edge cases -------------------------------------------------------

class CudaLinalgMisc : public linalg_cuda_test::GpuTest {};

TEST_F(CudaLinalgMisc, InfoAndErrorsOnBothPaths) {
  for (int64_t n : {4, 200}) {  // batched and looped
    HostTensor a = make_host({3, n, n}, DType::f64);
    for (int64_t b = 0; b < 3; ++b)
      for (int64_t i = 0; i < n; ++i) a.set({b, i, i}, (b == 1 && i == 2) ? 0.0 : 2.0);
    DeviceTensor d = to_device(a);
    HostTensor rhs = random_b({n}, DType::f64, 1);
    DeviceTensor dr = to_device(rhs);
    try {
      la::solve(d.view, dr.view);
      ADD_FAILURE() << "no SingularMatrix";
    } catch (const SingularMatrix& e) {
      EXPECT_EQ(e.index(), 2);
      EXPECT_EQ(e.batch_index(), 1);
      EXPECT_NE(std::string(e.what()).find("[linalg.solve] a is singular: U[2,2] is exactly zero "
                                           "(batch index 1)"),
                std::string::npos);
    }
    EXPECT_THROW(la::inv(d.view), SingularMatrix);
    try {
      la::cholesky(d.view);
      ADD_FAILURE() << "no NotPositiveDefinite";
    } catch (const NotPositiveDefinite& e) {
      EXPECT_EQ(e.order(), 3);
      EXPECT_EQ(e.batch_index(), 1);
    }
    la::LinalgOptions o;
    o.check_info = false;
    la::Factor f = la::cholesky(d.view, true, o);
    HostTensor info = host_of(f.info);
    EXPECT_EQ(info.get({0}), cdouble(0.0));
    EXPECT_EQ(info.get({1}), cdouble(3.0));
    la::Factor iv = la::inv_ex(d.view, o);
    EXPECT_EQ(host_of(iv.info).get({1}), cdouble(3.0));
    HostTensor det = host_of(la::det(d.view));
    EXPECT_EQ(det.get({1}), cdouble(0.0));
    EXPECT_EQ(det.get({0}), cdouble(std::pow(2.0, n)));
  }
}

TEST_F(CudaLinalgMisc, OwnStreamRemoteExecutionAndBlocking) {
  cudaStream_t s;
  CUDA_OK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  HostTensor a = random_kind({50, 20, 20}, DType::f32, Kind::spd, Layout::row, 4);
  HostTensor b = random_b({20, 2}, DType::f32, 5);
  DeviceTensor da = to_device(a), db = to_device(b);
  {  // x is allocated on s (stream-ordered) and must be freed before s is destroyed
    la::SolveOptions pos;
    pos.assume_a = la::Assume::pos;
    Tensor x = la::solve(da.view, db.view, pos, Stream{Device::cuda(0), s});
    CUDA_OK(cudaStreamSynchronize(s));
    EXPECT_LE(linalg_test::backward_error(a.view, b.view, host_of(x).view), tol(DType::f32, 20));
  }
  // Host data run on the GPU: results come back to the host.
  la::SolveOptions o;
  o.device = Device::cuda(0);
  o.blocking = true;
  Tensor xr = la::solve(a.view, b.view, o);
  EXPECT_EQ(xr.device(), Device::cpu());
  EXPECT_LE(linalg_test::backward_error(a.view, b.view, xr.view()), tol(DType::f32, 20));
  la::LinalgOptions lo;
  lo.device = Device::cpu();  // device data run on the CPU
  la::Factor f = la::cholesky(da.view, true, lo);
  EXPECT_EQ(f.value.device(), Device::cuda(0));
  CUDA_OK(cudaStreamDestroy(s));
}

TEST_F(CudaLinalgMisc, EmptyZeroOrderAndNan) {
  HostTensor e = make_host({0, 3, 3}, DType::f64);
  DeviceTensor de = to_device(e);
  EXPECT_EQ(la::cholesky(de.view).value.shape(), (Shape{0, 3, 3}));
  HostTensor z = make_host({2, 0, 0}, DType::c64);
  DeviceTensor dz = to_device(z);
  EXPECT_EQ(host_of(la::det(dz.view)).get({1}), cdouble(1.0));
  EXPECT_EQ(host_of(la::cholesky(dz.view).info).get({1}), cdouble(0.0));
  HostTensor a = random_kind({40, 8, 8}, DType::f32, Kind::spd, Layout::row, 1);
  a.set({7, 3, 3}, NAN);
  HostTensor b = random_b({8}, DType::f32, 2);
  DeviceTensor da = to_device(a), db = to_device(b);
  try {
    la::cholesky(da.view);
  } catch (const LinAlgError&) {
  }
  la::SolveOptions no_check;
  no_check.check_info = false;
  HostTensor x = host_of(la::solve(da.view, db.view, no_check));
  EXPECT_TRUE(std::isnan(std::abs(x.get({7, 0}))));
  EXPECT_FALSE(std::isnan(std::abs(x.get({6, 0}))));
  EXPECT_TRUE(std::isnan(std::abs(host_of(la::det(da.view)).get({7}))));
  CUDA_OK(cudaDeviceSynchronize());  // nothing left broken on the device
}

TEST_F(CudaLinalgMisc, BadPivotsNeverCrash) {
  HostTensor a = random_kind({5, 5}, DType::f64, Kind::general, Layout::row, 1);
  DeviceTensor da = to_device(a);
  la::LU f = la::lu_factor(da.view);
  HostTensor piv = make_host({5}, DType::i32);
  for (int64_t i = 0; i < 5; ++i) piv.set({i}, i == 2 ? 1000.0 : static_cast<double>(i));
  DeviceTensor dp = to_device(piv);
  HostTensor b = random_b({5}, DType::f64, 2);
  DeviceTensor db = to_device(b);
  EXPECT_THROW(la::lu_solve(f.lu.view(), dp.view, db.view), InvalidArgument);
  la::LinalgOptions o;
  o.check_info = false;
  EXPECT_NO_THROW(la::lu_solve(f.lu.view(), dp.view, db.view, o));
  CUDA_OK(cudaDeviceSynchronize());
}

}  // namespace
