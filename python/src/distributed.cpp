// gpula::distributed for Python: the block-cyclic index helpers, the cusolverMg solvers (host
// NumPy operands, results handed to NumPy zero-copy) and the multi-process engines over a
// Communicator (local pieces on the GPU, CuPy / PyTorch; in place, eigh's results in the
// caller's package).
#include <gpula/distributed.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <vector>

#include "linalg_common.h"

namespace gpula::python {

namespace {

distributed::MgOptions mg_options(std::vector<int> devices, int64_t block_size, bool check_info) {
  distributed::MgOptions o;
  o.devices = std::move(devices);
  o.block_size = block_size;
  o.check_info = check_info;
  return o;
}

linalg::Assume assume_of(const std::string& s) {
  if (s == "gen") return linalg::Assume::gen;
  if (s == "pos") return linalg::Assume::pos;
  if (s == "sym") return linalg::Assume::sym;
  throw InvalidArgument("[distributed.solve] assume_a expected 'gen', 'pos' or 'sym', got '" + s +
                        "'");
}

distributed::BlockCyclic layout(nb::tuple t) {
  const auto g = [&](size_t i) { return nb::cast<int64_t>(t[i]); };
  return {g(0), g(1), g(2), g(3), g(4), g(5), g(6), g(7)};
}

// The host (m x n) matrix of a scatter / gather, named as the Python method names it: its shape
// is the layout's and its dtype local's.
void check_host_matrix(const char* op, const char* name, const TensorView& g,
                       const TensorView& local, const distributed::BlockCyclic& d) {
  if (g.shape != Shape{d.m, d.n})
    throw InvalidArgument(std::string("[") + op + "] " + name + " expected shape (" +
                          std::to_string(d.m) + ", " + std::to_string(d.n) + "), got " +
                          g.shape_str());
  if (g.dtype != local.dtype)
    throw DTypeError(std::string("[") + op + "] " + name + " and local expected one dtype, got " +
                     name + " " + g.describe() + " and local " + local.describe());
}

}  // namespace

void init_distributed(nb::module_& m) {
  using std::vector;
  // Behind gl.distributed.numroc, owner, global_to_local and local_to_global (0-based), which
  // check their arguments (int-like, within int64) and carry the docstrings.
  m.def("distributed_numroc", &distributed::numroc, nb::arg("n"), nb::arg("nb"), nb::arg("iproc"),
        nb::arg("isrcproc"), nb::arg("nprocs"));
  m.def("distributed_owner", &distributed::owner, nb::arg("g"), nb::arg("nb"), nb::arg("isrcproc"),
        nb::arg("nprocs"));
  m.def("distributed_global_to_local", &distributed::global_to_local, nb::arg("g"), nb::arg("nb"),
        nb::arg("nprocs"));
  m.def("distributed_local_to_global", &distributed::local_to_global, nb::arg("l"), nb::arg("nb"),
        nb::arg("iproc"), nb::arg("isrcproc"), nb::arg("nprocs"));
  // BlockCyclic.scatter(a, ...) and .gather(local, ..., out): the host matrix is checked here
  // under its Python name (a / out) first; the core's own checks name it "global".
  m.def(
      "distributed_scatter",
      [](nb::handle a, nb::tuple d, int64_t prow, int64_t pcol, nb::handle local) {
        const char* op = "distributed.scatter";
        const TensorView av = to_view(a, op, "a");
        const TensorView lv = to_view(local, op, "local");
        const distributed::BlockCyclic l = layout(d);
        check_host_matrix(op, "a", av, lv, l);
        distributed::scatter(av, l, prow, pcol, lv);
      },
      nb::arg("a"), nb::arg("layout"), nb::arg("prow"), nb::arg("pcol"), nb::arg("local"));
  m.def(
      "distributed_gather",
      [](nb::handle local, nb::tuple d, int64_t prow, int64_t pcol, nb::handle out) {
        const char* op = "distributed.gather";
        const TensorView ov = to_view(out, op, "out");
        const TensorView lv = to_view(local, op, "local");
        const distributed::BlockCyclic l = layout(d);
        check_host_matrix(op, "out", ov, lv, l);
        distributed::gather(lv, l, prow, pcol, ov);
      },
      nb::arg("local"), nb::arg("layout"), nb::arg("prow"), nb::arg("pcol"), nb::arg("out").none());
  m.def(
      "distributed_cholesky",
      [](nb::handle a, bool lower, vector<int> devices, int64_t block_size, bool check_info) {
        const TensorView av = to_view(a, "distributed.cholesky", "a");
        const auto o = mg_options(std::move(devices), block_size, check_info);
        return wrap(without_gil([&] { return distributed::cholesky(av, lower, o); }), kNumpy);
      },
      nb::arg("a"), nb::arg("lower") = true, nb::arg("devices") = vector<int>{},
      nb::arg("block_size") = 256, nb::arg("check_info") = true,
      "gpula::distributed::cholesky (cusolverMg).");
  m.def(
      "distributed_solve",
      [](nb::handle a, nb::handle b, const std::string& assume_a, bool lower, vector<int> devices,
         int64_t block_size, bool check_info) {
        const TensorView av = to_view(a, "distributed.solve", "a");
        const TensorView bv = to_view(b, "distributed.solve", "b");
        const linalg::Assume as = assume_of(assume_a);
        const auto o = mg_options(std::move(devices), block_size, check_info);
        return wrap(without_gil([&] { return distributed::solve(av, bv, as, lower, o); }), kNumpy);
      },
      nb::arg("a"), nb::arg("b"), nb::arg("assume_a") = "gen", nb::arg("lower") = false,
      nb::arg("devices") = vector<int>{}, nb::arg("block_size") = 256, nb::arg("check_info") = true,
      "gpula::distributed::solve (cusolverMg).");
  m.def(
      "distributed_eigh",
      [](nb::handle a, bool lower, bool eigvals_only, vector<int> devices, int64_t block_size,
         bool check_info) {
        const TensorView av = to_view(a, "distributed.eigh", "a");
        const auto o = mg_options(std::move(devices), block_size, check_info);
        const linalg::Eigh r =
            without_gil([&] { return distributed::eigh(av, lower, eigvals_only, o); });
        return nb::make_tuple(wrap(r.w, kNumpy), wrap(r.v, kNumpy), wrap(r.info, kNumpy));
      },
      nb::arg("a"), nb::arg("lower") = true, nb::arg("eigvals_only") = false,
      nb::arg("devices") = vector<int>{}, nb::arg("block_size") = 256, nb::arg("check_info") = true,
      "gpula::distributed::eigh (cusolverMg): (w, v or None, info).");
  m.def("distributed_has_mp", &distributed::has_mp);

  // ----- multi-process engines -----
  using distributed::Communicator;
  nb::class_<Communicator>(m, "DistributedCommunicator",
                           "gpula::distributed::Communicator: NCCL + cuSOLVERMp / cuBLASMp.")
      .def_prop_ro("rank", &Communicator::rank)
      .def_prop_ro("size", &Communicator::size)
      .def_prop_ro("device", &Communicator::device)
      .def_prop_ro("defined", &Communicator::defined);
  m.def("distributed_unique_id", [] {
    const Communicator::UniqueId id = Communicator::unique_id();
    return nb::bytes(id.data(), id.size());
  });
  m.def(
      "distributed_communicator",
      [](int rank, int size, nb::bytes id, int device) {
        Communicator::UniqueId u{};
        if (id.size() != u.size())
          throw InvalidArgument("[distributed.Communicator.create] unique_id expected " +
                                std::to_string(u.size()) + " bytes, got " +
                                std::to_string(id.size()));
        std::memcpy(u.data(), id.c_str(), u.size());
        return without_gil([&] { return Communicator::create(rank, size, u, device); });
      },
      nb::arg("rank"), nb::arg("size"), nb::arg("unique_id"), nb::arg("device"));
  m.def(
      "distributed_cholesky_mp",
      [](const Communicator& c, nb::handle a, nb::tuple la, bool lower, bool check_info) {
        const TensorView av = to_view(a, "distributed.cholesky", "a");
        const distributed::BlockCyclic l = layout(la);
        without_gil([&] {
          distributed::cholesky(c, av, l, lower, {.check_info = check_info});
          return 0;
        });
      },
      nb::arg("comm"), nb::arg("a"), nb::arg("layout"), nb::arg("lower"), nb::arg("check_info"));
  m.def(
      "distributed_solve_mp",
      [](const Communicator& c, nb::handle a, nb::tuple la, nb::handle b, nb::tuple lb,
         const std::string& assume_a, bool lower, bool check_info) {
        const TensorView av = to_view(a, "distributed.solve", "a");
        const TensorView bv = to_view(b, "distributed.solve", "b");
        const distributed::BlockCyclic l1 = layout(la), l2 = layout(lb);
        const linalg::Assume as = assume_of(assume_a);
        without_gil([&] {
          distributed::solve(c, av, l1, bv, l2, as, lower, {.check_info = check_info});
          return 0;
        });
      },
      nb::arg("comm"), nb::arg("a"), nb::arg("a_layout"), nb::arg("b"), nb::arg("b_layout"),
      nb::arg("assume_a"), nb::arg("lower"), nb::arg("check_info"));
  m.def(
      "distributed_eigh_mp",
      [](const Communicator& c, nb::handle a, nb::tuple la, bool lower, bool eigvals_only,
         bool check_info, int framework) {
        const TensorView av = to_view(a, "distributed.eigh", "a");
        const distributed::BlockCyclic l = layout(la);
        const linalg::Eigh r = without_gil([&] {
          return distributed::eigh(c, av, l, lower, eigvals_only, {.check_info = check_info});
        });
        return nb::make_tuple(wrap(r.w, framework), wrap(r.v, framework), wrap(r.info, kNumpy));
      },
      nb::arg("comm"), nb::arg("a"), nb::arg("layout"), nb::arg("lower"), nb::arg("eigvals_only"),
      nb::arg("check_info"), nb::arg("framework"));
  m.def(
      "distributed_matmul_mp",
      [](const Communicator& c, nb::handle a, nb::tuple la, nb::handle b, nb::tuple lb,
         nb::handle cc, nb::tuple lc, double alpha, double beta) {
        const char* op = "distributed.matmul";
        const TensorView av = to_view(a, op, "a"), bv = to_view(b, op, "b"),
                         cv = to_view(cc, op, "c");
        const distributed::BlockCyclic l1 = layout(la), l2 = layout(lb), l3 = layout(lc);
        without_gil([&] {
          distributed::matmul(c, av, l1, bv, l2, cv, l3, alpha, beta);
          return 0;
        });
      },
      nb::arg("comm"), nb::arg("a"), nb::arg("a_layout"), nb::arg("b"), nb::arg("b_layout"),
      nb::arg("c"), nb::arg("c_layout"), nb::arg("alpha"), nb::arg("beta"));
}

}  // namespace gpula::python
