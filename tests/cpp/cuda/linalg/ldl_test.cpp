// gpula::linalg::ldl_factor on the CUDA backend, on device memory: cusolverDn<t>sytrf for real
// and complex symmetric matrices, the host path for complex Hermitian ones, rebuilt from the
// packed form (support/ldl.h) over dtypes, batches and both triangles; n = 0, host data run on
// the GPU, the input left alone.
//
// Built only with CUDA; run by scripts/gpu_check.sh on the lent GPU.
#include <cuda_runtime.h>
#include <gpula/gpula.h>
#include <gpula/linalg.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/eigh.h"
#include "support/ldl.h"
#include "support/linalg_cuda.h"

namespace {

using namespace gpula;
using core_test::HostTensor;
using core_test::make_host;
using linalg_test::with;
namespace la = gpula::linalg;

using linalg_cuda_test::DeviceTensor;
using linalg_cuda_test::host_of;
using linalg_cuda_test::to_device;
using linalg_cuda_test::tol;
using linalg_cuda_test::unchanged;

class CudaLdl : public linalg_cuda_test::GpuDTypeTest {};

TEST_P(CudaLdl, RebuildsOnTheGpuAndFromHostData) {
  const DType t = GetParam();
  uint64_t seed = 21;
  for (const linalg_cuda_test::Size& s : std::vector<linalg_cuda_test::Size>{
           {{}, 1}, {{5}, 8}, {{2, 2}, 33}, {{}, 200}})
    for (bool lower : {true, false})
      for (bool herm : {true, false}) {
        const bool h = herm && is_complex(t);
        HostTensor a = make_host(with(s.batch, {s.n, s.n}), t);
        // Hermitian (or symmetric) indefinite: fill_hermitian's matrices, made complex
        // symmetric by mirroring without conjugation where h is false.
        eigh_test::fill_hermitian(a, seed++);
        if (!h)
          core_test::for_each_index(s.batch, [&](const Shape& b) {
            for (int64_t i = 0; i < s.n; ++i)
              for (int64_t j = 0; j < i; ++j)
                a.set(with(b, {j, i}), core_test::at(a.view, with(b, {i, j})));
          });
        DeviceTensor d = to_device(a);
        la::Ldl r = la::ldl_factor(d.view, lower, herm);
        ASSERT_TRUE(r.ldu.device().is_cuda());
        HostTensor ldu = host_of(r.ldu), piv = host_of(r.pivots);
        EXPECT_LE(ldl_test::ldl_error(a.view, lower, h, ldu.view, piv.view), tol(t, s.n))
            << "n " << s.n << " lower " << lower << " herm " << herm;
        EXPECT_TRUE(unchanged(d, a));
      }
  HostTensor a = make_host({3, 6, 6}, t);
  eigh_test::fill_hermitian(a, 7);
  la::LinalgOptions o;
  o.device = Device::cuda(0);
  la::Ldl r = la::ldl_factor(a.view, true, true, o);
  ASSERT_FALSE(r.ldu.device().is_cuda());
  EXPECT_LE(ldl_test::ldl_error(a.view, true, is_complex(t), r.ldu.view(), r.pivots.view()),
            tol(t, 6));
  HostTensor z = make_host({2, 0, 0}, t);
  DeviceTensor dz = to_device(z);
  EXPECT_EQ(la::ldl_factor(dz.view).pivots.shape(), (Shape{2, 0}));
}

INSTANTIATE_TEST_SUITE_P(Types, CudaLdl,
                         ::testing::Values(DType::f32, DType::f64, DType::c64, DType::c128),
                         [](const auto& info) { return std::string(name(info.param)); });

}  // namespace
