// The CUDA QR and least squares on device memory: QR properties (q^H q = I, q r = a, r upper
// triangular) in every mode and shape, r against the CPU backend's up to the signs of its rows,
// least squares against a normal-equation reference and the CPU backend (full-rank input), any
// strides, batches, empty dimensions, and the CPU fallback through options.device.
//
// Built only with CUDA; run by scripts/gpu_check.sh on the lent GPU.
#include <cuda_runtime.h>
#include <gpula/gpula.h>
#include <gpula/linalg.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "support/qr.h"
#include "support/linalg_cuda.h"

namespace {

using namespace gpula;
using core_test::at;
using core_test::cdouble;
using core_test::eps_of;
using core_test::HostTensor;
using core_test::Layout;
using core_test::make_host;
using linalg_test::with;
namespace la = gpula::linalg;

using linalg_cuda_test::DeviceTensor;
using linalg_cuda_test::host_of;
using linalg_cuda_test::to_device;
using linalg_cuda_test::unchanged;

HostTensor random(const Shape& shape, DType t, Layout layout, uint64_t seed) {
  HostTensor h = make_host(shape, t, layout);
  core_test::Filler(seed).fill(h.view);
  return h;
}

// Adds 3 on the diagonal of every matrix (full rank, well conditioned).
void shift_diagonal(const HostTensor& a) {
  const int64_t m = a.view.shape[a.view.ndim() - 2], n = a.view.shape.back();
  const Shape batch(a.view.shape.begin(), a.view.shape.end() - 2);
  core_test::for_each_index(batch, [&](const Shape& s) {
    for (int64_t i = 0; i < std::min(m, n); ++i) {
      Shape idx = with(s, {i, i});
      a.set(idx, a.get(idx) + 3.0);
    }
  });
}

class CudaLinalgQr : public linalg_cuda_test::GpuDTypeTest {};

struct Dims {
  Shape batch;
  int64_t m, n;
};
std::vector<Dims> dims() {
  return {{{}, 64, 40}, {{}, 40, 64}, {{5}, 33, 33},  {{2, 3}, 9, 4},
          {{3}, 4, 9},  {{}, 1, 1},   {{}, 160, 72},  {{2}, 72, 160}};
}

TEST_P(CudaLinalgQr, QrEveryModeAgainstCpu) {
  const DType t = GetParam();
  const double tol = 30.0 * 300 * eps_of(t);
  for (const Dims& d : dims())
    for (Layout layout : {Layout::row, Layout::col, Layout::strided}) {
      HostTensor a = random(with(d.batch, {d.m, d.n}), t, layout, 3 + d.m + d.n);
      const DeviceTensor da = to_device(a);
      for (la::QrMode mode : {la::QrMode::reduced, la::QrMode::complete, la::QrMode::r}) {
        SCOPED_TRACE(testing::Message()
                     << name(t) << " " << d.m << "x" << d.n << " " << core_test::layout_name(layout)
                     << " mode " << static_cast<int>(mode));
        la::QR g = la::qr(da.view, mode);
        la::QR c = la::qr(a.view, mode);
        ASSERT_TRUE(g.r.device().is_cuda());
        HostTensor r = host_of(g.r);
        EXPECT_EQ(r.view.shape, c.r.shape());
        // Rows of r agree with the CPU's up to a unit factor: compare magnitudes.
        double diff = 0, scale = 1e-300;
        core_test::for_each_index(r.view.shape, [&](const Shape& i) {
          diff = std::max(diff, std::abs(std::abs(at(r.view, i)) - std::abs(at(c.r.view(), i))));
          scale = std::max(scale, std::abs(at(c.r.view(), i)));
        });
        EXPECT_LT(diff / scale, tol);
        if (mode == la::QrMode::r) {
          EXPECT_FALSE(g.q.defined());
          EXPECT_EQ(linalg_qr_test::qr_errors(a.view, nullptr, r.view).lower, 0.0);
          continue;
        }
        HostTensor q = host_of(g.q);
        EXPECT_EQ(q.view.shape, c.q.shape());
        const auto e = linalg_qr_test::qr_errors(a.view, &q.view, r.view);
        EXPECT_LT(e.orth, tol);
        EXPECT_LT(e.recon, tol);
        EXPECT_EQ(e.lower, 0.0);
      }
      EXPECT_TRUE(unchanged(da, a));
    }
}

TEST_P(CudaLinalgQr, LstsqAgainstReferenceAndCpu) {
  const DType t = GetParam();
  // The QR solve's error grows with cond(a) * n * eps: complex128 reached 1.45e-12 (6500 eps).
  const double tol = 10000 * eps_of(t);
  for (const Dims& d : dims())
    for (bool vec : {false, true}) {
      SCOPED_TRACE(testing::Message() << name(t) << " " << d.m << "x" << d.n << " vec " << vec);
      HostTensor a = random(with(d.batch, {d.m, d.n}), t, Layout::col, 7 + d.m);
      shift_diagonal(a);
      HostTensor b = vec ? random({d.m}, t, Layout::row, 8)
                         : random(with(d.batch, {d.m, 3}), t, Layout::strided, 9);
      const DeviceTensor da = to_device(a), db = to_device(b);
      Tensor x = la::lstsq(da.view, db.view);
      ASSERT_TRUE(x.device().is_cuda());
      HostTensor xh = host_of(x);
      EXPECT_LT(linalg_qr_test::lstsq_error(a.view, b.view, xh.view), tol);
      Tensor xc = la::lstsq(a.view, b.view);
      double diff = 0, scale = 1e-300;
      core_test::for_each_index(xh.view.shape, [&](const Shape& i) {
        diff = std::max(diff, std::abs(at(xh.view, i) - at(xc.view(), i)));
        scale = std::max(scale, std::abs(at(xc.view(), i)));
      });
      EXPECT_LT(diff / scale, tol);
      EXPECT_TRUE(unchanged(da, a));
      EXPECT_TRUE(unchanged(db, b));
    }
}

INSTANTIATE_TEST_SUITE_P(Types, CudaLinalgQr, ::testing::ValuesIn(linalg_test::float_types()),
                         [](const auto& info) { return std::string(name(info.param)); });

class CudaLinalgQrMisc : public linalg_cuda_test::GpuTest {};

TEST_F(CudaLinalgQrMisc, EmptyDimensionsAndCpuExecution) {
  for (const Shape& s : {Shape{0, 3}, Shape{3, 0}, Shape{0, 4, 2}}) {
    HostTensor a = make_host(s, DType::f64);
    const DeviceTensor da = to_device(a);
    la::QR com = la::qr(da.view, la::QrMode::complete);
    HostTensor q = host_of(com.q);
    core_test::for_each_index(q.view.shape, [&](const Shape& i) {
      EXPECT_EQ(at(q.view, i), cdouble(i[i.size() - 2] == i.back() ? 1.0 : 0.0));
    });
    HostTensor b = make_host(with(Shape(s.begin(), s.end() - 2), {s[s.size() - 2], 2}), DType::f64);
    const DeviceTensor db = to_device(b);
    HostTensor x = host_of(la::lstsq(da.view, db.view));
    core_test::for_each_index(x.view.shape, [&](const Shape& i) { EXPECT_EQ(at(x.view, i), 0.0); });
  }
  // Device data computed on the CPU comes back on the device.
  HostTensor a = random({6, 4}, DType::f64, Layout::row, 2);
  const DeviceTensor da = to_device(a);
  la::LinalgOptions o;
  o.device = Device::cpu();
  la::QR f = la::qr(da.view, la::QrMode::reduced, o);
  EXPECT_TRUE(f.q.device().is_cuda());
  HostTensor q = host_of(f.q), r = host_of(f.r);
  const auto e = linalg_qr_test::qr_errors(a.view, &q.view, r.view);
  EXPECT_LT(e.recon, 1e-12);
}

}  // namespace
