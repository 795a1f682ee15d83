#pragma once
// The batch types every linalg backend contract (<op>_backend.h) takes. The fronts do every
// argument check and layout decision: they copy operands into contiguous column-major workspaces
// on the device where the work runs, so backends never broadcast, allocate results or read strides.
#include <gpula/device.h>
#include <gpula/dtype.h>
#include <gpula/log.h>

#include <cstdint>

namespace gpula::detail {

// `count` n x n matrices, contiguous, column-major: element (i, j) of item b is at
// b * n * n + i + j * n (elements).
struct SquareBatch {
  void* data = nullptr;
  DType dtype = DType::f32;
  int64_t n = 0;
  int64_t count = 0;
};

// `count` items of rows x cols, contiguous, column-major (ld = rows).
struct DenseBatch {
  void* data = nullptr;
  DType dtype = DType::f32;
  int64_t rows = 0, cols = 0;
  int64_t count = 0;
};

// Where and for whom a backend call runs. `op` prefixes messages ("linalg.solve").
struct LinalgCall {
  const char* op = "linalg";
  Stream stream{};
  const LogSink* logger = nullptr;
};

}  // namespace gpula::detail
