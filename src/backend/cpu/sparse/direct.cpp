// CPU DirectSolver backend: SuiteSparse. matrix_type positive_definite (SPD, or Hermitian positive
// definite when complex): CHOLMOD supernodal Cholesky (its default ordering: AMD, METIS when AMD's
// fill is high). Every other matrix type: UMFPACK LU (symmetric strategy for symmetric and
// hermitian, UMFPACK's own choice for general). plan() logs the ordering chosen (level info).
//
// UMFPACK: the CSR arrays read as CSC describe A^T, so every solve asks UMFPACK for the array
// transpose (UMFPACK_Aat), which is A itself.
// CHOLMOD: the CSR arrays read as CSC describe A^T; with the values conjugated (complex) they
// describe A^H = A, and CHOLMOD is handed that CSC matrix with stype = +1 (its upper triangle is
// read), i.e. A's lower triangle in CSR terms: the entries on and below the diagonal. The entries
// above it are not read (assumed to be the conjugate transpose of those below). int32 indices use
// CHOLMOD's int interface (cholmod_start, ...), int64 its SuiteSparse_long one (cholmod_l_*): no
// index conversion.
// Values of every dtype are held in double precision (float32/complex64 widened, results narrowed
// back): neither UMFPACK nor CHOLMOD 3 (SuiteSparse 5.12) has single-precision factorizations.
#include <gpula/error.h>
#include <gpula/log.h>
#include <omp.h>
#include <suitesparse/cholmod.h>
#include <suitesparse/umfpack.h>

#include <algorithm>
#include <complex>
#include <string>
#include <type_traits>
#include <vector>

#include "backend/cpu_api.h"
#include "backend/cpu/base/system_openblas.h"
#include "core/format.h"
#include "sparse/direct_backend.h"


namespace gpula::sparse::detail::cpu {

namespace {

constexpr const char* kOp = "sparse.DirectSolver";

std::string umfpack_status_name(int status) {
  switch (status) {
    case UMFPACK_OK:
      return "UMFPACK_OK";
    case UMFPACK_WARNING_singular_matrix:
      return "UMFPACK_WARNING_singular_matrix";
    case UMFPACK_WARNING_determinant_underflow:
      return "UMFPACK_WARNING_determinant_underflow";
    case UMFPACK_WARNING_determinant_overflow:
      return "UMFPACK_WARNING_determinant_overflow";
    case UMFPACK_ERROR_out_of_memory:
      return "UMFPACK_ERROR_out_of_memory";
    case UMFPACK_ERROR_invalid_Numeric_object:
      return "UMFPACK_ERROR_invalid_Numeric_object";
    case UMFPACK_ERROR_invalid_Symbolic_object:
      return "UMFPACK_ERROR_invalid_Symbolic_object";
    case UMFPACK_ERROR_argument_missing:
      return "UMFPACK_ERROR_argument_missing";
    case UMFPACK_ERROR_n_nonpositive:
      return "UMFPACK_ERROR_n_nonpositive";
    case UMFPACK_ERROR_invalid_matrix:
      return "UMFPACK_ERROR_invalid_matrix";
    case UMFPACK_ERROR_different_pattern:
      return "UMFPACK_ERROR_different_pattern";
    case UMFPACK_ERROR_invalid_system:
      return "UMFPACK_ERROR_invalid_system";
    case UMFPACK_ERROR_invalid_permutation:
      return "UMFPACK_ERROR_invalid_permutation";
    case UMFPACK_ERROR_internal_error:
      return "UMFPACK_ERROR_internal_error";
    case UMFPACK_ERROR_file_IO:
      return "UMFPACK_ERROR_file_IO";
    default:
      return "UMFPACK status " + std::to_string(status);
  }
}

void check_umfpack(int status, const char* phase) {
  if (status == UMFPACK_OK) return;
  if (status == UMFPACK_ERROR_out_of_memory) {
    throw OutOfMemory(gpula::detail::cat("[", kOp, "] ", phase, ": ", umfpack_status_name(status)));
  }
  throw VendorError(
      gpula::detail::cat("[", kOp, "] ", phase, " failed: ", umfpack_status_name(status)), status,
      umfpack_status_name(status));
}

// The four UMFPACK entry families: d/z (real/complex) x i/l (int32/int64 indices).
template <class I, bool Complex>
struct Umf;

// Z: the extra arguments complex entries take (nullptr: interleaved real/imaginary parts).
#define GPULA_UMF_FAMILY(I, CPLX, P, Z)                                                          \
  template <>                                                                                    \
  struct Umf<I, CPLX> {                                                                          \
    static int symbolic(I n, const I* p, const I* i, const double* x, void** s, const double* c, \
                        double* info) {                                                          \
      return umfpack_##P##_symbolic(n, n, p, i, x Z, s, c, info);                                \
    }                                                                                            \
    static int numeric(const I* p, const I* i, const double* x, void* s, void** num,             \
                       const double* c, double* info) {                                          \
      return umfpack_##P##_numeric(p, i, x Z, s, num, c, info);                                  \
    }                                                                                            \
    static int solve(const I* p, const I* i, const double* ax, double* x, const double* b,       \
                     void* num, const double* c, double* info) {                                 \
      return umfpack_##P##_solve(UMFPACK_Aat, p, i, ax Z, x Z, b Z, num, c, info);               \
    }                                                                                            \
    static void free_symbolic(void** s) { umfpack_##P##_free_symbolic(s); }                      \
    static void free_numeric(void** n) { umfpack_##P##_free_numeric(n); }                        \
  };

#define GPULA_UMF_REAL
#define GPULA_UMF_COMPLEX , nullptr
GPULA_UMF_FAMILY(int32_t, false, di, GPULA_UMF_REAL)
GPULA_UMF_FAMILY(int32_t, true, zi, GPULA_UMF_COMPLEX)
GPULA_UMF_FAMILY(SuiteSparse_long, false, dl, GPULA_UMF_REAL)
GPULA_UMF_FAMILY(SuiteSparse_long, true, zl, GPULA_UMF_COMPLEX)
#undef GPULA_UMF_FAMILY
#undef GPULA_UMF_REAL
#undef GPULA_UMF_COMPLEX

// Widening copy of `count` elements of `src` (dtype t) into doubles (2 per complex value).
// conjugate: negate the imaginary parts (complex only).
void widen(const void* src, DType t, int64_t count, int64_t stride, double* dst,
           bool conjugate = false) {
  const int64_t per = is_complex(t) ? 2 : 1;
  for (int64_t e = 0; e < count; ++e) {
    for (int64_t c = 0; c < per; ++c) {
      const int64_t at = e * stride * per + c;
      const double v = (t == DType::f32 || t == DType::c64) ? static_cast<const float*>(src)[at]
                                                            : static_cast<const double*>(src)[at];
      dst[e * per + c] = (conjugate && c == 1) ? -v : v;
    }
  }
}

void narrow(const double* src, DType t, int64_t count, int64_t stride, void* dst) {
  const int64_t per = is_complex(t) ? 2 : 1;
  for (int64_t e = 0; e < count; ++e) {
    for (int64_t c = 0; c < per; ++c) {
      const int64_t at = e * stride * per + c;
      if (t == DType::f32 || t == DType::c64) {
        static_cast<float*>(dst)[at] = static_cast<float>(src[e * per + c]);
      } else {
        static_cast<double*>(dst)[at] = src[e * per + c];
      }
    }
  }
}

// Info[UMFPACK_ORDERING_USED]; its "AMD" is COLAMD under the unsymmetric strategy.
const char* umfpack_ordering_name(double used, bool symmetric) {
  switch (static_cast<int>(used)) {
    case UMFPACK_ORDERING_CHOLMOD:
      return "CHOLMOD";
    case UMFPACK_ORDERING_AMD:
      return symmetric ? "AMD" : "COLAMD";
    case UMFPACK_ORDERING_GIVEN:
      return "given";
    case UMFPACK_ORDERING_METIS:
      return "METIS";
    case UMFPACK_ORDERING_NONE:
      return "natural";
    default:
      return "other";
  }
}

template <class I, bool Complex>
class UmfpackBackend final : public DirectBackend {
  using U = Umf<I, Complex>;
  static constexpr int64_t kPer = Complex ? 2 : 1;

 public:
  UmfpackBackend(const CsrView& a, MatrixType type) : n_(a.rows), dtype_(a.dtype()) {
    const auto* p = static_cast<const I*>(a.indptr.data);
    const auto* i = static_cast<const I*>(a.indices.data);
    indptr_.assign(p, p + n_ + 1);
    indices_.assign(i, i + a.nnz());
    values_.resize(static_cast<std::size_t>(a.nnz() * kPer));
    widen(a.values.data, dtype_, a.nnz(), 1, values_.data());
    umfpack_di_defaults(control_);
    // A symmetric (Hermitian) matrix is structurally symmetric: AMD on A + A^T and diagonal
    // pivots first, without leaving the choice to UMFPACK's symmetry measure. General: its choice
    // (the symmetric strategy too when the pattern is symmetric enough, e.g. Poisson).
    if (type == MatrixType::symmetric || type == MatrixType::hermitian) {
      control_[UMFPACK_STRATEGY] = UMFPACK_STRATEGY_SYMMETRIC;
    }
  }
  ~UmfpackBackend() override { release(); }

  std::string library_ordering() const override { return "umfpack"; }

  void analyze() override {
    release();
    double info[UMFPACK_INFO];
    check_umfpack(U::symbolic(static_cast<I>(n_), indptr_.data(), indices_.data(), values_.data(),
                              &symbolic_, control_, info),
                  "symbolic analysis");
    if (log_level() <= LogLevel::info) {
      const bool sym = static_cast<int>(info[UMFPACK_STRATEGY_USED]) == UMFPACK_STRATEGY_SYMMETRIC;
      gpula::log(LogLevel::info,
                 gpula::detail::cat(
                     "[", kOp, "] UMFPACK analysis: ", sym ? "symmetric" : "unsymmetric",
                     " strategy, ordering ",
                     umfpack_ordering_name(info[UMFPACK_ORDERING_USED], sym), ", n = ", n_));
    }
  }

  void factorize() override {
    if (numeric_) U::free_numeric(&numeric_);
    double info[UMFPACK_INFO];
    const int status = U::numeric(indptr_.data(), indices_.data(), values_.data(), symbolic_,
                                  &numeric_, control_, info);
    if (status == UMFPACK_WARNING_singular_matrix) {
      throw SingularMatrix(gpula::detail::cat("[", kOp, "] the matrix is singular (",
                                              umfpack_status_name(status), ")"),
                           -1, -1);
    }
    check_umfpack(status, "numeric factorization");
    if (log_level() <= LogLevel::debug) {
      gpula::log(LogLevel::debug,
                 gpula::detail::cat("[", kOp, "] UMFPACK numeric factorization: nnz(L) + nnz(U) = ",
                                    info[UMFPACK_LNZ] + info[UMFPACK_UNZ], ", ",
                                    info[UMFPACK_FLOPS], " flops"));
    }
  }

  void set_values(const TensorView& values) override {
    widen(values.data, dtype_, static_cast<int64_t>(values_.size() / kPer), 1, values_.data());
  }

  void solve(const TensorView& b, const TensorView& x) override {
    const int64_t k = b.ndim() == 2 ? b.shape[1] : 1;
    std::vector<double> bcol(static_cast<std::size_t>(n_ * kPer));
    std::vector<double> xcol(bcol.size());
    const std::size_t elem = size_of(dtype_);
    double info[UMFPACK_INFO];
    for (int64_t j = 0; j < k; ++j) {
      widen(static_cast<const char*>(b.data) + j * elem, dtype_, n_, k, bcol.data());
      check_umfpack(U::solve(indptr_.data(), indices_.data(), values_.data(), xcol.data(),
                             bcol.data(), numeric_, control_, info),
                    "solve");
      narrow(xcol.data(), dtype_, n_, k, static_cast<char*>(x.data) + j * elem);
    }
  }

 private:
  void release() {
    if (numeric_) U::free_numeric(&numeric_);
    if (symbolic_) U::free_symbolic(&symbolic_);
  }

  int64_t n_;
  DType dtype_;
  std::vector<I> indptr_, indices_;
  std::vector<double> values_;
  double control_[UMFPACK_CONTROL];
  void* symbolic_ = nullptr;
  void* numeric_ = nullptr;
};

// ---- CHOLMOD -----------------------------------------------------------------------------------

std::string cholmod_status_name(int status) {
  switch (status) {
    case CHOLMOD_OK:
      return "CHOLMOD_OK";
    case CHOLMOD_NOT_INSTALLED:
      return "CHOLMOD_NOT_INSTALLED";
    case CHOLMOD_OUT_OF_MEMORY:
      return "CHOLMOD_OUT_OF_MEMORY";
    case CHOLMOD_TOO_LARGE:
      return "CHOLMOD_TOO_LARGE";
    case CHOLMOD_INVALID:
      return "CHOLMOD_INVALID";
    case CHOLMOD_GPU_PROBLEM:
      return "CHOLMOD_GPU_PROBLEM";
    case CHOLMOD_NOT_POSDEF:
      return "CHOLMOD_NOT_POSDEF";
    case CHOLMOD_DSMALL:
      return "CHOLMOD_DSMALL";
    default:
      return "CHOLMOD status " + std::to_string(status);
  }
}

// Errors only (status < 0); warnings (NOT_POSDEF, DSMALL) are the caller's to judge.
void check_cholmod(int status, const char* phase) {
  if (status >= CHOLMOD_OK) return;
  if (status == CHOLMOD_OUT_OF_MEMORY || status == CHOLMOD_TOO_LARGE) {
    throw OutOfMemory(
        gpula::detail::cat("[", kOp, "] CHOLMOD ", phase, ": ", cholmod_status_name(status)));
  }
  throw VendorError(gpula::detail::cat("[", kOp, "] CHOLMOD ", phase,
                                       " failed: ", cholmod_status_name(status)),
                    status, cholmod_status_name(status));
}

// CHOLMOD's two index interfaces: int (cholmod_*) and SuiteSparse_long (cholmod_l_*).
template <class I>
struct Chol;

#define GPULA_CHOL_FAMILY(I, ITYPE, P)                                                          \
  template <>                                                                                   \
  struct Chol<I> {                                                                              \
    static constexpr int itype = ITYPE;                                                         \
    static int start(cholmod_common* c) { return P##start(c); }                                 \
    static int finish(cholmod_common* c) { return P##finish(c); }                               \
    static cholmod_factor* analyze(cholmod_sparse* a, cholmod_common* c) {                      \
      return P##analyze(a, c);                                                                  \
    }                                                                                           \
    static int factorize(cholmod_sparse* a, cholmod_factor* l, cholmod_common* c) {             \
      return P##factorize(a, l, c);                                                             \
    }                                                                                           \
    static cholmod_dense* solve(cholmod_factor* l, cholmod_dense* b, cholmod_common* c) {       \
      return P##solve(CHOLMOD_A, l, b, c);                                                      \
    }                                                                                           \
    static void free_factor(cholmod_factor** l, cholmod_common* c) { P##free_factor(l, c); }    \
    static void free_dense(cholmod_dense** x, cholmod_common* c) { P##free_dense(x, c); }       \
  };

GPULA_CHOL_FAMILY(int32_t, CHOLMOD_INT, cholmod_)
GPULA_CHOL_FAMILY(SuiteSparse_long, CHOLMOD_LONG, cholmod_l_)
#undef GPULA_CHOL_FAMILY

// Duplicates within a row, which CHOLMOD does not check itself (the DirectSolver front has
// validated indptr and the index range, validate_csr). Returns whether every row is sorted.
template <class I>
bool check_pattern(const std::vector<I>& indptr, const std::vector<I>& indices, int64_t n) {
  using gpula::detail::throw_error;
  bool sorted = true;
  std::vector<I> row;
  for (int64_t r = 0; r < n; ++r) {
    const I lo = indptr[r], hi = indptr[r + 1];
    if (std::is_sorted(indices.begin() + lo, indices.begin() + hi) &&
        std::adjacent_find(indices.begin() + lo, indices.begin() + hi) == indices.begin() + hi) {
      continue;
    }
    sorted = false;
    row.assign(indices.begin() + lo, indices.begin() + hi);
    std::sort(row.begin(), row.end());
    const auto dup = std::adjacent_find(row.begin(), row.end());
    if (dup != row.end()) {
      throw_error<InvalidArgument>(kOp, "duplicate entry (", r, ", ", *dup, ")");
    }
  }
  return sorted;
}

// Threads. CHOLMOD 3's supernodal factorization runs small memory-bound OpenMP loops between its
// BLAS calls (zeroing a supernode, scattering A and the updates into it), compiled with
// num_threads(4) whatever the core count (no Common->nthreads_max before CHOLMOD 4), while
// OpenBLAS (pthreads) keeps one thread per core: 4 + ncores threads, and a threaded BLAS call
// stalls on a worker that lost its core. So this guard runs those loops on the calling thread
// alone (max-active-levels 0: each parallel region it opens gets one thread; the ICV is per
// thread, so other threads keep theirs) and leaves every core to BLAS, which holds the flops.
// 2-D Poisson n = 1e6 on 2 cores, refactorization: 2.55 s -> 1.86 s (BLAS on 1 thread: 2.23 s;
// 3-D 50^3: 2.10 s vs 3.22 s, so BLAS stays threaded). OPENBLAS_NUM_THREADS still bounds BLAS:
// with a core busy elsewhere, 2 BLAS threads took 8.7 s and 1 thread 2.0 s. An OpenMP-built
// OpenBLAS shares the OpenMP pool (no multiplication) and would be serialized too: left alone.
class SerialOpenMpRegions {
 public:
  SerialOpenMpRegions() : saved_(omp_get_max_active_levels()) {
    if (active_) omp_set_max_active_levels(0);
  }
  ~SerialOpenMpRegions() {
    if (active_) omp_set_max_active_levels(saved_);
  }
  SerialOpenMpRegions(const SerialOpenMpRegions&) = delete;
  SerialOpenMpRegions& operator=(const SerialOpenMpRegions&) = delete;

 private:
  static constexpr int kOpenMpBlas = 2;  // openblas_get_parallel(): 0 serial, 1 pthreads, 2 OpenMP
  bool active_ = openblas_get_parallel() != kOpenMpBlas;
  int saved_;
};

const char* cholmod_ordering_name(int ordering) {
  switch (ordering) {
    case CHOLMOD_NATURAL:
      return "natural";
    case CHOLMOD_GIVEN:
      return "given";
    case CHOLMOD_AMD:
      return "AMD";
    case CHOLMOD_METIS:
      return "METIS";
    case CHOLMOD_NESDIS:
      return "NESDIS";
    case CHOLMOD_COLAMD:
      return "COLAMD";
    case CHOLMOD_POSTORDERED:
      return "postordered";
    default:
      return "other";
  }
}

template <class I, bool Complex>
class CholmodBackend final : public DirectBackend {
  using C = Chol<I>;
  static constexpr int64_t kPer = Complex ? 2 : 1;

 public:
  CholmodBackend(const CsrView& a) : n_(a.rows), dtype_(a.dtype()) {
    const auto* p = static_cast<const I*>(a.indptr.data);
    const auto* i = static_cast<const I*>(a.indices.data);
    indptr_.assign(p, p + n_ + 1);
    indices_.assign(i, i + a.nnz());
    const bool sorted = check_pattern(indptr_, indices_, n_);
    values_.resize(static_cast<std::size_t>(a.nnz() * kPer));
    widen(a.values.data, dtype_, a.nnz(), 1, values_.data(), /*conjugate=*/Complex);
    C::start(&common_);
    started_ = true;
    common_.print = 0;  // failures are reported as gpula errors, not printed
    // LL' also when CHOLMOD picks its simplicial method (small or very sparse factors): its
    // default simplicial LDL' would factor an indefinite matrix without reporting it.
    common_.final_ll = 1;
    // The CSC view of the (conjugated) CSR arrays: A^H = A, its upper triangle read (stype 1).
    a_ = cholmod_sparse{};
    a_.nrow = a_.ncol = static_cast<std::size_t>(n_);
    a_.nzmax = static_cast<std::size_t>(a.nnz());
    a_.p = indptr_.data();
    a_.i = indices_.data();
    a_.x = values_.data();
    a_.stype = 1;
    a_.itype = C::itype;
    a_.xtype = Complex ? CHOLMOD_COMPLEX : CHOLMOD_REAL;
    a_.dtype = CHOLMOD_DOUBLE;
    a_.sorted = sorted ? 1 : 0;
    a_.packed = 1;
  }
  ~CholmodBackend() override {
    if (factor_) C::free_factor(&factor_, &common_);
    if (started_) C::finish(&common_);
  }

  std::string library_ordering() const override { return "cholmod"; }

  // Fill-reducing ordering + supernodal symbolic analysis (kept for every refactorization).
  void analyze() override {
    if (factor_) C::free_factor(&factor_, &common_);
    factor_ = C::analyze(&a_, &common_);
    if (!factor_) {
      check_cholmod(common_.status < 0 ? common_.status : CHOLMOD_INVALID, "symbolic analysis");
    }
    if (log_level() <= LogLevel::info) {
      gpula::log(LogLevel::info,
                 gpula::detail::cat("[", kOp, "] CHOLMOD analysis: ordering ",
                                    cholmod_ordering_name(factor_->ordering), ", ",
                                    factor_->is_super ? "supernodal" : "simplicial", ", n = ", n_,
                                    ", nnz(L) ", common_.lnz, ", ", common_.fl, " flops"));
    }
  }

  // Numeric Cholesky into the analyzed factor (refactorization: same ordering and structure).
  void factorize() override {
    int ok = 0;
    {
      const SerialOpenMpRegions serial;
      ok = C::factorize(&a_, factor_, &common_);
    }
    check_cholmod(common_.status, "numeric factorization");
    if (!ok) check_cholmod(CHOLMOD_INVALID, "numeric factorization");
    if (common_.status == CHOLMOD_NOT_POSDEF ||
        static_cast<int64_t>(factor_->minor) < static_cast<int64_t>(n_)) {
      const auto order = static_cast<int64_t>(factor_->minor) + 1;
      throw NotPositiveDefinite(
          gpula::detail::cat("[", kOp, "] CHOLMOD numeric factorization: not positive definite: "
                                       "leading minor of order ",
                             order, " of the fill-reduced (permuted) matrix (",
                             cholmod_status_name(common_.status), ")"),
          order, -1);
    }
  }

  void set_values(const TensorView& values) override {
    widen(values.data, dtype_, static_cast<int64_t>(values_.size() / kPer), 1, values_.data(),
          /*conjugate=*/Complex);
  }

  // b, x: (n,) or (n, k) row-major; CHOLMOD takes and returns column-major n x k.
  void solve(const TensorView& b, const TensorView& x) override {
    const int64_t k = b.ndim() == 2 ? b.shape[1] : 1;
    const std::size_t elem = size_of(dtype_);
    std::vector<double> bcols(static_cast<std::size_t>(n_ * k * kPer));
    for (int64_t j = 0; j < k; ++j) {
      widen(static_cast<const char*>(b.data) + j * elem, dtype_, n_, k, bcols.data() + j * n_ * kPer);
    }
    cholmod_dense bd{};
    bd.nrow = static_cast<std::size_t>(n_);
    bd.ncol = static_cast<std::size_t>(k);
    bd.nzmax = bd.nrow * bd.ncol;
    bd.d = bd.nrow;
    bd.x = bcols.data();
    bd.xtype = Complex ? CHOLMOD_COMPLEX : CHOLMOD_REAL;
    bd.dtype = CHOLMOD_DOUBLE;
    cholmod_dense* xd = C::solve(factor_, &bd, &common_);
    if (!xd) {
      check_cholmod(common_.status < 0 ? common_.status : CHOLMOD_INVALID, "solve");
    }
    const auto* xv = static_cast<const double*>(xd->x);
    const auto ld = static_cast<int64_t>(xd->d);
    for (int64_t j = 0; j < k; ++j) {
      narrow(xv + j * ld * kPer, dtype_, n_, k, static_cast<char*>(x.data) + j * elem);
    }
    C::free_dense(&xd, &common_);
  }

 private:
  int64_t n_;
  DType dtype_;
  std::vector<I> indptr_, indices_;
  std::vector<double> values_;
  cholmod_common common_{};
  bool started_ = false;
  cholmod_sparse a_{};
  cholmod_factor* factor_ = nullptr;
};

}  // namespace

std::unique_ptr<DirectBackend> make_direct_backend(const CsrView& a,
                                                   const DirectSolverOptions& options) {
  if (a.rows == 0) {
    throw NotSupported(
        gpula::detail::cat("[", kOp, "] an empty (0 x 0) matrix has no factorization"));
  }
  gpula::detail::cpu::warn_blas_core_once();
  const bool cplx = is_complex(a.dtype());
  static_assert(sizeof(SuiteSparse_long) == sizeof(int64_t));
  if (options.matrix_type == MatrixType::positive_definite) {
    if (a.index_dtype() == DType::i32) {
      if (cplx) return std::make_unique<CholmodBackend<int32_t, true>>(a);
      return std::make_unique<CholmodBackend<int32_t, false>>(a);
    }
    if (cplx) return std::make_unique<CholmodBackend<SuiteSparse_long, true>>(a);
    return std::make_unique<CholmodBackend<SuiteSparse_long, false>>(a);
  }
  if (a.index_dtype() == DType::i32) {
    if (cplx) return std::make_unique<UmfpackBackend<int32_t, true>>(a, options.matrix_type);
    return std::make_unique<UmfpackBackend<int32_t, false>>(a, options.matrix_type);
  }
  if (cplx) return std::make_unique<UmfpackBackend<SuiteSparse_long, true>>(a, options.matrix_type);
  return std::make_unique<UmfpackBackend<SuiteSparse_long, false>>(a, options.matrix_type);
}

}  // namespace gpula::sparse::detail::cpu
