// The function form: a per-thread LRU cache of planned Matmul objects.
#include <functional>
#include <list>
#include <memory>
#include <unordered_map>

#include "matmul/impl.h"
#include "matmul/scales.h"

namespace gpula {
namespace {

struct OperandKey {
  bool present = false;
  DType dtype = DType::f32;
  Shape shape, strides;
  Device device{};
  int alignment = 0;
  bool operator==(const OperandKey&) const = default;
};

// Alignment matters only to GPU plans (cuBLASLt's kernel choice).
OperandKey key_of(const std::optional<TensorView>& v) {
  if (!v) return {};
  const auto p = reinterpret_cast<std::uintptr_t>(v->data);
  const int align = !v->device.is_cuda() || p == 0
                        ? 256
                        : static_cast<int>(std::min<std::uintptr_t>(256, p & (~p + 1)));
  return {true, v->dtype, v->shape, v->strides, v->device, align};
}

struct MatmulKey {
  OperandKey a, b, c, bias, relu_aux, gelu_aux, a_scale, b_scale, d_scale;
  ScaleMode a_scale_mode, b_scale_mode;
  bool amax;
  double alpha_re, alpha_im;
  bool has_beta;  // c without beta is refused by the constructor: never a cache hit
  double beta_re, beta_im;
  float scale_a, scale_b, scale_d;
  Epilog epilog;
  int compute, scale_type, result_type;  // -1: default
  int64_t memory_limit_bytes;
  double memory_limit_fraction;
  bool has_device;
  Device device;
  Fallback fallback;
  bool blocking;
  bool operator==(const MatmulKey&) const = default;
};

template <class T>
void mix(std::size_t& h, const T& v) {
  h ^= std::hash<T>{}(v) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
}

void mix_operand(std::size_t& h, const OperandKey& k) {
  mix(h, k.present);
  mix(h, static_cast<int>(k.dtype));
  for (int64_t d : k.shape) mix(h, d);
  for (int64_t d : k.strides) mix(h, d);
  mix(h, static_cast<int>(k.device.kind) * 1024 + k.device.index);
  mix(h, k.alignment);
}

struct MatmulKeyHash {
  std::size_t operator()(const MatmulKey& k) const {
    std::size_t h = 0;
    for (const OperandKey* o : {&k.a, &k.b, &k.c, &k.bias, &k.relu_aux, &k.gelu_aux, &k.a_scale,
                                &k.b_scale, &k.d_scale})
      mix_operand(h, *o);
    mix(h, static_cast<int>(k.a_scale_mode) * 16 + static_cast<int>(k.b_scale_mode));
    mix(h, k.amax);
    mix(h, k.alpha_re);
    mix(h, k.alpha_im);
    mix(h, k.has_beta);
    mix(h, k.beta_re);
    mix(h, k.beta_im);
    mix(h, k.scale_a);
    mix(h, k.scale_b);
    mix(h, k.scale_d);
    mix(h, static_cast<int>(k.epilog));
    mix(h, k.compute);
    mix(h, k.scale_type);
    mix(h, k.result_type);
    mix(h, k.memory_limit_bytes);
    mix(h, k.memory_limit_fraction);
    mix(h, k.has_device);
    mix(h, static_cast<int>(k.device.kind) * 1024 + k.device.index);
    mix(h, static_cast<int>(k.fallback));
    mix(h, k.blocking);
    return h;
  }
};

template <class E>
int opt_int(const std::optional<E>& e) {
  return e ? static_cast<int>(*e) : -1;
}

class PlanCache {
 public:
  static constexpr std::size_t kCapacity = 64;

  // Shared with callers, so that a plan a caller holds outlives its eviction.
  using Plan = std::shared_ptr<Matmul>;

  const Plan* find(const MatmulKey& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return &it->second->second;
  }

  const Plan& insert(const MatmulKey& key, Plan plan) {
    order_.emplace_front(key, std::move(plan));
    index_[key] = order_.begin();
    if (order_.size() > kCapacity) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    return order_.front().second;
  }

  std::size_t size() const { return order_.size(); }
  void clear() {
    index_.clear();
    order_.clear();
  }

 private:
  using Entry = std::pair<MatmulKey, Plan>;
  std::list<Entry> order_;
  std::unordered_map<MatmulKey, std::list<Entry>::iterator, MatmulKeyHash> index_;
};

PlanCache& cache() {
  thread_local PlanCache c;
  return c;
}

}  // namespace

std::shared_ptr<Matmul> cached_matmul(const TensorView& a, const TensorView& b,
                                      const std::optional<TensorView>& c,
                                      std::complex<double> alpha,
                                      std::optional<std::complex<double>> beta, Epilog epilog,
                                      const EpilogInputs& inputs, const MatmulOptions& options,
                                      const QuantizationScales& scales) {
  const MatmulOptions& o = options;
  MatmulKey key{key_of(a),
                key_of(b),
                key_of(c),
                key_of(inputs.bias),
                key_of(inputs.relu_aux),
                key_of(inputs.gelu_aux),
                key_of(inputs.a_scale),
                key_of(inputs.b_scale),
                key_of(inputs.d_scale),
                inputs.a_scale_mode,
                inputs.b_scale_mode,
                inputs.amax,
                alpha.real(),
                alpha.imag(),
                beta.has_value(),
                beta.value_or(0.0).real(),
                beta.value_or(0.0).imag(),
                scales.a,
                scales.b,
                scales.d,
                epilog,
                opt_int(o.compute_type),
                opt_int(o.scale_type),
                opt_int(o.result_type),
                o.memory_limit.bytes,
                o.memory_limit.fraction,
                o.device.has_value(),
                o.device.value_or(Device{}),
                o.fallback,
                o.blocking};
  PlanCache& pc = cache();
  if (const PlanCache::Plan* hit = pc.find(key)) {
    detail::rebind(detail::MatmulAccess::impl(**hit), a, b, c, inputs, options.logger);
    return *hit;
  }
  // fp8 scale tensors are checked before the constructor picks (and perhaps refuses) a backend.
  detail::resolve_scale_modes(a, b, inputs, scales, options.result_type.value_or(a.dtype),
                              options.device.value_or(a.device));
  auto plan = std::make_shared<Matmul>(a, b, c, alpha, beta, options, scales);
  plan->plan(epilog, inputs);
  return pc.insert(key, std::move(plan));
}

MatmulResult matmul(const TensorView& a, const TensorView& b, const std::optional<TensorView>& c,
                    std::complex<double> alpha, std::optional<std::complex<double>> beta,
                    Epilog epilog, const EpilogInputs& inputs, const MatmulOptions& options,
                    Stream stream, const QuantizationScales& scales) {
  return cached_matmul(a, b, c, alpha, beta, epilog, inputs, options, scales)->execute(stream);
}

std::size_t matmul_cache_size() { return cache().size(); }
void matmul_cache_clear() { cache().clear(); }

}  // namespace gpula
