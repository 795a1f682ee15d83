#include "backend/cuda/cholesky_recursive.h"

#include "backend/cuda/cusolver_common.h"
#include "backend/cuda/solver_calls.h"

namespace gpula::detail::cuda {
namespace {

// The first half's order: about n / 2, a multiple of 256 (whole tiles for the cuBLAS calls).
int64_t first_half(int64_t n) {
  const int64_t half = (n / 2 + 255) / 256 * 256;
  return half < n ? half : n / 2;
}

// One factorization: the column-major matrix `a` of leading dimension ld, handles on the
// call's stream, the Xpotrf workspace for the largest leaf.
struct Recursion {
  DType t;
  bool upper;
  char* a;
  int64_t ld, elem;
  int32_t* info;       // LAPACK's info of the whole
  int32_t* leaf_info;  // one leaf's
  cusolverDnHandle_t solver;
  cusolverDnParams_t params;
  cublasHandle_t blas;
  void* ws;
  std::size_t ws_bytes;
  void* host_ws;
  std::size_t host_bytes;
  const LinalgCall& c;

  char* at(int64_t i, int64_t j) const { return a + (i + j * ld) * elem; }

  void leaf(int64_t off, int64_t n) const {
    const cudaDataType_t dt = data_type(t);
    GPULA_CHECK(c.op, cusolverDnXpotrf(solver, params,
                                       upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER, n,
                                       dt, at(off, off), ld, dt, ws, ws_bytes, host_ws,
                                       host_bytes, leaf_info));
    GPULA_CHECK(c.op, launch_merge_info(info, leaf_info, off, raw(c)));
  }

  // Factors the diagonal block [off, off + n).
  void factor(int64_t off, int64_t n) const {
    if (n <= kCholeskyLeafMaxN) return leaf(off, n);
    const int64_t n1 = first_half(n), n2 = n - n1;
    factor(off, n1);
    const cublasOperation_t ct = is_complex(t) ? CUBLAS_OP_C : CUBLAS_OP_T;
    if (upper) {  // U12 = U11^-H A12, A22 -= U12^H U12
      calls::trsm(blas, t, CUBLAS_SIDE_LEFT, CUBLAS_FILL_MODE_UPPER, ct, n1, n2, at(off, off), ld,
                  at(off, off + n1), ld, c.op);
      calls::herk(blas, t, CUBLAS_FILL_MODE_UPPER, CUBLAS_OP_C, n2, n1, -1.0, at(off, off + n1),
                  ld, 1.0, at(off + n1, off + n1), ld, c.op);
    } else {  // L21 = A21 L11^-H, A22 -= L21 L21^H
      calls::trsm(blas, t, CUBLAS_SIDE_RIGHT, CUBLAS_FILL_MODE_LOWER, ct, n2, n1, at(off, off), ld,
                  at(off + n1, off), ld, c.op);
      calls::herk(blas, t, CUBLAS_FILL_MODE_LOWER, CUBLAS_OP_N, n2, n1, -1.0, at(off + n1, off),
                  ld, 1.0, at(off + n1, off + n1), ld, c.op);
    }
    factor(off + n1, n2);
  }
};

}  // namespace

void potrf_recursive(DType t, bool upper, int64_t n, void* a, int32_t* info, const LinalgCall& c) {
  Context& ctx = context(c.stream.device.index);
  cusolverDnHandle_t solver = ctx.cusolver(raw(c));
  cublasHandle_t blas = ctx.cublas(raw(c));
  const cudaDataType_t dt = data_type(t);
  // The workspace of the largest leaf (one split of n gives leaves of at most this order).
  const int64_t leaf_max = std::min(n, kCholeskyLeafMaxN);
  std::size_t dev = 0, host = 0;
  GPULA_CHECK(c.op, cusolverDnXpotrf_bufferSize(
                        solver, ctx.cusolver_params(),
                        upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER, leaf_max, dt, a,
                        n, dt, &dev, &host));
  Tensor ws = scratch(static_cast<int64_t>(dev), c);
  Tensor leaf_info = scratch(4, c);
  GPULA_CHECK(c.op, cudaMemsetAsync(info, 0, sizeof(int32_t), raw(c)));
  const Recursion r{t,
                    upper,
                    static_cast<char*>(a),
                    n,
                    static_cast<int64_t>(size_of(t)),
                    info,
                    static_cast<int32_t*>(leaf_info.data()),
                    solver,
                    ctx.cusolver_params(),
                    blas,
                    ws.data(),
                    dev,
                    host_workspace(host),
                    host,
                    c};
  r.factor(0, n);
}

}  // namespace gpula::detail::cuda
