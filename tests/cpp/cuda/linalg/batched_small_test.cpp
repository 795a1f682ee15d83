// gpula's own batched kernels for small matrices (backend/cuda/kernels/batched_small.h: potrf,
// potrs_right, getrf, getrs at order <= 32, batch > 1) through the public API: cholesky,
// cho_solve, solve (gen: getrf + transposed getrs; pos: potrf + potrs_right; sym: getrf +
// getrs), lu_factor and lu_solve (getrf + getrs), against a complex128 reference and the CPU
// backend (LAPACK) on the same data. Orders 1, 2, 7, 16, 31, 32 take the kernels; 33 takes the
// cuSOLVER / cuBLAS batched routines and must give the same answers. Batches of 333 (odd)
// leave the last block of every layout part full. Then info and errors: a leading minor that is not
// positive definite (negative, NaN, Inf), an exactly singular U, NaN input.
//
// Built only with CUDA; run by scripts/gpu_check.sh on the lent GPU.
#include <cuda_runtime.h>
#include <gpula/gpula.h>
#include <gpula/linalg.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "support/linalg.h"
#include "support/linalg_cuda.h"

namespace {

using namespace gpula;
using core_test::cdouble;
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

int64_t batch_count() { return under_sanitizer() ? 41 : 333; }
std::vector<int64_t> orders() { return {1, 2, 7, 16, 31, 32, 33}; }
bool kernel_path(int64_t n) { return n <= 32; }

// Collects the debug notes of a call: each names the routine that ran.
struct Notes {
  std::vector<std::string> lines;
  LogSink sink() {
    return [this](LogLevel, const std::string& m) { lines.push_back(m); };
  }
  bool has(const std::string& what) const {
    for (const std::string& l : lines)
      if (l.find(what) != std::string::npos) return true;
    return false;
  }
};

// max |g - w| / max |w| over two tensors of the same shape (w the reference).
double rel_diff(const TensorView& g, const TensorView& w) {
  double diff = 0.0, scale = 0.0;
  core_test::for_each_index(w.shape, [&](const Shape& i) {
    const cdouble a = core_test::at(g, i), b = core_test::at(w, i);
    diff = std::isnan(std::abs(a - b)) ? INFINITY : std::max(diff, std::abs(a - b));
    scale = std::max(scale, std::abs(b));
  });
  return diff / std::max(scale, 1e-300);
}

void expect_all_zero(const HostTensor& info, const std::string& what) {
  int64_t bad = 0;
  core_test::for_each_index(info.view.shape, [&](const Shape& i) { bad += info.get(i) != 0.0; });
  EXPECT_EQ(bad, 0) << what;
}

class BatchedSmall : public linalg_cuda_test::GpuDTypeTest {};

TEST_P(BatchedSmall, CholeskyMatchesReferenceAndCpu) {
  const DType t = GetParam();
  const int64_t count = batch_count();
  uint64_t seed = 1;
  for (int64_t n : orders())
    for (bool lower : {true, false}) {
      const std::string where = "n " + std::to_string(n) + " lower " + std::to_string(lower);
      HostTensor a =
          random_kind({count, n, n}, t, Kind::spd, lower ? Layout::row : Layout::col, seed++);
      linalg_test::poison_triangle(a, lower, NAN);  // the triangle that must not be read
      DeviceTensor d = to_device(a);
      Notes notes;
      la::LinalgOptions o;
      o.logger = notes.sink();
      la::Factor f = la::cholesky(d.view, lower, o);
      HostTensor c = host_of(f.value);
      bool other_zero = false;
      EXPECT_LE(linalg_test::cholesky_error(a.view, c.view, lower, &other_zero), tol(t, n))
          << where;
      EXPECT_TRUE(other_zero) << where;
      expect_all_zero(host_of(f.info), where);
      la::Factor cpu = la::cholesky(a.view, lower);
      EXPECT_LE(rel_diff(c.view, cpu.value.view()), tol(t, n)) << where << ": vs the CPU";
      EXPECT_TRUE(notes.has(kernel_path(n) ? "gpula batched_small potrf" : "potrfBatched"))
          << where;
      EXPECT_TRUE(unchanged(d, a)) << where;
    }
}

TEST_P(BatchedSmall, SolveKinds) {
  const DType t = GetParam();
  const int64_t count = batch_count();
  uint64_t seed = 100;
  for (int64_t n : orders())
    for (la::Assume kind : {la::Assume::gen, la::Assume::pos, la::Assume::sym})
      for (int64_t k : {0, 1, 5})  // 0: a 1-D b
        for (bool lower : {true, false}) {
          if (kind == la::Assume::gen && !lower) continue;  // no triangle to choose
          const std::string where = "assume " + std::to_string(int(kind)) + " n " +
                                    std::to_string(n) + " k " + std::to_string(k) + " lower " +
                                    std::to_string(lower);
          const Kind mk = kind == la::Assume::pos   ? Kind::spd
                          : kind == la::Assume::sym ? Kind::symmetric
                                                    : Kind::general;
          HostTensor a =
              random_kind({count, n, n}, t, mk, k == 5 ? Layout::col : Layout::row, seed++);
          if (kind != la::Assume::gen) linalg_test::poison_triangle(a, lower, 1e6);
          HostTensor b = random_b(k == 0 ? Shape{n} : Shape{count, n, k}, t, seed++);
          DeviceTensor da = to_device(a), db = to_device(b);
          Notes notes;
          la::SolveOptions o;
          o.assume_a = kind;
          o.lower = lower;
          o.logger = notes.sink();
          la::Factor r = la::solve_ex(da.view, db.view, o);
          HostTensor x = host_of(r.value);
          const int tri = kind == la::Assume::gen ? -1 : (lower ? 1 : 0);
          EXPECT_LE(
              linalg_test::backward_error(a.view, b.view, x.view, tri, kind == la::Assume::pos),
              tol(t, n))
              << where;
          expect_all_zero(host_of(r.info), where);
          if (kernel_path(n)) {
            if (kind == la::Assume::pos) {
              EXPECT_TRUE(notes.has("gpula batched_small potrf")) << where;
              EXPECT_TRUE(notes.has("gpula batched_small potrs")) << where;
            } else {
              EXPECT_TRUE(notes.has("gpula batched_small getrf")) << where;
              // solve factors a^T (the row-major a read column-major) and solves transposed.
              EXPECT_TRUE(notes.has(kind == la::Assume::gen
                                        ? "gpula batched_small getrs (transposed)"
                                        : "gpula batched_small getrs: "))
                  << where;
            }
          }
          EXPECT_TRUE(unchanged(da, a) && unchanged(db, b)) << where;
        }
}

TEST_P(BatchedSmall, LuFactorAndLuSolveMatchLapack) {
  const DType t = GetParam();
  const int64_t count = batch_count();
  uint64_t seed = 300;
  for (int64_t n : orders()) {
    const std::string where = "n " + std::to_string(n);
    HostTensor a = random_kind({count, n, n}, t, Kind::general, Layout::col, seed++);
    DeviceTensor da = to_device(a);
    Notes notes;
    la::LinalgOptions o;
    o.logger = notes.sink();
    la::LU f = la::lu_factor(da.view, o);
    HostTensor lu = host_of(f.lu), piv = host_of(f.pivots);
    expect_all_zero(host_of(f.info), where);
    EXPECT_LE(linalg_test::lu_reconstruction_error(a.view, lu.view, piv.view), tol(t, n)) << where;
    const double lmax = linalg_test::max_abs_l(lu.view) - 1.0;
    EXPECT_LE(lmax, (is_complex(t) ? std::sqrt(2.0) - 1.0 : 0.0) + tol(t, n)) << where;
    EXPECT_TRUE(notes.has(kernel_path(n) ? "gpula batched_small getrf" : "getrfBatched")) << where;
    // The kernels pick pivots as LAPACK does (|re| + |im| for complex, the first on ties), so
    // the pivots agree with the CPU backend's but where rounding decides a near tie. (cuBLAS's
    // batched getrf at n = 33 picks others for complex: only real types are compared there.)
    if (kernel_path(n) || !is_complex(t)) {
      la::LU cpu = la::lu_factor(a.view);
      int64_t same = 0;
      const int64_t np = piv.view.numel();
      for (int64_t i = 0; i < np; ++i)
        same +=
            static_cast<int32_t*>(piv.view.data)[i] == static_cast<int32_t*>(cpu.pivots.data())[i];
      EXPECT_GE(same, np - np / 100) << where << ": pivots differ from the CPU backend's";
    }
    for (int64_t k : {0, 1, 5}) {
      HostTensor b = random_b(k == 0 ? Shape{n} : Shape{count, n, k}, t, seed++);
      DeviceTensor db = to_device(b);
      Notes sn;
      la::LinalgOptions so;
      so.logger = sn.sink();
      HostTensor x = host_of(la::lu_solve(f.lu.view(), f.pivots.view(), db.view, so));
      EXPECT_LE(linalg_test::backward_error(a.view, b.view, x.view), tol(t, n))
          << where << " k " << k;
      if (kernel_path(n)) {
        EXPECT_TRUE(sn.has("gpula batched_small getrs: ")) << where;
      }
    }
    EXPECT_TRUE(unchanged(da, a)) << where;
  }
}

TEST_P(BatchedSmall, ChoSolveReadsOnlyItsTriangle) {
  const DType t = GetParam();
  const int64_t count = batch_count();
  uint64_t seed = 500;
  for (int64_t n : orders())
    for (bool lower : {true, false})
      for (int64_t k : {0, 1, 3}) {
        const std::string where = "n " + std::to_string(n) + " lower " + std::to_string(lower) +
                                  " k " + std::to_string(k);
        HostTensor spd = random_kind({count, n, n}, t, Kind::spd, Layout::row, seed++);
        DeviceTensor ds = to_device(spd);
        HostTensor c = host_of(la::cholesky(ds.view, lower).value);
        linalg_test::poison_triangle(c, lower, NAN);
        DeviceTensor dc = to_device(c);
        HostTensor b = random_b(k == 0 ? Shape{n} : Shape{count, n, k}, t, seed++);
        DeviceTensor db = to_device(b);
        Notes notes;
        la::LinalgOptions o;
        o.logger = notes.sink();
        HostTensor x = host_of(la::cho_solve(dc.view, db.view, lower, o));
        EXPECT_LE(linalg_test::backward_error(spd.view, b.view, x.view), tol(t, n)) << where;
        if (kernel_path(n)) {
          EXPECT_TRUE(notes.has("gpula batched_small potrs")) << where;
        }
      }
}

TEST_P(BatchedSmall, NotPositiveDefiniteInfoAndError) {
  const DType t = GetParam();
  const int64_t count = batch_count();
  const int64_t i1 = count / 2, i2 = count - 2, i3 = count - 1;
  for (int64_t n : {7, 32, 33}) {
    const std::string where = "n " + std::to_string(n);
    HostTensor a = random_kind({count, n, n}, t, Kind::spd, Layout::row, 40 + n);
    a.set({i1, 2, 2}, -10.0);  // leading minor of order 3
    a.set({i2, 5, 5}, NAN);    // order 6
    a.set({i3, 4, 4}, INFINITY);
    DeviceTensor d = to_device(a);
    try {
      la::cholesky(d.view);
      ADD_FAILURE() << "no NotPositiveDefinite, " << where;
    } catch (const NotPositiveDefinite& e) {
      EXPECT_EQ(e.order(), 3) << where;
      EXPECT_EQ(e.batch_index(), i1) << where;
      const std::string want =
          "[linalg.cholesky] a is not positive definite: leading minor of order 3 "
          "(batch index " +
          std::to_string(i1) + ")";
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
    la::LinalgOptions o;
    o.check_info = false;
    HostTensor info = host_of(la::cholesky(d.view, true, o).info);
    la::SolveOptions so;
    so.assume_a = la::Assume::pos;
    so.lower = true;
    so.check_info = false;
    HostTensor b = random_b({n}, t, 2);
    DeviceTensor db = to_device(b);
    HostTensor sinfo = host_of(la::solve_ex(d.view, db.view, so).info);
    for (const HostTensor* h : {&info, &sinfo}) {
      EXPECT_EQ(h->get({0}), cdouble(0.0)) << where;
      EXPECT_EQ(h->get({i1}), cdouble(3.0)) << where;
      EXPECT_EQ(h->get({i1 + 1}), cdouble(0.0)) << where;
      // NaN and Inf count as not positive definite in the kernels (!(d > 0) or d infinite); the
      // vendor's answer for them is its own (no crash is all that is asked there).
      if (kernel_path(n)) {
        EXPECT_EQ(h->get({i2}), cdouble(6.0)) << where;
        EXPECT_EQ(h->get({i3}), cdouble(5.0)) << where;
      }
    }
  }
  CUDA_OK(cudaDeviceSynchronize());
}

TEST_P(BatchedSmall, ExactlySingularInfoAndError) {
  const DType t = GetParam();
  const int64_t count = batch_count();
  const int64_t i1 = count / 3, i2 = count / 2;
  for (int64_t n : {7, 32, 33}) {
    const std::string where = "n " + std::to_string(n);
    HostTensor a = random_kind({count, n, n}, t, Kind::general, Layout::row, 60 + n);
    // Row and column j zero: U[j, j] = 0 exactly for a and for a^T, whatever the pivots.
    auto zero_cross = [&](int64_t item, int64_t j) {
      for (int64_t q = 0; q < n; ++q) {
        a.set({item, q, j}, 0.0);
        a.set({item, j, q}, 0.0);
      }
    };
    zero_cross(i1, 4);
    zero_cross(i2, 1);
    DeviceTensor d = to_device(a);
    HostTensor b = random_b({count, n, 1}, t, 3);
    DeviceTensor db = to_device(b);
    try {
      la::solve(d.view, db.view);
      ADD_FAILURE() << "no SingularMatrix, " << where;
    } catch (const SingularMatrix& e) {
      EXPECT_EQ(e.index(), 4) << where;
      EXPECT_EQ(e.batch_index(), i1) << where;
      const std::string want = "[linalg.solve] a is singular: U[4,4] is exactly zero (batch index " +
                               std::to_string(i1) + ")";
      EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
    }
    la::SolveOptions so;
    so.check_info = false;
    la::Factor r = la::solve_ex(d.view, db.view, so);
    HostTensor info = host_of(r.info);
    EXPECT_EQ(info.get({i1}), cdouble(5.0)) << where;
    EXPECT_EQ(info.get({i2}), cdouble(2.0)) << where;
    EXPECT_EQ(info.get({0}), cdouble(0.0)) << where;
    la::LinalgOptions o;
    o.check_info = false;
    la::LU f = la::lu_factor(d.view, o);
    HostTensor finfo = host_of(f.info);
    EXPECT_EQ(finfo.get({i1}), cdouble(5.0)) << where;
    EXPECT_EQ(finfo.get({i2}), cdouble(2.0)) << where;
    // The kernel goes on past the zero pivot as LAPACK does, so P a = L U still holds (what
    // cuBLAS leaves after one at n = 33 is not checked).
    if (kernel_path(n)) {
      EXPECT_LE(
          linalg_test::lu_reconstruction_error(a.view, host_of(f.lu).view, host_of(f.pivots).view),
          tol(t, n))
          << where;
    }
    EXPECT_THROW(la::lu_factor(d.view), SingularMatrix) << where;
    EXPECT_EQ(host_of(la::det(d.view)).get({i1}), cdouble(0.0)) << where;
  }
  CUDA_OK(cudaDeviceSynchronize());
}

TEST_P(BatchedSmall, NanInputNeverCrashes) {
  const DType t = GetParam();
  const int64_t count = batch_count();
  const int64_t bad = count / 2;
  for (int64_t n : {2, 7, 32, 33}) {
    const std::string where = "n " + std::to_string(n);
    HostTensor a = random_kind({count, n, n}, t, Kind::spd, Layout::row, 80 + n);
    a.set({bad, 1, 1}, NAN);
    HostTensor b = random_b({n}, t, 4);
    DeviceTensor da = to_device(a), db = to_device(b);
    try {
      la::cholesky(da.view);
    } catch (const LinAlgError&) {
    }
    la::SolveOptions no_check;
    no_check.check_info = false;
    HostTensor x = host_of(la::solve(da.view, db.view, no_check));
    EXPECT_TRUE(std::isnan(std::abs(x.get({bad, 0})))) << where;
    EXPECT_FALSE(std::isnan(std::abs(x.get({bad - 1, 0})))) << where;
    EXPECT_FALSE(std::isnan(std::abs(x.get({bad + 1, n - 1})))) << where;
    la::LinalgOptions o;
    o.check_info = false;
    HostTensor piv = host_of(la::lu_factor(da.view, o).pivots);
    // The kernel's pivots stay valid (in [i, n), 0-based) for the NaN item too.
    for (int64_t i = 0; kernel_path(n) && i < n; ++i) {
      const double p = piv.get({bad, i}).real();
      EXPECT_TRUE(p >= static_cast<double>(i) && p < static_cast<double>(n)) << where;
    }
    EXPECT_TRUE(std::isnan(std::abs(host_of(la::det(da.view)).get({bad})))) << where;
    CUDA_OK(cudaDeviceSynchronize());  // nothing left broken on the device
  }
}

TEST_P(BatchedSmall, SmallestBatchAndOrderOne) {
  const DType t = GetParam();
  // count 2 is the smallest batch the kernels take; order 1 runs one thread per matrix.
  for (int64_t n : {1, 3, 32}) {
    HostTensor spd = random_kind({2, n, n}, t, Kind::spd, Layout::row, 7 + n);
    HostTensor gen = random_kind({2, n, n}, t, Kind::general, Layout::row, 9 + n);
    HostTensor b = random_b({2, n, 2}, t, 11 + n);
    DeviceTensor ds = to_device(spd), dg = to_device(gen), db = to_device(b);
    bool other_zero = false;
    HostTensor c = host_of(la::cholesky(ds.view).value);
    EXPECT_LE(linalg_test::cholesky_error(spd.view, c.view, true, &other_zero), tol(t, n));
    HostTensor x = host_of(la::solve(dg.view, db.view));
    EXPECT_LE(linalg_test::backward_error(gen.view, b.view, x.view), tol(t, n)) << "n " << n;
    la::SolveOptions pos;
    pos.assume_a = la::Assume::pos;
    HostTensor xp = host_of(la::solve(ds.view, db.view, pos));
    EXPECT_LE(linalg_test::backward_error(spd.view, b.view, xp.view, 0, true), tol(t, n))
        << "n " << n;
  }
  // Order 1: a zero is singular and a negative is not positive definite.
  HostTensor one = make_host({3, 1, 1}, t);
  one.set({0, 0, 0}, 2.0);
  one.set({1, 0, 0}, 0.0);
  one.set({2, 0, 0}, -1.0);
  DeviceTensor d1 = to_device(one);
  la::LinalgOptions o;
  o.check_info = false;
  HostTensor ci = host_of(la::cholesky(d1.view, true, o).info);
  EXPECT_EQ(ci.get({0}), cdouble(0.0));
  EXPECT_EQ(ci.get({1}), cdouble(1.0));
  EXPECT_EQ(ci.get({2}), cdouble(1.0));
  HostTensor li = host_of(la::lu_factor(d1.view, o).info);
  EXPECT_EQ(li.get({0}), cdouble(0.0));
  EXPECT_EQ(li.get({1}), cdouble(1.0));
  EXPECT_EQ(li.get({2}), cdouble(0.0));
}

INSTANTIATE_TEST_SUITE_P(Types, BatchedSmall,
                         ::testing::Values(DType::f32, DType::f64, DType::c64, DType::c128),
                         [](const auto& info) { return core_test::str(info.param); });

}  // namespace
