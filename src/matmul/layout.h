#pragma once
// How each operand of a matmul is handed to a backend: read in place (row- or column-major
// with a leading dimension and one batch stride), or staged by one explicit copy first.
#include <optional>

#include "matmul/matmul_backend.h"

namespace gpula::detail {

enum class Order : uint8_t { any, row_major, col_major };

struct OperandLayout {
  MatrixDesc desc;         // as the backend reads it
  bool staged = false;     // copy `source` into a fresh buffer laid out as `staged_view`
  TensorView source;       // the caller's operand broadcast to (batch..., rows, cols)
  Shape staged_strides;    // strides of the staged buffer over source.shape (elements)
  int64_t staged_elems = 0;
};

struct MatmulLayout {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  Shape batch_shape;    // broadcast batch dimensions of the result
  Shape result_shape;   // numpy.matmul's result shape (1-D operands drop their dimension)
  bool folded = false;  // batch folded into m (B shared by all batch items)
  bool k_zero = false;  // k == 0: the product is zero; backends see k = 1 with zero operands
  OperandLayout a, b, c;
  bool has_c = false;
};

struct LayoutRequest {
  Order a_order = Order::any, b_order = Order::any;
  bool force_stage = false;  // data lives on another device than the one that computes
  bool allow_fold = true;
};

// Checks shapes (throws InvalidArgument naming `op`) and decides every operand's layout.
MatmulLayout plan_matmul_layout(const char* op, const TensorView& a, const TensorView& b,
                                const std::optional<TensorView>& c, const LayoutRequest& req);

// Strides of a row-major or column-major stack of matrices over (batch..., rows, cols).
Shape stacked_strides(const Shape& shape, bool col_major);

}  // namespace gpula::detail
