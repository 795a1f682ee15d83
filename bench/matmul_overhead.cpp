// Per-call cost of a small (64x64x64) planned matmul from C++, against plain cuBLASLt.
//
// For each case: plan once, warm up, then time N back-to-back calls on one stream.
//   us_per_call      host clock over the N calls plus the final synchronize, divided by N
//                    (the cost a caller pays per call in a loop; bounded below by the device's
//                    own rate for tiny kernels, see device_us_per_call)
//   host_enqueue_us  host clock over bursts of kBurst calls, the synchronize left out; bursts
//                    stay under the launch queue's depth, so this is the host-side cost alone
//   device_us_per_call  CUDA events around the N calls, divided by N
// Each number is the median of kRepeats repeats. Output: one tab-separated line per number,
//   cpp_overhead <case> <metric> <value>
#include <gpula/gpula.h>

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr int kDim = 64;
constexpr int kRepeats = 5;
constexpr int kBurst = 256;       // calls per host-enqueue burst (well under the queue depth)
constexpr int kBurstRounds = 40;  // bursts per repeat

int g_n_calls = 20000;

#define BENCH_CUDA(call)                                                                    \
  do {                                                                                      \
    cudaError_t err_ = (call);                                                              \
    if (err_ != cudaSuccess) {                                                              \
      std::fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,             \
                   cudaGetErrorString(err_));                                               \
      std::exit(1);                                                                         \
    }                                                                                       \
  } while (0)

#define BENCH_CUBLAS(call)                                                                  \
  do {                                                                                      \
    cublasStatus_t st_ = (call);                                                            \
    if (st_ != CUBLAS_STATUS_SUCCESS) {                                                     \
      std::fprintf(stderr, "%s:%d: %s failed: status %d\n", __FILE__, __LINE__, #call,      \
                   static_cast<int>(st_));                                                  \
      std::exit(1);                                                                         \
    }                                                                                       \
  } while (0)

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

uint16_t to_bf16(float f) {  // round to nearest even
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
}

float from_bf16(uint16_t h) {
  uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// Device buffers for one 64^3 problem: A (M,K), B (K,N), D (M,N), row-major, random inputs.
struct Problem {
  gpula::DType dtype;
  std::size_t elem;
  void* a = nullptr;
  void* b = nullptr;
  void* d = nullptr;
  std::vector<double> a_host, b_host;  // the values actually stored (after rounding)

  Problem(gpula::DType t, uint32_t seed) : dtype(t), elem(gpula::size_of(t)) {
    const std::size_t n = static_cast<std::size_t>(kDim) * kDim;
    std::mt19937 gen(seed);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    auto fill = [&](void*& dev, std::vector<double>& host) {
      host.resize(n);
      std::vector<unsigned char> bytes(n * elem);
      for (std::size_t i = 0; i < n; ++i) {
        const float x = dist(gen);
        if (dtype == gpula::DType::bf16) {
          const uint16_t h = to_bf16(x);
          std::memcpy(&bytes[i * 2], &h, 2);
          host[i] = from_bf16(h);
        } else {
          std::memcpy(&bytes[i * 4], &x, 4);
          host[i] = x;
        }
      }
      BENCH_CUDA(cudaMalloc(&dev, n * elem));
      BENCH_CUDA(cudaMemcpy(dev, bytes.data(), n * elem, cudaMemcpyHostToDevice));
    };
    fill(a, a_host);
    fill(b, b_host);
    BENCH_CUDA(cudaMalloc(&d, n * elem));
  }
  ~Problem() {
    cudaFree(a);
    cudaFree(b);
    cudaFree(d);
  }
  Problem(const Problem&) = delete;
  Problem& operator=(const Problem&) = delete;

  gpula::TensorView view(void* p) const {
    return {p, dtype, {kDim, kDim}, {kDim, 1}, gpula::Device::cuda(0)};
  }
  gpula::TensorView va() const { return view(a); }
  gpula::TensorView vb() const { return view(b); }
  gpula::TensorView vd() const { return view(d); }

  void poison_d() const {
    BENCH_CUDA(cudaMemset(d, 0xff, static_cast<std::size_t>(kDim) * kDim * elem));  // NaNs
    BENCH_CUDA(cudaDeviceSynchronize());  // the timed stream does not wait on the legacy stream
  }

  // ||D - A@B||_F / ||A@B||_F against a float64 host reference; D read from `dev`.
  double rel_error(const void* dev) const {
    const std::size_t n = static_cast<std::size_t>(kDim) * kDim;
    std::vector<unsigned char> bytes(n * elem);
    BENCH_CUDA(cudaMemcpy(bytes.data(), dev, n * elem, cudaMemcpyDeviceToHost));
    double num = 0, den = 0;
    for (int i = 0; i < kDim; ++i)
      for (int j = 0; j < kDim; ++j) {
        double ref = 0;
        for (int k = 0; k < kDim; ++k) ref += a_host[i * kDim + k] * b_host[k * kDim + j];
        const std::size_t idx = static_cast<std::size_t>(i) * kDim + j;
        double got;
        if (dtype == gpula::DType::bf16) {
          uint16_t h;
          std::memcpy(&h, &bytes[idx * 2], 2);
          got = from_bf16(h);
        } else {
          float f;
          std::memcpy(&f, &bytes[idx * 4], 4);
          got = f;
        }
        if (!std::isfinite(got)) return INFINITY;  // unwritten (poisoned) or broken
        num += (got - ref) * (got - ref);
        den += ref * ref;
      }
    return std::sqrt(num / den);
  }
};

void print_line(const std::string& name, const char* metric, double value) {
  std::printf("cpp_overhead\t%s\t%s\t%.3f\n", name.c_str(), metric, value);
  std::fflush(stdout);
}

// Times `call` (one enqueue of the operation on `stream`) the three ways described at the top.
void time_case(const std::string& name, cudaStream_t stream, const std::function<void()>& call) {
  // Warm-up: module loading, handle and workspace creation, plan-cache fill.
  for (int i = 0; i < 200; ++i) call();
  BENCH_CUDA(cudaStreamSynchronize(stream));
  BENCH_CUDA(cudaGetLastError());

  cudaEvent_t e0, e1;
  BENCH_CUDA(cudaEventCreate(&e0));
  BENCH_CUDA(cudaEventCreate(&e1));
  std::vector<double> wall, device, enqueue;
  for (int r = 0; r < kRepeats; ++r) {
    BENCH_CUDA(cudaStreamSynchronize(stream));
    BENCH_CUDA(cudaEventRecord(e0, stream));
    const auto t0 = Clock::now();
    for (int i = 0; i < g_n_calls; ++i) call();
    BENCH_CUDA(cudaEventRecord(e1, stream));
    BENCH_CUDA(cudaStreamSynchronize(stream));
    const auto t1 = Clock::now();
    float ms = 0;
    BENCH_CUDA(cudaEventElapsedTime(&ms, e0, e1));
    wall.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / g_n_calls);
    device.push_back(1e3 * ms / g_n_calls);

    double burst_us = 0;
    for (int b = 0; b < kBurstRounds; ++b) {
      BENCH_CUDA(cudaStreamSynchronize(stream));
      const auto s0 = Clock::now();
      for (int i = 0; i < kBurst; ++i) call();
      const auto s1 = Clock::now();
      burst_us += std::chrono::duration<double, std::micro>(s1 - s0).count();
    }
    BENCH_CUDA(cudaStreamSynchronize(stream));
    enqueue.push_back(burst_us / (kBurstRounds * kBurst));
  }
  BENCH_CUDA(cudaGetLastError());
  BENCH_CUDA(cudaEventDestroy(e0));
  BENCH_CUDA(cudaEventDestroy(e1));
  print_line(name, "us_per_call", median(wall));
  print_line(name, "host_enqueue_us", median(enqueue));
  print_line(name, "device_us_per_call", median(device));
}

// Plain cuBLASLt for the same row-major problem: the floor gpula's own path sits on.
struct RawLt {
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  cublasLtMatmulAlgo_t algo{};
  void* workspace = nullptr;
  std::size_t workspace_bytes = 32u << 20;

  explicit RawLt(cudaDataType_t t) {
    BENCH_CUBLAS(cublasLtCreate(&handle));
    BENCH_CUBLAS(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    // Row-major D = A @ B is column-major D^T = B^T @ A^T: pass B first.
    BENCH_CUBLAS(cublasLtMatrixLayoutCreate(&la, t, kDim, kDim, kDim));  // B as (N, K), ld N
    BENCH_CUBLAS(cublasLtMatrixLayoutCreate(&lb, t, kDim, kDim, kDim));  // A as (K, M), ld K
    BENCH_CUBLAS(cublasLtMatrixLayoutCreate(&ld, t, kDim, kDim, kDim));  // D as (N, M), ld N
    BENCH_CUDA(cudaMalloc(&workspace, workspace_bytes));
    cublasLtMatmulPreference_t pref;
    BENCH_CUBLAS(cublasLtMatmulPreferenceCreate(&pref));
    BENCH_CUBLAS(cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace_bytes, sizeof workspace_bytes));
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    BENCH_CUBLAS(cublasLtMatmulAlgoGetHeuristic(handle, desc, la, lb, ld, ld, pref, 1, &result,
                                                &found));
    BENCH_CUBLAS(cublasLtMatmulPreferenceDestroy(pref));
    if (found < 1) {
      std::fprintf(stderr, "cuBLASLt heuristic found no algorithm\n");
      std::exit(1);
    }
    algo = result.algo;
  }
  ~RawLt() {
    cudaFree(workspace);
    cublasLtMatrixLayoutDestroy(la);
    cublasLtMatrixLayoutDestroy(lb);
    cublasLtMatrixLayoutDestroy(ld);
    cublasLtMatmulDescDestroy(desc);
    cublasLtDestroy(handle);
  }
  void run(const Problem& p, cudaStream_t s) {
    const float alpha = 1.0f, beta = 0.0f;
    BENCH_CUBLAS(cublasLtMatmul(handle, desc, &alpha, p.b, la, p.a, lb, &beta, p.d, ld, p.d, ld,
                                &algo, workspace, workspace_bytes, s));
  }
};

void report_error(const std::string& name, const Problem& p) {
  print_line(name, "rel_error", p.rel_error(p.d));
}

void run_dtype(gpula::DType dtype, const char* suffix, cudaStream_t stream) {
  const gpula::Stream gs{gpula::Device::cuda(0), stream};
  const std::string sfx = suffix;
  Problem p(dtype, dtype == gpula::DType::bf16 ? 7u : 3u);
  const auto call_function_form = [&] {
    return gpula::matmul(p.va(), p.vb(), std::nullopt, 1.0, 0.0, gpula::Epilog::DEFAULT, {}, {},
                         gs);
  };
  // Checked first, while no pooled buffer can hold this product from an earlier call.
  gpula::matmul_cache_clear();
  {
    gpula::MatmulResult r = call_function_form();
    BENCH_CUDA(cudaStreamSynchronize(stream));
    print_line("function_form_64" + sfx, "rel_error", p.rel_error(r.result.data()));
  }

  // Planned: plan once, execute into caller-provided outputs.
  {
    gpula::Matmul mm(p.va(), p.vb());
    mm.plan();
    gpula::MatmulOutputs out{p.vd(), {}};
    p.poison_d();
    mm.execute(out, gs);
    BENCH_CUDA(cudaStreamSynchronize(stream));
    report_error("planned_execute_64" + sfx, p);
    time_case("planned_execute_64" + sfx, stream, [&] { mm.execute(out, gs); });

    // Planned, gpula allocates the output on each call (stream-ordered pool).
    time_case("planned_execute_alloc_64" + sfx, stream, [&] { (void)mm.execute(gs); });
  }
  // Function form: plan taken from the per-thread cache on each call, result allocated.
  time_case("function_form_64" + sfx, stream, [&] { (void)call_function_form(); });
  // Plain cuBLASLt, same problem, same stream.
  {
    RawLt lt(dtype == gpula::DType::bf16 ? CUDA_R_16BF : CUDA_R_32F);
    p.poison_d();
    lt.run(p, stream);
    BENCH_CUDA(cudaStreamSynchronize(stream));
    report_error("raw_cublaslt_64" + sfx, p);
    time_case("raw_cublaslt_64" + sfx, stream, [&] { lt.run(p, stream); });
  }
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--calls") == 0 && i + 1 < argc) g_n_calls = std::atoi(argv[++i]);
    else {
      std::fprintf(stderr, "usage: %s [--calls N]\n", argv[0]);
      return 2;
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("cpp_overhead\tskipped\tno_cuda_device\t0\n");
    return 0;
  }
  cudaDeviceProp prop{};
  BENCH_CUDA(cudaGetDeviceProperties(&prop, 0));
  std::printf("# device %s, %d calls per repeat, median of %d repeats\n", prop.name, g_n_calls,
              kRepeats);
  BENCH_CUDA(cudaSetDevice(0));
  cudaStream_t stream;
  BENCH_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  try {
    run_dtype(gpula::DType::f32, "", stream);
    run_dtype(gpula::DType::bf16, "_bf16", stream);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "matmul_overhead: %s\n", e.what());
    return 1;
  }
  BENCH_CUDA(cudaStreamDestroy(stream));
  return 0;
}
