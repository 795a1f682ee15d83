#include "matmul/scales.h"

#include <array>
#include <vector>

#include "core/format.h"

namespace gpula {

std::string_view name(ScaleMode m) {
  switch (m) {
    case ScaleMode::automatic: return "automatic";
    case ScaleMode::tensor: return "tensor";
    case ScaleMode::row: return "row";
    case ScaleMode::block128: return "block128";
    case ScaleMode::block128x128: return "block128x128";
  }
  return "?";
}

namespace detail {
namespace {

constexpr const char* kOp = "matmul";
constexpr std::array<ScaleMode, 4> kModes = {ScaleMode::tensor, ScaleMode::row, ScaleMode::block128,
                                             ScaleMode::block128x128};
// The (a, b) pairs cuBLASLt 12.9+ has on sm_90, in the order an ambiguous shape is read.
constexpr std::array<std::pair<ScaleMode, ScaleMode>, 5> kPairs = {{
    {ScaleMode::tensor, ScaleMode::tensor},
    {ScaleMode::row, ScaleMode::row},
    {ScaleMode::block128, ScaleMode::block128x128},
    {ScaleMode::block128x128, ScaleMode::block128},
    {ScaleMode::block128, ScaleMode::block128},
}};

int64_t ceil128(int64_t x) { return (x + 127) / 128; }

// Shape and strides the scale of operand `is_a` takes in mode m (tensor: shape () or (1,)).
struct Expected {
  Shape shape, strides;
};
Expected expected(bool is_a, ScaleMode m, int64_t M, int64_t K, int64_t N) {
  const int64_t kb = ceil128(K);
  switch (m) {
    case ScaleMode::row:
      return {{is_a ? M : N}, {1}};
    case ScaleMode::block128:
      return is_a ? Expected{{M, kb}, {1, M}} : Expected{{kb, N}, {N, 1}};
    case ScaleMode::block128x128:
      return is_a ? Expected{{ceil128(M), kb}, {kb, 1}} : Expected{{kb, ceil128(N)}, {1, kb}};
    default:
      return {{}, {}};
  }
}

bool matches(const TensorView& v, bool is_a, ScaleMode m, int64_t M, int64_t K, int64_t N) {
  if (m == ScaleMode::tensor) return v.numel() == 1 && v.ndim() <= 1;
  const Expected e = expected(is_a, m, M, K, N);
  if (v.shape != e.shape) return false;
  for (std::size_t i = 0; i < e.shape.size(); ++i)
    if (e.shape[i] > 1 && v.strides[i] != e.strides[i]) return false;
  return true;
}

std::string describe_mode(bool is_a, ScaleMode m, int64_t M, int64_t K, int64_t N) {
  if (m == ScaleMode::tensor) return "() or (1,) for 'tensor'";
  const Expected e = expected(is_a, m, M, K, N);
  std::string s = shape_str(e.shape);
  if (m != ScaleMode::row) s += cat(" with strides ", shape_str(e.strides));
  return cat(s, " for '", name(m), "'");
}

std::string all_modes(bool is_a, int64_t M, int64_t K, int64_t N) {
  std::string s;
  for (ScaleMode m : kModes) s += (s.empty() ? "" : "; ") + describe_mode(is_a, m, M, K, N);
  return s;
}

// The modes `v` may be read in (one when `asked` is not automatic); InvalidArgument when none.
std::vector<ScaleMode> candidates(const char* arg, const std::optional<TensorView>& v,
                                  ScaleMode asked, bool is_a, const TensorView& a,
                                  int64_t M, int64_t K, int64_t N) {
  if (!v) {
    if (asked != ScaleMode::automatic && asked != ScaleMode::tensor)
      throw_error<InvalidArgument>(kOp, arg, "_mode is '", name(asked), "' but no ", arg,
                                   " is given");
    return {ScaleMode::tensor};
  }
  check_tensor_view(kOp, arg, *v);
  if (v->dtype != DType::f32)
    throw_error<DTypeError>(kOp, arg, " has dtype ", name(v->dtype), ", expected float32");
  if (v->device != a.device)
    throw_error<InvalidArgument>(kOp, "operands on different devices: a on ", to_string(a.device),
                                 ", ", arg, " on ", to_string(v->device));
  const char* who = is_a ? "a of shape (M, K) = " : "b of shape (K, N) = ";
  const std::string dims = is_a ? cat("(", M, ", ", K, ")") : cat("(", K, ", ", N, ")");
  if (asked != ScaleMode::automatic) {
    if (!matches(*v, is_a, asked, M, K, N))
      throw_error<InvalidArgument>(kOp, arg, " has shape ", v->shape_str(), " and strides ",
                                   shape_str(v->strides), "; for ", who, dims, " it must be ",
                                   describe_mode(is_a, asked, M, K, N),
                                   " (expected shapes of every mode: ", all_modes(is_a, M, K, N),
                                   ")");
    return {asked};
  }
  std::vector<ScaleMode> out;
  for (ScaleMode m : kModes)
    if (matches(*v, is_a, m, M, K, N)) out.push_back(m);
  if (out.empty())
    throw_error<InvalidArgument>(kOp, arg, " has shape ", v->shape_str(), " and strides ",
                                 shape_str(v->strides), "; for ", who, dims,
                                 " the expected shapes are: ", all_modes(is_a, M, K, N));
  return out;
}

bool contains(const std::vector<ScaleMode>& v, ScaleMode m) {
  for (ScaleMode x : v)
    if (x == m) return true;
  return false;
}

void check_scalar(const char* arg, const TensorView& v, const TensorView& a) {
  check_tensor_view(kOp, arg, v);
  if (v.dtype != DType::f32)
    throw_error<DTypeError>(kOp, arg, " has dtype ", name(v.dtype), ", expected float32");
  if (v.numel() != 1 || v.ndim() > 1)
    throw_error<InvalidArgument>(kOp, arg, " must have shape () or (1,), got ", v.shape_str());
  if (v.device != a.device)
    throw_error<InvalidArgument>(kOp, "operands on different devices: a on ", to_string(a.device),
                                 ", ", arg, " on ", to_string(v.device));
}

}  // namespace

ScaleModes resolve_scale_modes(const TensorView& a, const TensorView& b, const EpilogInputs& in,
                               const QuantizationScales& q, DType result, Device exec) {
  ScaleModes out;
  const bool given = in.a_scale || in.b_scale || in.d_scale || in.amax ||
                     in.a_scale_mode != ScaleMode::automatic ||
                     in.b_scale_mode != ScaleMode::automatic;
  if (!given) return out;
  out.any_tensor = true;
  if (!is_float8(a.dtype) || !is_float8(b.dtype))
    throw_error<InvalidArgument>(kOp, "a_scale, b_scale, d_scale, scale modes and amax apply to "
                                 "float8 operands; a is ", name(a.dtype), ", b is ", name(b.dtype));
  if (in.a_scale && q.a != 1.0f)
    throw_error<InvalidArgument>(kOp, "a's scale is given twice: quantization_scales['a'] = ", q.a,
                                 " and epilog_inputs['a_scale']");
  if (in.b_scale && q.b != 1.0f)
    throw_error<InvalidArgument>(kOp, "b's scale is given twice: quantization_scales['b'] = ", q.b,
                                 " and epilog_inputs['b_scale']");
  if (in.d_scale && q.d != 1.0f)
    throw_error<InvalidArgument>(kOp, "d's scale is given twice: quantization_scales['d'] = ", q.d,
                                 " and epilog_inputs['d_scale']");
  if (in.d_scale) {
    check_scalar("d_scale", *in.d_scale, a);
    if (!is_float8(result))
      throw_error<InvalidArgument>(kOp, "d_scale applies to float8 results; result_type is ",
                                   name(result));
  }
  // Shapes in numpy terms; a 1-D a or b (a vector) has no row or block structure to scale.
  const bool matrices = a.ndim() == 2 && b.ndim() == 2;
  const int64_t M = a.ndim() >= 2 ? a.shape[a.ndim() - 2] : 1;
  const int64_t K = a.ndim() >= 1 ? a.shape[a.ndim() - 1] : 1;
  const int64_t N = b.ndim() >= 2 ? b.shape[b.ndim() - 1] : 1;
  const std::vector<ScaleMode> ca = candidates("a_scale", in.a_scale, in.a_scale_mode, true, a, M, K, N);
  const std::vector<ScaleMode> cb =
      candidates("b_scale", in.b_scale, in.b_scale_mode, false, a, M, K, N);
  bool found = false;
  for (auto [ma, mb] : kPairs)
    if (contains(ca, ma) && contains(cb, mb)) {
      out.a = ma;
      out.b = mb;
      found = true;
      break;
    }
  if (!found)
    throw_error<NotSupported>(kOp, "a_scale is ", name(ca.front()), ", b_scale is ",
                              name(cb.front()),
                              ": cuBLASLt pairs tensor with tensor, row with row, and block128 "
                              "with block128 or block128x128 (either way round)");
  const bool structured = out.a != ScaleMode::tensor || out.b != ScaleMode::tensor;
  if (structured && !matrices)
    throw_error<NotSupported>(kOp, "row-wise and block scales take 2-D a and b (no batch), got a ",
                              a.shape_str(), " and b ", b.shape_str());
  if (structured && is_float8(result))
    throw_error<NotSupported>(kOp, "row-wise and block scales give float32, bfloat16 or float16 "
                              "results (cuBLASLt on sm_90 has no ", name(result),
                              " result for them): set the result type (options result_type "
                              "'bfloat16'), or use tensor scales for a float8 result");
  if (!exec.is_cuda())
    throw_error<NotSupported>(kOp,
                              "fp8 matmul with row-wise/block scales, scale tensors or amax needs a "
                              "GPU with cuBLASLt block scaling (sm_90, cuBLAS 12.9+); the CPU "
                              "backend has no float8 matmul (", name(a.dtype), ")");
  return out;
}

}  // namespace detail
}  // namespace gpula
