#pragma once
/// @file matmul.h
/// Planned matrix multiplication with fused epilogues (cuBLASLt on a GPU, BLAS on the CPU).
///
/// Semantics are numpy.matmul's on row-major data: D = alpha * (A @ B) + beta * C, then the
/// epilogue. A is (..., M, K), B is (..., K, N); batch dimensions broadcast.
///
/// @code
///   gpula::Matmul mm(a, b);
///   mm.plan(gpula::Epilog::RELU_BIAS, {.bias = bias});
///   mm.autotune(3);
///   gpula::MatmulResult r = mm.execute();
/// @endcode
#include <gpula/options.h>
#include <gpula/tensor.h>

#include <complex>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpula {

/// Epilogues, as in cuBLASLt. Bias has length N (one per output column), as in y = x @ W + b.
enum class Epilog : uint8_t {
  DEFAULT,
  RELU,
  RELU_AUX,
  BIAS,
  RELU_BIAS,
  RELU_AUX_BIAS,
  GELU,
  GELU_AUX,
  GELU_BIAS,
  GELU_AUX_BIAS,
  DRELU,        ///< D = (A @ B) * relu'(stored point); needs relu_aux
  DRELU_BGRAD,  ///< DRELU plus the bias gradient sum over rows of D (length N)
  DGELU,        ///< D = (A @ B) * gelu'(stored point); needs gelu_aux
  DGELU_BGRAD,  ///< DGELU plus the bias gradient
  BGRADA,       ///< plus the sum of A over K (length M)
  BGRADB,       ///< plus the sum of B over K (length N)
};
std::string_view name(Epilog e);

/// cuBLAS compute types.
enum class ComputeType : uint8_t {
  COMPUTE_16F,
  COMPUTE_16F_PEDANTIC,
  COMPUTE_32F,
  COMPUTE_32F_PEDANTIC,
  COMPUTE_32F_FAST_16F,
  COMPUTE_32F_FAST_16BF,
  COMPUTE_32F_FAST_TF32,
  COMPUTE_64F,
  COMPUTE_64F_PEDANTIC,
};
std::string_view name(ComputeType c);

struct MatmulOptions : CommonOptions {
  /// Defaults: COMPUTE_32F for f16/bf16/f32/c64/fp8 (full-precision FP32), COMPUTE_64F for
  /// f64/c128.
  std::optional<ComputeType> compute_type;
  /// Type of alpha and beta; defaults follow the compute type.
  std::optional<DType> scale_type;
  /// Type of D; defaults to the type of A (bf16 for fp8 inputs is not implied: say so here).
  std::optional<DType> result_type;
};

/// Inputs an epilogue reads. `relu_aux`/`gelu_aux` are the aux outputs of a forward call.
struct EpilogInputs {
  std::optional<TensorView> bias;
  std::optional<TensorView> relu_aux;
  std::optional<TensorView> gelu_aux;
};

/// Per-tensor scales of an fp8 matmul: D = scale_d * (scale_a * A) @ (scale_b * B).
struct QuantizationScales {
  float a = 1.0f, b = 1.0f, d = 1.0f;
};

/// Shape and type of an output the caller provides to Matmul::execute (contiguous).
struct OutputSpec {
  std::string name;  ///< "result", "relu_aux", "gelu_aux", "drelu_bgrad", "dgelu_bgrad", ...
  Shape shape;
  DType dtype;
};

/// Caller-provided outputs: the result, and aux outputs by OutputSpec::name.
struct MatmulOutputs {
  TensorView result;
  std::map<std::string, TensorView> aux;
};

/// Outputs allocated by gpula.
struct MatmulResult {
  Tensor result;
  std::map<std::string, Tensor> aux;
};

/// One candidate algorithm of a plan.
struct AlgorithmInfo {
  int index = 0;             ///< position in the heuristic's ranking
  int algo_id = -1;          ///< cuBLASLt algorithm id (-1 on the CPU)
  int tile = 0, stages = 0, split_k = 1;
  int64_t workspace_bytes = 0;
  float waves_count = 0.0f;
  float time_ms = -1.0f;     ///< median from autotune, -1 if not timed
  std::string describe() const;
};

struct PlanPreferences {
  int limit = 8;  ///< how many candidates to ask the heuristic for
};

/// Operands to swap in; each must have the layout (shape, strides, dtype, device) of the one
/// it replaces.
struct OperandUpdate {
  std::optional<TensorView> a, b, c;
  EpilogInputs epilog_inputs;
};

namespace detail {
struct MatmulAccess;
}

/// A planned matrix multiplication. Move-only.
///
/// Threads: every member function may be called from several threads at once on one Matmul;
/// the calls run one after another (a mutex inside; uncontended it costs tens of nanoseconds),
/// each execute() with the operands bound at that moment. Threads that want to run in parallel
/// use one Matmul each. Moving or destroying a Matmul while another thread uses it is not allowed.
///
/// `beta` is required when `c` is given (beta * c is added; no default that silently drops c).
class Matmul {
 public:
  Matmul(const TensorView& a, const TensorView& b, const std::optional<TensorView>& c = {},
         std::complex<double> alpha = 1.0, std::optional<std::complex<double>> beta = {},
         const MatmulOptions& options = {}, const QuantizationScales& scales = {});
  ~Matmul();
  Matmul(Matmul&&) noexcept;
  Matmul& operator=(Matmul&&) noexcept;

  /// Fixes the epilogue and asks the heuristic for candidates, best first. Replaces an earlier
  /// plan; when it throws, the Matmul is left unplanned.
  std::vector<AlgorithmInfo> plan(Epilog epilog = Epilog::DEFAULT, const EpilogInputs& inputs = {},
                                  const PlanPreferences& preferences = {});
  /// Times each candidate `iterations` times with device events and keeps the fastest.
  /// Synchronizes `stream`. Returns the chosen algorithm.
  AlgorithmInfo autotune(int iterations = 3, Stream stream = {});
  /// Runs into gpula-allocated outputs, fresh on every call (a later call never writes into an
  /// earlier call's results). Does not block on device data.
  MatmulResult execute(Stream stream = {});
  /// Runs into caller-provided contiguous outputs matching output_specs(). On a GPU, the
  /// second call in a row with the same outputs, operands and (non-default) stream captures
  /// the cuBLASLt call into a CUDA graph and later such calls replay it (one cudaGraphLaunch:
  /// the per-call cost of small products); the graph reads the operands' current contents.
  /// A stream the caller is capturing gets the plain call, as part of the caller's graph.
  void execute(const MatmulOutputs& outputs, Stream stream = {});
  /// Swaps operands of the same layout without re-planning.
  void reset_operands(const OperandUpdate& update);
  /// Releases the plan's resources; the object can only be destroyed afterwards.
  void free();

  /// The outputs execute() produces: "result" first, then aux outputs of the epilogue.
  std::vector<OutputSpec> output_specs() const;
  Device device() const;
  bool planned() const;
  /// The algorithm execute() uses.
  AlgorithmInfo algorithm() const;

  struct Impl;

 private:
  friend struct detail::MatmulAccess;
  std::unique_ptr<Impl> impl_;
};

/// Function form; reuses a plan from a per-thread cache keyed by layouts and options (threads
/// never share a plan through it). `beta` is required when `c` is given.
MatmulResult matmul(const TensorView& a, const TensorView& b,
                    const std::optional<TensorView>& c = {}, std::complex<double> alpha = 1.0,
                    std::optional<std::complex<double>> beta = {}, Epilog epilog = Epilog::DEFAULT,
                    const EpilogInputs& inputs = {}, const MatmulOptions& options = {},
                    Stream stream = {}, const QuantizationScales& scales = {});

/// The calling thread's cached, planned Matmul for these operands (operands already bound).
/// The cache shares it: it stays alive when the cache evicts or clears it, but its operands
/// are rebound by this thread's next call with the same layouts. matmul() is this followed by
/// execute().
std::shared_ptr<Matmul> cached_matmul(
    const TensorView& a, const TensorView& b, const std::optional<TensorView>& c = {},
    std::complex<double> alpha = 1.0, std::optional<std::complex<double>> beta = {},
    Epilog epilog = Epilog::DEFAULT, const EpilogInputs& inputs = {},
    const MatmulOptions& options = {}, const QuantizationScales& scales = {});

/// Number of plans in the calling thread's cache, and a way to empty it.
std::size_t matmul_cache_size();
void matmul_cache_clear();

}  // namespace gpula
