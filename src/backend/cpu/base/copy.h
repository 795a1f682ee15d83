#pragma once
#include <gpula/tensor.h>

namespace gpula::detail::cpu {

// Strided host copy; src may broadcast (stride 0). Same shape and dtype.
void copy(const TensorView& src, const TensorView& dst);
void fill_zero(const TensorView& dst);

}  // namespace gpula::detail::cpu
