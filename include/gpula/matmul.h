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
#include <utility>
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

/// How an fp8 operand's scale tensor applies to it (cuBLASLt's scale modes). A is (M, K), B is
/// (K, N), Kb = ceil(K / 128); the layouts are torch._scaled_mm's, and those gpula::quantize_fp8
/// returns for A and for B^T (pass the transpose of B^T's scales for B).
enum class ScaleMode : uint8_t {
  automatic,     ///< chosen from the scale tensor's shape
  tensor,        ///< one value, shape () or (1,) (SCALAR_32F)
  row,           ///< a_scale (M,): one per row of A; b_scale (N,): one per column of B (OUTER_VEC_32F)
  block128,      ///< 1x128 blocks along K: a_scale (M, Kb) with strides (1, M); b_scale (Kb, N)
                 ///< contiguous (VEC128_32F)
  block128x128,  ///< 128x128 blocks: a_scale (ceil(M/128), Kb) contiguous; b_scale
                 ///< (Kb, ceil(N/128)) with strides (1, Kb) (BLK128x128_32F)
};
std::string_view name(ScaleMode m);

/// Inputs an epilogue reads. `relu_aux`/`gelu_aux` are the aux outputs of a forward call.
///
/// fp8 scales as tensors (float32, on the operands' device), in place of QuantizationScales:
/// D = d_scale * sum_k (a_scale * A)(i, k) (b_scale * B)(k, j), each scale taken where it
/// applies (ScaleMode). Row-wise and block scales need cuBLASLt 12.9+ on sm_90; cuBLASLt pairs
/// tensor with tensor, row with row, and block128 with block128 or block128x128 either way round.
struct EpilogInputs {
  std::optional<TensorView> bias;
  std::optional<TensorView> relu_aux;
  std::optional<TensorView> gelu_aux;
  std::optional<TensorView> a_scale, b_scale;
  std::optional<TensorView> d_scale;  ///< shape () or (1,); fp8 results only
  ScaleMode a_scale_mode = ScaleMode::automatic, b_scale_mode = ScaleMode::automatic;
  /// Also write max |A @ B| (scaled by a's and b's scales, before d_scale) as the float32 aux
  /// output "amax" of shape (); fp8 operands only. For fp8 results cuBLASLt computes it before the
  /// rounding; for float32/bfloat16/float16 results gpula reduces the result (after its rounding,
  /// so within the result type's precision).
  bool amax = false;
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
/// it replaces (epilog_inputs' scale modes and amax are ignored: they are fixed by plan()).
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

/// What one scale of gpula::quantize_fp8 covers, for x of shape (R, K) (K the last dimension).
enum class Fp8Block : uint8_t {
  tensor,        ///< all of x (any shape): scales of shape ()
  row,           ///< each row: scales (R,) (ScaleMode::row)
  block128,      ///< 1x128 along K: scales (R, ceil(K/128)) with strides (1, R) (ScaleMode::block128)
  block128x128,  ///< 128x128: scales (ceil(R/128), ceil(K/128)) contiguous (ScaleMode::block128x128)
};
std::string_view name(Fp8Block b);

/// Shapes and strides (in elements) of quantize_fp8's outputs for x of shape `x_shape`.
struct QuantizeFp8Spec {
  Shape q_shape;
  Shape scale_shape;
  Shape scale_strides;
};
QuantizeFp8Spec quantize_fp8_spec(const Shape& x_shape, Fp8Block block);

/// Quantizes x (float16, bfloat16, float32; row, block128 and block128x128 take 2-D x) to q
/// (float8_e4m3fn or float8_e5m2, x's shape) with one float32 scale per block:
///   scale = amax / fp8_max (1 where amax is 0),  q = saturate(round(x / scale)),
/// so that x ~ scale * q. amax is the largest |x| over the block's finite elements; NaN stays
/// NaN in q and +-Inf saturates to +-fp8_max (448 for e4m3, 57344 for e5m2); rounding is to
/// nearest even. `q` and `scales` are laid out as quantize_fp8_spec() says, on x's device;
/// x is not modified. The GPU and the CPU give the same bits.
void quantize_fp8(const TensorView& x, const TensorView& q, const TensorView& scales,
                  Fp8Block block, Stream stream = {});
/// Allocating form: returns (q, scales).
std::pair<Tensor, Tensor> quantize_fp8(const TensorView& x, DType dtype, Fp8Block block,
                                       Stream stream = {});

/// Number of plans in the calling thread's cache, and a way to empty it.
std::size_t matmul_cache_size();
void matmul_cache_clear();

}  // namespace gpula
