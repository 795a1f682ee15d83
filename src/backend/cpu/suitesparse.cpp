// CPU DirectSolver backend: SuiteSparse UMFPACK. The CSR arrays read as CSC describe A^T, so
// every solve asks UMFPACK for the array transpose (UMFPACK_Aat), which is A itself. Values of
// every dtype are held in double precision (float32/complex64 widened, results narrowed back).
#include <gpula/error.h>
#include <suitesparse/umfpack.h>

#include <complex>
#include <string>
#include <type_traits>
#include <vector>

#include "format.h"
#include "sparse_direct_backend.h"

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
void widen(const void* src, DType t, int64_t count, int64_t stride, double* dst) {
  const int64_t per = is_complex(t) ? 2 : 1;
  for (int64_t e = 0; e < count; ++e) {
    for (int64_t c = 0; c < per; ++c) {
      const int64_t at = e * stride * per + c;
      dst[e * per + c] = (t == DType::f32 || t == DType::c64) ? static_cast<const float*>(src)[at]
                                                              : static_cast<const double*>(src)[at];
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

template <class I, bool Complex>
class UmfpackBackend final : public DirectBackend {
  using U = Umf<I, Complex>;
  static constexpr int64_t kPer = Complex ? 2 : 1;

 public:
  UmfpackBackend(const CsrView& a) : n_(a.rows), dtype_(a.dtype()) {
    const auto* p = static_cast<const I*>(a.indptr.data);
    const auto* i = static_cast<const I*>(a.indices.data);
    indptr_.assign(p, p + n_ + 1);
    indices_.assign(i, i + a.nnz());
    values_.resize(static_cast<std::size_t>(a.nnz() * kPer));
    widen(a.values.data, dtype_, a.nnz(), 1, values_.data());
    umfpack_di_defaults(control_);
  }
  ~UmfpackBackend() override { release(); }

  void analyze() override {
    release();
    double info[UMFPACK_INFO];
    check_umfpack(U::symbolic(static_cast<I>(n_), indptr_.data(), indices_.data(), values_.data(),
                              &symbolic_, control_, info),
                  "symbolic analysis");
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

}  // namespace

std::unique_ptr<DirectBackend> make_direct_backend(const CsrView& a, const DirectSolverOptions&) {
  if (a.rows == 0) {
    throw NotSupported(
        gpula::detail::cat("[", kOp, "] an empty (0 x 0) matrix has no factorization"));
  }
  const bool cplx = is_complex(a.dtype());
  if (a.index_dtype() == DType::i32) {
    if (cplx) return std::make_unique<UmfpackBackend<int32_t, true>>(a);
    return std::make_unique<UmfpackBackend<int32_t, false>>(a);
  }
  static_assert(sizeof(SuiteSparse_long) == sizeof(int64_t));
  if (cplx) return std::make_unique<UmfpackBackend<SuiteSparse_long, true>>(a);
  return std::make_unique<UmfpackBackend<SuiteSparse_long, false>>(a);
}

}  // namespace gpula::sparse::detail::cpu
