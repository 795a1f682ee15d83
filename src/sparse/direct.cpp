// DirectSolver front: argument checks, the phase order, pattern checks on reset, dispatch.
#include <gpula/error.h>
#include <gpula/sparse_direct.h>

#include <gpula/log.h>

#include <chrono>
#include <cstring>
#include <limits>
#include <vector>

#include "backend/cuda_api.h"
#include "core/format.h"
#include "sparse/direct_backend.h"

namespace gpula::sparse {

void detail::DirectBackend::use_ordering(const NestedDissection&) {
  throw NotSupported("[sparse.DirectSolver] this backend takes no ordering from gpula");
}

namespace {
constexpr const char* kOp = "sparse.DirectSolver";
using gpula::detail::throw_error;

// A host copy of a 1-D array's first `count` elements (from any device).
std::vector<unsigned char> bytes_of(const TensorView& t, int64_t count) {
  const std::size_t size = static_cast<std::size_t>(count) * size_of(t.dtype);
  std::vector<unsigned char> out(size);
  if (size == 0) return out;
  if (!t.device.is_cuda()) {
    std::memcpy(out.data(), t.data, size);
    return out;
  }
  TensorView host = t;
  host.data = out.data();
  host.device = Device{};
  host.shape = {count};
  host.strides = {1};
  TensorView src = t;
  src.shape = {count};
  const Stream stream{t.device, nullptr};
  gpula::copy(src, host, stream);
  gpula::detail::cuda::synchronize(stream);
  return out;
}

// Whether t's first `count` elements equal `expected` (host arrays compared in place).
bool same_bytes(const TensorView& t, int64_t count, const std::vector<unsigned char>& expected) {
  const std::size_t size = static_cast<std::size_t>(count) * size_of(t.dtype);
  if (size != expected.size()) return false;
  if (size == 0) return true;
  if (!t.device.is_cuda()) return std::memcmp(t.data, expected.data(), size) == 0;
  return bytes_of(t, count) == expected;
}
}  // namespace

// automatic ordering: gpula's nested dissection from this order up (below it cuDSS's own
// reordering takes well under 0.2 s)
constexpr int64_t kLevelSetMinOrder = 131072;

struct DirectSolver::Impl {
  CsrView a;  // shape and dtypes only after construction; arrays live in the backend
  std::vector<unsigned char> indptr, indices;
  std::unique_ptr<detail::DirectBackend> backend;
  DirectSolverOptions options;
  std::string ordering;
  bool planned = false, factorized = false, freed = false;

  void require_alive() const {
    if (freed) {
      throw_error<InvalidArgument>(kOp, "the solver was freed (free() was called, or its with "
                                        "block ended): make a new one");
    }
  }

  // Hands gpula's nested dissection to the backend where the options and the matrix call for
  // it; the choice is logged.
  void choose_ordering() {
    ordering = backend->library_ordering();
    const Ordering want = options.ordering;
    if (want == Ordering::library || !backend->takes_ordering()) return;
    const int64_t n = a.rows;
    if (want == Ordering::automatic && n < kLevelSetMinOrder) return;
    if (n < 2 || n >= (int64_t{1} << 30)) {
      log(want == Ordering::level_set ? LogLevel::warning : LogLevel::info,
          gpula::detail::cat("[", kOp, "] ordering: ", ordering, "'s own (n = ", n,
                             " is outside what the level-set nested dissection takes)"));
      return;
    }
    const auto t0 = std::chrono::steady_clock::now();
    // the arrays were validated at construction; anything that goes wrong in the optional
    // ordering (memory, threads) falls back to the library's
    const detail::Graph g = detail::symmetric_pattern(
        n, indptr.data(), indices.data(), static_cast<int>(size_of(a.index_dtype())));
    detail::NestedDissection nd;
    try {
      nd = detail::level_set_nested_dissection(g, std::max(2, detail::nested_dissection_levels(n)),
                                               0, want == Ordering::automatic);
    } catch (const std::exception& e) {
      if (want == Ordering::level_set) throw;
      log(LogLevel::warning, gpula::detail::cat("[", kOp, "] ordering: ", ordering,
                                                "'s own (the level-set nested dissection failed: ",
                                                e.what(), ")"));
      return;
    }
    const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const bool take = want == Ordering::level_set ? nd.complete : nd.usable;
    if (!take) {
      log(want == Ordering::level_set ? LogLevel::warning : LogLevel::info,
          gpula::detail::cat("[", kOp, "] ordering: ", ordering, "'s own, not the level-set "
                             "nested dissection (", nd.reason, "; ", secs, " s spent)"));
      return;
    }
    backend->use_ordering(nd);
    ordering = "level_set";
    log(LogLevel::info,
        gpula::detail::cat("[", kOp, "] ordering: level-set nested dissection, n = ", n, ", ",
                           nd.levels, " tree levels, root separator ", nd.root_separator,
                           ", largest separator share ", nd.worst_separator_share, ", ", secs,
                           " s"));
  }
};

DirectSolver::DirectSolver(const CsrView& a, const DirectSolverOptions& options,
                           [[maybe_unused]] Stream stream)
    : impl_(std::make_unique<Impl>()) {
  validate_csr(a, kOp);  // structure and contents: every backend and the ordering rely on it
  if (a.rows != a.cols) {
    throw_error<InvalidArgument>(kOp, "A must be square, got shape (", a.rows, ", ", a.cols, ")");
  }
  if (options.triangle != StoredTriangle::full) {
    throw NotSupported(gpula::detail::cat("[", kOp,
                                          "] only a fully stored matrix (triangle='full') is "
                                          "supported for now"));
  }
  if (options.ordering == Ordering::level_set && !a.device().is_cuda()) {
    throw NotSupported(gpula::detail::cat(
        "[", kOp, "] ordering 'level_set' is only supported on the GPU (cuDSS); the CPU solvers "
                  "use SuiteSparse's own ordering (ordering 'automatic' or 'library')"));
  }
  impl_->a = a;
  impl_->options = options;
  impl_->indptr = bytes_of(a.indptr, a.rows + 1);
  impl_->indices = bytes_of(a.indices, a.nnz());
  if (a.device().is_cuda()) {
#ifdef GPULA_WITH_CUDSS
    impl_->backend = detail::cuda::make_direct_backend(a, options, stream);
#else
    throw NotCompiled("cudss");
#endif
  } else {
    impl_->backend = detail::cpu::make_direct_backend(a, options);
  }
}

DirectSolver::~DirectSolver() = default;
DirectSolver::DirectSolver(DirectSolver&&) noexcept = default;
DirectSolver& DirectSolver::operator=(DirectSolver&&) noexcept = default;

bool DirectSolver::planned() const { return impl_ && impl_->planned; }
bool DirectSolver::factorized() const { return impl_ && impl_->factorized; }
std::string DirectSolver::ordering() const {
  return impl_ && impl_->planned ? impl_->ordering : std::string{};
}

void DirectSolver::plan() {
  impl_->require_alive();
  impl_->planned = false;  // until the analysis succeeds; the old factorization is void either way
  impl_->factorized = false;
  if (impl_->a.nnz() == 0 && impl_->a.rows > 0) {  // no entry to pivot on (and none to analyze)
    throw SingularMatrix(gpula::detail::cat("[", kOp, "] A is singular: it has no stored entries "
                                            "(nnz = 0, shape (", impl_->a.rows, ", ",
                                            impl_->a.cols, "))"),
                         0, -1);
  }
  impl_->choose_ordering();
  impl_->backend->analyze();
  impl_->planned = true;
}

void DirectSolver::factorize() {
  impl_->require_alive();
  if (!impl_->planned) throw_error<InvalidArgument>(kOp, "factorize() called before plan()");
  impl_->factorized = false;
  impl_->backend->factorize();
  impl_->factorized = true;
}

void DirectSolver::solve(const TensorView& b, const TensorView& x) {
  impl_->require_alive();
  if (!impl_->factorized) {
    throw_error<InvalidArgument>(kOp, impl_->planned
                                          ? "solve() called before factorize()"
                                          : "solve() called before plan() and factorize()");
  }
  const CsrView& a = impl_->a;
  for (const auto* t : {&b, &x}) {
    const char* label = t == &b ? "b" : "x";
    if (t->ndim() != 1 && t->ndim() != 2) {
      throw_error<InvalidArgument>(kOp, label, " must be (n,) or (n, k), got shape ",
                                   t->shape_str());
    }
    if (t->shape[0] != a.rows) {
      throw_error<InvalidArgument>(kOp, label, " must have ", a.rows, " rows, got shape ",
                                   t->shape_str());
    }
    if (t->dtype != a.dtype()) {
      throw_error<DTypeError>(kOp, label, " must have A's dtype ", name(a.dtype()), ", got ",
                              name(t->dtype));
    }
    if (t->device != a.device()) {
      throw_error<InvalidArgument>(kOp, label, " must be on A's device ", to_string(a.device()),
                                   ", got ", to_string(t->device));
    }
    if (!t->is_contiguous()) throw_error<InvalidArgument>(kOp, label, " must be contiguous");
  }
  if (b.shape != x.shape) {
    throw_error<InvalidArgument>(kOp, "x must have b's shape ", b.shape_str(), ", got ",
                                 x.shape_str());
  }
  impl_->backend->solve(b, x);
}

void DirectSolver::reset_values(const TensorView& values) {
  impl_->require_alive();
  const CsrView& a = impl_->a;
  if (values.ndim() != 1 || values.shape[0] != a.nnz()) {
    throw_error<InvalidArgument>(kOp, "values must have shape (", a.nnz(), ",), got ",
                                 values.shape_str());
  }
  if (values.dtype != a.dtype()) {
    throw_error<DTypeError>(kOp, "values must have A's dtype ", name(a.dtype()), ", got ",
                            name(values.dtype));
  }
  if (values.device != a.device()) {
    throw_error<InvalidArgument>(kOp, "values must be on A's device ", to_string(a.device()),
                                 ", got ", to_string(values.device));
  }
  if (a.nnz() > 1 && values.strides[0] != 1) {
    throw_error<InvalidArgument>(kOp, "values must be contiguous");
  }
  impl_->backend->set_values(values);
  impl_->factorized = false;
}

void DirectSolver::reset_matrix(const CsrView& b) {
  impl_->require_alive();
  check_csr(b, kOp);
  const CsrView& a = impl_->a;
  if (b.rows != a.rows || b.cols != a.cols) {
    throw_error<InvalidArgument>(kOp, "the new matrix has shape (", b.rows, ", ", b.cols,
                                 "), the planned one (", a.rows, ", ", a.cols, ")");
  }
  if (b.nnz() != a.nnz()) {
    throw_error<InvalidArgument>(kOp, "the pattern changed: nnz ", b.nnz(), ", planned ", a.nnz());
  }
  if (b.index_dtype() != a.index_dtype()) {
    throw_error<DTypeError>(kOp, "the index dtype changed: ", name(b.index_dtype()), ", planned ",
                            name(a.index_dtype()));
  }
  if (b.device() != a.device()) {
    throw_error<InvalidArgument>(kOp, "the device changed: ", to_string(b.device()), ", planned ",
                                 to_string(a.device()));
  }
  if (!same_bytes(b.indptr, b.rows + 1, impl_->indptr)) {
    throw_error<InvalidArgument>(kOp, "the pattern changed: indptr differs from the planned one");
  }
  if (!same_bytes(b.indices, b.nnz(), impl_->indices)) {
    throw_error<InvalidArgument>(kOp, "the pattern changed: indices differ from the planned ones");
  }
  reset_values(b.values);
}

void DirectSolver::free() {
  if (!impl_) return;
  impl_->backend.reset();
  impl_->freed = true;
  impl_->planned = impl_->factorized = false;
}

}  // namespace gpula::sparse
