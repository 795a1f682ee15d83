#pragma once
// The type rules every matmul-shaped op shares (Matmul, GroupedMatmul): which operand dtypes,
// compute types, scale types and result types go together, and the byte alignment of a pointer.
#include <gpula/matmul.h>

namespace gpula::detail {

// Throws DTypeError naming `op` and `arg` unless `t` is a floating dtype matmul takes.
void check_matmul_operand_dtype(const char* op, const char* arg, DType t);
// COMPUTE_64F for f64/c128, COMPUTE_32F otherwise.
ComputeType default_compute(DType t);
bool compute_allowed(DType t, ComputeType c);
// The alpha/beta type that goes with a compute type and an operand dtype.
DType scale_for(ComputeType c, DType in);
// Whether operands of dtype `in` may produce a result of dtype `r`.
bool result_allowed(DType in, DType r);
// Largest power of two (at most 256) dividing the address; 256 for null.
int alignment(const void* p);

}  // namespace gpula::detail
