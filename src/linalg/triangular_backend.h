#pragma once
// What the triangular-solve front (triangular.cpp: solve_triangular) asks of a backend, on the
// batches of batch.h.
#include <gpula/linalg.h>

#include <cstdint>

#include "linalg/batch.h"

namespace gpula::detail {

class TriangularBackend {
 public:
  virtual ~TriangularBackend() = default;

  // Y op(A) = B in place of y (y.rows x a.n per item, y.count == a.count), A triangular with
  // only its triangle `upper` (else lower) read; with `unit` its diagonal is taken as ones.
  virtual void trsm_right(const SquareBatch& a, bool upper, linalg::Trans op, bool unit,
                          const DenseBatch& y, const LinalgCall& c) const = 0;
  // info[b] = k > 0 where element (k-1, k-1) is the first exact zero of item b's diagonal; else 0.
  virtual void zero_diagonal(const SquareBatch& a, int32_t* info, const LinalgCall& c) const = 0;
};

namespace cpu {
const TriangularBackend& triangular_backend();
}
namespace cuda {
// Throws NotCompiled("cuda") in a build without CUDA.
const TriangularBackend& triangular_backend();
}  // namespace cuda

}  // namespace gpula::detail
