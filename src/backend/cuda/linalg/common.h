#pragma once
// Helpers shared by the cuSOLVER backends (solve.cpp, qr.cpp, eigh.cpp, eig.cpp, svd.cpp): the
// kernels' element type, the raw stream, range checks, debug notes and workspaces. The CUDA type
// map is backend/cuda/base/types.h.
#include <gpula/log.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "backend/cuda/base/check.h"
#include "backend/cuda/base/context.h"
#include "backend/cuda/base/types.h"
#include "backend/cuda/kernels/linalg.h"
#include "core/format.h"
#include "linalg/batch.h"

namespace gpula::detail::cuda {

// The element type of gpula's small linalg kernels (kernels/*.h) for a solver dtype.
inline ElemType elem_type(DType t) {
  switch (t) {
    case DType::f32:
      return ElemType::f32;
    case DType::f64:
      return ElemType::f64;
    case DType::c64:
      return ElemType::c64;
    default:
      return ElemType::c128;
  }
}

// cuBLAS/cuSOLVER's name for the triangle `upper` (else lower).
inline cublasFillMode_t fill(bool upper) {
  return upper ? CUBLAS_FILL_MODE_UPPER : CUBLAS_FILL_MODE_LOWER;
}

inline cudaStream_t raw(const LinalgCall& c) { return static_cast<cudaStream_t>(c.stream.handle); }

// v as an int, or NotSupported naming `routines` (whose 32-bit range v is past).
inline int checked_int(int64_t v, const LinalgCall& c, const char* what, const char* routines) {
  if (v > INT_MAX)
    throw_error<NotSupported>(c.op, what, " = ", v, " is past the 32-bit range of ", routines);
  return static_cast<int>(v);
}

inline void note(const LinalgCall& c, const std::string& what) {
  log(LogLevel::debug, cat("[", c.op, "] ", what), c.logger ? *c.logger : LogSink{});
}

// Device scratch from the stream-ordered pool; freed after the stream's work when it goes.
inline Tensor scratch(int64_t bytes, const LinalgCall& c) {
  return Tensor::empty({std::max<int64_t>(bytes, 1)}, DType::u8, c.stream);
}

// A host workspace for the X API, kept per thread (cuSOLVER may read it until the call returns).
inline void* host_workspace(std::size_t bytes) {
  thread_local std::vector<char> ws;
  if (ws.size() < bytes) ws.resize(bytes);
  return ws.empty() ? nullptr : ws.data();
}

}  // namespace gpula::detail::cuda
