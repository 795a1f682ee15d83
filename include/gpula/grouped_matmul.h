#pragma once
/// @file grouped_matmul.h
/// Grouped matrix multiplication: many products of different sizes in one call, as a
/// mixture-of-experts layer runs them (cublasGemmGroupedBatchedEx or cuBLASLt per group on a
/// GPU, BLAS per group on the CPU).
///
/// Two forms:
///  - MoE: A is (T, K), its rows sorted by group; B is (E, K, N), one matrix per group;
///    `offsets` (E,) int32 or int64 holds cumulative end rows, as torch's F.grouped_mm `offs`:
///    group g is rows offsets[g-1] .. offsets[g] of A (offsets[-1] = 0), times B[g]. The result
///    is (T, N); its rows past offsets[E-1] are zero.
///  - Lists: pairs (A_i, B_i) of 2-D matrices of any sizes, one result (M_i, N_i) each.
///
/// @code
///   gpula::GroupedMatmul g(tokens, experts);          // (T, K), (E, K, N)
///   g.plan(gpula::Epilog::GELU_BIAS, {.bias = bias}); // bias (E, N)
///   gpula::Tensor y = g.execute(offsets).front();     // offsets change every step
/// @endcode
#include <gpula/matmul.h>

#include <optional>
#include <string_view>
#include <vector>

namespace gpula {

/// How a GPU runs the groups.
enum class GroupedAlgo : uint8_t {
  automatic,     ///< grouped_gemm where it applies, else per_group
  grouped_gemm,  ///< one cublasGemmGroupedBatchedEx (DEFAULT epilogue; bf16, f16, f32)
  per_group,     ///< one cuBLASLt matmul per non-empty group (every epilogue, fp8)
};
/// "auto", "grouped_gemm", "per_group".
std::string_view name(GroupedAlgo a);

/// MatmulOptions plus the choice of GPU path. `device` must be where the data lives and
/// `fallback` must be none: grouped products are not moved between devices.
struct GroupedMatmulOptions : MatmulOptions {
  GroupedAlgo algo = GroupedAlgo::automatic;
};

/// Bias of the *BIAS epilogues: (E, N) in the MoE form (row g for group g), or one (N_i,) per
/// pair in the list form. Its dtype is the result's (bfloat16 for float8 results).
struct GroupedEpilogInputs {
  std::optional<TensorView> bias;  ///< MoE form
  std::vector<TensorView> biases;  ///< list form
};

/// Operands to swap in, each with the layout of the one it replaces (the list form's lists
/// replace the whole list).
struct GroupedOperandUpdate {
  std::optional<TensorView> a, b;         ///< MoE form
  std::vector<TensorView> a_list, b_list; ///< list form
  GroupedEpilogInputs epilog_inputs;
};

/// A planned grouped matmul. Move-only; calls on one object run one at a time (a mutex).
///
/// Epilogues: DEFAULT, RELU, GELU, BIAS, RELU_BIAS, GELU_BIAS, per group; others raise
/// NotSupported. Dtypes as Matmul (float8 on a GPU only, with per-tensor scales).
/// Offsets on a GPU are read on the host before the work is queued: one device-to-host copy
/// on the stream and a wait for it (the host needs every group's size to launch the GEMMs).
class GroupedMatmul {
 public:
  /// MoE form. `offsets` may be given here or to each execute().
  GroupedMatmul(const TensorView& a, const TensorView& b,
                const std::optional<TensorView>& offsets = {},
                const GroupedMatmulOptions& options = {}, const QuantizationScales& scales = {});
  /// List form: a[i] @ b[i] for every i, each 2-D.
  GroupedMatmul(const std::vector<TensorView>& a, const std::vector<TensorView>& b,
                const GroupedMatmulOptions& options = {}, const QuantizationScales& scales = {});
  ~GroupedMatmul();
  GroupedMatmul(GroupedMatmul&&) noexcept;
  GroupedMatmul& operator=(GroupedMatmul&&) noexcept;

  /// Fixes the epilogue and its bias. Replaces an earlier plan.
  void plan(Epilog epilog = Epilog::DEFAULT, const GroupedEpilogInputs& inputs = {});
  /// Runs into gpula-allocated results (one in the MoE form, one per pair in the list form).
  /// `offsets` (MoE form only) apply to this call only, read before it returns and not kept: a
  /// later call without them uses the constructor's.
  std::vector<Tensor> execute(const std::optional<TensorView>& offsets = {}, Stream stream = {});
  /// Runs into caller-provided contiguous results matching output_specs(), where the data lives.
  void execute(const std::vector<TensorView>& results,
               const std::optional<TensorView>& offsets = {}, Stream stream = {});
  /// Swaps operands of the same layout without planning again.
  void reset_operands(const GroupedOperandUpdate& update);
  /// Releases the plan's resources; the object can only be destroyed afterwards.
  void free();

  /// The results execute() produces, in order (names "result" or "result_<i>").
  std::vector<OutputSpec> output_specs() const;
  Device device() const;
  bool planned() const;
  /// The GPU path the latest execute() took (per_group on the CPU). With GroupedAlgo::automatic
  /// the GPU chooses per call, by the groups' mean row count (grouped_gemm for many small groups,
  /// per_group on several streams for large ones): automatic until the first execute.
  GroupedAlgo algorithm() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

/// MoE function form: the (T, N) result of `a` (T, K) by `b` (E, K, N) grouped by `offsets`.
Tensor grouped_matmul(const TensorView& a, const TensorView& b, const TensorView& offsets,
                      Epilog epilog = Epilog::DEFAULT, const std::optional<TensorView>& bias = {},
                      const GroupedMatmulOptions& options = {}, Stream stream = {},
                      const QuantizationScales& scales = {});

/// List form: a[i] @ b[i] for every i; `biases` has one (N_i,) per pair for the *BIAS epilogues.
std::vector<Tensor> grouped_matmul(const std::vector<TensorView>& a,
                                   const std::vector<TensorView>& b,
                                   Epilog epilog = Epilog::DEFAULT,
                                   const std::vector<TensorView>& biases = {},
                                   const GroupedMatmulOptions& options = {}, Stream stream = {},
                                   const QuantizationScales& scales = {});

}  // namespace gpula
