#include <gpula/matmul.h>

#include <cstdio>

#include "matmul/matmul_backend.h"

namespace gpula {

std::string_view name(Epilog e) {
  switch (e) {
    case Epilog::DEFAULT: return "DEFAULT";
    case Epilog::RELU: return "RELU";
    case Epilog::RELU_AUX: return "RELU_AUX";
    case Epilog::BIAS: return "BIAS";
    case Epilog::RELU_BIAS: return "RELU_BIAS";
    case Epilog::RELU_AUX_BIAS: return "RELU_AUX_BIAS";
    case Epilog::GELU: return "GELU";
    case Epilog::GELU_AUX: return "GELU_AUX";
    case Epilog::GELU_BIAS: return "GELU_BIAS";
    case Epilog::GELU_AUX_BIAS: return "GELU_AUX_BIAS";
    case Epilog::DRELU: return "DRELU";
    case Epilog::DRELU_BGRAD: return "DRELU_BGRAD";
    case Epilog::DGELU: return "DGELU";
    case Epilog::DGELU_BGRAD: return "DGELU_BGRAD";
    case Epilog::BGRADA: return "BGRADA";
    case Epilog::BGRADB: return "BGRADB";
  }
  return "?";
}

std::string_view name(ComputeType c) {
  switch (c) {
    case ComputeType::COMPUTE_16F: return "COMPUTE_16F";
    case ComputeType::COMPUTE_16F_PEDANTIC: return "COMPUTE_16F_PEDANTIC";
    case ComputeType::COMPUTE_32F: return "COMPUTE_32F";
    case ComputeType::COMPUTE_32F_PEDANTIC: return "COMPUTE_32F_PEDANTIC";
    case ComputeType::COMPUTE_32F_FAST_16F: return "COMPUTE_32F_FAST_16F";
    case ComputeType::COMPUTE_32F_FAST_16BF: return "COMPUTE_32F_FAST_16BF";
    case ComputeType::COMPUTE_32F_FAST_TF32: return "COMPUTE_32F_FAST_TF32";
    case ComputeType::COMPUTE_64F: return "COMPUTE_64F";
    case ComputeType::COMPUTE_64F_PEDANTIC: return "COMPUTE_64F_PEDANTIC";
  }
  return "?";
}

std::string AlgorithmInfo::describe() const {
  char buf[160];
  if (algo_id < 0)
    std::snprintf(buf, sizeof buf, "#%d cpu blas%s", index, "");
  else
    std::snprintf(buf, sizeof buf, "#%d algo %d tile %d stages %d split-k %d workspace %lld B waves %.2f",
                  index, algo_id, tile, stages, split_k, static_cast<long long>(workspace_bytes),
                  waves_count);
  std::string s = buf;
  if (time_ms >= 0) s += " time " + std::to_string(time_ms) + " ms";
  return s;
}

namespace detail {

bool epilog_has_bias_input(Epilog e) {
  return e == Epilog::BIAS || e == Epilog::RELU_BIAS || e == Epilog::RELU_AUX_BIAS ||
         e == Epilog::GELU_BIAS || e == Epilog::GELU_AUX_BIAS;
}
bool epilog_writes_aux(Epilog e) {
  return e == Epilog::RELU_AUX || e == Epilog::RELU_AUX_BIAS || e == Epilog::GELU_AUX ||
         e == Epilog::GELU_AUX_BIAS;
}
bool epilog_reads_aux(Epilog e) {
  return e == Epilog::DRELU || e == Epilog::DRELU_BGRAD || e == Epilog::DGELU ||
         e == Epilog::DGELU_BGRAD;
}
bool epilog_is_relu_family(Epilog e) {
  return e == Epilog::RELU_AUX || e == Epilog::RELU_AUX_BIAS || e == Epilog::DRELU ||
         e == Epilog::DRELU_BGRAD;
}
bool epilog_writes_bgrad(Epilog e) {
  return e == Epilog::DRELU_BGRAD || e == Epilog::DGELU_BGRAD || e == Epilog::BGRADA ||
         e == Epilog::BGRADB;
}

}  // namespace detail
}  // namespace gpula
