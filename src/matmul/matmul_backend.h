#pragma once
// The backend-neutral description of one planned matmul, built by the front (matmul.cpp) after
// all argument checks, and read by cpu:: and cuda:: backends.
#include <gpula/matmul.h>

#include <complex>
#include <memory>
#include <vector>

namespace gpula::detail {

// A stack of matrices as stored: element (i, j) of batch item b is at
//   b * batch_stride + (col_major ? i + j * ld : i * ld + j)      (in elements)
// rows x cols are the logical sizes in numpy terms (A is m x k, B is k x n, C and D m x n).
struct MatrixDesc {
  DType dtype = DType::f32;
  int64_t rows = 0, cols = 0;
  bool col_major = false;
  int64_t ld = 1;
  int64_t batch_stride = 0;  // 0: the same matrix for every batch item
};

struct MatmulProblem {
  Device device{};
  int64_t m = 0, n = 0, k = 0;
  int64_t batch = 1;         // number of matrix products
  MatrixDesc a, b, c, d;     // d is always row-major, ld = n, batch_stride = m * n
  bool has_c = false;        // c is read (beta != 0 or C given)
  DType scale_type = DType::f32;
  ComputeType compute = ComputeType::COMPUTE_32F;
  std::complex<double> alpha = 1.0, beta = 0.0;
  Epilog epilog = Epilog::DEFAULT;
  QuantizationScales scales{};
  bool fp8 = false;
  // fp8 scales given as device tensors (MatmulBuffers::a_scale, ...) rather than the numbers in
  // `scales`, how a's and b's apply (ScaleMode, never automatic here), and whether "amax" is
  // written.
  bool a_scale_tensor = false, b_scale_tensor = false, d_scale_tensor = false;
  ScaleMode a_scale_mode = ScaleMode::tensor, b_scale_mode = ScaleMode::tensor;
  bool amax = false;
  // Byte alignment of the A, B, C and D pointers (at most 256) the plan may assume; Matmul's D
  // and the epilogue buffers are 256-byte aligned (checked by the front); GroupedMatmul's
  // per-group D rows may be less.
  int align_a = 256, align_b = 256, align_c = 256, align_d = 256;

  // Epilogue data layouts (all row-major over the batch):
  //   bias (input):  length n, dtype bias_type, shared by all batch items
  //   bgrad (output): length bgrad_len per batch item, dtype bias_type, contiguous
  //   relu_aux: bit-packed, aux_ld bits per row of D (a multiple of 128), u8 storage,
  //             m rows per batch item, batch stride m * aux_ld / 8 bytes
  //   gelu_aux: aux_ld elements per row (a multiple of 8), dtype aux_type
  DType bias_type = DType::f32;
  int64_t bgrad_len = 0;
  int64_t aux_ld = 0;
  DType aux_type = DType::f32;
};

// Pointers for one execution, matching a MatmulProblem.
struct MatmulBuffers {
  const void* a = nullptr;
  const void* b = nullptr;
  const void* c = nullptr;
  void* d = nullptr;
  const void* bias = nullptr;    // BIAS variants
  const void* aux_in = nullptr;  // DRELU*/DGELU* read the forward aux here
  void* aux_out = nullptr;       // *_AUX* write it here
  void* bgrad = nullptr;         // *_BGRAD, BGRADA, BGRADB write the bias gradient here
  const void* a_scale = nullptr;  // fp8 scale tensors (MatmulProblem::*_scale_tensor)
  const void* b_scale = nullptr;
  const void* d_scale = nullptr;
  void* amax = nullptr;           // one float32, zeroed by the front before the call
};

// Epilogue properties.
bool epilog_has_bias_input(Epilog e);   // BIAS, RELU_BIAS, RELU_AUX_BIAS, GELU_BIAS, GELU_AUX_BIAS
bool epilog_writes_aux(Epilog e);       // RELU_AUX, RELU_AUX_BIAS, GELU_AUX, GELU_AUX_BIAS
bool epilog_reads_aux(Epilog e);        // DRELU, DRELU_BGRAD, DGELU, DGELU_BGRAD
bool epilog_is_relu_family(Epilog e);   // aux is a ReLU bitmask
bool epilog_writes_bgrad(Epilog e);     // DRELU_BGRAD, DGELU_BGRAD, BGRADA, BGRADB

// A backend's plan. Created once per Matmul::plan(); execute() may run many times.
class MatmulBackendPlan {
 public:
  virtual ~MatmulBackendPlan() = default;
  virtual std::vector<AlgorithmInfo> candidates() const = 0;
  virtual AlgorithmInfo chosen() const = 0;
  // Times every candidate on the given buffers (outputs may be scratch) and keeps the fastest.
  virtual AlgorithmInfo autotune(const MatmulBuffers& buffers, int iterations, Stream stream,
                                 const LogSink& logger) = 0;
  virtual void execute(const MatmulBuffers& buffers, Stream stream) = 0;
};

namespace cpu {
std::unique_ptr<MatmulBackendPlan> make_matmul_plan(const MatmulProblem& p,
                                                    const PlanPreferences& prefs);
}
namespace cuda {
// Workspace bytes the plan may use is capped by `workspace_limit`.
std::unique_ptr<MatmulBackendPlan> make_matmul_plan(const MatmulProblem& p,
                                                    const PlanPreferences& prefs,
                                                    int64_t workspace_limit,
                                                    const LogSink& logger);
}

}  // namespace gpula::detail
