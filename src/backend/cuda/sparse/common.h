#pragma once
// Shared by the cuSPARSE product backends (SpMV, SpMM, SDDMM, SpGEMM): index and op mapping,
// alpha / beta in A's dtype, CSR and dense descriptors over gpula views.
#include <cusparse.h>
#include <gpula/sparse.h>

#include <complex>
#include <cstring>

#include "backend/cuda/base/check.h"
#include "backend/cuda/base/types.h"
#include "core/dtype_dispatch.h"
#include "sparse/check.h"

namespace gpula::sparse::detail::cuda {

using gpula::detail::cuda::data_type;

inline cusparseIndexType_t index_type(DType t) {
  return t == DType::i32 ? CUSPARSE_INDEX_32I : CUSPARSE_INDEX_64I;
}

inline bool is_real(DType t) { return t == DType::f32 || t == DType::f64; }

// For real values A^H is A^T (cuSPARSE rejects CONJUGATE_TRANSPOSE on real types).
inline cusparseOperation_t operation(Op op, DType t) {
  switch (op) {
    case Op::none:
      return CUSPARSE_OPERATION_NON_TRANSPOSE;
    case Op::transpose:
      return CUSPARSE_OPERATION_TRANSPOSE;
    default:
      return is_real(t) ? CUSPARSE_OPERATION_TRANSPOSE : CUSPARSE_OPERATION_CONJUGATE_TRANSPOSE;
  }
}

// alpha / beta in A's dtype, 16 bytes of storage (host pointer mode).
struct Scalar {
  alignas(16) unsigned char bytes[16] = {};
  Scalar(double v, DType t) {
    gpula::detail::visit_float(t, [&](auto zero) {
      const decltype(zero) s(static_cast<gpula::detail::real_t<decltype(zero)>>(v));
      std::memcpy(bytes, &s, sizeof s);
    });
  }
};

// A CSR descriptor over a view's arrays (destroyed with the owner).
struct SpMat {
  cusparseSpMatDescr_t d = nullptr;
  SpMat() = default;
  SpMat(const CsrView& a, const char* op) {
    const cusparseIndexType_t it = index_type(a.index_dtype());
    GPULA_CHECK(op, cusparseCreateCsr(&d, a.rows, a.cols, a.nnz(), a.indptr.data, a.indices.data,
                                      a.values.data, it, it, CUSPARSE_INDEX_BASE_ZERO,
                                      data_type(a.dtype())));
  }
  SpMat(const SpMat&) = delete;
  SpMat& operator=(const SpMat&) = delete;
  ~SpMat() {
    if (d) GPULA_CHECK_NOTHROW(cusparseDestroySpMat(d));
  }
};

// A row-major dense-matrix descriptor (destroyed with the owner).
struct DnMat {
  cusparseDnMatDescr_t d = nullptr;
  DnMat() = default;
  DnMat(const DnMat&) = delete;
  DnMat& operator=(const DnMat&) = delete;
  void reset(int64_t rows, int64_t cols, int64_t ld, void* data, DType t, const char* op) {
    if (d) GPULA_CHECK_NOTHROW(cusparseDestroyDnMat(d));
    d = nullptr;
    GPULA_CHECK(op,
                cusparseCreateDnMat(&d, rows, cols, ld, data, data_type(t), CUSPARSE_ORDER_ROW));
  }
  ~DnMat() {
    if (d) GPULA_CHECK_NOTHROW(cusparseDestroyDnMat(d));
  }
};

// t itself when row-major, else a row-major copy on `s` kept alive by `keep` (its values copied
// in only when `copy_in`: an output read with beta = 0 need not be).
inline TensorView row_major_operand(const TensorView& t, Tensor& keep, bool copy_in, Stream s) {
  if (is_row_major(t)) return t;
  keep = Tensor::empty(t.shape, t.dtype, s);
  if (copy_in) copy(t, keep.view(), s);
  return keep.view();
}

// A device work buffer grown (never shrunk) to `bytes`.
struct WorkBuffer {
  void* p = nullptr;
  size_t capacity = 0;
  WorkBuffer() = default;
  WorkBuffer(const WorkBuffer&) = delete;
  WorkBuffer& operator=(const WorkBuffer&) = delete;
  void reserve(size_t bytes, const char* op) {
    if (bytes <= capacity) return;
    if (p) GPULA_CHECK(op, cudaFree(p));
    p = nullptr;
    capacity = 0;
    GPULA_CHECK(op, cudaMalloc(&p, bytes));
    capacity = bytes;
  }
  ~WorkBuffer() {
    if (p) GPULA_CHECK_NOTHROW(cudaFree(p));
  }
};

}  // namespace gpula::sparse::detail::cuda
