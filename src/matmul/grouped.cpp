// GroupedMatmul front: argument checks, offsets, operand staging, the groups handed to the
// backend plan (cpu:: or cuda::, chosen once at plan()).
#include <gpula/grouped_matmul.h>

#include <algorithm>
#include <mutex>

#include "backend/cpu_api.h"
#include "backend/cuda_api.h"
#include "core/format.h"
#include "matmul/dtype_rules.h"
#include "matmul/front_checks.h"
#include "matmul/grouped_backend.h"
#include "matmul/layout.h"

namespace gpula {

using detail::cat;
using detail::throw_error;

std::string_view name(GroupedAlgo a) {
  switch (a) {
    case GroupedAlgo::automatic: return "auto";
    case GroupedAlgo::grouped_gemm: return "grouped_gemm";
    case GroupedAlgo::per_group: return "per_group";
  }
  return "?";
}

namespace {

constexpr const char* kOp = "grouped_matmul";

bool epilog_supported(Epilog e) {
  return e == Epilog::DEFAULT || e == Epilog::RELU || e == Epilog::GELU || e == Epilog::BIAS ||
         e == Epilog::RELU_BIAS || e == Epilog::GELU_BIAS;
}

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

std::string layout_str(const TensorView& v) {
  return cat(v.describe(), " strides ", detail::shape_str(v.strides));
}

// How a rows x cols matrix with element strides (rs, cs) is read in place: row-major or
// column-major with a leading dimension; nullopt when it is neither (zero, negative or
// interleaved strides), and the matrix is staged.
struct InPlace {
  bool col_major = false;
  int64_t ld = 1;
};
std::optional<InPlace> in_place(int64_t rows, int64_t cols, int64_t rs, int64_t cs,
                                detail::Order want) {
  using detail::Order;
  if (want != Order::col_major && (cols <= 1 || cs == 1) &&
      (rows <= 1 || rs >= std::max<int64_t>(1, cols)))
    return InPlace{false, rows <= 1 ? std::max<int64_t>(1, cols) : rs};
  if (want != Order::row_major && (rows <= 1 || rs == 1) &&
      (cols <= 1 || cs >= std::max<int64_t>(1, rows)))
    return InPlace{true, cols <= 1 ? std::max<int64_t>(1, rows) : cs};
  return std::nullopt;
}

// An operand as the groups read it: the caller's memory, or a staged copy made per execute.
struct Operand {
  TensorView view;             // as given (data swapped by reset_operands)
  std::optional<InPlace> read; // nullopt: staged into `staged_strides`
  Shape staged_strides;
  bool staged_col_major = false;
};

// Strides of a contiguous stack of row- or column-major matrices over (..., rows, cols).
Shape stack_strides(const Shape& shape, bool col_major) {
  Shape s = contiguous_strides(shape);
  const std::size_t n = shape.size();
  if (col_major && n >= 2) {
    s[n - 2] = 1;
    s[n - 1] = std::max<int64_t>(1, shape[n - 2]);
  }
  return s;
}

Operand make_operand(const TensorView& v, detail::Order want) {
  Operand op;
  op.view = v;
  const std::size_t n = v.shape.size();
  op.read = in_place(v.shape[n - 2], v.shape[n - 1], v.strides[n - 2], v.strides[n - 1], want);
  if (!op.read) {
    op.staged_col_major = want == detail::Order::col_major;
    op.staged_strides = stack_strides(v.shape, op.staged_col_major);
  }
  return op;
}

// The operand's memory for this execute, and how its matrices are read.
struct Bound {
  const char* data = nullptr;
  InPlace read;
  int64_t stack_stride = 0;  // elements between matrices of a 3-D stack
};
Bound bind_operand(const Operand& op, Stream s, std::vector<Tensor>& keep) {
  const TensorView& v = op.view;
  const std::size_t n = v.shape.size();
  Bound b;
  if (op.read) {
    b.data = static_cast<const char*>(v.data);
    b.read = *op.read;
    b.stack_stride = n == 3 ? v.strides[0] : 0;
    return b;
  }
  Tensor t = Tensor::empty({std::max<int64_t>(1, v.numel())}, v.dtype, s);
  TensorView dst{t.data(), v.dtype, v.shape, op.staged_strides, v.device};
  copy(v, dst, s);
  keep.push_back(t);
  b.data = static_cast<const char*>(t.data());
  b.read = *in_place(v.shape[n - 2], v.shape[n - 1], op.staged_strides[n - 2],
                     op.staged_strides[n - 1], detail::Order::any);
  b.stack_stride = n == 3 ? op.staged_strides[0] : 0;
  return b;
}

bool same_layout(const TensorView& x, const TensorView& y) {
  return x.dtype == y.dtype && x.shape == y.shape && x.strides == y.strides &&
         x.device == y.device;
}

}  // namespace

struct GroupedMatmul::Impl {
  std::mutex mu;
  bool list_form = false;
  GroupedMatmulOptions options;
  QuantizationScales scales;
  Device device;
  detail::GroupedProblem problem;
  detail::Order a_order = detail::Order::any, b_order = detail::Order::any;
  // MoE form
  Operand a, b;
  int64_t t = 0, k = 0, n = 0, e = 0;
  std::optional<TensorView> offsets;
  // List form
  std::vector<Operand> as, bs;
  // After plan()
  bool planned = false, freed = false;
  Epilog epilog = Epilog::DEFAULT;
  GroupedEpilogInputs inputs;
  std::vector<OutputSpec> specs;
  std::unique_ptr<detail::GroupedBackendPlan> backend;

  void resolve_types(DType at, DType bt);
  void check_usable(const char* what) const {
    if (freed) throw_error<InvalidArgument>(kOp, what, "() called after free()");
    if (!planned) throw_error<InvalidArgument>(kOp, what, "() called before plan()");
  }
  std::vector<int64_t> read_offsets(const TensorView& off, Stream s) const;
  const char* bias_data(const TensorView& bias, Stream s, std::vector<Tensor>& keep) const;
  void run(const std::vector<TensorView>& results, const std::optional<TensorView>& offsets,
           Stream stream);
};

// Matmul's type rules, then where the work runs.
void GroupedMatmul::Impl::resolve_types(DType at, DType bt) {
  detail::check_matmul_operand_dtype(kOp, "a", at);
  detail::check_matmul_operand_dtype(kOp, "b", bt);
  const bool fp8 = is_float8(at) || is_float8(bt);
  if (at != bt && !(is_float8(at) && is_float8(bt)))
    throw_error<DTypeError>(kOp, "dtype mismatch: a is ", name(at), ", b is ", name(bt));
  if (at == DType::f8_e5m2 && bt == DType::f8_e5m2)
    throw_error<NotSupported>(kOp, "float8_e5m2 x float8_e5m2 is not supported (cuBLASLt needs at "
                              "least one float8_e4m3fn operand)");
  if (options.device && *options.device != device)
    throw_error<NotSupported>(kOp, "options.device ", to_string(*options.device),
                              " differs from where the data lives (", to_string(device),
                              "); grouped_matmul runs where the data is");
  if (options.fallback != Fallback::none)
    throw_error<NotSupported>(kOp, "options.fallback 'cpu' is not supported");
  if (device.is_cuda() && !detail::cuda::compiled()) throw NotCompiled(kOp, "device", "cuda");
  if (device.is_cuda() && device.index >= detail::cuda::device_count())
    throw_error<NotSupported>(kOp, "no CUDA device ", to_string(device), " (",
                              detail::cuda::device_count(), " visible)");
  if (fp8 && !device.is_cuda())
    throw_error<NotSupported>(kOp, name(at), " is not supported on the CPU backend");
  const ComputeType compute = options.compute_type.value_or(detail::default_compute(at));
  if (!detail::compute_allowed(at, compute))
    throw_error<InvalidArgument>(kOp, "compute_type ", name(compute), " does not apply to ",
                                 name(at), " operands");
  const DType scale = detail::scale_for(compute, at);
  if (options.scale_type && *options.scale_type != scale)
    throw_error<DTypeError>(kOp, "scale_type ", name(*options.scale_type), " does not apply to ",
                            name(compute), " with ", name(at), " operands (expected ",
                            name(scale), ")");
  const DType result = options.result_type.value_or(at);
  if (!detail::result_allowed(at, result))
    throw_error<DTypeError>(kOp, "result_type ", name(result), " is not available for ",
                            name(at), " operands");
  problem.device = device;
  problem.a_type = at;
  problem.b_type = bt;
  problem.d_type = result;
  problem.bias_type = is_float8(result) ? DType::bf16 : result;
  problem.compute = compute;
  problem.scale_type = scale;
  problem.scales = scales;
  problem.fp8 = fp8;
  // cuBLASLt's fp8 kernels read our A row-major and our B column-major.
  if (fp8 && device.is_cuda()) {
    a_order = detail::Order::row_major;
    b_order = detail::Order::col_major;
  }
}

// ---------------------------------------------------------------------------------------------
// Construction

GroupedMatmul::GroupedMatmul(const TensorView& a, const TensorView& b,
                             const std::optional<TensorView>& offsets,
                             const GroupedMatmulOptions& options, const QuantizationScales& scales)
    : impl_(std::make_unique<Impl>()) {
  Impl& I = *impl_;
  detail::check_tensor_view(kOp, "a", a);
  detail::check_tensor_view(kOp, "b", b);
  if (offsets) detail::check_tensor_view(kOp, "offsets", *offsets);
  if (a.ndim() != 2)
    throw_error<InvalidArgument>(kOp, "a must be 2-D (tokens, K), got shape ", a.shape_str());
  if (b.ndim() != 3)
    throw_error<InvalidArgument>(kOp, "b must be 3-D (groups, K, N), got shape ", b.shape_str());
  if (a.shape[1] != b.shape[1])
    throw_error<InvalidArgument>(kOp, "a has ", a.shape[1], " columns (K) but b has ", b.shape[1],
                                 " rows per group: shapes ", a.shape_str(), " and ",
                                 b.shape_str());
  if (b.device != a.device)
    throw_error<InvalidArgument>(kOp, "operands on different devices: a on ", to_string(a.device),
                                 ", b on ", to_string(b.device));
  I.options = options;
  I.scales = scales;
  I.device = a.device;
  I.resolve_types(a.dtype, b.dtype);
  I.t = a.shape[0];
  I.k = a.shape[1];
  I.e = b.shape[0];
  I.n = b.shape[2];
  I.a = make_operand(a, I.a_order);
  I.b = make_operand(b, I.b_order);
  if (offsets) {
    I.read_offsets(*offsets, detail::exec_stream(kOp, I.device, {}));  // checked now
    I.offsets = offsets;
  }
}

GroupedMatmul::GroupedMatmul(const std::vector<TensorView>& a, const std::vector<TensorView>& b,
                             const GroupedMatmulOptions& options, const QuantizationScales& scales)
    : impl_(std::make_unique<Impl>()) {
  Impl& I = *impl_;
  I.list_form = true;
  I.options = options;
  I.scales = scales;
  if (a.size() != b.size())
    throw_error<InvalidArgument>(kOp, "a has ", a.size(), " matrices but b has ", b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string an = cat("a[", i, "]"), bn = cat("b[", i, "]");
    detail::check_tensor_view(kOp, an.c_str(), a[i]);
    detail::check_tensor_view(kOp, bn.c_str(), b[i]);
    if (a[i].ndim() != 2 || b[i].ndim() != 2)
      throw_error<InvalidArgument>(kOp, "every pair must be 2-D: ", an, " has shape ",
                                   a[i].shape_str(), ", ", bn, " has shape ", b[i].shape_str());
    if (a[i].shape[1] != b[i].shape[0])
      throw_error<InvalidArgument>(kOp, an, " has ", a[i].shape[1], " columns but ", bn, " has ",
                                   b[i].shape[0], " rows: shapes ", a[i].shape_str(), " and ",
                                   b[i].shape_str());
    for (const auto* v : {&a[i], &b[i]}) {
      if (v->dtype != (v == &a[i] ? a[0].dtype : b[0].dtype))
        throw_error<DTypeError>(kOp, "every matrix of a list shares one dtype: ",
                                v == &a[i] ? an : bn, " is ", name(v->dtype), ", ",
                                v == &a[i] ? "a[0]" : "b[0]", " is ",
                                name(v == &a[i] ? a[0].dtype : b[0].dtype));
      if (v->device != a[0].device)
        throw_error<InvalidArgument>(kOp, "operands on different devices: a[0] on ",
                                     to_string(a[0].device), ", ", v == &a[i] ? an : bn, " on ",
                                     to_string(v->device));
    }
  }
  I.device = a.empty() ? Device::cpu() : a[0].device;
  I.resolve_types(a.empty() ? DType::f32 : a[0].dtype, b.empty() ? DType::f32 : b[0].dtype);
  for (std::size_t i = 0; i < a.size(); ++i) {
    I.as.push_back(make_operand(a[i], I.a_order));
    I.bs.push_back(make_operand(b[i], I.b_order));
  }
}

GroupedMatmul::~GroupedMatmul() = default;
GroupedMatmul::GroupedMatmul(GroupedMatmul&&) noexcept = default;
GroupedMatmul& GroupedMatmul::operator=(GroupedMatmul&&) noexcept = default;

namespace {
GroupedMatmul::Impl& impl_of(const std::unique_ptr<GroupedMatmul::Impl>& p) {
  if (!p) throw_error<InvalidArgument>(kOp, "this GroupedMatmul was moved from");
  return *p;
}
}  // namespace

// ---------------------------------------------------------------------------------------------
// Offsets

std::vector<int64_t> GroupedMatmul::Impl::read_offsets(const TensorView& off, Stream s) const {
  if (list_form)
    throw_error<InvalidArgument>(kOp, "offsets apply to the (tokens, K) x (groups, K, N) form, "
                                 "not to lists of matrices");
  if (off.dtype != DType::i32 && off.dtype != DType::i64)
    throw_error<DTypeError>(kOp, "offsets must be int32 or int64 (cumulative end rows), got ",
                            name(off.dtype));
  if (off.ndim() != 1)
    throw_error<InvalidArgument>(kOp, "offsets must be 1-D (one end row per group), got shape ",
                                 off.shape_str());
  if (off.shape[0] != e)
    throw_error<InvalidArgument>(kOp, "offsets has ", off.shape[0], " entries, expected ", e,
                                 " (one per group of b)");
  if (off.device != device && off.device.is_cuda())
    throw_error<InvalidArgument>(kOp, "offsets on ", to_string(off.device),
                                 ", expected the host or ", to_string(device));
  std::vector<int64_t> ends(static_cast<std::size_t>(e));
  TensorView host = off;
  Tensor copied;
  if (off.device.is_cuda() && e > 0) {
    // The host needs every group's size: one device-to-host copy, waited for.
    copied = Tensor::empty({e}, off.dtype, Stream{Device::cpu(), nullptr});
    copy(off, copied.view(), Stream{off.device, s.device.is_cuda() ? s.handle : nullptr});
    host = copied.view();
  }
  for (int64_t g = 0; g < e; ++g) {
    const int64_t at = g * (host.device.is_cuda() ? 1 : host.strides[0]);
    ends[g] = host.dtype == DType::i32 ? static_cast<const int32_t*>(host.data)[at]
                                       : static_cast<const int64_t*>(host.data)[at];
    if (ends[g] < 0 || ends[g] > t)
      throw_error<InvalidArgument>(kOp, "offsets[", g, "] = ", ends[g], " is outside [0, ", t,
                                   "] (the rows of a)");
    if (g > 0 && ends[g] < ends[g - 1])
      throw_error<InvalidArgument>(kOp, "offsets must be non-decreasing: offsets[", g, "] = ",
                                   ends[g], " < offsets[", g - 1, "] = ", ends[g - 1]);
  }
  return ends;
}

// ---------------------------------------------------------------------------------------------
// Planning

void GroupedMatmul::plan(Epilog epilog, const GroupedEpilogInputs& inputs) {
  Impl& I = impl_of(impl_);
  std::lock_guard lock(I.mu);
  if (I.freed) throw_error<InvalidArgument>(kOp, "plan() called after free()");
  I.planned = false;
  if (!epilog_supported(epilog))
    throw_error<NotSupported>(kOp, "epilog ", name(epilog), " is not supported (grouped_matmul "
                              "takes DEFAULT, RELU, GELU, BIAS, RELU_BIAS, GELU_BIAS)");
  if (epilog != Epilog::DEFAULT && is_complex(I.problem.a_type))
    throw_error<NotSupported>(kOp, "epilog ", name(epilog), " is not available for ",
                              name(I.problem.a_type), " operands");
  const bool wants_bias = detail::epilog_has_bias_input(epilog);
  const bool has_bias = inputs.bias.has_value() || !inputs.biases.empty();
  if (wants_bias && !has_bias)
    throw_error<InvalidArgument>(kOp, "epilog ", name(epilog), " needs epilog_inputs['bias']");
  if (!wants_bias && has_bias)
    throw_error<InvalidArgument>(kOp, "epilog ", name(epilog), " takes no 'bias'");
  const DType bt = I.problem.bias_type;
  auto check_bias = [&](const char* arg, const TensorView& v, const Shape& want) {
    detail::check_tensor_view(kOp, arg, v);
    if (v.shape != want)
      throw_error<InvalidArgument>(kOp, arg, " must have shape ", detail::shape_str(want),
                                   " (one value per output column", I.list_form ? "" : " per group",
                                   "), got ", v.shape_str());
    if (v.dtype != bt)
      throw_error<DTypeError>(kOp, arg, " is ", name(v.dtype), ", expected ", name(bt));
    if (v.device != I.device)
      throw_error<InvalidArgument>(kOp, "operands on different devices: a on ",
                                   to_string(I.device), ", ", arg, " on ", to_string(v.device));
  };
  if (wants_bias && I.list_form) {
    if (inputs.bias || inputs.biases.size() != I.as.size())
      throw_error<InvalidArgument>(kOp, "the list form takes a list of ", I.as.size(),
                                   " biases (one (N_i,) per pair) as epilog_inputs['bias']");
    for (std::size_t i = 0; i < I.as.size(); ++i)
      check_bias(cat("bias[", i, "]").c_str(), inputs.biases[i], {I.bs[i].view.shape[1]});
  } else if (wants_bias) {
    if (!inputs.bias)
      throw_error<InvalidArgument>(kOp, "epilog_inputs['bias'] must be one (", I.e, ", ", I.n,
                                   ") array (a row per group), not a list");
    check_bias("bias", *inputs.bias, {I.e, I.n});
  }

  I.specs.clear();
  if (I.list_form) {
    for (std::size_t i = 0; i < I.as.size(); ++i)
      I.specs.push_back({cat("result_", i), {I.as[i].view.shape[0], I.bs[i].view.shape[1]},
                         I.problem.d_type});
  } else {
    I.specs.push_back({"result", {I.t, I.n}, I.problem.d_type});
  }
  detail::check_output_bytes(kOp, I.specs);

  I.problem.epilog = epilog;
  I.backend.reset();
  if (I.device.is_cuda()) {
    const MemoryLimit& ml = I.options.memory_limit;
    const int64_t limit =
        ml.bytes >= 0 ? ml.bytes
                      : static_cast<int64_t>(ml.fraction *
                                             detail::cuda::total_memory(I.device.index));
    I.backend =
        detail::cuda::make_grouped_plan(I.problem, I.options.algo, limit, I.options.logger);
  } else {
    I.backend = detail::cpu::make_grouped_plan(I.problem, I.options.algo);
  }
  I.epilog = epilog;
  I.inputs = inputs;
  I.planned = true;
  log(LogLevel::info,
      cat("[grouped_matmul] planned ", name(I.problem.a_type), " ",
          I.list_form ? cat(I.as.size(), " pairs") : cat("T=", I.t, " K=", I.k, " N=", I.n,
                                                          " groups=", I.e),
          " epilog ", name(epilog), " on ", to_string(I.device), " using ",
          name(I.backend->algo())),
      I.options.logger);
}

// ---------------------------------------------------------------------------------------------
// Execution

// A bias row pointer readable by the backend: in place when contiguous along N (and, on a GPU,
// rows 256-byte aligned), else a staged copy with aligned rows.
const char* GroupedMatmul::Impl::bias_data(const TensorView& bias, Stream s,
                                           std::vector<Tensor>& keep) const {
  const int64_t cols = bias.shape.back();
  const int64_t es = static_cast<int64_t>(size_of(bias.dtype));
  const bool unit = cols <= 1 || bias.strides.back() == 1;
  bool ok = unit;
  if (device.is_cuda()) {
    ok = ok && detail::alignment(bias.data) == 256 &&
         (bias.ndim() == 1 || bias.shape[0] <= 1 || (bias.strides[0] * es) % 256 == 0);
  }
  if (ok) return static_cast<const char*>(bias.data);
  const int64_t pitch = device.is_cuda() ? round_up(std::max<int64_t>(1, cols), 256 / es)
                                         : std::max<int64_t>(1, cols);
  const int64_t rows = bias.ndim() == 2 ? bias.shape[0] : 1;
  Tensor t = Tensor::empty({std::max<int64_t>(1, rows * pitch)}, bias.dtype, s);
  Shape strides = bias.ndim() == 2 ? Shape{pitch, 1} : Shape{1};
  copy(bias, TensorView{t.data(), bias.dtype, bias.shape, strides, bias.device}, s);
  keep.push_back(t);
  return static_cast<const char*>(t.data());
}

void GroupedMatmul::Impl::run(const std::vector<TensorView>& results,
                              const std::optional<TensorView>& offsets_in, Stream stream) {
  const Stream s = detail::exec_stream(kOp, device, stream);
  std::vector<Tensor> keep;
  std::vector<detail::GroupedItem> items;
  const DType at = problem.a_type, bt = problem.b_type;
  const int64_t a_es = static_cast<int64_t>(size_of(at)), b_es = static_cast<int64_t>(size_of(bt));
  const int64_t ds = static_cast<int64_t>(size_of(problem.d_type));
  const int64_t biass = static_cast<int64_t>(size_of(problem.bias_type));
  const bool fp8_cuda = problem.fp8 && device.is_cuda();
  // k == 0: the products are zero (then the epilogue); backends see k = 1 with zero operands.
  const char* zeros = nullptr;
  auto zero_operands = [&](int64_t elems) {
    Tensor z = Tensor::empty({std::max<int64_t>(1, elems) * 8}, DType::u8, s);
    if (device.is_cuda())
      detail::cuda::fill_zero(z.view(), s);
    else
      detail::cpu::fill_zero(z.view());
    keep.push_back(z);
    zeros = static_cast<const char*>(z.data());
  };
  auto item_of = [&](int64_t m, int64_t n, int64_t k, const char* pa, InPlace ra, const char* pb,
                     InPlace rb, void* pd, const char* bias) {
    detail::GroupedItem it;
    it.m = m;
    it.n = n;
    it.pd = pd;
    it.bias = bias;
    if (k == 0) {
      it.k = 1;
      it.a = {at, m, 1, false, 1, 0};
      it.b = {bt, 1, n, fp8_cuda, fp8_cuda ? 1 : n, 0};
      it.pa = it.pb = zeros;
    } else {
      it.k = k;
      it.a = {at, m, k, ra.col_major, ra.ld, 0};
      it.b = {bt, k, n, rb.col_major, rb.ld, 0};
      it.pa = pa;
      it.pb = pb;
    }
    return it;
  };

  if (!list_form) {
    if (!offsets_in && !offsets)
      throw_error<InvalidArgument>(kOp, "offsets are required (give them to the constructor or "
                                   "to execute)");
    const std::vector<int64_t> ends = read_offsets(offsets_in ? *offsets_in : *offsets, s);
    char* d = static_cast<char*>(results[0].data);
    const int64_t used = e > 0 ? ends.back() : 0;
    if (used < t && n > 0) {
      TensorView tail{d + used * n * ds, problem.d_type, {t - used, n}, {n, 1}, device};
      if (device.is_cuda())
        detail::cuda::fill_zero(tail, s);
      else
        detail::cpu::fill_zero(tail);
    }
    if (n > 0 && used > 0) {
      Bound ba, bb;
      if (k == 0) {
        zero_operands(std::max(t, n));
      } else {
        ba = bind_operand(a, s, keep);
        bb = bind_operand(b, s, keep);
      }
      const char* bias = inputs.bias ? bias_data(*inputs.bias, s, keep) : nullptr;
      const int64_t bias_pitch =
          !inputs.bias ? 0
          : bias == inputs.bias->data ? inputs.bias->strides[0]
          : device.is_cuda()          ? round_up(std::max<int64_t>(1, n), 256 / biass)
                                      : std::max<int64_t>(1, n);
      // Row `r` of A starts r * ld elements in (row-major) or r elements in (column-major).
      const int64_t a_row = ba.read.col_major ? 1 : ba.read.ld;
      for (int64_t g = 0; g < e; ++g) {
        const int64_t start = g == 0 ? 0 : ends[g - 1], m = ends[g] - start;
        if (m == 0) continue;
        items.push_back(item_of(m, n, k, ba.data + start * a_row * a_es, ba.read,
                                bb.data + g * bb.stack_stride * b_es, bb.read,
                                d + start * n * ds, bias ? bias + g * bias_pitch * biass : nullptr));
      }
    }
  } else {
    int64_t most = 0;
    for (std::size_t i = 0; i < as.size(); ++i)
      most = std::max({most, as[i].view.shape[0], bs[i].view.shape[1]});
    bool any_k_zero = false;
    for (std::size_t i = 0; i < as.size(); ++i) any_k_zero |= as[i].view.shape[1] == 0;
    if (any_k_zero) zero_operands(most);
    for (std::size_t i = 0; i < as.size(); ++i) {
      const int64_t m = as[i].view.shape[0], k = as[i].view.shape[1], n = bs[i].view.shape[1];
      if (m == 0 || n == 0) continue;
      Bound ba, bb;
      if (k > 0) {
        ba = bind_operand(as[i], s, keep);
        bb = bind_operand(bs[i], s, keep);
      }
      const char* bias = inputs.biases.empty() ? nullptr : bias_data(inputs.biases[i], s, keep);
      items.push_back(item_of(m, n, k, ba.data, ba.read, bb.data, bb.read, results[i].data, bias));
    }
  }
  if (!items.empty()) backend->execute(items, s);
  if (s.device.is_cuda() && options.blocking) detail::cuda::synchronize(s);
}

void GroupedMatmul::execute(const std::vector<TensorView>& results,
                            const std::optional<TensorView>& offsets, Stream stream) {
  Impl& I = impl_of(impl_);
  std::lock_guard lock(I.mu);
  I.check_usable("execute");
  if (offsets) detail::check_tensor_view(kOp, "offsets", *offsets);
  if (results.size() != I.specs.size())
    throw_error<InvalidArgument>(kOp, "execute takes ", I.specs.size(), " results, got ",
                                 results.size());
  for (std::size_t i = 0; i < results.size(); ++i) {
    const OutputSpec& spec = I.specs[i];
    const TensorView& v = results[i];
    detail::check_tensor_view(kOp, cat("output '", spec.name, "'").c_str(), v);
    if (v.shape != spec.shape || v.dtype != spec.dtype ||
        (v.numel() > 0 && !v.is_contiguous()) || v.device != I.device)
      throw_error<InvalidArgument>(kOp, "output '", spec.name, "' must be a contiguous ",
                                   name(spec.dtype), " ", detail::shape_str(spec.shape),
                                   " array on ", to_string(I.device), ", got ", layout_str(v));
  }
  I.run(results, offsets, stream);
}

std::vector<Tensor> GroupedMatmul::execute(const std::optional<TensorView>& offsets,
                                           Stream stream) {
  std::vector<OutputSpec> specs = output_specs();
  Impl& I = impl_of(impl_);
  Stream alloc{I.device, stream.device == I.device ? stream.handle : nullptr};
  std::vector<Tensor> out;
  std::vector<TensorView> views;
  for (const OutputSpec& spec : specs) {
    out.push_back(Tensor::empty(spec.shape, spec.dtype, alloc));
    views.push_back(out.back().view());
  }
  execute(views, offsets, stream);
  return out;
}

void GroupedMatmul::reset_operands(const GroupedOperandUpdate& u) {
  Impl& I = impl_of(impl_);
  std::lock_guard lock(I.mu);
  constexpr const char* op = "grouped_matmul.reset_operands";
  if (I.freed) throw_error<InvalidArgument>(op, "called after free()");
  auto check = [&](const std::string& arg, const TensorView& old, const TensorView& now) {
    detail::check_tensor_view(op, arg.c_str(), now);
    if (!same_layout(old, now))
      throw_error<InvalidArgument>(op, arg, " must keep its layout: planned ", layout_str(old),
                                   ", got ", layout_str(now));
  };
  auto check_list = [&](const char* arg, const std::vector<Operand>& old,
                        const std::vector<TensorView>& now) {
    if (now.empty()) return;
    if (!I.list_form)
      throw_error<InvalidArgument>(op, arg, " is a list; this plan takes one array");
    if (now.size() != old.size())
      throw_error<InvalidArgument>(op, arg, " has ", now.size(), " matrices, planned ",
                                   old.size());
    for (std::size_t i = 0; i < now.size(); ++i) check(cat(arg, "[", i, "]"), old[i].view, now[i]);
  };
  if ((u.a || u.b) && I.list_form)
    throw_error<InvalidArgument>(op, "this plan takes lists of matrices");
  if (u.a) check("a", I.a.view, *u.a);
  if (u.b) check("b", I.b.view, *u.b);
  check_list("a", I.as, u.a_list);
  check_list("b", I.bs, u.b_list);
  const GroupedEpilogInputs& in = u.epilog_inputs;
  if (in.bias) {
    if (!I.inputs.bias) throw_error<InvalidArgument>(op, "bias was not an operand of this plan");
    check("bias", *I.inputs.bias, *in.bias);
  }
  if (!in.biases.empty()) {
    if (in.biases.size() != I.inputs.biases.size())
      throw_error<InvalidArgument>(op, "bias has ", in.biases.size(), " vectors, planned ",
                                   I.inputs.biases.size());
    for (std::size_t i = 0; i < in.biases.size(); ++i)
      check(cat("bias[", i, "]"), I.inputs.biases[i], in.biases[i]);
  }
  if (u.a) I.a.view.data = u.a->data;
  if (u.b) I.b.view.data = u.b->data;
  for (std::size_t i = 0; i < u.a_list.size(); ++i) I.as[i].view.data = u.a_list[i].data;
  for (std::size_t i = 0; i < u.b_list.size(); ++i) I.bs[i].view.data = u.b_list[i].data;
  if (in.bias) I.inputs.bias->data = in.bias->data;
  for (std::size_t i = 0; i < in.biases.size(); ++i) I.inputs.biases[i].data = in.biases[i].data;
}

void GroupedMatmul::free() {
  Impl& I = impl_of(impl_);
  std::lock_guard lock(I.mu);
  I.backend.reset();
  I.freed = true;
}

std::vector<OutputSpec> GroupedMatmul::output_specs() const {
  Impl& I = impl_of(impl_);
  std::lock_guard lock(I.mu);
  I.check_usable("output_specs");
  return I.specs;
}

Device GroupedMatmul::device() const { return impl_of(impl_).device; }

bool GroupedMatmul::planned() const {
  Impl& I = impl_of(impl_);
  std::lock_guard lock(I.mu);
  return I.planned && !I.freed;
}

GroupedAlgo GroupedMatmul::algorithm() const {
  Impl& I = impl_of(impl_);
  std::lock_guard lock(I.mu);
  I.check_usable("algorithm");
  return I.backend->algo();
}

// ---------------------------------------------------------------------------------------------
// Function forms

Tensor grouped_matmul(const TensorView& a, const TensorView& b, const TensorView& offsets,
                      Epilog epilog, const std::optional<TensorView>& bias,
                      const GroupedMatmulOptions& options, Stream stream,
                      const QuantizationScales& scales) {
  GroupedMatmul g(a, b, offsets, options, scales);
  GroupedEpilogInputs in;
  in.bias = bias;
  g.plan(epilog, in);
  return g.execute({}, stream).front();
}

std::vector<Tensor> grouped_matmul(const std::vector<TensorView>& a,
                                   const std::vector<TensorView>& b, Epilog epilog,
                                   const std::vector<TensorView>& biases,
                                   const GroupedMatmulOptions& options, Stream stream,
                                   const QuantizationScales& scales) {
  GroupedMatmul g(a, b, options, scales);
  GroupedEpilogInputs in;
  in.biases = biases;
  g.plan(epilog, in);
  return g.execute({}, stream);
}

}  // namespace gpula
