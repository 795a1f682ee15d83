// gpula::Matmul for Python: construction from arrays, plan/autotune, and a fast execute_into
// that writes into outputs the Python layer allocated with the caller's own package.
//
// Threads: every method that enters gpula::Matmul (which serializes its callers on a mutex)
// first releases the GIL, since a call holding that mutex may log, which takes the GIL.
#include <nanobind/stl/complex.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <array>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common.h"

namespace gpula::python {
namespace {

constexpr const char* kOp = "matmul";

using Scales = std::tuple<float, float, float>;

// A Python handle on a Matmul: owned (gl.Matmul), or shared with this thread's plan cache (the
// function form). execute_into fills the data pointers of output views made at plan time.
struct PyMatmul {
  std::shared_ptr<Matmul> mm;
  Device data_device{};

  // The outputs of the current plan, made from output_specs() once; only data changes per call.
  // `generation` counts plans with other outputs: execute_into refuses outputs allocated for an
  // earlier one (a plan() with another epilogue from another thread in between). Guarded by `mu`,
  // taken without the GIL.
  std::mutex mu;
  uint64_t generation = 0;
  std::vector<OutputSpec> planned;  // what `outs` was made for
  MatmulOutputs outs;
  std::vector<TensorView*> slots;  // spec order: result, then aux outputs
  // The operands a cached_matmul() handle was made for: execute_operands() rebinds their data
  // pointers (gpula.matmul's fast path for repeated calls of one layout). `input` is the plan's
  // one epilogue input where it has exactly one of the bias, relu_aux or gelu_aux and nothing
  // else (no fp8 scale tensors): `input_slot` names its field of EpilogInputs (null: none).
  std::optional<TensorView> a, b, input;
  std::optional<TensorView> EpilogInputs::*input_slot = nullptr;

  PyMatmul(std::shared_ptr<Matmul> m, Device d) : mm(std::move(m)), data_device(d) {}
  PyMatmul(const PyMatmul&) = delete;

  // After a plan, with `mu` held. A plan with the same outputs as the last (the same plan
  // again, or another algorithm) keeps the generation: outputs allocated for it still fit.
  void set_outputs(const std::vector<OutputSpec>& specs) {
    auto same = [](const OutputSpec& x, const OutputSpec& y) {
      return x.name == y.name && x.shape == y.shape && x.dtype == y.dtype;
    };
    if (generation > 0 &&
        std::equal(specs.begin(), specs.end(), planned.begin(), planned.end(), same))
      return;
    planned = specs;
    outs = MatmulOutputs{};
    slots.clear();
    for (const OutputSpec& s : specs) {
      TensorView v{nullptr, s.dtype, s.shape, contiguous_strides(s.shape), data_device};
      if (s.name == "result") {
        outs.result = std::move(v);
        slots.push_back(&outs.result);
      } else {
        slots.push_back(&(outs.aux[s.name] = std::move(v)));  // map nodes do not move
      }
    }
    ++generation;
  }
};

// At most the result and one aux output (an aux or a bias gradient), with room to spare.
constexpr std::size_t kMaxOutputs = 4;

// Address of an output: an int, or any writable buffer-protocol object (NumPy arrays), which is
// far cheaper than ndarray.ctypes.data.
void* address_of(nb::handle h, std::size_t i) {
  if (PyLong_Check(h.ptr())) return reinterpret_cast<void*>(nb::cast<uintptr_t>(h));
  Py_buffer view;
  if (PyObject_GetBuffer(h.ptr(), &view, PyBUF_WRITABLE) != 0) {
    PyErr_Clear();
    throw InvalidArgument("[matmul] execute: output " + std::to_string(i) +
                          " must be an int address or a writable contiguous buffer");
  }
  void* p = view.buf;
  PyBuffer_Release(&view);
  return p;
}

std::optional<TensorView> opt_view(nb::handle h, const char* arg) {
  if (h.is_none()) return std::nullopt;
  return to_view(h, kOp, arg);
}

ScaleMode scale_mode_named(const std::string& s) {
  for (ScaleMode m : {ScaleMode::automatic, ScaleMode::tensor, ScaleMode::row, ScaleMode::block128,
                      ScaleMode::block128x128})
    if (name(m) == s) return m;
  throw InvalidArgument("[matmul] unknown scale_mode '" + s +
                        "'; expected 'automatic', 'tensor', 'row', 'block128', 'block128x128'");
}

Fp8Block fp8_block_named(const std::string& s) {
  for (Fp8Block b : {Fp8Block::tensor, Fp8Block::row, Fp8Block::block128, Fp8Block::block128x128})
    if (name(b) == s) return b;
  throw InvalidArgument("[quantize_fp8] unknown block '" + s + "'");
}

constexpr const char* kInputNames =
    "'bias', 'relu_aux', 'gelu_aux', 'a_scale', 'b_scale', 'd_scale'";

EpilogInputs epilog_inputs(nb::handle d) {
  EpilogInputs in;
  if (d.is_none()) return in;
  for (auto [k, v] : nb::borrow<nb::dict>(d)) {
    if (!nb::isinstance<nb::str>(k))
      throw InvalidArgument(std::string("[matmul] epilog_inputs keys must be names (") +
                            kInputNames + "), got " + nb::cast<std::string>(nb::repr(k)));
    const std::string key = nb::cast<std::string>(k);
    if (v.is_none()) continue;
    if (key == "scale_mode") {  // (a's, b's) names, put here by gpula._matmul
      auto t = nb::cast<std::tuple<std::string, std::string>>(v);
      in.a_scale_mode = scale_mode_named(std::get<0>(t));
      in.b_scale_mode = scale_mode_named(std::get<1>(t));
    } else if (key == "amax") {  // a bool, put here by gpula._matmul
      in.amax = nb::cast<bool>(v);
    } else if (key == "a_scale") {
      in.a_scale = to_view(v, kOp, "epilog_inputs['a_scale']");
    } else if (key == "b_scale") {
      in.b_scale = to_view(v, kOp, "epilog_inputs['b_scale']");
    } else if (key == "d_scale") {
      in.d_scale = to_view(v, kOp, "epilog_inputs['d_scale']");
    } else if (key == "bias")
      in.bias = to_view(v, kOp, "epilog_inputs['bias']");
    else if (key == "relu_aux")
      in.relu_aux = to_view(v, kOp, "epilog_inputs['relu_aux']");
    else if (key == "gelu_aux")
      in.gelu_aux = to_view(v, kOp, "epilog_inputs['gelu_aux']");
    else
      throw InvalidArgument("[matmul] unknown epilog input '" + key + "'; expected one of " +
                            kInputNames);
  }
  return in;
}

// The field of `in` holding its one epilogue input where it has exactly one of the bias,
// relu_aux or gelu_aux and no fp8 scale tensor; null otherwise (execute_operands rebinds none).
std::optional<TensorView> EpilogInputs::*single_input(const EpilogInputs& in) {
  if (in.a_scale || in.b_scale || in.d_scale) return nullptr;
  std::optional<TensorView> EpilogInputs::*slot = nullptr;
  for (auto f : {&EpilogInputs::bias, &EpilogInputs::relu_aux, &EpilogInputs::gelu_aux}) {
    if (!(in.*f)) continue;
    if (slot) return nullptr;  // two inputs (no epilogue takes both): the full path only
    slot = f;
  }
  return slot;
}

nb::dict algorithm_dict(const AlgorithmInfo& a) {
  nb::dict d;
  d["index"] = a.index;
  d["algo_id"] = a.algo_id;
  d["tile"] = a.tile;
  d["stages"] = a.stages;
  d["split_k"] = a.split_k;
  d["workspace_bytes"] = a.workspace_bytes;
  d["waves_count"] = a.waves_count;
  d["time_ms"] = a.time_ms;
  d["description"] = a.describe();
  return d;
}

nb::tuple shape_tuple(const Shape& s) {
  nb::list l;
  for (int64_t d : s) l.append(d);
  return nb::tuple(l);
}

nb::list specs_list(const std::vector<OutputSpec>& specs) {
  nb::list out;
  for (const OutputSpec& s : specs)
    out.append(nb::make_tuple(s.name, shape_tuple(s.shape), std::string(name(s.dtype))));
  return out;
}

// The addresses of execute_into()'s / execute_operands()'s outputs, taken with the GIL held.
struct OutputAddresses {
  std::array<void*, kMaxOutputs> data{};
  std::size_t n = 0;
};

OutputAddresses output_addresses(nb::handle outputs) {
  OutputAddresses o;
  o.n = nb::len(outputs);
  if (o.n > kMaxOutputs)
    throw InvalidArgument("[matmul] execute: at most " + std::to_string(kMaxOutputs) +
                          " outputs, got " + std::to_string(o.n));
  for (std::size_t i = 0; i < o.n; ++i) o.data[i] = address_of(outputs[i], i);
  return o;
}

// Binds the outputs and runs, with `self.mu` held and without the GIL.
void run_into(PyMatmul& self, const OutputAddresses& o, Stream s, uint64_t generation) {
  if (generation != self.generation)
    throw InvalidArgument(
        "[matmul] execute: the plan changed (plan() was called again, perhaps from "
        "another thread) after this call's outputs were allocated; call execute() again");
  if (o.n != self.slots.size())
    throw InvalidArgument("[matmul] execute expects " + std::to_string(self.slots.size()) +
                          " outputs (one per output spec), got " + std::to_string(o.n));
  for (std::size_t i = 0; i < o.n; ++i) self.slots[i]->data = o.data[i];
  self.mm->execute(self.outs, s);
}

Stream stream_for(const Matmul& mm, uintptr_t handle) {
  return Stream{mm.device(), reinterpret_cast<void*>(handle)};
}

QuantizationScales scales_of(const Scales& s) {
  return {std::get<0>(s), std::get<1>(s), std::get<2>(s)};
}

MatmulOptions make_options(std::optional<ComputeType> compute_type,
                           std::optional<std::string> scale_type,
                           std::optional<std::string> result_type, int64_t memory_limit_bytes,
                           double memory_limit_fraction, std::optional<std::string> device,
                           bool fallback_cpu, bool blocking, nb::handle logger) {
  MatmulOptions o;
  o.compute_type = compute_type;
  if (scale_type) o.scale_type = dtype_named(*scale_type, kOp, "scale_type");
  if (result_type) o.result_type = dtype_named(*result_type, kOp, "result_type");
  o.memory_limit = {memory_limit_bytes, memory_limit_fraction};
  if (device) o.device = parse_device(*device, kOp);
  o.fallback = fallback_cpu ? Fallback::cpu : Fallback::none;
  o.blocking = blocking;
  if (!logger.is_none()) o.logger = python_log_sink(logger);
  return o;
}

}  // namespace

void init_matmul(nb::module_& m) {
  nb::enum_<Epilog>(m, "Epilog",
                    "Fused epilogues, named as in cuBLASLt.\n\n"
                    "Example:\n"
                    "    >>> import numpy as np, gpula as gl\n"
                    "    >>> x = np.array([[1.0, -2.0]], np.float32)\n"
                    "    >>> gl.matmul(x, np.eye(2, dtype=np.float32), epilog=gl.Epilog.RELU)\n"
                    "    array([[1., 0.]], dtype=float32)\n")
      .value("DEFAULT", Epilog::DEFAULT)
      .value("RELU", Epilog::RELU)
      .value("RELU_AUX", Epilog::RELU_AUX)
      .value("BIAS", Epilog::BIAS)
      .value("RELU_BIAS", Epilog::RELU_BIAS)
      .value("RELU_AUX_BIAS", Epilog::RELU_AUX_BIAS)
      .value("GELU", Epilog::GELU)
      .value("GELU_AUX", Epilog::GELU_AUX)
      .value("GELU_BIAS", Epilog::GELU_BIAS)
      .value("GELU_AUX_BIAS", Epilog::GELU_AUX_BIAS)
      .value("DRELU", Epilog::DRELU)
      .value("DRELU_BGRAD", Epilog::DRELU_BGRAD)
      .value("DGELU", Epilog::DGELU)
      .value("DGELU_BGRAD", Epilog::DGELU_BGRAD)
      .value("BGRADA", Epilog::BGRADA)
      .value("BGRADB", Epilog::BGRADB);

  nb::enum_<ComputeType>(m, "ComputeType",
                         "cuBLAS compute types.\n\n"
                         "Example:\n"
                         "    >>> import numpy as np, gpula as gl\n"
                         "    >>> x = np.ones((2, 2), np.float32)\n"
                         "    >>> opts = gl.MatmulOptions(compute_type=gl.ComputeType.COMPUTE_32F)\n"
                         "    >>> gl.matmul(x, x, options=opts)\n"
                         "    array([[2., 2.],\n"
                         "           [2., 2.]], dtype=float32)\n")
      .value("COMPUTE_16F", ComputeType::COMPUTE_16F)
      .value("COMPUTE_16F_PEDANTIC", ComputeType::COMPUTE_16F_PEDANTIC)
      .value("COMPUTE_32F", ComputeType::COMPUTE_32F)
      .value("COMPUTE_32F_PEDANTIC", ComputeType::COMPUTE_32F_PEDANTIC)
      .value("COMPUTE_32F_FAST_16F", ComputeType::COMPUTE_32F_FAST_16F)
      .value("COMPUTE_32F_FAST_16BF", ComputeType::COMPUTE_32F_FAST_16BF)
      .value("COMPUTE_32F_FAST_TF32", ComputeType::COMPUTE_32F_FAST_TF32)
      .value("COMPUTE_64F", ComputeType::COMPUTE_64F)
      .value("COMPUTE_64F_PEDANTIC", ComputeType::COMPUTE_64F_PEDANTIC);

  nb::class_<MatmulOptions>(m, "NativeMatmulOptions",
                            "gpula::MatmulOptions, as built by gpula.MatmulOptions.")
      .def(
          "__init__",
          [](MatmulOptions* self, std::optional<ComputeType> compute_type,
             std::optional<std::string> scale_type, std::optional<std::string> result_type,
             int64_t memory_limit_bytes, double memory_limit_fraction,
             std::optional<std::string> device, bool fallback_cpu, bool blocking,
             nb::handle logger) {
            new (self) MatmulOptions(make_options(compute_type, scale_type, result_type,
                                                  memory_limit_bytes, memory_limit_fraction,
                                                  device, fallback_cpu, blocking, logger));
          },
          nb::arg("compute_type") = nb::none(), nb::arg("scale_type") = nb::none(),
          nb::arg("result_type") = nb::none(), nb::arg("memory_limit_bytes") = -1,
          nb::arg("memory_limit_fraction") = 0.8, nb::arg("device") = nb::none(),
          nb::arg("fallback_cpu") = false, nb::arg("blocking") = false,
          nb::arg("logger") = nb::none());

  nb::class_<PyMatmul>(m, "Matmul", "gpula::Matmul; use gpula.Matmul.")
      .def(
          "__init__",
          [](PyMatmul* self, nb::handle a, nb::handle b, nb::handle c, std::complex<double> alpha,
             std::optional<std::complex<double>> beta, const MatmulOptions& options,
             Scales scales) {
            const TensorView av = to_view(a, kOp, "a"), bv = to_view(b, kOp, "b");
            const std::optional<TensorView> cv = opt_view(c, "c");
            auto mm = std::make_shared<Matmul>(av, bv, cv, alpha, beta, options, scales_of(scales));
            new (self) PyMatmul(std::move(mm), av.device);
          },
          nb::arg("a"), nb::arg("b"), nb::arg("c").none(), nb::arg("alpha"), nb::arg("beta").none(),
          nb::arg("options"), nb::arg("scales"))
      .def(
          "plan",
          [](PyMatmul& self, Epilog epilog, nb::handle inputs, int limit) {
            const EpilogInputs in = epilog_inputs(inputs);
            std::vector<AlgorithmInfo> algos;
            std::vector<OutputSpec> specs;
            uint64_t generation = 0;
            {
              nb::gil_scoped_release release;
              std::lock_guard lock(self.mu);
              algos = self.mm->plan(epilog, in, PlanPreferences{limit});
              specs = self.mm->output_specs();
              self.set_outputs(specs);
              generation = self.generation;
            }
            nb::list out;
            for (const AlgorithmInfo& a : algos) out.append(algorithm_dict(a));
            return nb::make_tuple(out, specs_list(specs), generation);
          },
          nb::arg("epilog"), nb::arg("inputs").none(), nb::arg("limit") = 8,
          "Fixes the epilogue; returns (candidate algorithms as dicts, best first, output specs, "
          "the plan's generation for execute_into).")
      .def(
          "autotune",
          [](PyMatmul& self, int iterations, uintptr_t stream) {
            AlgorithmInfo a;
            {
              nb::gil_scoped_release release;
              a = self.mm->autotune(iterations, stream_for(*self.mm, stream));
            }
            return algorithm_dict(a);
          },
          nb::arg("iterations"), nb::arg("stream"),
          "Times every candidate and keeps the fastest; returns it (synchronizes the stream).")
      .def(
          "execute_into",
          [](PyMatmul& self, nb::handle outputs, uintptr_t stream, uint64_t generation) {
            const OutputAddresses o = output_addresses(outputs);
            const Stream s = stream_for(*self.mm, stream);
            nb::gil_scoped_release release;
            std::lock_guard lock(self.mu);
            run_into(self, o, s, generation);
          },
          nb::arg("outputs"), nb::arg("stream"), nb::arg("generation"),
          "Runs into contiguous outputs on the data's device, given in output_specs() order as "
          "int addresses or writable buffers, allocated for the plan `generation` (from plan() "
          "or cached_matmul()); `stream` is a cudaStream_t as an int.")
      .def(
          "execute_operands",
          [](PyMatmul& self, uintptr_t a, uintptr_t b, uintptr_t input, nb::handle outputs,
             uintptr_t stream, uint64_t generation) {
            if (!self.a || !self.b)
              throw InvalidArgument("[matmul] execute_operands: only for cached_matmul() handles");
            if (input != 0 && !self.input_slot)
              throw InvalidArgument(
                  "[matmul] execute_operands: this handle's plan has no single epilogue input "
                  "(bias, relu_aux or gelu_aux) to rebind");
            const OutputAddresses o = output_addresses(outputs);
            const Stream s = stream_for(*self.mm, stream);
            nb::gil_scoped_release release;
            std::lock_guard lock(self.mu);
            OperandUpdate u;
            u.a = self.a;
            u.a->data = reinterpret_cast<void*>(a);
            u.b = self.b;
            u.b->data = reinterpret_cast<void*>(b);
            if (self.input_slot) {
              std::optional<TensorView>& in = u.epilog_inputs.*self.input_slot;
              in = self.input;
              in->data = reinterpret_cast<void*>(input);
            }
            self.mm->reset_operands(u);  // checks layouts and alignment against the plan's
            run_into(self, o, s, generation);
          },
          nb::arg("a"), nb::arg("b"), nb::arg("input"), nb::arg("outputs"), nb::arg("stream"),
          nb::arg("generation"),
          "execute_into() with the data of a, b (and of the plan's one epilogue input: the bias, "
          "relu_aux or gelu_aux; 0 where it has none) at these addresses: operands of the "
          "layouts this cached_matmul() handle was made for.")
      .def(
          "output_specs",
          [](PyMatmul& self) {
            std::vector<OutputSpec> specs;
            {
              nb::gil_scoped_release release;
              specs = self.mm->output_specs();
            }
            return specs_list(specs);
          },
          "[(name, shape, dtype name)] of the outputs, result first.")
      .def(
          "reset_operands",
          [](PyMatmul& self, nb::handle a, nb::handle b, nb::handle c, nb::handle inputs) {
            OperandUpdate u;
            u.a = opt_view(a, "a");
            u.b = opt_view(b, "b");
            u.c = opt_view(c, "c");
            u.epilog_inputs = epilog_inputs(inputs);
            nb::gil_scoped_release release;
            self.mm->reset_operands(u);
          },
          nb::arg("a").none(), nb::arg("b").none(), nb::arg("c").none(), nb::arg("inputs").none())
      .def("free",
           [](PyMatmul& self) {
             nb::gil_scoped_release release;
             self.mm->free();
           })
      .def("algorithm",
           [](PyMatmul& self) {
             AlgorithmInfo a;
             {
               nb::gil_scoped_release release;
               a = self.mm->algorithm();
             }
             return algorithm_dict(a);
           })
      .def_prop_ro("planned",
                   [](PyMatmul& self) {
                     nb::gil_scoped_release release;
                     return self.mm->planned();
                   })
      .def_prop_ro(
          "device", [](PyMatmul& self) { return to_string(self.mm->device()); },
          "Where the work runs: 'cpu' or 'cuda:N'.")
      .def_prop_ro(
          "data_device", [](PyMatmul& self) { return to_string(self.data_device); },
          "Where the operands and results live.");

  m.def(
      "cached_matmul",
      [](nb::handle a, nb::handle b, nb::handle c, std::complex<double> alpha,
         std::optional<std::complex<double>> beta, Epilog epilog, nb::handle inputs,
         const MatmulOptions& options, Scales scales) {
        const TensorView av = to_view(a, kOp, "a"), bv = to_view(b, kOp, "b");
        const std::optional<TensorView> cv = opt_view(c, "c");
        const EpilogInputs in = epilog_inputs(inputs);
        auto handle = std::make_unique<PyMatmul>(nullptr, av.device);
        handle->a = av;
        handle->b = bv;
        handle->input_slot = single_input(in);
        if (handle->input_slot) handle->input = in.*handle->input_slot;
        std::vector<OutputSpec> specs;
        {
          nb::gil_scoped_release release;
          handle->mm =
              cached_matmul(av, bv, cv, alpha, beta, epilog, in, options, scales_of(scales));
          specs = handle->mm->output_specs();
          std::lock_guard lock(handle->mu);
          handle->set_outputs(specs);
        }
        const uint64_t generation = handle->generation;
        return nb::make_tuple(nb::cast(handle.release(), nb::rv_policy::take_ownership),
                              specs_list(specs), generation);
      },
      nb::arg("a"), nb::arg("b"), nb::arg("c").none(), nb::arg("alpha"), nb::arg("beta").none(),
      nb::arg("epilog"), nb::arg("inputs").none(), nb::arg("options"), nb::arg("scales"),
      "(handle, output specs, generation): this thread's cached, planned Matmul for these "
      "operands, bound to them (use it at once: this thread's next call with the same layouts "
      "rebinds it).");
  m.def(
      "quantize_fp8_spec",
      [](std::vector<int64_t> shape, const std::string& block) {
        const QuantizeFp8Spec s = quantize_fp8_spec(shape, fp8_block_named(block));
        return nb::make_tuple(shape_tuple(s.scale_shape), shape_tuple(s.scale_strides));
      },
      nb::arg("shape"), nb::arg("block"),
      "(scale shape, scale strides in elements) of quantize_fp8 for x of this shape; block is "
      "'tensor', 'row', '128' or '(128, 128)'.");
  m.def(
      "quantize_fp8_into",
      [](nb::handle x, nb::handle q, nb::handle scales, const std::string& block,
         uintptr_t stream) {
        const TensorView xv = to_view(x, "quantize_fp8", "x");
        const TensorView qv = to_view(q, "quantize_fp8", "q");
        const TensorView sv = to_view(scales, "quantize_fp8", "scales");
        const Fp8Block b = fp8_block_named(block);
        nb::gil_scoped_release release;
        quantize_fp8(xv, qv, sv, b, Stream{xv.device, reinterpret_cast<void*>(stream)});
      },
      nb::arg("x"), nb::arg("q"), nb::arg("scales"), nb::arg("block"), nb::arg("stream"),
      "Quantizes x into q (float8, x's shape) and scales (float32, laid out as "
      "quantize_fp8_spec says); use gpula.quantize_fp8.");
  m.def("matmul_cache_size", &matmul_cache_size, "Plans in the calling thread's matmul cache.\n\n"
        "Example:\n"
        "    >>> import numpy as np, gpula as gl\n"
        "    >>> gl.matmul_cache_clear()\n"
        "    >>> _ = gl.matmul(np.ones((2, 3)), np.ones((3, 2)))\n"
        "    >>> gl.matmul_cache_size()\n"
        "    1\n");
  m.def("matmul_cache_clear", &matmul_cache_clear, "Empties the calling thread's matmul cache.\n\n"
        "Example:\n"
        "    >>> import gpula as gl\n"
        "    >>> gl.matmul_cache_clear()\n"
        "    >>> gl.matmul_cache_size()\n"
        "    0\n");
}

}  // namespace gpula::python
