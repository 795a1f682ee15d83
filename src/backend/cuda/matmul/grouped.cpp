// Grouped matmul on a GPU. Two paths:
//  - grouped_gemm: one cublasGemmGroupedBatchedEx_64 call for all groups (DEFAULT epilogue;
//    bf16, f16, f32 with COMPUTE_32F). This toolkit's cuBLASLt (13.1) has no grouped matrix
//    layouts, so cuBLAS's grouped GEMM is the grouped kernel there is.
//  - per_group: one cuBLASLt matmul per group through the matmul plans (grouped_per_group.h),
//    spread over a few streams, for the bias/activation epilogues and float8.
// "auto" takes per_group for the epilogues and float8, and otherwise chooses per call by the
// groups' mean size (AutoGroupedPlan).
// As in matmul.cpp, numpy's row-major D = A @ B is cuBLAS's column-major D^T = B^T A^T.
#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "backend/cuda/base/check.h"
#include "backend/cuda/base/context.h"
#include "backend/cuda/base/types.h"
#include "core/format.h"
#include "matmul/grouped_per_group.h"

namespace gpula::detail::cuda {
namespace {

constexpr const char* kOp = "grouped_matmul";

// Why grouped_gemm cannot run the problem, or "" when it can.
std::string grouped_gemm_refusal(const GroupedProblem& p) {
  if (p.epilog != Epilog::DEFAULT)
    return cat("it has no epilogues (epilog ", name(p.epilog), ")");
  if (p.a_type != DType::bf16 && p.a_type != DType::f16 && p.a_type != DType::f32)
    return cat("it takes bfloat16, float16 and float32 operands, not ", name(p.a_type));
  if (p.b_type != p.a_type || p.d_type != p.a_type)
    return cat("it needs one dtype for a, b and the result (", name(p.a_type), ", ",
               name(p.b_type), " -> ", name(p.d_type), ")");
  const bool tf32 = p.a_type == DType::f32 && p.compute == ComputeType::COMPUTE_32F_FAST_TF32;
  if (p.compute != ComputeType::COMPUTE_32F && !tf32)
    return cat("it does not take compute_type ", name(p.compute), " with ", name(p.a_type));
  return "";
}

cublasComputeType_t grouped_compute(ComputeType c) {
  return c == ComputeType::COMPUTE_32F_FAST_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                 : CUBLAS_COMPUTE_32F;
}

class GroupedGemmPlan final : public GroupedBackendPlan {
 public:
  explicit GroupedGemmPlan(const GroupedProblem& p) : p_(p), device_(p.device.index) {
    context(device_);  // makes the device current
    GPULA_CHECK(kOp, cudaEventCreateWithFlags(&copied_, cudaEventDisableTiming));
  }
  ~GroupedGemmPlan() override {
    if (copied_) {
      GPULA_CHECK_NOTHROW(cudaEventSynchronize(copied_));
      GPULA_CHECK_NOTHROW(cudaEventDestroy(copied_));
    }
    if (pinned_) GPULA_CHECK_NOTHROW(cudaFreeHost(pinned_));
  }
  GroupedGemmPlan(const GroupedGemmPlan&) = delete;
  GroupedGemmPlan& operator=(const GroupedGemmPlan&) = delete;

  GroupedAlgo algo() const override { return GroupedAlgo::grouped_gemm; }

  void execute(const std::vector<GroupedItem>& items, Stream stream) override {
    auto s = static_cast<cudaStream_t>(stream.handle);
    const std::size_t count = items.size();
    if (count == 0) return;
    Context& ctx = context(device_);
    // Host arrays, one entry per group, each group one product.
    ta_.resize(count);
    tb_.resize(count);
    m_.resize(count);
    n_.resize(count);
    k_.resize(count);
    lda_.resize(count);
    ldb_.resize(count);
    ldc_.resize(count);
    size_.assign(count, 1);
    alpha_.assign(count, 1.0f);
    beta_.assign(count, 0.0f);
    // The device arrays of pointers go through pinned staging in one copy: cuBLAS's A (our B)
    // pointers, then cuBLAS's B (our A), then C (our D). The previous call's copy out of the
    // staging must be done before it is rewritten.
    const std::size_t bytes = 3 * count * sizeof(void*);
    GPULA_CHECK(kOp, cudaEventSynchronize(copied_));
    if (pinned_bytes_ < bytes) {
      if (pinned_) GPULA_CHECK(kOp, cudaFreeHost(pinned_));
      pinned_ = nullptr;
      pinned_bytes_ = 0;
      GPULA_CHECK(kOp, cudaMallocHost(&pinned_, bytes));
      pinned_bytes_ = bytes;
    }
    auto* ptrs = static_cast<const void**>(pinned_);
    for (std::size_t i = 0; i < count; ++i) {
      const GroupedItem& it = items[i];
      ta_[i] = it.b.col_major ? CUBLAS_OP_T : CUBLAS_OP_N;
      tb_[i] = it.a.col_major ? CUBLAS_OP_T : CUBLAS_OP_N;
      m_[i] = it.n;
      n_[i] = it.m;
      k_[i] = it.k;
      lda_[i] = it.b.ld;
      ldb_[i] = it.a.ld;
      ldc_[i] = it.n;
      ptrs[i] = it.pb;
      ptrs[count + i] = it.pa;
      ptrs[2 * count + i] = it.pd;
    }
    Tensor dev = Tensor::empty({static_cast<int64_t>(3 * count)}, DType::i64, stream);
    GPULA_CHECK(kOp, cudaMemcpyAsync(dev.data(), pinned_, bytes, cudaMemcpyHostToDevice, s));
    GPULA_CHECK(kOp, cudaEventRecord(copied_, s));
    auto* dptrs = static_cast<void**>(dev.data());
    cublasHandle_t h = ctx.cublas(s);
    GPULA_CHECK(kOp, cublasSetPointerMode(h, CUBLAS_POINTER_MODE_HOST));
    const cudaDataType_t ab = data_type(p_.a_type, kOp), c = data_type(p_.d_type, kOp);
    GPULA_CHECK(kOp, cublasGemmGroupedBatchedEx_64(
                         h, ta_.data(), tb_.data(), m_.data(), n_.data(), k_.data(),
                         alpha_.data(), const_cast<const void* const*>(dptrs), ab, lda_.data(),
                         const_cast<const void* const*>(dptrs + count), ab, ldb_.data(),
                         beta_.data(), dptrs + 2 * count, c, ldc_.data(),
                         static_cast<int64_t>(count), size_.data(), grouped_compute(p_.compute)));
    // `dev` returns to the stream-ordered pool after the GEMM that reads it.
  }

 private:
  GroupedProblem p_;
  int device_;
  cudaEvent_t copied_ = nullptr;
  void* pinned_ = nullptr;
  std::size_t pinned_bytes_ = 0;
  std::vector<cublasOperation_t> ta_, tb_;
  std::vector<int64_t> m_, n_, k_, lda_, ldb_, ldc_, size_;
  std::vector<float> alpha_, beta_;
};

// per_group on several streams: the groups of one call are spread over the context's side streams
// (Context::side_stream), forked from the caller's stream and joined back with events, largest
// first onto the least loaded stream, so that groups too small to fill the GPU alone run side by
// side. One PerGroupPlan per lane keeps its own matmul plans.
class StreamedPerGroupPlan final : public GroupedBackendPlan {
 public:
  StreamedPerGroupPlan(const GroupedProblem& p, const PerGroupPlan::Factory& make)
      : device_(p.device.index) {
    context(device_);  // makes the device current
    GPULA_CHECK(kOp, cudaEventCreateWithFlags(&forked_, cudaEventDisableTiming));
    for (Lane& lane : lanes_) {
      lane.plan = std::make_unique<PerGroupPlan>(p, make);
      GPULA_CHECK(kOp, cudaEventCreateWithFlags(&lane.done, cudaEventDisableTiming));
    }
  }
  ~StreamedPerGroupPlan() override {
    for (Lane& lane : lanes_)
      if (lane.done) GPULA_CHECK_NOTHROW(cudaEventDestroy(lane.done));
    if (forked_) GPULA_CHECK_NOTHROW(cudaEventDestroy(forked_));
  }
  StreamedPerGroupPlan(const StreamedPerGroupPlan&) = delete;
  StreamedPerGroupPlan& operator=(const StreamedPerGroupPlan&) = delete;

  GroupedAlgo algo() const override { return GroupedAlgo::per_group; }

  void execute(const std::vector<GroupedItem>& items, Stream stream) override {
    if (items.size() < 2) {
      lanes_[0].plan->execute(items, stream);
      return;
    }
    // Largest product first onto the least loaded lane.
    std::vector<std::size_t> order(items.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    auto work = [&](std::size_t i) { return items[i].m * items[i].n * items[i].k; };
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t x, std::size_t y) { return work(x) > work(y); });
    std::array<int64_t, kLanes> load{};
    for (Lane& lane : lanes_) lane.items.clear();
    for (std::size_t i : order) {
      const std::size_t l = static_cast<std::size_t>(
          std::min_element(load.begin(), load.end()) - load.begin());
      lanes_[l].items.push_back(items[i]);
      load[l] += work(i);
    }
    Context& ctx = context(device_);
    auto s = static_cast<cudaStream_t>(stream.handle);
    GPULA_CHECK(kOp, cudaEventRecord(forked_, s));
    for (std::size_t l = 0; l < kLanes; ++l) {
      Lane& lane = lanes_[l];
      if (lane.items.empty()) continue;
      cudaStream_t side = ctx.side_stream(static_cast<int>(l));
      GPULA_CHECK(kOp, cudaStreamWaitEvent(side, forked_, 0));
      lane.plan->execute(lane.items, Stream{stream.device, side});
      GPULA_CHECK(kOp, cudaEventRecord(lane.done, side));
      GPULA_CHECK(kOp, cudaStreamWaitEvent(s, lane.done, 0));
    }
  }

 private:
  static constexpr std::size_t kLanes = Context::kSideStreams;
  struct Lane {
    std::unique_ptr<PerGroupPlan> plan;
    cudaEvent_t done = nullptr;
    std::vector<GroupedItem> items;
  };
  int device_;
  cudaEvent_t forked_ = nullptr;
  std::array<Lane, kLanes> lanes_{};
};

// "auto" where both paths apply: chosen per call from the groups' mean row count (routing changes
// it every step). H100, bf16 (bench_grouped.py, 2026-12-07): 64 groups of ~1024 rows, K=4096,
// N=1536: grouped GEMM 2.76 ms, one cuBLASLt call per group 1.80; 1024 groups of ~16 rows, K=N=1024:
// grouped GEMM 0.65 ms, per group 5.85.
class AutoGroupedPlan final : public GroupedBackendPlan {
 public:
  AutoGroupedPlan(const GroupedProblem& p, const PerGroupPlan::Factory& make)
      : grouped_(p), per_group_(p, make) {}
  GroupedAlgo algo() const override { return last_; }
  void execute(const std::vector<GroupedItem>& items, Stream stream) override {
    int64_t rows = 0;
    for (const GroupedItem& it : items) rows += it.m;
    const bool large = !items.empty() && rows >= kPerGroupRows * static_cast<int64_t>(items.size());
    last_ = large ? GroupedAlgo::per_group : GroupedAlgo::grouped_gemm;
    if (large)
      per_group_.execute(items, stream);
    else
      grouped_.execute(items, stream);
  }

 private:
  static constexpr int64_t kPerGroupRows = 256;
  GroupedGemmPlan grouped_;
  StreamedPerGroupPlan per_group_;
  GroupedAlgo last_ = GroupedAlgo::automatic;
};

}  // namespace

std::unique_ptr<GroupedBackendPlan> make_grouped_plan(const GroupedProblem& p, GroupedAlgo algo,
                                                      int64_t workspace_limit,
                                                      const LogSink& logger) {
  const std::string why = grouped_gemm_refusal(p);
  if (algo == GroupedAlgo::grouped_gemm && !why.empty())
    throw_error<NotSupported>(kOp, "grouped_algo 'grouped_gemm' does not apply: ", why,
                              "; use 'per_group' or 'auto'");
  const PerGroupPlan::Factory make = [workspace_limit, logger](const MatmulProblem& mp) {
    return make_matmul_plan(mp, PlanPreferences{1}, workspace_limit, logger);
  };
  if (algo == GroupedAlgo::grouped_gemm) return std::make_unique<GroupedGemmPlan>(p);
  if (algo == GroupedAlgo::automatic && why.empty()) return std::make_unique<AutoGroupedPlan>(p, make);
  return std::make_unique<StreamedPerGroupPlan>(p, make);
}

}  // namespace gpula::detail::cuda
