#pragma once
// Backends of SpMM, SDDMM and SpGEMM: gpula's OpenMP kernels on the CPU, cuSPARSE on a GPU; and
// the checks of dense operands the fronts share.
#include <gpula/sparse.h>

#include <memory>

namespace gpula::sparse::detail {

// Checks a dense operand: 2-D of shape (rows, cols), `dtype`, on `device`. Throws
// InvalidArgument / DTypeError "[op] name must ..." naming the shape, dtype or device found.
void check_dense(const TensorView& t, const char* op, const char* name, int64_t rows,
                 int64_t cols, DType dtype, Device device, const char* what_shape);

// Row-major with leading dimension >= cols: strides (ld, 1) (size-1 dimensions any stride).
bool is_row_major(const TensorView& t);
// The leading dimension of a row-major view (at least max(1, cols)).
int64_t row_major_ld(const TensorView& t);

// C = alpha op(A) B + beta C on the host, any strides of B and C; for op != none, `at` is the
// (conjugated) transpose of A as CSR (made by cpu_transpose), used instead of A.
void cpu_spmm(const CsrView& a_or_at, const TensorView& b, const TensorView& c, double alpha,
              double beta);
// The CSR of A^T (conjugate: of A^H) on the host, with A's index and value dtypes.
CsrMatrix cpu_transpose(const CsrView& a, bool conjugate);

// c.values = alpha (A B) o spy(C) + beta c.values on the host.
void cpu_sddmm(const CsrView& c, const TensorView& a, const TensorView& b, double alpha,
               double beta);

// C = A B on the host (Gustavson).
CsrMatrix cpu_spgemm(const CsrView& a, const CsrView& b);

// cuSPARSE SpMM plan for A and op on its GPU; B and C row-major there (the front copies).
struct CudaSpmmPlan;
std::shared_ptr<CudaSpmmPlan> cuda_spmm_plan(const CsrView& a, Op op);
void cuda_spmm_execute(CudaSpmmPlan& plan, const TensorView& b, const TensorView& c, double alpha,
                       double beta, Stream stream);

// cuSPARSE SDDMM plan for C's pattern on its GPU; A and B row-major there.
struct CudaSddmmPlan;
std::shared_ptr<CudaSddmmPlan> cuda_sddmm_plan(const CsrView& c);
void cuda_sddmm_execute(CudaSddmmPlan& plan, const TensorView& a, const TensorView& b,
                        double alpha, double beta, Stream stream);

// C = A B with cusparseSpGEMM on A's GPU.
CsrMatrix cuda_spgemm(const CsrView& a, const CsrView& b, Stream stream);

}  // namespace gpula::sparse::detail
