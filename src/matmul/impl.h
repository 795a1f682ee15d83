#pragma once
// Matmul's state, shared by matmul.cpp (the plan object) and matmul_cache.cpp (function form).
#include <gpula/matmul.h>

#include <mutex>

#include "matmul/layout.h"

namespace gpula {

struct Matmul::Impl {
  // Held by every public member function: the fields below, the backend plan's own state (a
  // cuBLASLt plan's CUDA graph) and the lazily made CPU fallback change during calls.
  mutable std::mutex mu;

  // As given (pointers are swapped by reset_operands).
  TensorView a, b;
  std::optional<TensorView> c;
  std::complex<double> alpha, beta;
  MatmulOptions options;
  QuantizationScales scales;
  Device data_device, exec_device;
  detail::MatmulLayout layout;
  int64_t m_item = 0;  // rows of one batch item of the result (before folding)

  // After plan().
  bool planned = false;
  bool freed = false;
  Epilog epilog = Epilog::DEFAULT;
  EpilogInputs inputs;
  PlanPreferences preferences;
  detail::MatmulProblem problem;
  std::unique_ptr<detail::MatmulBackendPlan> backend;
  std::vector<OutputSpec> specs;
  int64_t memory_limit = 0;  // device bytes this plan may take for workspace and staging
  std::unique_ptr<Matmul> cpu_fallback;  // made on the first out-of-memory, when allowed

  // The members below expect `mu` held.
  void check_usable(const char* what) const;
  // Operand pointers where the work runs, staging (copying) what cannot be read in place.
  detail::MatmulBuffers stage_inputs(Stream s, std::vector<Tensor>& keep) const;
  void run(const MatmulOutputs& out, Stream stream);
  // Matmul::execute(outputs): checks the outputs, runs, falls back to the CPU when allowed.
  void execute_into(const MatmulOutputs& out, Stream stream);
};

namespace detail {
struct MatmulAccess {
  static Matmul::Impl& impl(Matmul& m) { return *m.impl_; }
};
// Swaps data pointers of operands known to have the planned layouts (cache hits); takes the
// plan's mutex.
void rebind(Matmul::Impl& impl, const TensorView& a, const TensorView& b,
            const std::optional<TensorView>& c, const EpilogInputs& inputs,
            const LogSink& logger);
}  // namespace detail

}  // namespace gpula
