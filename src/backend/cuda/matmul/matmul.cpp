// Matmul plans over cuBLASLt. numpy's row-major D = A @ B is computed as cuBLAS's column-major
// D^T = B^T A^T: cuBLAS's "A" is our B and its "B" is our A; bias of length n (our columns) is
// cuBLAS's per-row bias, and our BGRADA/BGRADB are its BGRADB/BGRADA.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <array>
#include <complex>
#include <cstring>
#include <vector>

#include "backend/cuda/base/check.h"
#include "backend/cuda/base/context.h"
#include "backend/cuda/base/types.h"
#include "backend/cuda/kernels/amax.h"
#include "core/format.h"
#include "matmul/matmul_backend.h"

namespace gpula::detail::cuda {
namespace {

constexpr const char* kOp = "matmul";
constexpr int64_t kDefaultWorkspace = 32ll << 20;  // what cuBLASLt recommends on Hopper

cublasComputeType_t compute_type(ComputeType c) {
  switch (c) {
    case ComputeType::COMPUTE_16F: return CUBLAS_COMPUTE_16F;
    case ComputeType::COMPUTE_16F_PEDANTIC: return CUBLAS_COMPUTE_16F_PEDANTIC;
    case ComputeType::COMPUTE_32F: return CUBLAS_COMPUTE_32F;
    case ComputeType::COMPUTE_32F_PEDANTIC: return CUBLAS_COMPUTE_32F_PEDANTIC;
    case ComputeType::COMPUTE_32F_FAST_16F: return CUBLAS_COMPUTE_32F_FAST_16F;
    case ComputeType::COMPUTE_32F_FAST_16BF: return CUBLAS_COMPUTE_32F_FAST_16BF;
    case ComputeType::COMPUTE_32F_FAST_TF32: return CUBLAS_COMPUTE_32F_FAST_TF32;
    case ComputeType::COMPUTE_64F: return CUBLAS_COMPUTE_64F;
    case ComputeType::COMPUTE_64F_PEDANTIC: return CUBLAS_COMPUTE_64F_PEDANTIC;
  }
  return CUBLAS_COMPUTE_32F;
}

cublasLtEpilogue_t epilogue(Epilog e) {
  switch (e) {
    case Epilog::DEFAULT: return CUBLASLT_EPILOGUE_DEFAULT;
    case Epilog::RELU: return CUBLASLT_EPILOGUE_RELU;
    case Epilog::RELU_AUX: return CUBLASLT_EPILOGUE_RELU_AUX;
    case Epilog::BIAS: return CUBLASLT_EPILOGUE_BIAS;
    case Epilog::RELU_BIAS: return CUBLASLT_EPILOGUE_RELU_BIAS;
    case Epilog::RELU_AUX_BIAS: return CUBLASLT_EPILOGUE_RELU_AUX_BIAS;
    case Epilog::GELU: return CUBLASLT_EPILOGUE_GELU;
    case Epilog::GELU_AUX: return CUBLASLT_EPILOGUE_GELU_AUX;
    case Epilog::GELU_BIAS: return CUBLASLT_EPILOGUE_GELU_BIAS;
    case Epilog::GELU_AUX_BIAS: return CUBLASLT_EPILOGUE_GELU_AUX_BIAS;
    case Epilog::DRELU: return CUBLASLT_EPILOGUE_DRELU;
    case Epilog::DRELU_BGRAD: return CUBLASLT_EPILOGUE_DRELU_BGRAD;
    case Epilog::DGELU: return CUBLASLT_EPILOGUE_DGELU;
    case Epilog::DGELU_BGRAD: return CUBLASLT_EPILOGUE_DGELU_BGRAD;
    case Epilog::BGRADA: return CUBLASLT_EPILOGUE_BGRADB;  // swapped: see the file comment
    case Epilog::BGRADB: return CUBLASLT_EPILOGUE_BGRADA;
  }
  return CUBLASLT_EPILOGUE_DEFAULT;
}

#if CUBLAS_VERSION >= 120900
// Row-wise and block scale modes came with cuBLAS 12.9 (sm_90).
cublasLtMatmulMatrixScale_t scale_mode(ScaleMode m) {
  switch (m) {
    case ScaleMode::row: return CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
    case ScaleMode::block128: return CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
    case ScaleMode::block128x128: return CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
    default: return CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F;
  }
}
#endif

// Host scalars in the scale type.
struct Scalar {
  alignas(16) unsigned char bytes[16] = {};
  static Scalar of(std::complex<double> v, DType t) {
    Scalar s;
    switch (t) {
      case DType::f16: {
        __half h = __double2half(v.real());
        std::memcpy(s.bytes, &h, sizeof h);
        break;
      }
      case DType::f32: {
        float f = static_cast<float>(v.real());
        std::memcpy(s.bytes, &f, sizeof f);
        break;
      }
      case DType::f64: {
        double d = v.real();
        std::memcpy(s.bytes, &d, sizeof d);
        break;
      }
      case DType::c64: {
        std::complex<float> c(static_cast<float>(v.real()), static_cast<float>(v.imag()));
        std::memcpy(s.bytes, &c, sizeof c);
        break;
      }
      case DType::c128:
        std::memcpy(s.bytes, &v, sizeof v);
        break;
      default:
        throw_error<DTypeError>(kOp, "unsupported scale type ", name(t));
    }
    return s;
  }
};

template <class T>
void set_desc(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, const T& v) {
  GPULA_CHECK(kOp, cublasLtMatmulDescSetAttribute(d, attr, &v, sizeof v));
}
template <class T>
void set_layout(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t attr, const T& v) {
  GPULA_CHECK(kOp, cublasLtMatrixLayoutSetAttribute(l, attr, &v, sizeof v));
}

class LayoutHandle {
 public:
  LayoutHandle() = default;
  LayoutHandle(cudaDataType_t t, uint64_t rows, uint64_t cols, int64_t ld, int64_t batch,
               int64_t batch_stride) {
    GPULA_CHECK(kOp, cublasLtMatrixLayoutCreate(&h_, t, rows, cols, ld));
    if (batch > 1) {
      const int32_t count = static_cast<int32_t>(batch);
      set_layout(h_, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, count);
      set_layout(h_, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, batch_stride);
    }
  }
  ~LayoutHandle() {
    if (h_) GPULA_CHECK_NOTHROW(cublasLtMatrixLayoutDestroy(h_));
  }
  LayoutHandle(LayoutHandle&& o) noexcept : h_(std::exchange(o.h_, nullptr)) {}
  LayoutHandle& operator=(LayoutHandle&& o) noexcept {
    std::swap(h_, o.h_);
    return *this;
  }
  cublasLtMatrixLayout_t get() const { return h_; }

 private:
  cublasLtMatrixLayout_t h_ = nullptr;
};

int alg_attr(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t a) {
  int32_t v = 0;
  std::size_t written = 0;
  if (cublasLtMatmulAlgoConfigGetAttribute(&algo, a, &v, sizeof v, &written) !=
      CUBLAS_STATUS_SUCCESS)
    return -1;
  return v;
}

class CublasLtPlan final : public MatmulBackendPlan {
 public:
  CublasLtPlan(const MatmulProblem& p, const PlanPreferences& prefs, int64_t workspace_limit,
               const LogSink& logger)
      : p_(p), device_(p.device.index), logger_(logger) {
    Context& ctx = context(device_);
    handle_ = ctx.cublaslt();
    const cublasComputeType_t ct = compute_type(p.compute);
    const cudaDataType_t scale_t = data_type(p.scale_type, kOp);
    GPULA_CHECK(kOp, cublasLtMatmulDescCreate(&desc_, ct, scale_t));

    // cuBLAS "A" = our B, cuBLAS "B" = our A (see the file comment).
    const cublasOperation_t op_a = p.b.col_major ? CUBLAS_OP_T : CUBLAS_OP_N;
    const cublasOperation_t op_b = p.a.col_major ? CUBLAS_OP_T : CUBLAS_OP_N;
    set_desc(desc_, CUBLASLT_MATMUL_DESC_TRANSA, op_a);
    set_desc(desc_, CUBLASLT_MATMUL_DESC_TRANSB, op_b);
    const int64_t batch = p.batch;
    // Stored shapes in cuBLAS's column-major terms.
    a_ = op_a == CUBLAS_OP_N
             ? LayoutHandle(data_type(p.b.dtype, kOp), p.n, p.k, p.b.ld, batch, p.b.batch_stride)
             : LayoutHandle(data_type(p.b.dtype, kOp), p.k, p.n, p.b.ld, batch, p.b.batch_stride);
    b_ = op_b == CUBLAS_OP_N
             ? LayoutHandle(data_type(p.a.dtype, kOp), p.k, p.m, p.a.ld, batch, p.a.batch_stride)
             : LayoutHandle(data_type(p.a.dtype, kOp), p.m, p.k, p.a.ld, batch, p.a.batch_stride);
    d_ = LayoutHandle(data_type(p.d.dtype, kOp), p.n, p.m, p.d.ld, batch, p.d.batch_stride);
    if (p.has_c) {
      c_ = LayoutHandle(data_type(p.c.dtype, kOp), p.n, p.m, p.c.ld, batch, p.c.batch_stride);
    } else if (is_float8(p.d.dtype)) {
      // fp8 D needs a 16-bit C type even when C is not read.
      c_ = LayoutHandle(CUDA_R_16BF, p.n, p.m, p.d.ld, batch, p.d.batch_stride);
    }

    const Epilog e = p.epilog;
    set_desc(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, epilogue(e));
    // Heuristics read pointer values for alignment: give aligned placeholders now.
    const void* placeholder = reinterpret_cast<const void*>(uintptr_t{256});
    if (epilog_has_bias_input(e) || epilog_writes_bgrad(e)) {
      set_desc(desc_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, data_type(p.bias_type, kOp));
      set_desc(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, placeholder);
      const int64_t bias_stride = epilog_writes_bgrad(e) ? p.bgrad_len : 0;
      if (batch > 1) set_desc(desc_, CUBLASLT_MATMUL_DESC_BIAS_BATCH_STRIDE, bias_stride);
    }
    if (epilog_writes_aux(e) || epilog_reads_aux(e)) {
      set_desc(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, placeholder);
      set_desc(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD, p.aux_ld);
      if (batch > 1) set_desc(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_BATCH_STRIDE, p.m * p.aux_ld);
      if (!epilog_is_relu_family(e))
        set_desc(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE, data_type(p.aux_type, kOp));
    }
    if (p.fp8) {
      // Device scalars, each on its own 256-byte line (cuBLASLt checks their alignment).
      constexpr int kStride = 64;
      std::array<float, 3 * kStride> scales{};
      scales[0] = p.scales.b;  // cuBLAS's A is our B
      scales[kStride] = p.scales.a;
      scales[2 * kStride] = p.scales.d;
      GPULA_CHECK(kOp, cudaMalloc(&scales_, sizeof scales));
      GPULA_CHECK(kOp, cudaMemcpy(scales_, scales.data(), sizeof scales, cudaMemcpyHostToDevice));
      const float* s = static_cast<const float*>(scales_);
      // Scale tensors are bound per call (run()); until then an aligned placeholder, which the
      // heuristic reads for alignment only.
      set_desc(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
               p.b_scale_tensor ? placeholder : static_cast<const void*>(s));
      set_desc(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
               p.a_scale_tensor ? placeholder : static_cast<const void*>(s + kStride));
      if (is_float8(p.d.dtype))
        set_desc(desc_, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER,
                 p.d_scale_tensor ? placeholder : static_cast<const void*>(s + 2 * kStride));
      if (p.a_scale_mode != ScaleMode::tensor || p.b_scale_mode != ScaleMode::tensor) {
#if CUBLAS_VERSION >= 120900
        // cuBLAS's A is our B: its scale mode is b's (and the layouts of ScaleMode are the ones
        // cuBLASLt reads for its A = our B^T stored K-major, and its B = our A).
        const int32_t ma = scale_mode(p.b_scale_mode), mb = scale_mode(p.a_scale_mode);
        set_desc(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, ma);
        set_desc(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_MODE, mb);
#else
        throw_error<NotSupported>(kOp, "row-wise and block fp8 scales need cuBLAS 12.9 or newer "
                                  "(this build has ", CUBLAS_VERSION, ")");
#endif
      }
      // cuBLASLt computes amax for fp8 results only (with per-tensor scales: H100, cuBLAS 13);
      // for the others run() reduces the result itself (kernels/amax.cu).
      if (p.amax && is_float8(p.d.dtype))
        set_desc(desc_, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, placeholder);
    }
    stages_scales_ = ((p.k + 127) / 128) % 4 != 0 &&
                     (p.a_scale_mode == ScaleMode::block128x128 ||
                      p.b_scale_mode == ScaleMode::block128x128);
    alpha_ = Scalar::of(p.alpha, p.scale_type);
    beta_ = Scalar::of(p.beta, p.scale_type);

    workspace_bytes_ = std::max<int64_t>(0, std::min(kDefaultWorkspace, workspace_limit));
    cublasLtMatmulPreference_t pref;
    GPULA_CHECK(kOp, cublasLtMatmulPreferenceCreate(&pref));
    const uint64_t ws = static_cast<uint64_t>(workspace_bytes_);
    cublasStatus_t st = cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    // cuBLAS's A is our B (see the file comment).
    const uint32_t aligns[4] = {static_cast<uint32_t>(p.align_b), static_cast<uint32_t>(p.align_a),
                                static_cast<uint32_t>(p.align_c),
                                static_cast<uint32_t>(p.align_d)};
    const cublasLtMatmulPreferenceAttributes_t align_attrs[4] = {
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES};
    for (int i = 0; i < 4 && st == CUBLAS_STATUS_SUCCESS; ++i)
      st = cublasLtMatmulPreferenceSetAttribute(pref, align_attrs[i], &aligns[i], sizeof aligns[i]);
    std::vector<cublasLtMatmulHeuristicResult_t> results(std::max(1, prefs.limit));
    int returned = 0;
    if (st == CUBLAS_STATUS_SUCCESS)
      st = cublasLtMatmulAlgoGetHeuristic(handle_, desc_, a_.get(), b_.get(), c_layout(), d_.get(),
                                          pref, static_cast<int>(results.size()), results.data(),
                                          &returned);
    cublasLtMatmulPreferenceDestroy(pref);
    if (st == CUBLAS_STATUS_NOT_SUPPORTED || (st == CUBLAS_STATUS_SUCCESS && returned == 0))
      throw_error<NotSupported>(kOp, "cuBLASLt has no algorithm for ", name(p.a.dtype), " x ",
                                name(p.b.dtype), " -> ", name(p.d.dtype), " with epilog ",
                                name(e), " and ", name(p.compute), " (m=", p.m, ", n=", p.n,
                                ", k=", p.k, ", batch=", p.batch, ")");
    GPULA_CHECK(kOp, st);
    for (int i = 0; i < returned; ++i) {
      if (results[i].state != CUBLAS_STATUS_SUCCESS) continue;
      algos_.push_back(results[i]);
      AlgorithmInfo info;
      info.index = static_cast<int>(infos_.size());
      info.algo_id = alg_attr(results[i].algo, CUBLASLT_ALGO_CONFIG_ID);
      info.tile = alg_attr(results[i].algo, CUBLASLT_ALGO_CONFIG_TILE_ID);
      info.stages = alg_attr(results[i].algo, CUBLASLT_ALGO_CONFIG_STAGES_ID);
      info.split_k = std::max(1, alg_attr(results[i].algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM));
      info.workspace_bytes = static_cast<int64_t>(results[i].workspaceSize);
      info.waves_count = results[i].wavesCount;
      infos_.push_back(info);
    }
    if (algos_.empty())
      throw_error<NotSupported>(kOp, "cuBLASLt returned no usable algorithm for ",
                                name(p.a.dtype), " with epilog ", name(e));
  }

  ~CublasLtPlan() override {
    if (graph_) GPULA_CHECK_NOTHROW(cudaGraphExecDestroy(graph_));
    if (capture_stream_) GPULA_CHECK_NOTHROW(cudaStreamDestroy(capture_stream_));
    if (desc_) GPULA_CHECK_NOTHROW(cublasLtMatmulDescDestroy(desc_));
    if (scales_) GPULA_CHECK_NOTHROW(cudaFree(scales_));
  }

  std::vector<AlgorithmInfo> candidates() const override { return infos_; }
  AlgorithmInfo chosen() const override { return infos_[chosen_]; }

  // The second execute in a row with the same operands, stream, algorithm and workspace is
  // captured into a CUDA graph, and every later such execute replays it (one cudaGraphLaunch
  // instead of cuBLASLt's host work: the per-call cost of small planned products). The capture
  // runs on a stream of the plan's own (capturing records work, it runs none), so the replay
  // serves every caller stream, the legacy default stream (which cannot be captured) included.
  // Anything else runs cublasLtMatmul directly: other operands (the function form's
  // rebinding), or a stream that the caller is capturing (the call then becomes part of the
  // caller's graph).
  void execute(const MatmulBuffers& buf, Stream stream) override {
    auto s = static_cast<cudaStream_t>(stream.handle);
    const cublasLtMatmulHeuristicResult_t& r = algos_[chosen_];
    void* ws = r.workspaceSize ? context(device_).workspace(s, r.workspaceSize) : nullptr;
    const GraphKey key{buf, s, chosen_, ws};
    const bool again = has_last_ && key == last_;
    last_ = key;
    has_last_ = true;
    if (!again || stages_scales_ || caller_capturing(s)) {
      run(chosen_, buf, s, ws);
      return;
    }
    if (graph_ && key == graph_key_) {
      GPULA_CHECK(kOp, cudaGraphLaunch(graph_, s));
      return;
    }
    if (graph_) {
      GPULA_CHECK(kOp, cudaGraphExecDestroy(graph_));
      graph_ = nullptr;
    }
    if (!capture_stream_)
      GPULA_CHECK(kOp, cudaStreamCreateWithFlags(&capture_stream_, cudaStreamNonBlocking));
    cudaGraph_t g = nullptr;
    GPULA_CHECK(kOp, cudaStreamBeginCapture(capture_stream_, cudaStreamCaptureModeThreadLocal));
    try {
      run(chosen_, buf, capture_stream_, ws);  // recorded, not run
    } catch (...) {
      cudaStreamEndCapture(capture_stream_, &g);
      if (g) cudaGraphDestroy(g);
      throw;
    }
    GPULA_CHECK(kOp, cudaStreamEndCapture(capture_stream_, &g));
    const cudaError_t inst = cudaGraphInstantiate(&graph_, g, 0);
    GPULA_CHECK_NOTHROW(cudaGraphDestroy(g));
    if (inst != cudaSuccess) {
      graph_ = nullptr;
      GPULA_CHECK(kOp, inst);
    }
    graph_key_ = key;
    GPULA_CHECK(kOp, cudaGraphLaunch(graph_, s));
  }

  AlgorithmInfo autotune(const MatmulBuffers& buf, int iterations, Stream stream,
                         const LogSink& logger) override {
    auto s = static_cast<cudaStream_t>(stream.handle);
    cudaEvent_t start, stop;
    GPULA_CHECK(kOp, cudaEventCreate(&start));
    GPULA_CHECK(kOp, cudaEventCreate(&stop));
    // Repeat short launches so one sample spans at least ~0.2 ms (launch jitter averages out).
    run(0, buf, s);
    GPULA_CHECK(kOp, cudaEventRecord(start, s));
    run(0, buf, s);
    GPULA_CHECK(kOp, cudaEventRecord(stop, s));
    GPULA_CHECK(kOp, cudaEventSynchronize(stop));
    float first = 0;
    GPULA_CHECK(kOp, cudaEventElapsedTime(&first, start, stop));
    const int reps = std::clamp(static_cast<int>(0.2f / std::max(first, 1e-4f)), 1, 50);
    for (std::size_t i = 0; i < algos_.size(); ++i) {
      std::vector<float> samples;
      try {
        run(i, buf, s);  // warm-up
        for (int it = 0; it < iterations; ++it) {
          GPULA_CHECK(kOp, cudaEventRecord(start, s));
          for (int r = 0; r < reps; ++r) run(i, buf, s);
          GPULA_CHECK(kOp, cudaEventRecord(stop, s));
          GPULA_CHECK(kOp, cudaEventSynchronize(stop));
          float ms = 0;
          GPULA_CHECK(kOp, cudaEventElapsedTime(&ms, start, stop));
          samples.push_back(ms / reps);
        }
      } catch (const Error& err) {
        log(LogLevel::info, cat("[matmul] autotune: candidate ", i, " failed: ", err.what()),
            logger);
        infos_[i].time_ms = -1;
        continue;
      }
      std::nth_element(samples.begin(), samples.begin() + samples.size() / 2, samples.end());
      infos_[i].time_ms = samples[samples.size() / 2];
      log(LogLevel::info, cat("[matmul] autotune: ", infos_[i].describe()), logger);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    // Leave the heuristic's first choice only for a clear win (over 3%): timing noise must not
    // make autotuning pick a slower algorithm.
    std::size_t best = 0;
    for (std::size_t i = 1; i < infos_.size(); ++i)
      if (infos_[i].time_ms >= 0 &&
          (infos_[best].time_ms < 0 || infos_[i].time_ms < infos_[best].time_ms))
        best = i;
    if (best != 0 && infos_[0].time_ms >= 0 && infos_[best].time_ms > 0.97f * infos_[0].time_ms)
      best = 0;
    chosen_ = best;
    log(LogLevel::info, cat("[matmul] autotune chose ", infos_[best].describe()), logger);
    return infos_[best];
  }

 private:
  cublasLtMatrixLayout_t c_layout() const { return c_.get() ? c_.get() : d_.get(); }

  void run(std::size_t i, const MatmulBuffers& buf, cudaStream_t s) {
    const cublasLtMatmulHeuristicResult_t& r = algos_[i];
    run(i, buf, s, r.workspaceSize ? context(device_).workspace(s, r.workspaceSize) : nullptr);
  }

  // ws: at least algos_[i].workspaceSize bytes, ordered on the stream the work will run on.
  void run(std::size_t i, const MatmulBuffers& buf, cudaStream_t s, void* ws) {
    const Epilog e = p_.epilog;
    if (epilog_has_bias_input(e)) set_desc(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, buf.bias);
    if (epilog_writes_bgrad(e))
      set_desc(desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER, static_cast<const void*>(buf.bgrad));
    if (epilog_writes_aux(e))
      set_desc(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER,
               static_cast<const void*>(buf.aux_out));
    if (epilog_reads_aux(e)) set_desc(desc_, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER, buf.aux_in);
    // cuBLAS's A is our B (see the file comment). 128x128 block scales are staged padded when
    // cuBLASLt's layout differs from gpula's (padded_block_scales); the copies return to the
    // stream-ordered pool after the matmul that reads them.
    Tensor a_pad, b_pad;
    const void* a_scale = buf.a_scale;
    const void* b_scale = buf.b_scale;
    if (stages_scales_) {
      if (p_.a_scale_mode == ScaleMode::block128x128)
        a_scale = padded_block_scales(buf.a_scale, (p_.m + 127) / 128, s, a_pad);
      if (p_.b_scale_mode == ScaleMode::block128x128)
        b_scale = padded_block_scales(buf.b_scale, (p_.n + 127) / 128, s, b_pad);
    }
    if (p_.b_scale_tensor) set_desc(desc_, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, b_scale);
    if (p_.a_scale_tensor) set_desc(desc_, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, a_scale);
    if (p_.d_scale_tensor) set_desc(desc_, CUBLASLT_MATMUL_DESC_D_SCALE_POINTER, buf.d_scale);
    const bool lt_amax = p_.amax && is_float8(p_.d.dtype);
    if (lt_amax)
      set_desc(desc_, CUBLASLT_MATMUL_DESC_AMAX_D_POINTER, static_cast<const void*>(buf.amax));
    const cublasLtMatmulHeuristicResult_t& r = algos_[i];
    // Without C, fp8 kernels take no in-place C: pass none (beta is zero, C is never read).
    const void* c = p_.has_c ? buf.c : (p_.fp8 ? nullptr : buf.d);
    GPULA_CHECK(kOp, cublasLtMatmul(handle_, desc_, alpha_.bytes, buf.b, a_.get(), buf.a, b_.get(),
                                    beta_.bytes, c, c_layout(), buf.d, d_.get(), &r.algo, ws,
                                    r.workspaceSize, s));
    if (p_.amax && !lt_amax) {
      AmaxArgs am{};
      am.x = buf.d;
      am.kind = p_.d.dtype == DType::f16 ? 0 : p_.d.dtype == DType::bf16 ? 1 : 2;
      am.batch = p_.batch;
      am.rows = p_.m;
      am.cols = p_.n;
      am.row_stride = p_.d.ld;
      am.batch_stride = p_.d.batch_stride;
      am.out = static_cast<float*>(buf.amax);
      GPULA_CHECK(kOp, launch_amax(am, s));
    }
  }

  // cuBLASLt reads 128x128 block scales (H100, cuBLAS 13.1: wrong results otherwise) as `rows`
  // rows of ceil(K/128) rounded up to a multiple of 4 floats; gpula's layout packs the rows
  // (ceil(K/128) floats apart). Returns a zero-padded copy in `keep`, made on `s`.
  const void* padded_block_scales(const void* compact, int64_t rows, cudaStream_t s, Tensor& keep) {
    const int64_t kb = (p_.k + 127) / 128, kb4 = (kb + 3) / 4 * 4;
    keep = Tensor::empty({rows, kb4}, DType::f32, Stream{p_.device, s});
    GPULA_CHECK(kOp, cudaMemsetAsync(keep.data(), 0, static_cast<size_t>(rows * kb4) * 4, s));
    GPULA_CHECK(kOp, cudaMemcpy2DAsync(keep.data(), static_cast<size_t>(kb4) * 4, compact,
                                       static_cast<size_t>(kb) * 4, static_cast<size_t>(kb) * 4,
                                       static_cast<size_t>(rows), cudaMemcpyDeviceToDevice, s));
    return keep.data();
  }

  struct GraphKey {
    MatmulBuffers buf;
    cudaStream_t stream = nullptr;
    std::size_t algo = 0;
    void* workspace = nullptr;
    bool operator==(const GraphKey& o) const {
      return buf.a == o.buf.a && buf.b == o.buf.b && buf.c == o.buf.c && buf.d == o.buf.d &&
             buf.bias == o.buf.bias && buf.aux_in == o.buf.aux_in &&
             buf.aux_out == o.buf.aux_out && buf.bgrad == o.buf.bgrad &&
             buf.a_scale == o.buf.a_scale && buf.b_scale == o.buf.b_scale &&
             buf.d_scale == o.buf.d_scale && buf.amax == o.buf.amax && stream == o.stream &&
             algo == o.algo && workspace == o.workspace;
    }
  };

  // Whether the caller is capturing s (the legacy default stream never is: it cannot be).
  static bool caller_capturing(cudaStream_t s) {
    if (s == nullptr || s == cudaStreamLegacy) return false;
    cudaStreamCaptureStatus st = cudaStreamCaptureStatusNone;
    GPULA_CHECK(kOp, cudaStreamIsCapturing(s, &st));
    return st != cudaStreamCaptureStatusNone;
  }

  GraphKey last_, graph_key_;
  bool has_last_ = false;
  cudaGraphExec_t graph_ = nullptr;
  cudaStream_t capture_stream_ = nullptr;  // created by the first capture, on the plan's device

  MatmulProblem p_;
  int device_;
  // 128x128 block scales whose K-block count is not a multiple of 4 (padded_block_scales).
  bool stages_scales_ = false;
  LogSink logger_;
  cublasLtHandle_t handle_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  LayoutHandle a_, b_, c_, d_;
  void* scales_ = nullptr;
  Scalar alpha_, beta_;
  int64_t workspace_bytes_ = 0;
  std::vector<cublasLtMatmulHeuristicResult_t> algos_;
  std::vector<AlgorithmInfo> infos_;
  std::size_t chosen_ = 0;
};

}  // namespace

std::unique_ptr<MatmulBackendPlan> make_matmul_plan(const MatmulProblem& p,
                                                    const PlanPreferences& prefs,
                                                    int64_t workspace_limit,
                                                    const LogSink& logger) {
  return std::make_unique<CublasLtPlan>(p, prefs, workspace_limit, logger);
}

}  // namespace gpula::detail::cuda
