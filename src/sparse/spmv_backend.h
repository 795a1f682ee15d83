#pragma once
// Backends of the planned SpMV: gpula's OpenMP CSR kernel on the CPU, cuSPARSE on a GPU.
#include <gpula/sparse.h>

#include <memory>

namespace gpula::sparse::detail {

// y = alpha * op(A) x + beta * y on the host (A, x, y host arrays of one dtype).
void cpu_spmv(const CsrView& a, Op op, const TensorView& x, const TensorView& y, double alpha,
              double beta);

// A cuSPARSE SpMV plan (descriptors, buffer, preprocessing) for A on its GPU.
struct CudaSpmvPlan;
std::shared_ptr<CudaSpmvPlan> cuda_spmv_plan(const CsrView& a, Op op);
void cuda_spmv_execute(CudaSpmvPlan& plan, const TensorView& x, const TensorView& y, double alpha,
                       double beta, Stream stream);

}  // namespace gpula::sparse::detail
