// gpula::GroupedMatmul for Python: the MoE form ((T, K) x (E, K, N) with offsets) and the list
// form, planned; results are allocated by the Python layer with the caller's package and passed
// in as exported arrays.
//
// Threads: every call into GroupedMatmul (which serializes its callers on a mutex) first
// releases the GIL, since a call holding that mutex may log, which takes the GIL.
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <string>
#include <vector>

#include "common.h"

namespace gpula::python {
namespace {

constexpr const char* kOp = "grouped_matmul";

using Scales = std::tuple<float, float, float>;

GroupedAlgo algo_named(const std::string& s) {
  if (s == "auto") return GroupedAlgo::automatic;
  if (s == "grouped_gemm") return GroupedAlgo::grouped_gemm;
  if (s == "per_group") return GroupedAlgo::per_group;
  throw InvalidArgument("[grouped_matmul] grouped_algo must be 'auto', 'grouped_gemm' or "
                        "'per_group', got '" + s + "'");
}

std::vector<TensorView> views(nb::handle list, const char* arg) {
  std::vector<TensorView> out;
  std::size_t i = 0;
  for (nb::handle h : list) {
    const std::string name = std::string(arg) + "[" + std::to_string(i++) + "]";
    out.push_back(to_view(h, kOp, name.c_str()));
  }
  return out;
}

std::optional<TensorView> opt_view(nb::handle h, const char* arg) {
  if (h.is_none()) return std::nullopt;
  return to_view(h, kOp, arg);
}

// The Python layer passes lists of operands as lists (an exported operand may be a tuple).
bool is_list(nb::handle h) { return nb::isinstance<nb::list>(h); }

GroupedEpilogInputs bias_inputs(nb::handle bias) {
  GroupedEpilogInputs in;
  if (bias.is_none()) return in;
  if (is_list(bias))
    in.biases = views(bias, "bias");
  else
    in.bias = to_view(bias, kOp, "bias");
  return in;
}

nb::list specs_list(const std::vector<OutputSpec>& specs) {
  nb::list out;
  for (const OutputSpec& s : specs) {
    nb::list shape;
    for (int64_t d : s.shape) shape.append(d);
    out.append(nb::make_tuple(s.name, nb::tuple(shape), std::string(name(s.dtype))));
  }
  return out;
}

struct PyGrouped {
  std::unique_ptr<GroupedMatmul> g;
};

}  // namespace

void init_grouped_matmul(nb::module_& m) {
  nb::class_<PyGrouped>(m, "GroupedMatmul", "gpula::GroupedMatmul; use gpula.GroupedMatmul.")
      .def(
          "__init__",
          [](PyGrouped* self, nb::handle a, nb::handle b, nb::handle offsets,
             const MatmulOptions& options, const std::string& algo, Scales scales) {
            GroupedMatmulOptions o;
            static_cast<MatmulOptions&>(o) = options;
            o.algo = algo_named(algo);
            const QuantizationScales q{std::get<0>(scales), std::get<1>(scales),
                                       std::get<2>(scales)};
            std::unique_ptr<GroupedMatmul> g;
            if (is_list(a)) {
              const std::vector<TensorView> av = views(a, "a"), bv = views(b, "b");
              nb::gil_scoped_release release;
              g = std::make_unique<GroupedMatmul>(av, bv, o, q);
            } else {
              const TensorView av = to_view(a, kOp, "a"), bv = to_view(b, kOp, "b");
              const std::optional<TensorView> ov = opt_view(offsets, "offsets");
              nb::gil_scoped_release release;
              g = std::make_unique<GroupedMatmul>(av, bv, ov, o, q);
            }
            new (self) PyGrouped{std::move(g)};
          },
          nb::arg("a"), nb::arg("b"), nb::arg("offsets").none(), nb::arg("options"),
          nb::arg("algo"), nb::arg("scales"),
          "a, b: exported arrays (MoE form) or lists of them (list form).")
      .def(
          "plan",
          [](PyGrouped& self, Epilog epilog, nb::handle bias) {
            const GroupedEpilogInputs in = bias_inputs(bias);
            std::vector<OutputSpec> specs;
            {
              nb::gil_scoped_release release;
              self.g->plan(epilog, in);
              specs = self.g->output_specs();
            }
            return specs_list(specs);
          },
          nb::arg("epilog"), nb::arg("bias").none(),
          "Fixes the epilogue; returns [(name, shape, dtype name)] of the results.")
      .def(
          "execute_into",
          [](PyGrouped& self, nb::handle outputs, nb::handle offsets, uintptr_t stream) {
            const std::vector<TensorView> out = views(outputs, "output");
            const std::optional<TensorView> ov = opt_view(offsets, "offsets");
            const Stream s{self.g->device(), reinterpret_cast<void*>(stream)};
            nb::gil_scoped_release release;
            self.g->execute(out, ov, s);
          },
          nb::arg("outputs"), nb::arg("offsets").none(), nb::arg("stream"),
          "Runs into the exported results (output_specs() order); `stream` is a cudaStream_t "
          "as an int.")
      .def(
          "reset_operands",
          [](PyGrouped& self, nb::handle a, nb::handle b, nb::handle bias) {
            GroupedOperandUpdate u;
            if (!a.is_none()) {
              if (is_list(a))
                u.a_list = views(a, "a");
              else
                u.a = to_view(a, kOp, "a");
            }
            if (!b.is_none()) {
              if (is_list(b))
                u.b_list = views(b, "b");
              else
                u.b = to_view(b, kOp, "b");
            }
            u.epilog_inputs = bias_inputs(bias);
            nb::gil_scoped_release release;
            self.g->reset_operands(u);
          },
          nb::arg("a").none(), nb::arg("b").none(), nb::arg("bias").none())
      .def(
          "output_specs",
          [](PyGrouped& self) {
            std::vector<OutputSpec> specs;
            {
              nb::gil_scoped_release release;
              specs = self.g->output_specs();
            }
            return specs_list(specs);
          },
          "[(name, shape, dtype name)] of the results.")
      .def("free",
           [](PyGrouped& self) {
             nb::gil_scoped_release release;
             self.g->free();
           })
      .def_prop_ro("device", [](PyGrouped& self) { return to_string(self.g->device()); })
      .def_prop_ro("algorithm", [](PyGrouped& self) {
        GroupedAlgo a;
        {
          nb::gil_scoped_release release;
          a = self.g->algorithm();
        }
        return std::string(name(a));
      });
}

}  // namespace gpula::python
