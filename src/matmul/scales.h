#pragma once
// fp8 scale tensors of a matmul (EpilogInputs::a_scale, b_scale, d_scale, amax): their checks and
// the cuBLASLt scale mode each one takes, decided from a's and b's shapes alone, so that the
// function form checks them before it plans on any backend.
#include <gpula/matmul.h>

namespace gpula::detail {

struct ScaleModes {
  ScaleMode a = ScaleMode::tensor, b = ScaleMode::tensor;
  bool any_tensor = false;  // a scale given as a tensor, or amax requested
};

// Checks the scale tensors in `in` against a (M, K) and b (K, N): dtype float32, a's device,
// shapes and strides of the mode asked for (or of some mode, for ScaleMode::automatic), a pair
// cuBLASLt has, no scale given twice (`q` holds the per-tensor numbers). InvalidArgument names the
// argument and the shape each mode expects; NotSupported for pairs cuBLASLt lacks and for
// row-wise or block scales where the work runs on the CPU (`exec`).
ScaleModes resolve_scale_modes(const TensorView& a, const TensorView& b, const EpilogInputs& in,
                               const QuantizationScales& q, DType result, Device exec);

}  // namespace gpula::detail
