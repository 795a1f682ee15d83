// Triangular-solve front (solve_triangular): argument checks, layouts, dispatch to the backend
// where the work runs.
//
// Layout: the solve runs from the right on row-major data. Row-major b and x read column-major
// are b^T and x^T, so op(a) x = b is x^T op(a)^T = b^T: the backend's Y op'(A) = B with Y the
// row-major x itself (no transposing copy of b or x). A row-major a read column-major is
// A = a^T: op(a)^T = op(A) for every op (conj(a) = conj(A^T) = A^H), and a's lower triangle is
// A's upper one. A column-major a is read as A = a: op(a)^T is A^T for op = none and A for
// transpose; conj(a) has no BLAS op, so such a complex a is copied row-major for trans = C.
// A single matrix a with a batch of b is solved once over the whole batch, folded into one
// (batch * k) x n block.
#include <gpula/linalg.h>

#include <utility>

#include "linalg/exec.h"
#include "linalg/triangular_backend.h"

namespace gpula::linalg {

using detail::broadcast_batch;
using detail::DenseBatch;
using detail::expand_batch;
using detail::LinalgExec;
using detail::product;
using detail::SquareBatch;
using detail::throw_error;
using detail::with;

namespace {

constexpr const char* kOp = "linalg.solve_triangular";

struct Plan {
  int64_t n = 0, k = 1;
  Shape batch;        // broadcast batch
  int64_t count = 0;  // its number of items
  Shape x_shape;
  TensorView b_full;  // b as batch + (n, k)
  bool fold = false;  // one matrix a for every item of the batch
};

Plan plan(const TensorView& a, int64_t n, const TensorView& b) {
  detail::check_view(kOp, "b", b);
  detail::check_float(kOp, "b", b);
  if (a.device != b.device)
    throw_error<InvalidArgument>(kOp, "operands on different devices: a on ", to_string(a.device),
                                 ", b on ", to_string(b.device));
  if (a.dtype != b.dtype)
    throw_error<DTypeError>(kOp, "dtype mismatch: a is ", name(a.dtype), ", b is ", name(b.dtype));
  Plan p;
  p.n = n;
  const Shape ab = detail::batch_of(a, 2);
  Shape bb;
  if (b.ndim() == 0 || (b.ndim() == 1 ? b.shape[0] : b.shape[b.ndim() - 2]) != n)
    throw_error<InvalidArgument>(kOp, "b has shape ", b.shape_str(), ", expected (", n,
                                 ",) or (..., ", n, ", k) to match a of shape ", a.shape_str());
  if (b.ndim() > 1) {
    bb = detail::batch_of(b, 2);
    p.k = b.shape[b.ndim() - 1];
  }
  const auto s = broadcast_batch(ab, bb);
  if (!s)
    throw_error<InvalidArgument>(kOp, "batch dimensions of a ", detail::shape_str(ab), " and b ",
                                 detail::shape_str(bb), " do not broadcast");
  p.batch = *s;
  p.count = product(p.batch);
  p.x_shape = b.ndim() == 1 ? with(p.batch, {n}) : with(p.batch, {n, p.k});
  if (b.ndim() == 1) {  // one vector for every matrix: (n,) as batch + (n, 1), stride 0
    Shape strides(p.batch.size(), 0);
    strides.push_back(b.strides[0]);
    strides.push_back(0);
    p.b_full = TensorView{b.data, b.dtype, with(p.batch, {n, 1}), strides, b.device};
  } else {
    p.b_full = expand_batch(b, p.batch, 2);
  }
  p.fold = product(ab) == 1 && p.count > 1;
  return p;
}

// The matrices as the backend reads them (column-major items) and whether they are a^T (a
// row-major) or a itself.
struct Matrices {
  SquareBatch m;
  bool transposed = true;
  Tensor owner;  // a workspace, where a is not read in place
};

// Whether v's trailing n x n items are contiguous, one after another, with the strides of the
// last two dimensions swapped when `col_major`.
bool packed(TensorView v, bool col_major) {
  if (col_major) std::swap(v.strides[v.ndim() - 1], v.strides[v.ndim() - 2]);
  return v.is_contiguous();
}

Matrices stage_a(const LinalgExec& x, const TensorView& a, const Plan& p, Trans trans) {
  const int64_t n = p.n, mats = p.fold ? 1 : p.count;
  TensorView src = p.fold ? a : expand_batch(a, p.batch, 2);
  if (p.fold) {  // the one matrix, whatever a's size-1 batch dimensions
    src.shape = {n, n};
    src.strides = {a.strides[a.ndim() - 2], a.strides[a.ndim() - 1]};
  }
  const bool local = a.device == x.exec() && (p.fold || product(detail::batch_of(a, 2)) == mats);
  if (local && packed(src, false)) return {{src.data, a.dtype, n, mats}, true, {}};
  const bool conj_op = trans == Trans::conj_transpose && is_complex(a.dtype);
  if (local && !conj_op && packed(src, true)) return {{src.data, a.dtype, n, mats}, false, {}};
  Matrices r;
  r.owner = x.empty({mats * n * n}, a.dtype);
  x.copy(src, detail::square_dst(r.owner.data(), a.dtype, p.fold ? Shape{} : p.batch, n, false,
                                 x.exec()));
  r.m = {r.owner.data(), a.dtype, n, mats};
  return r;
}

}  // namespace

Factor solve_triangular_ex(const TensorView& a, const TensorView& b, const TriangularOptions& o,
                           Stream stream) {
  const int64_t n = detail::check_square(kOp, "a", a);
  const Plan p0 = plan(a, n, b);  // argument errors before any work
  return detail::run_linalg(kOp, "a", a.device, o, stream, [&](LinalgExec& x) {
    const Plan& p = p0;
    const DType t = a.dtype;
    Tensor xt = x.empty(p.x_shape, t);
    Tensor info = x.empty(p.batch, DType::i32);
    if (p.count * n * p.k == 0) {
      x.zero(info.view());
      return Factor{x.result(xt), x.result(info)};
    }
    const auto& be = x.backend(detail::cpu::triangular_backend, detail::cuda::triangular_backend);
    const Matrices A = stage_a(x, a, p, o.trans);
    // See the top of the file: a^T has a's other triangle and the same op; a itself keeps its
    // triangle and swaps none and transpose.
    const bool upper = A.transposed ? o.lower : !o.lower;
    Trans op = o.trans;
    if (!A.transposed) op = op == Trans::none ? Trans::transpose : Trans::none;
    // Right-hand sides: each item's row-major n x k is column-major k x n, solved in place of x;
    // folded, the batch's items side by side, (count * k) x n, in a workspace.
    Shape shape = with(p.batch, {n, p.k});
    Shape strides = contiguous_strides(shape);
    Tensor ws;
    void* y = xt.data();
    if (p.fold) {
      ws = x.empty({p.count * p.k * n}, t);
      y = ws.data();
      const Shape bs = contiguous_strides(p.batch);
      for (std::size_t d = 0; d < p.batch.size(); ++d) strides[d] = bs[d] * p.k;
      strides[p.batch.size()] = p.count * p.k;
    }
    const TensorView yv{y, t, shape, strides, x.exec()};
    x.copy(p.b_full, yv);
    const DenseBatch Y = p.fold ? DenseBatch{y, t, p.count * p.k, n, 1}
                                : DenseBatch{y, t, p.k, n, p.count};
    be.trsm_right(A.m, upper, op, o.unit_diagonal, Y, x.call());
    if (p.fold) x.copy(yv, TensorView{xt.data(), t, shape, contiguous_strides(shape), x.exec()});
    if (o.unit_diagonal) {
      x.zero(info.view());
    } else if (p.fold) {  // one matrix: its info spread over the batch
      Tensor one = x.empty({1}, DType::i32);
      be.zero_diagonal(A.m, static_cast<int32_t*>(one.data()), x.call());
      x.copy(TensorView{one.data(), DType::i32, p.batch, Shape(p.batch.size(), 0), x.exec()},
             info.view());
    } else {
      be.zero_diagonal(A.m, static_cast<int32_t*>(info.data()), x.call());
    }
    if (o.check_info) x.check(info, detail::Failure::zero_diagonal);
    return Factor{x.result(xt), x.result(info)};
  });
}

Tensor solve_triangular(const TensorView& a, const TensorView& b, const TriangularOptions& o,
                        Stream stream) {
  return solve_triangular_ex(a, b, o, stream).value;
}

}  // namespace gpula::linalg
