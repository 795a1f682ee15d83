// gpula::linalg::solve_triangular on the CUDA backend, on device memory: both GPU paths
// (cublas<t>trsmBatched for batches of order <= 128, cublas<t>trsm_64 per matrix otherwise),
// over dtypes, trans, triangles and unit diagonals, checked by backward error against the dense
// op(a) and against the CPU backend; a folded batch, the zero-diagonal kernel, host data run on
// the GPU.
//
// Built only with CUDA; run by scripts/gpu_check.sh on the lent GPU.
#include <cuda_runtime.h>
#include <gpula/gpula.h>
#include <gpula/linalg.h>
#include <gtest/gtest.h>

#include <vector>

#include "support/linalg_cuda.h"
#include "support/triangular.h"

namespace {

using namespace gpula;
using core_test::at;
using core_test::HostTensor;
using core_test::Layout;
using core_test::make_host;
using linalg_cuda_test::host_of;
using linalg_cuda_test::random_b;
using linalg_cuda_test::to_device;
using linalg_cuda_test::tol;
using linalg_cuda_test::unchanged;
using linalg_test::backward_error;
using triangular_test::op_matrix;
using triangular_test::random_triangular;
namespace la = gpula::linalg;

class CudaTriangular : public linalg_cuda_test::GpuDTypeTest {};

TEST_P(CudaTriangular, BothPathsMatchDenseOpAndCpu) {
  const DType t = GetParam();
  uint64_t seed = 11;
  struct Case {
    Shape a, b;
    Layout layout;
  };
  const std::vector<Case> cases = {{{300, 16, 16}, {300, 16, 3}, Layout::row},
                                   {{4, 200, 200}, {4, 200, 5}, Layout::col},
                                   {{513, 513}, {513, 7}, Layout::row},
                                   {{64, 64}, {2, 3, 64, 2}, Layout::col},
                                   {{5, 33, 33}, {33}, Layout::padded}};
  for (const Case& c : cases)
    for (la::Trans trans : {la::Trans::none, la::Trans::transpose, la::Trans::conj_transpose})
      for (bool lower : {false, true})
        for (bool unit : {false, true}) {
          HostTensor a = random_triangular(c.a, t, lower, unit, c.layout, seed++);
          HostTensor b = random_b(c.b, t, seed++);
          auto da = to_device(a), db = to_device(b);
          const la::TriangularOptions o{{}, lower, trans, unit};
          const la::Factor g = la::solve_triangular_ex(da.view, db.view, o);
          ASSERT_TRUE(g.value.device().is_cuda());
          const HostTensor x = host_of(g.value), info = host_of(g.info);
          const HostTensor ref = op_matrix(a.view, lower, trans, unit);
          EXPECT_LT(backward_error(ref.view, b.view, x.view), tol(t, c.a.back()))
              << "trans " << static_cast<int>(trans) << " lower " << lower << " unit " << unit;
          const la::Factor cpu = la::solve_triangular_ex(a.view, b.view, o);
          EXPECT_EQ(x.view.shape, cpu.value.shape());
          for (int64_t i = 0; i < info.view.numel(); ++i)
            EXPECT_EQ(static_cast<const int32_t*>(info.view.data)[i], 0);
          EXPECT_TRUE(unchanged(da, a) && unchanged(db, b));
        }
}

INSTANTIATE_TEST_SUITE_P(All, CudaTriangular, ::testing::ValuesIn(linalg_test::float_types()),
                         [](const auto& info) { return std::string(name(info.param)); });

class CudaTriangularMisc : public linalg_cuda_test::GpuTest {};

TEST_F(CudaTriangularMisc, ZeroDiagonalKernelAndHostData) {
  for (int64_t n : {5, 700}) {
    HostTensor a = random_triangular({3, n, n}, DType::f64, true, false, Layout::row, 21);
    a.set({2, n - 1, n - 1}, 0.0);
    a.set({2, n / 2, n / 2}, -0.0);
    HostTensor b = random_b({n}, DType::f64, 22);
    auto da = to_device(a), db = to_device(b);
    la::TriangularOptions o;
    o.lower = true;
    try {
      la::solve_triangular(da.view, db.view, o);
      ADD_FAILURE() << "no SingularMatrix";
    } catch (const SingularMatrix& e) {
      EXPECT_EQ(e.index(), n / 2);
      EXPECT_EQ(e.batch_index(), 2);
    }
    o.check_info = false;
    const HostTensor info = host_of(la::solve_triangular_ex(da.view, db.view, o).info);
    EXPECT_EQ(at(info.view, {0}).real(), 0.0);
    EXPECT_EQ(at(info.view, {2}).real(), static_cast<double>(n / 2 + 1));
  }
  // Host data run on the GPU comes back to the host.
  HostTensor a = random_triangular({40, 40}, DType::c128, false, false, Layout::row, 23);
  HostTensor b = random_b({40, 3}, DType::c128, 24);
  la::TriangularOptions o;
  o.device = Device::cuda(0);
  const Tensor x = la::solve_triangular(a.view, b.view, o);
  EXPECT_FALSE(x.device().is_cuda());
  EXPECT_LT(backward_error(op_matrix(a.view, false, la::Trans::none, false).view, b.view, x.view()),
            tol(DType::c128, 40));
}

}  // namespace
