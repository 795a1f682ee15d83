#include "matmul/layout.h"

#include <algorithm>

#include "core/format.h"

namespace gpula::detail {
namespace {

// The operand as a stack of matrices over (batch_shape..., rows, cols), broadcast dims with
// stride 0.
TensorView expand(const TensorView& v, const Shape& batch_shape) {
  TensorView out = v;
  const std::size_t nb = batch_shape.size();
  const std::size_t vb = v.shape.size() - 2;
  out.shape.assign(nb + 2, 1);
  out.strides.assign(nb + 2, 0);
  for (std::size_t i = 0; i < nb; ++i) {
    out.shape[i] = batch_shape[i];
    if (i + vb >= nb) {
      const std::size_t j = i + vb - nb;
      out.strides[i] = v.shape[j] == 1 ? 0 : v.strides[j];
    }
  }
  out.shape[nb] = v.shape[vb];
  out.shape[nb + 1] = v.shape[vb + 1];
  out.strides[nb] = v.strides[vb];
  out.strides[nb + 1] = v.strides[vb + 1];
  return out;
}

// One stride over the flattened batch dims, or nullopt. 0 when every batch dim broadcasts.
std::optional<int64_t> flat_batch_stride(const TensorView& s) {
  const std::size_t nb = s.shape.size() - 2;
  int64_t stride = -1, expected_span = 1;
  bool all_zero = true;
  for (std::size_t i = nb; i-- > 0;) {
    if (s.shape[i] == 1) continue;
    if (s.strides[i] != 0) all_zero = false;
  }
  if (all_zero) return 0;
  for (std::size_t i = nb; i-- > 0;) {
    if (s.shape[i] == 1) continue;
    if (stride < 0) {
      stride = s.strides[i];
      if (stride <= 0) return std::nullopt;
    } else if (s.strides[i] != stride * expected_span) {
      return std::nullopt;
    }
    expected_span *= s.shape[i];
  }
  return stride;
}

bool batch_broadcast(const TensorView& s) {
  for (std::size_t i = 0; i + 2 < s.shape.size(); ++i)
    if (s.shape[i] != 1 && s.strides[i] != 0) return false;
  return true;
}

OperandLayout decide(const TensorView& source, DType dtype, Order order, bool force_stage,
                     int64_t batch) {
  OperandLayout out;
  out.source = source;
  const std::size_t nd = source.shape.size();
  const int64_t r = source.shape[nd - 2], c = source.shape[nd - 1];
  const int64_t sr = source.strides[nd - 2], sc = source.strides[nd - 1];
  out.desc.dtype = dtype;
  out.desc.rows = r;
  out.desc.cols = c;

  const int64_t ld_row = r <= 1 ? std::max<int64_t>(1, c) : sr;
  const int64_t ld_col = c <= 1 ? std::max<int64_t>(1, r) : sc;
  const bool row_ok = (c <= 1 || sc == 1) && ld_row >= std::max<int64_t>(1, c);
  const bool col_ok = (r <= 1 || sr == 1) && ld_col >= std::max<int64_t>(1, r);
  const auto bs = flat_batch_stride(source);

  if (!force_stage && bs) {
    if (row_ok && order != Order::col_major) {
      out.desc.col_major = false;
      out.desc.ld = ld_row;
      out.desc.batch_stride = *bs;
      return out;
    }
    if (col_ok && order != Order::row_major) {
      out.desc.col_major = true;
      out.desc.ld = ld_col;
      out.desc.batch_stride = *bs;
      return out;
    }
  }
  // One explicit copy into a packed stack (a single matrix when the batch broadcasts).
  out.staged = true;
  const bool col = order == Order::col_major;
  const bool shared = batch_broadcast(source);
  if (shared)
    for (std::size_t i = 0; i + 2 < nd; ++i) out.source.shape[i] = 1;
  out.staged_strides = stacked_strides(out.source.shape, col);
  out.desc.col_major = col;
  out.desc.ld = std::max<int64_t>(1, col ? r : c);
  out.desc.batch_stride = shared ? 0 : r * c;
  out.staged_elems = (shared ? 1 : batch) * r * c;
  return out;
}

}  // namespace

Shape stacked_strides(const Shape& shape, bool col_major) {
  Shape s = contiguous_strides(shape);
  const std::size_t nd = shape.size();
  if (col_major && nd >= 2) {
    s[nd - 2] = 1;
    s[nd - 1] = shape[nd - 2];
  }
  return s;
}

MatmulLayout plan_matmul_layout(const char* op, const TensorView& a_in, const TensorView& b_in,
                                const std::optional<TensorView>& c_in, const LayoutRequest& req) {
  if (a_in.ndim() == 0 || b_in.ndim() == 0)
    throw_error<InvalidArgument>(op, "operands must have at least one dimension, got a ",
                                 a_in.shape_str(), " and b ", b_in.shape_str());
  // numpy.matmul's 1-D promotion: a (K,) -> (1, K), b (K,) -> (K, 1).
  TensorView a = a_in, b = b_in;
  if (a.ndim() == 1) {
    a.shape.insert(a.shape.begin(), 1);
    a.strides.insert(a.strides.begin(), 0);
  }
  if (b.ndim() == 1) {
    b.shape.push_back(1);
    b.strides.push_back(0);
  }
  MatmulLayout L;
  L.m = a.shape[a.ndim() - 2];
  L.k = a.shape[a.ndim() - 1];
  L.n = b.shape[b.ndim() - 1];
  if (b.shape[b.ndim() - 2] != L.k)
    throw_error<InvalidArgument>(op, "inner dimensions differ: a has shape ", a_in.shape_str(),
                                 " and b has shape ", b_in.shape_str(), " (", L.k,
                                 " != ", b.shape[b.ndim() - 2], ")");
  // Broadcast batch dimensions.
  const std::size_t na = a.shape.size() - 2, nb = b.shape.size() - 2;
  const std::size_t nbatch = std::max(na, nb);
  L.batch_shape.assign(nbatch, 1);
  for (std::size_t i = 0; i < nbatch; ++i) {
    const int64_t da = i + na >= nbatch ? a.shape[i + na - nbatch] : 1;
    const int64_t db = i + nb >= nbatch ? b.shape[i + nb - nbatch] : 1;
    if (da != db && da != 1 && db != 1)
      throw_error<InvalidArgument>(op, "batch dimensions do not broadcast: a has shape ",
                                   a_in.shape_str(), " and b has shape ", b_in.shape_str());
    L.batch_shape[i] = da == 1 ? db : da;
  }
  L.result_shape = L.batch_shape;
  if (a_in.ndim() > 1) L.result_shape.push_back(L.m);
  if (b_in.ndim() > 1) L.result_shape.push_back(L.n);
  // Broadcast operands (stride 0) may describe a result of any size: it must fit in int64.
  checked_numel(op, "the result", L.result_shape);
  L.batch = checked_numel(op, "the result", L.batch_shape);

  const TensorView ax = expand(a, L.batch_shape), bx = expand(b, L.batch_shape);
  L.a = decide(ax, a.dtype, req.a_order, req.force_stage, L.batch);
  L.b = decide(bx, b.dtype, req.b_order, req.force_stage, L.batch);

  if (c_in) {
    const TensorView& c0 = *c_in;
    // Broadcast c to the result shape, then restore the dimensions 1-D operands dropped.
    const std::size_t nr = L.result_shape.size(), nc = c0.shape.size();
    if (nc > nr)
      throw_error<InvalidArgument>(op, "c has shape ", c0.shape_str(),
                                   ", which does not broadcast to the result shape ",
                                   shape_str(L.result_shape));
    TensorView c = c0;
    c.shape = L.result_shape;
    c.strides.assign(nr, 0);
    for (std::size_t i = 0; i < nc; ++i) {
      const int64_t dc = c0.shape[i], dr = L.result_shape[nr - nc + i];
      if (dc != dr && dc != 1)
        throw_error<InvalidArgument>(op, "c has shape ", c0.shape_str(),
                                     ", which does not broadcast to the result shape ",
                                     shape_str(L.result_shape));
      c.strides[nr - nc + i] = dc == 1 ? 0 : c0.strides[i];
    }
    if (a_in.ndim() == 1) {
      c.shape.insert(c.shape.end() - (b_in.ndim() > 1 ? 1 : 0), 1);
      c.strides.insert(c.strides.end() - (b_in.ndim() > 1 ? 1 : 0), 0);
    }
    if (b_in.ndim() == 1) {
      c.shape.push_back(1);
      c.strides.push_back(0);
    }
    L.has_c = true;
    // C is read in place only row-major (as D is); anything else is staged row-major.
    L.c = decide(c, c0.dtype, Order::row_major, req.force_stage, L.batch);
  }

  L.k_zero = L.k == 0;
  // One large product instead of a batch when B is shared: (batch * m) x k times k x n.
  const auto foldable = [&](const MatrixDesc& d) {
    return !d.col_major && d.batch_stride > 0 && d.batch_stride == L.m * d.ld;
  };
  if (req.allow_fold && L.batch > 1 && !L.k_zero && L.b.desc.batch_stride == 0 &&
      foldable(L.a.desc) && (!L.has_c || foldable(L.c.desc))) {
    L.folded = true;
    L.m *= L.batch;
    L.batch = 1;
    L.a.desc.rows = L.m;
    L.a.desc.batch_stride = 0;
    if (L.has_c) {
      L.c.desc.rows = L.m;
      L.c.desc.batch_stride = 0;
    }
  }
  return L;
}

}  // namespace gpula::detail
