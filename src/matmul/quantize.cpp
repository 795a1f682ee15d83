// quantize_fp8 front: argument checks, output layouts, staging of a strided x, dispatch to cpu:: or
// cuda::.
#include <gpula/matmul.h>

#include "backend/cuda_api.h"
#include "core/format.h"
#include "matmul/quantize_backend.h"

namespace gpula {

using detail::cat;
using detail::shape_str;
using detail::throw_error;

namespace {

constexpr const char* kOp = "quantize_fp8";

int64_t ceil128(int64_t x) { return (x + 127) / 128; }

void check_2d(const Shape& s, Fp8Block block) {
  if (block != Fp8Block::tensor && s.size() != 2)
    throw_error<InvalidArgument>(kOp, "block ", name(block), " takes a 2-D x (rows, K), got shape ",
                                 shape_str(s));
}

}  // namespace

std::string_view name(Fp8Block b) {
  switch (b) {
    case Fp8Block::tensor: return "tensor";
    case Fp8Block::row: return "row";
    case Fp8Block::block128: return "128";
    case Fp8Block::block128x128: return "(128, 128)";
  }
  return "?";
}

QuantizeFp8Spec quantize_fp8_spec(const Shape& x_shape, Fp8Block block) {
  detail::checked_numel(kOp, "x", x_shape);
  check_2d(x_shape, block);
  QuantizeFp8Spec s;
  s.q_shape = x_shape;
  if (block == Fp8Block::tensor) return s;  // one scale, shape ()
  const int64_t r = x_shape[0], k = x_shape[1];
  switch (block) {
    case Fp8Block::row:
      s.scale_shape = {r};
      s.scale_strides = {1};
      break;
    case Fp8Block::block128:
      s.scale_shape = {r, ceil128(k)};
      s.scale_strides = {1, r};  // the row index runs fastest, as cuBLASLt's VEC128_32F reads it
      break;
    default:
      s.scale_shape = {ceil128(r), ceil128(k)};
      s.scale_strides = {ceil128(k), 1};
      break;
  }
  return s;
}

void quantize_fp8(const TensorView& x, const TensorView& q, const TensorView& scales,
                  Fp8Block block, Stream stream) {
  detail::check_tensor_view(kOp, "x", x);
  detail::check_tensor_view(kOp, "q", q);
  detail::check_tensor_view(kOp, "scales", scales);
  if (x.dtype != DType::f16 && x.dtype != DType::bf16 && x.dtype != DType::f32)
    throw_error<DTypeError>(kOp, "x has dtype ", name(x.dtype),
                            "; quantize_fp8 takes float16, bfloat16 or float32 (convert first)");
  if (!is_float8(q.dtype))
    throw_error<DTypeError>(kOp, "q has dtype ", name(q.dtype),
                            "; expected float8_e4m3fn or float8_e5m2");
  if (scales.dtype != DType::f32)
    throw_error<DTypeError>(kOp, "scales has dtype ", name(scales.dtype), "; expected float32");
  const QuantizeFp8Spec spec = quantize_fp8_spec(x.shape, block);
  if (q.shape != spec.q_shape || (q.numel() > 0 && !q.is_contiguous()))
    throw_error<InvalidArgument>(kOp, "q must be a contiguous array of x's shape ",
                                 shape_str(spec.q_shape), ", got ", q.describe(), " strides ",
                                 shape_str(q.strides));
  bool layout_ok = scales.shape == spec.scale_shape;
  for (std::size_t i = 0; layout_ok && i < spec.scale_shape.size(); ++i)
    layout_ok = spec.scale_shape[i] <= 1 || scales.numel() == 0 ||
                scales.strides[i] == spec.scale_strides[i];
  if (!layout_ok)
    throw_error<InvalidArgument>(kOp, "scales for block ", name(block), " must have shape ",
                                 shape_str(spec.scale_shape), " and strides ",
                                 shape_str(spec.scale_strides), ", got ", scales.describe(),
                                 " strides ", shape_str(scales.strides));
  if (q.device != x.device || scales.device != x.device)
    throw_error<InvalidArgument>(kOp, "x, q and scales must be on one device: x on ",
                                 to_string(x.device), ", q on ", to_string(q.device),
                                 ", scales on ", to_string(scales.device));
  if (x.device.is_cuda() && !detail::cuda::compiled()) throw NotCompiled(kOp, "device", "cuda");
  if (stream.device.is_cuda() && stream.device != x.device)
    throw_error<InvalidArgument>(kOp, "stream is on ", to_string(stream.device), ", x on ",
                                 to_string(x.device));
  const Stream s{x.device, x.device.is_cuda() && stream.device.is_cuda() ? stream.handle : nullptr};

  detail::QuantizeProblem p;
  p.in = x.dtype;
  p.out = q.dtype;
  const int64_t n = x.numel();
  if (block == Fp8Block::tensor) {
    p.rows = 1;
    p.cols = n;
    p.block_rows = 1;
    p.block_cols = n;
  } else {
    p.rows = x.shape[0];
    p.cols = x.shape[1];
    p.block_rows = block == Fp8Block::block128x128 ? 128 : 1;
    p.block_cols = block == Fp8Block::row ? p.cols : 128;
    if (block == Fp8Block::row) {
      p.scale_stride_r = 1;
    } else if (block == Fp8Block::block128) {
      p.scale_stride_r = 1;
      p.scale_stride_c = p.rows;
    } else {
      p.scale_stride_r = ceil128(p.cols);
      p.scale_stride_c = 1;
    }
  }
  // The backends read x contiguous: a strided x is copied once (x itself is never written).
  Tensor staged;
  const void* xdata = x.data;
  if (!x.is_contiguous() && n > 0) {
    staged = Tensor::empty(x.shape, x.dtype, s);
    copy(x, staged.view(), s);
    xdata = staged.data();
  }
  auto* sd = static_cast<float*>(scales.data);
  if (x.device.is_cuda())
    detail::cuda::quantize_fp8(p, xdata, q.data, sd, s);
  else
    detail::cpu::quantize_fp8(p, xdata, q.data, sd);
}

std::pair<Tensor, Tensor> quantize_fp8(const TensorView& x, DType dtype, Fp8Block block,
                                       Stream stream) {
  detail::check_tensor_view(kOp, "x", x);
  if (!is_float8(dtype))
    throw_error<DTypeError>(kOp, "dtype ", name(dtype), " is not float8_e4m3fn or float8_e5m2");
  const QuantizeFp8Spec spec = quantize_fp8_spec(x.shape, block);
  const Stream alloc{x.device, stream.device == x.device ? stream.handle : nullptr};
  Tensor q = Tensor::empty(spec.q_shape, dtype, alloc);
  const int64_t count = detail::checked_numel(kOp, "scales", spec.scale_shape);
  Tensor flat = Tensor::empty({count}, DType::f32, alloc);
  Tensor scales =
      flat.alias(TensorView{flat.data(), DType::f32, spec.scale_shape, spec.scale_strides, x.device});
  quantize_fp8(x, q.view(), scales.view(), block, stream);
  return {std::move(q), std::move(scales)};
}

}  // namespace gpula
