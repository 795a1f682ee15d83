#pragma once
// The backend-neutral description of a grouped matmul, built by the front (grouped.cpp) after
// all argument checks, and read by the cpu:: and cuda:: backends.
#include <gpula/grouped_matmul.h>

#include <memory>
#include <vector>

#include "matmul/matmul_backend.h"

namespace gpula::detail {

// What every group shares.
struct GroupedProblem {
  Device device{};
  DType a_type = DType::f32, b_type = DType::f32, d_type = DType::f32, bias_type = DType::f32;
  ComputeType compute = ComputeType::COMPUTE_32F;
  DType scale_type = DType::f32;
  Epilog epilog = Epilog::DEFAULT;  // DEFAULT, RELU, GELU, BIAS, RELU_BIAS or GELU_BIAS
  QuantizationScales scales{};
  bool fp8 = false;
};

// One product D (m x n, row-major, ld n) = epilog(A (m x k) @ B (k x n) + bias (n)), m, n, k >= 1.
// a and b describe one matrix each (batch_stride unused).
struct GroupedItem {
  int64_t m = 0, n = 0, k = 0;
  MatrixDesc a, b;
  const void* pa = nullptr;
  const void* pb = nullptr;
  void* pd = nullptr;
  const void* bias = nullptr;  // BIAS variants
};

// A backend's grouped plan: made once per GroupedMatmul::plan(), executed with each call's groups.
class GroupedBackendPlan {
 public:
  virtual ~GroupedBackendPlan() = default;
  // The path execute() took last: grouped_gemm or per_group (an "auto" GPU plan chooses per call;
  // automatic before its first execute).
  virtual GroupedAlgo algo() const = 0;
  virtual void execute(const std::vector<GroupedItem>& items, Stream stream) = 0;
};

namespace cpu {
std::unique_ptr<GroupedBackendPlan> make_grouped_plan(const GroupedProblem& p, GroupedAlgo algo);
}
namespace cuda {
// `algo` automatic chooses per call between grouped_gemm and per_group where grouped_gemm
// applies, per_group elsewhere; grouped_gemm where it does not apply raises
// NotSupported. Per-group cuBLASLt plans get at most `workspace_limit` bytes of workspace.
std::unique_ptr<GroupedBackendPlan> make_grouped_plan(const GroupedProblem& p, GroupedAlgo algo,
                                                      int64_t workspace_limit,
                                                      const LogSink& logger);
}

}  // namespace gpula::detail
