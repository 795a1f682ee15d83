// Matmul front: argument checks, plan state, staging copies, dispatch to cpu:: or cuda::.
#include <gpula/matmul.h>

#include <algorithm>

#include "backend/cpu_api.h"
#include "backend/cuda_api.h"
#include "core/format.h"
#include "matmul/dtype_rules.h"
#include "matmul/front_checks.h"
#include "matmul/impl.h"
#include "matmul/scales.h"

namespace gpula {

using detail::cat;
using detail::throw_error;

namespace {

constexpr const char* kOp = "matmul";

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

void check_operand_dtype(const char* arg, DType t) {
  detail::check_matmul_operand_dtype(kOp, arg, t);
}
using detail::alignment;
using detail::compute_allowed;
using detail::default_compute;
using detail::result_allowed;
using detail::scale_for;

void zero(const TensorView& v, Stream s) {
  if (v.numel() == 0) return;
  if (v.device.is_cuda())
    detail::cuda::fill_zero(v, s);
  else
    detail::cpu::fill_zero(v);
}

std::string layout_str(const TensorView& v) {
  return cat(v.describe(), " strides ", detail::shape_str(v.strides));
}

// Same layout, and at least the alignment the plan assumed (device pointers only).
bool same_layout(const TensorView& x, const TensorView& y) {
  return x.dtype == y.dtype && x.shape == y.shape && x.strides == y.strides &&
         x.device == y.device && (!x.device.is_cuda() || alignment(y.data) >= alignment(x.data));
}

const char* bgrad_name(Epilog e) {
  switch (e) {
    case Epilog::DRELU_BGRAD: return "drelu_bgrad";
    case Epilog::DGELU_BGRAD: return "dgelu_bgrad";
    case Epilog::BGRADA: return "bgrada";
    case Epilog::BGRADB: return "bgradb";
    default: return "";
  }
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Construction

Matmul::Matmul(const TensorView& a, const TensorView& b, const std::optional<TensorView>& c,
               std::complex<double> alpha, std::optional<std::complex<double>> beta_in,
               const MatmulOptions& options, const QuantizationScales& scales)
    : impl_(std::make_unique<Impl>()) {
  Impl& I = *impl_;
  detail::check_tensor_view(kOp, "a", a);
  detail::check_tensor_view(kOp, "b", b);
  if (c) detail::check_tensor_view(kOp, "c", *c);
  if (c && !beta_in)
    throw_error<InvalidArgument>(kOp,
                                 "beta is required when c is given (the result is "
                                 "alpha * a @ b + beta * c)");
  const std::complex<double> beta = beta_in.value_or(0.0);
  check_operand_dtype("a", a.dtype);
  check_operand_dtype("b", b.dtype);
  const bool fp8 = is_float8(a.dtype) || is_float8(b.dtype);
  if (a.dtype != b.dtype && !(is_float8(a.dtype) && is_float8(b.dtype)))
    throw_error<DTypeError>(kOp, "dtype mismatch: a is ", name(a.dtype), ", b is ", name(b.dtype));
  if (a.dtype == DType::f8_e5m2 && b.dtype == DType::f8_e5m2)
    throw_error<NotSupported>(kOp, "float8_e5m2 x float8_e5m2 is not supported (cuBLASLt needs at "
                              "least one float8_e4m3fn operand)");
  if (b.device != a.device)
    throw_error<InvalidArgument>(kOp, "operands on different devices: a on ", to_string(a.device),
                                 ", b on ", to_string(b.device));
  if (c && c->device != a.device)
    throw_error<InvalidArgument>(kOp, "operands on different devices: a on ", to_string(a.device),
                                 ", c on ", to_string(c->device));
  I.data_device = a.device;
  I.exec_device = options.device.value_or(a.device);
  if (I.exec_device.is_cuda() && !detail::cuda::compiled()) throw NotCompiled(kOp, "device", "cuda");
  if (I.exec_device.is_cuda() && I.exec_device.index >= detail::cuda::device_count())
    throw_error<NotSupported>(kOp, "no CUDA device ", to_string(I.exec_device), " (",
                              detail::cuda::device_count(), " visible)");
  if (fp8 && !I.exec_device.is_cuda())
    throw_error<NotSupported>(kOp, name(a.dtype), " is not supported on the CPU backend");

  const ComputeType compute = options.compute_type.value_or(default_compute(a.dtype));
  if (!compute_allowed(a.dtype, compute))
    throw_error<InvalidArgument>(kOp, "compute_type ", name(compute), " does not apply to ",
                                 name(a.dtype), " operands");
  const DType scale = scale_for(compute, a.dtype);
  if (options.scale_type && *options.scale_type != scale)
    throw_error<DTypeError>(kOp, "scale_type ", name(*options.scale_type), " does not apply to ",
                            name(compute), " with ", name(a.dtype), " operands (expected ",
                            name(scale), ")");
  const DType result = options.result_type.value_or(a.dtype);
  if (!result_allowed(a.dtype, result))
    throw_error<DTypeError>(kOp, "result_type ", name(result), " is not available for ",
                            name(a.dtype), " operands");
  if (c) {
    const DType want = is_float8(result) ? DType::bf16 : result;
    if (c->dtype != want)
      throw_error<DTypeError>(kOp, "dtype mismatch: c is ", name(c->dtype), ", expected ",
                              name(want));
  }
  if (beta != 0.0 && !c)
    throw_error<InvalidArgument>(kOp, "beta is ", beta.real(), " but c is not given");
  if (!is_complex(a.dtype) && (alpha.imag() != 0.0 || beta.imag() != 0.0))
    throw_error<InvalidArgument>(kOp, "complex alpha or beta with real ", name(a.dtype),
                                 " operands");

  I.a = a;
  I.b = b;
  I.c = c;
  I.alpha = alpha;
  I.beta = beta;
  I.options = options;
  I.scales = scales;
  I.problem.compute = compute;
  I.problem.scale_type = scale;
  I.problem.d.dtype = result;
  I.problem.fp8 = fp8;
  // Shape checks now, so that errors come from the constructor.
  I.layout = detail::plan_matmul_layout(kOp, a, b, c, {});
}

Matmul::~Matmul() = default;
Matmul::Matmul(Matmul&&) noexcept = default;
Matmul& Matmul::operator=(Matmul&&) noexcept = default;

namespace {

// The Impl of a Matmul that was not moved from.
Matmul::Impl& impl_of(const std::unique_ptr<Matmul::Impl>& p) {
  if (!p) throw_error<InvalidArgument>(kOp, "this Matmul was moved from");
  return *p;
}

}  // namespace

void Matmul::Impl::check_usable(const char* what) const {
  if (freed) throw_error<InvalidArgument>(kOp, what, "() called after free()");
  if (!planned) throw_error<InvalidArgument>(kOp, what, "() called before plan()");
}

// ---------------------------------------------------------------------------------------------
// Planning

std::vector<AlgorithmInfo> Matmul::plan(Epilog epilog, const EpilogInputs& inputs,
                                        const PlanPreferences& preferences) {
  Impl& I = impl_of(impl_);
  std::lock_guard lock(I.mu);
  if (I.freed) throw_error<InvalidArgument>(kOp, "plan() called after free()");
  // Until this plan succeeds: a plan() that throws leaves no half-changed plan to execute.
  I.planned = false;
  const DType in = I.a.dtype, result = I.problem.d.dtype;
  if (epilog != Epilog::DEFAULT && is_complex(in))
    throw_error<NotSupported>(kOp, "epilog ", name(epilog), " is not available for ", name(in),
                              " operands");
  const bool wants_bias = detail::epilog_has_bias_input(epilog);
  const bool reads_aux = detail::epilog_reads_aux(epilog);
  const bool relu = detail::epilog_is_relu_family(epilog);
  if (wants_bias && !inputs.bias)
    throw_error<InvalidArgument>(kOp, "epilog ", name(epilog), " needs epilog_inputs['bias']");
  if (!wants_bias && inputs.bias)
    throw_error<InvalidArgument>(kOp, "epilog ", name(epilog), " takes no 'bias'");
  if (reads_aux && relu && !inputs.relu_aux)
    throw_error<InvalidArgument>(kOp, "epilog ", name(epilog), " needs epilog_inputs['relu_aux']");
  if (reads_aux && !relu && !inputs.gelu_aux)
    throw_error<InvalidArgument>(kOp, "epilog ", name(epilog), " needs epilog_inputs['gelu_aux']");
  if (inputs.relu_aux && !(reads_aux && relu))
    throw_error<InvalidArgument>(kOp, "epilog ", name(epilog), " takes no 'relu_aux'");
  if (inputs.gelu_aux && !(reads_aux && !relu))
    throw_error<InvalidArgument>(kOp, "epilog ", name(epilog), " takes no 'gelu_aux'");
  if (inputs.bias) detail::check_tensor_view(kOp, "bias", *inputs.bias);
  if (inputs.relu_aux) detail::check_tensor_view(kOp, "relu_aux", *inputs.relu_aux);
  if (inputs.gelu_aux) detail::check_tensor_view(kOp, "gelu_aux", *inputs.gelu_aux);
  if (preferences.limit < 1)
    throw_error<InvalidArgument>(kOp, "preferences.limit must be >= 1, got ", preferences.limit);
  const detail::ScaleModes modes =
      detail::resolve_scale_modes(I.a, I.b, inputs, I.scales, result, I.exec_device);

  detail::LayoutRequest req;
  req.force_stage = I.exec_device != I.data_device;
  req.allow_fold = !detail::epilog_writes_bgrad(epilog);
  if (I.problem.fp8 && I.exec_device.is_cuda()) {
    // cuBLASLt's fp8 kernels read A^T B in its column-major terms: our A row-major, B col-major.
    req.a_order = detail::Order::row_major;
    req.b_order = detail::Order::col_major;
  }
  const detail::MatmulLayout L0 = detail::plan_matmul_layout(kOp, I.a, I.b, I.c, req);
  const int64_t n = L0.n;
  const int64_t m_item = I.a.ndim() == 1 ? 1 : I.a.shape[I.a.ndim() - 2];

  detail::MatmulProblem& P = I.problem;
  P.device = I.exec_device;
  P.alpha = I.alpha;
  P.epilog = epilog;
  P.scales = I.scales;
  P.a_scale_tensor = inputs.a_scale.has_value();
  P.b_scale_tensor = inputs.b_scale.has_value();
  P.d_scale_tensor = inputs.d_scale.has_value();
  P.a_scale_mode = modes.a;
  P.b_scale_mode = modes.b;
  P.amax = inputs.amax;
  P.bias_type = is_float8(result) ? DType::bf16 : result;
  P.aux_type = is_float8(result) ? DType::bf16 : result;
  P.bgrad_len = epilog == Epilog::BGRADA ? m_item : n;
  P.aux_ld = relu ? round_up(n, 128) : round_up(n, 8);
  // The fields that depend on how operands are laid out.
  auto apply_layout = [&](const detail::MatmulLayout& L) {
    P.m = L.m;
    P.n = L.n;
    P.k = L.k_zero ? 1 : L.k;
    P.batch = L.batch;
    P.a = L.a.desc;
    P.b = L.b.desc;
    if (L.k_zero) {
      P.a = {I.a.dtype, L.m, 1, false, 1, 0};
      P.b = {I.b.dtype, 1, L.n, P.fp8, P.fp8 ? 1 : std::max<int64_t>(1, L.n), 0};
    }
    P.has_c = L.has_c && I.beta != 0.0;
    if (L.has_c) P.c = L.c.desc;
    P.d = {result, L.m, L.n, false, std::max<int64_t>(1, L.n), L.m * L.n};
    P.beta = P.has_c ? I.beta : 0.0;
    P.align_a = L.a.staged || L.k_zero ? 256 : alignment(I.a.data);
    P.align_b = L.b.staged || L.k_zero ? 256 : alignment(I.b.data);
    P.align_c = !L.has_c || L.c.staged ? 256 : alignment(I.c->data);
  };
  apply_layout(L0);

  // Epilogue inputs.
  if (inputs.bias) {
    const TensorView& bias = *inputs.bias;
    if (bias.ndim() != 1 || bias.shape[0] != n)
      throw_error<InvalidArgument>(kOp, "bias must have shape (", n, ",) (one value per output "
                                   "column), got ", bias.shape_str());
    if (bias.dtype != P.bias_type)
      throw_error<DTypeError>(kOp, "bias is ", name(bias.dtype), ", expected ", name(P.bias_type));
    if (bias.device != I.data_device)
      throw_error<InvalidArgument>(kOp, "operands on different devices: a on ",
                                   to_string(I.data_device), ", bias on ", to_string(bias.device));
  }
  Shape batch_shape = L0.batch_shape;
  Shape aux_shape = batch_shape;
  aux_shape.push_back(m_item);
  aux_shape.push_back(relu ? P.aux_ld / 8 : P.aux_ld);
  const DType aux_dtype = relu ? DType::u8 : P.aux_type;
  const char* aux_name = relu ? "relu_aux" : "gelu_aux";
  if (reads_aux) {
    const TensorView& aux = relu ? *inputs.relu_aux : *inputs.gelu_aux;
    if (aux.shape != aux_shape || aux.dtype != aux_dtype || !aux.is_contiguous())
      throw_error<InvalidArgument>(kOp, aux_name, " must be the contiguous ", name(aux_dtype), " ",
                                   detail::shape_str(aux_shape), " array a forward call returned, got ",
                                   layout_str(aux));
    if (aux.device != I.data_device)
      throw_error<InvalidArgument>(kOp, "operands on different devices: a on ",
                                   to_string(I.data_device), ", ", aux_name, " on ",
                                   to_string(aux.device));
  }

  // Outputs.
  I.specs.clear();
  I.specs.push_back({"result", L0.result_shape, result});
  if (detail::epilog_writes_aux(epilog)) I.specs.push_back({aux_name, aux_shape, aux_dtype});
  if (detail::epilog_writes_bgrad(epilog)) {
    Shape s = batch_shape;
    s.push_back(P.bgrad_len);
    I.specs.push_back({bgrad_name(epilog), s, P.bias_type});
  }
  if (P.amax) I.specs.push_back({"amax", {}, DType::f32});

  detail::check_output_bytes(kOp, I.specs);

  I.layout = L0;
  I.m_item = m_item;
  I.epilog = epilog;
  I.inputs = inputs;
  I.preferences = preferences;
  I.cpu_fallback.reset();
  I.backend.reset();
  // K = 0 with row-wise or block scales: scales of no blocks, and a result of zeros (run()).
  const bool structured =
      P.a_scale_mode != ScaleMode::tensor || P.b_scale_mode != ScaleMode::tensor;
  const bool empty = P.m == 0 || P.n == 0 || P.batch == 0 || (L0.k_zero && structured);
  if (!empty && I.exec_device.is_cuda()) {
    const MemoryLimit& ml = I.options.memory_limit;
    I.memory_limit =
        ml.bytes >= 0 ? ml.bytes
                      : static_cast<int64_t>(ml.fraction *
                                             detail::cuda::total_memory(I.exec_device.index));
    // cuBLASLt has kernels for some epilogues (BGRADA, BGRADB) and types only with particular
    // operand orders: when the natural layout has none, stage operands in the other orders.
    std::vector<detail::LayoutRequest> tries{req};
    if (!P.fp8) {
      using O = detail::Order;
      for (auto [ao, bo] : {std::pair{O::col_major, O::any}, {O::any, O::col_major},
                            {O::col_major, O::col_major}, {O::row_major, O::row_major}}) {
        detail::LayoutRequest r = req;
        r.a_order = ao;
        r.b_order = bo;
        tries.push_back(r);
      }
    }
    for (std::size_t t = 0; t < tries.size(); ++t) {
      if (t > 0) {
        I.layout = detail::plan_matmul_layout(kOp, I.a, I.b, I.c, tries[t]);
        apply_layout(I.layout);
      }
      try {
        I.backend =
            detail::cuda::make_matmul_plan(P, preferences, I.memory_limit, I.options.logger);
        break;
      } catch (const NotSupported& e) {
        if (t + 1 == tries.size()) {
          I.layout = L0;
          apply_layout(L0);
          throw;
        }
        log(LogLevel::debug, cat("[matmul] ", e.what(), "; trying other operand orders"),
            I.options.logger);
      }
    }
  } else if (!empty) {
    I.backend = detail::cpu::make_matmul_plan(P, preferences);
  }
  I.planned = true;
  const auto& Ls = I.layout;
  log(LogLevel::info,
      cat("[matmul] planned ", name(in), " m=", P.m, " n=", P.n, " k=", Ls.k, " batch=", P.batch,
          Ls.folded ? " (batch folded into m)" : "", " epilog ", name(epilog), " on ",
          to_string(I.exec_device), Ls.a.staged ? "; a staged by one copy" : "",
          Ls.b.staged ? "; b staged by one copy" : "", Ls.c.staged ? "; c staged by one copy" : "",
          I.backend ? "; using " + I.backend->chosen().describe() : std::string()),
      I.options.logger);
  return I.backend ? I.backend->candidates() : std::vector<AlgorithmInfo>{};
}

// ---------------------------------------------------------------------------------------------
// Execution

namespace {

// Copies the current operand into a fresh buffer laid out as planned.
const void* stage(const detail::OperandLayout& L, const TensorView& operand, Device exec,
                  Stream s, std::vector<Tensor>& keep, int64_t& budget) {
  if (!L.staged) return operand.data;
  const int64_t bytes = L.staged_elems * static_cast<int64_t>(size_of(L.desc.dtype));
  if (exec.is_cuda() && bytes > budget)
    throw_error<OutOfMemory>(kOp, "staging a copy of an operand needs ", bytes,
                             " bytes of device memory, over what memory_limit leaves (", budget,
                             " bytes)");
  budget -= bytes;
  Tensor t = Tensor::empty({std::max<int64_t>(1, L.staged_elems)}, L.desc.dtype, s);
  TensorView src = L.source;
  src.data = operand.data;
  TensorView dst{t.data(), L.desc.dtype, src.shape, L.staged_strides, exec};
  copy(src, dst, s);
  keep.push_back(std::move(t));
  return keep.back().data();
}

}  // namespace

detail::MatmulBuffers Matmul::Impl::stage_inputs(Stream s, std::vector<Tensor>& keep) const {
  detail::MatmulBuffers buf;
  const bool remote = exec_device != data_device;
  int64_t budget = memory_limit;  // what staging may take on a GPU
  if (layout.k_zero) {
    Tensor z = Tensor::empty({std::max<int64_t>(problem.m, problem.n)}, a.dtype, s);
    zero(z.view(), s);
    keep.push_back(z);
    buf.a = buf.b = z.data();
  } else {
    buf.a = stage(layout.a, a, exec_device, s, keep, budget);
    buf.b = stage(layout.b, b, exec_device, s, keep, budget);
  }
  if (problem.has_c) buf.c = stage(layout.c, *c, exec_device, s, keep, budget);
  auto on_exec = [&](const TensorView& v) -> const void* {
    if (!remote && (v.ndim() != 1 || v.strides[0] == 1)) return v.data;
    Tensor t = Tensor::empty(v.shape, v.dtype, s);
    copy(v, t.view(), s);
    keep.push_back(t);
    return t.data();
  };
  // Scale tensors keep their memory layout (checked dense): copied as flat arrays when remote.
  auto on_exec_flat = [&](const TensorView& v) -> const void* {
    if (!remote) return v.data;
    const Shape flat{v.numel()};
    Tensor t = Tensor::empty(flat, v.dtype, s);
    copy(TensorView{v.data, v.dtype, flat, {1}, v.device}, t.view(), s);
    keep.push_back(t);
    return t.data();
  };
  if (inputs.a_scale) buf.a_scale = on_exec_flat(*inputs.a_scale);
  if (inputs.b_scale) buf.b_scale = on_exec_flat(*inputs.b_scale);
  if (inputs.d_scale) buf.d_scale = on_exec_flat(*inputs.d_scale);
  if (inputs.bias) buf.bias = on_exec(*inputs.bias);
  if (inputs.relu_aux) buf.aux_in = on_exec(*inputs.relu_aux);
  if (inputs.gelu_aux) buf.aux_in = on_exec(*inputs.gelu_aux);
  return buf;
}

void Matmul::Impl::run(const MatmulOutputs& out, Stream stream) {
  const Stream s = detail::exec_stream(kOp, exec_device, stream);
  const bool remote = exec_device != data_device;
  std::vector<Tensor> keep;
  // Outputs where the work runs: the caller's, or temporaries copied back at the end.
  MatmulOutputs remote_out;
  if (remote) {
    auto make = [&](const TensorView& v) {
      Tensor t = Tensor::empty(v.shape, v.dtype, s);
      keep.push_back(t);
      return t.view();
    };
    remote_out.result = make(out.result);
    for (const auto& [k, v] : out.aux) remote_out.aux[k] = make(v);
  }
  const MatmulOutputs& local = remote ? remote_out : out;
  const TensorView* bgrad = nullptr;
  const TensorView* aux_out = nullptr;
  const TensorView* amax = nullptr;
  for (const auto& [k, v] : local.aux)
    (k == "amax" ? amax : k == "relu_aux" || k == "gelu_aux" ? aux_out : bgrad) = &v;
  if (amax) zero(*amax, s);  // cuBLASLt folds into it; nothing was multiplied when no backend runs

  if (!backend) {
    // An empty problem (only the bias gradient has elements: sums over nothing), or K = 0 with
    // row-wise or block scales (a result of zeros).
    if (bgrad) zero(*bgrad, s);
    zero(local.result, s);
  } else {
    detail::MatmulBuffers buf = stage_inputs(s, keep);
    buf.d = local.result.data;
    if (aux_out) buf.aux_out = aux_out->data;
    if (bgrad) buf.bgrad = bgrad->data;
    if (amax) buf.amax = amax->data;
    backend->execute(buf, s);
  }
  if (remote) {
    copy(local.result, out.result, s);
    for (const auto& [k, v] : local.aux) copy(v, out.aux.at(k), s);
  }
  if (s.device.is_cuda() && (options.blocking || remote)) detail::cuda::synchronize(s);
  // Staging buffers go back to the stream-ordered pool here; later work on `s` may reuse them.
}

void Matmul::execute(const MatmulOutputs& out, Stream stream) {
  Impl& I = impl_of(impl_);
  std::lock_guard lock(I.mu);
  I.execute_into(out, stream);
}

void Matmul::Impl::execute_into(const MatmulOutputs& out, Stream stream) {
  Impl& I = *this;
  I.check_usable("execute");
  // Outputs must be what output_specs() says, where the data lives, contiguous.
  auto check_out = [&](const OutputSpec& spec, const TensorView& v) {
    detail::check_tensor_view(kOp, cat("output '", spec.name, "'").c_str(), v);
    if (v.shape != spec.shape || v.dtype != spec.dtype || !v.is_contiguous() ||
        v.device != I.data_device)
      throw_error<InvalidArgument>(kOp, "output '", spec.name, "' must be a contiguous ",
                                   name(spec.dtype), " ", detail::shape_str(spec.shape),
                                   " array on ", to_string(I.data_device), ", got ",
                                   layout_str(v));
    if (v.device.is_cuda() && v.numel() > 0 && alignment(v.data) < 256)
      throw_error<InvalidArgument>(kOp, "output '", spec.name,
                                   "' must be 256-byte aligned on the GPU, got address ", v.data);
  };
  check_out(I.specs[0], out.result);
  if (out.aux.size() != I.specs.size() - 1)
    throw_error<InvalidArgument>(kOp, "epilog ", name(I.epilog), " writes ", I.specs.size() - 1,
                                 " aux outputs, got ", out.aux.size());
  for (std::size_t i = 1; i < I.specs.size(); ++i) {
    auto it = out.aux.find(I.specs[i].name);
    if (it == out.aux.end())
      throw_error<InvalidArgument>(kOp, "missing aux output '", I.specs[i].name, "'");
    check_out(I.specs[i], it->second);
  }
  try {
    I.run(out, stream);
  } catch (const OutOfMemory& e) {
    if (I.options.fallback != Fallback::cpu || !I.exec_device.is_cuda()) throw;
    log(LogLevel::warning, cat("[matmul] out of GPU memory (", e.what(), "); running on the CPU"),
        I.options.logger);
    if (!I.cpu_fallback) {
      MatmulOptions o = I.options;
      o.device = Device::cpu();
      o.fallback = Fallback::none;
      I.cpu_fallback =
          std::make_unique<Matmul>(I.a, I.b, I.c, I.alpha, I.beta, o, I.scales);
      I.cpu_fallback->plan(I.epilog, I.inputs, I.preferences);
    }
    I.cpu_fallback->execute(out, stream);
  }
}

MatmulResult Matmul::execute(Stream stream) {
  Impl& I = impl_of(impl_);
  std::lock_guard lock(I.mu);
  I.check_usable("execute");
  Stream alloc{I.data_device, stream.device == I.data_device ? stream.handle : nullptr};
  MatmulResult r;
  MatmulOutputs out;
  for (const OutputSpec& spec : I.specs) {
    Tensor t = Tensor::empty(spec.shape, spec.dtype, alloc);
    if (spec.name == "result") {
      out.result = t.view();
      r.result = std::move(t);
    } else {
      out.aux[spec.name] = t.view();
      r.aux[spec.name] = std::move(t);
    }
  }
  I.execute_into(out, stream);
  return r;
}

AlgorithmInfo Matmul::autotune(int iterations, Stream stream) {
  Impl& I = impl_of(impl_);
  std::lock_guard lock(I.mu);
  I.check_usable("autotune");
  if (iterations < 1)
    throw_error<InvalidArgument>(kOp, "autotune iterations must be >= 1, got ", iterations);
  if (!I.backend) return {};
  const Stream s = detail::exec_stream(kOp, I.exec_device, stream);
  std::vector<Tensor> keep;
  detail::MatmulBuffers buf = I.stage_inputs(s, keep);
  // Scratch outputs, so that autotuning never writes into a caller's arrays.
  auto scratch = [&](const OutputSpec& spec) {
    keep.push_back(Tensor::empty(spec.shape, spec.dtype, s));
    return keep.back().data();
  };
  buf.d = scratch(I.specs[0]);
  for (std::size_t i = 1; i < I.specs.size(); ++i) {
    const std::string& nm = I.specs[i].name;
    (nm == "amax" ? buf.amax : nm == "relu_aux" || nm == "gelu_aux" ? buf.aux_out : buf.bgrad) =
        scratch(I.specs[i]);
  }
  return I.backend->autotune(buf, iterations, s, I.options.logger);
}

void Matmul::reset_operands(const OperandUpdate& u) {
  Impl& I = impl_of(impl_);
  std::lock_guard lock(I.mu);
  if (I.freed) throw_error<InvalidArgument>("matmul.reset_operands", "called after free()");
  auto check = [&](const char* arg, const TensorView& old, const TensorView& now) {
    if (!same_layout(old, now))
      throw_error<InvalidArgument>("matmul.reset_operands", arg,
                                   " must keep its layout: planned ", layout_str(old),
                                   ", got ", layout_str(now));
  };
  auto check_opt = [&](const char* arg, const std::optional<TensorView>& old,
                       const std::optional<TensorView>& now) {
    if (!now) return;
    if (!old)
      throw_error<InvalidArgument>("matmul.reset_operands", arg,
                                   " was not an operand of this plan");
    check(arg, *old, *now);
  };
  for (const auto& [arg, v] : {std::pair{"a", &u.a},
                               {"b", &u.b},
                               {"c", &u.c},
                               {"bias", &u.epilog_inputs.bias},
                               {"relu_aux", &u.epilog_inputs.relu_aux},
                               {"gelu_aux", &u.epilog_inputs.gelu_aux},
                               {"a_scale", &u.epilog_inputs.a_scale},
                               {"b_scale", &u.epilog_inputs.b_scale},
                               {"d_scale", &u.epilog_inputs.d_scale}})
    if (*v) detail::check_tensor_view("matmul.reset_operands", arg, **v);
  if (u.a) check("a", I.a, *u.a);
  if (u.b) check("b", I.b, *u.b);
  check_opt("c", I.c, u.c);
  check_opt("bias", I.inputs.bias, u.epilog_inputs.bias);
  check_opt("relu_aux", I.inputs.relu_aux, u.epilog_inputs.relu_aux);
  check_opt("gelu_aux", I.inputs.gelu_aux, u.epilog_inputs.gelu_aux);
  check_opt("a_scale", I.inputs.a_scale, u.epilog_inputs.a_scale);
  check_opt("b_scale", I.inputs.b_scale, u.epilog_inputs.b_scale);
  check_opt("d_scale", I.inputs.d_scale, u.epilog_inputs.d_scale);
  if (u.a) I.a.data = u.a->data;
  if (u.b) I.b.data = u.b->data;
  if (u.c) I.c->data = u.c->data;
  if (u.epilog_inputs.bias) I.inputs.bias->data = u.epilog_inputs.bias->data;
  if (u.epilog_inputs.relu_aux) I.inputs.relu_aux->data = u.epilog_inputs.relu_aux->data;
  if (u.epilog_inputs.gelu_aux) I.inputs.gelu_aux->data = u.epilog_inputs.gelu_aux->data;
  if (u.epilog_inputs.a_scale) I.inputs.a_scale->data = u.epilog_inputs.a_scale->data;
  if (u.epilog_inputs.b_scale) I.inputs.b_scale->data = u.epilog_inputs.b_scale->data;
  if (u.epilog_inputs.d_scale) I.inputs.d_scale->data = u.epilog_inputs.d_scale->data;
  I.cpu_fallback.reset();
}

void Matmul::free() {
  Impl& I = impl_of(impl_);
  std::lock_guard lock(I.mu);
  I.backend.reset();
  I.cpu_fallback.reset();
  I.freed = true;
}

std::vector<OutputSpec> Matmul::output_specs() const {
  const Impl& I = impl_of(impl_);
  std::lock_guard lock(I.mu);
  I.check_usable("output_specs");
  return I.specs;
}
Device Matmul::device() const { return impl_of(impl_).exec_device; }  // fixed at construction
bool Matmul::planned() const {
  const Impl& I = impl_of(impl_);
  std::lock_guard lock(I.mu);
  return I.planned && !I.freed;
}
AlgorithmInfo Matmul::algorithm() const {
  const Impl& I = impl_of(impl_);
  std::lock_guard lock(I.mu);
  I.check_usable("algorithm");
  return I.backend ? I.backend->chosen() : AlgorithmInfo{};
}

namespace detail {

void rebind(Matmul::Impl& I, const TensorView& a, const TensorView& b,
            const std::optional<TensorView>& c, const EpilogInputs& inputs,
            const LogSink& logger) {
  std::lock_guard lock(I.mu);
  I.a.data = a.data;
  I.b.data = b.data;
  if (c) I.c->data = c->data;
  if (inputs.bias) I.inputs.bias->data = inputs.bias->data;
  if (inputs.relu_aux) I.inputs.relu_aux->data = inputs.relu_aux->data;
  if (inputs.gelu_aux) I.inputs.gelu_aux->data = inputs.gelu_aux->data;
  if (inputs.a_scale) I.inputs.a_scale->data = inputs.a_scale->data;
  if (inputs.b_scale) I.inputs.b_scale->data = inputs.b_scale->data;
  if (inputs.d_scale) I.inputs.d_scale->data = inputs.d_scale->data;
  I.options.logger = logger;
  I.cpu_fallback.reset();
}

}  // namespace detail

}  // namespace gpula
