// gpula::distributed's multi-process fronts (cuSOLVERMp / cuBLASMp over NCCL): argument checks
// on the local pieces and layouts, dispatch to the backend (distributed_mp.h), info checks.
#include "distributed/mp_backend.h"

#include <gpula/error.h>

#include <algorithm>
#include <memory>

#include "core/format.h"

namespace gpula::detail::mp {

using distributed::local_shape;

void check_create(int rank, int size, int device) {
  const char* op = "distributed.Communicator.create";
  if (size < 1) throw_error<InvalidArgument>(op, "size expected >= 1, got ", size);
  if (rank < 0 || rank >= size)
    throw_error<InvalidArgument>(op, "rank expected in [0, ", size, "), got ", rank);
  if (device < 0) throw_error<InvalidArgument>(op, "device expected >= 0, got ", device);
}

void check_grid(const char* op, const char* name, const BlockCyclic& d, const Place& p) {
  distributed::check_layout(op, d);
  if (d.nprow * d.npcol != p.size)
    throw_error<InvalidArgument>(op, name, " layout grid ", d.nprow, "x", d.npcol,
                                 " expected comm.size() = ", p.size, " processes, got ",
                                 d.nprow * d.npcol);
  if (d.rsrc != 0 || d.csrc != 0)
    throw_error<NotSupported>(op, name, " layout source (", d.rsrc, ", ", d.csrc,
                              "): cuSOLVERMp / cuBLASMp need the first block on process (0, 0)");
}

Local check_local(const char* op, const char* name, const TensorView& v, const BlockCyclic& d,
                  const Place& p) {
  check_grid(op, name, d, p);
  const int64_t prow = p.rank % d.nprow, pcol = p.rank / d.nprow;
  if (!v.device.is_cuda() || v.device.index != p.device)
    throw_error<InvalidArgument>(op, name, " expected this rank's local piece on cuda:", p.device,
                                 ", got ", v.describe());
  const Shape ls = local_shape(d, prow, pcol);
  if (v.shape != ls)
    throw_error<InvalidArgument>(op, name, " expected the local shape (", ls[0], ", ", ls[1],
                                 ") of process (", prow, ", ", pcol, ") in a ", d.m, "x", d.n,
                                 " matrix of ", d.mb, "x", d.nb, " blocks, got ", v.shape_str());
  const int64_t rows = ls[0], cols = ls[1], min_ld = std::max<int64_t>(1, rows);
  const int64_t ld = cols > 1 ? v.strides[1] : std::max(min_ld, v.strides[1]);
  if ((rows > 1 && v.strides[0] != 1) || ld < min_ld)
    throw_error<InvalidArgument>(op, name,
                                 " expected a column-major local piece (strides (1, ld), ld >= ",
                                 min_ld, "), got strides (", v.strides[0], ", ", v.strides[1],
                                 ")");
  return {v.data, ld};
}

namespace {

void check_float(const char* op, const char* name, const TensorView& v) {
  if (v.dtype != DType::f32 && v.dtype != DType::f64)
    throw_error<DTypeError>(op, name, " expected float32 or float64, got ", v.describe());
}

void check_square(const char* op, const BlockCyclic& d) {
  if (d.m != d.n)
    throw_error<InvalidArgument>(op, "a expected a square matrix, got a layout of ", d.m, "x",
                                 d.n);
  if (d.mb != d.nb)
    throw_error<InvalidArgument>(op, "a expected square blocks (mb == nb), got ", d.mb, "x",
                                 d.nb);
}

void check_same_grid(const char* op, const char* name, const BlockCyclic& d,
                     const BlockCyclic& da) {
  if (d.nprow != da.nprow || d.npcol != da.npcol)
    throw_error<InvalidArgument>(op, name, " layout expected a's ", da.nprow, "x", da.npcol,
                                 " grid, got ", d.nprow, "x", d.npcol);
}

void check_same_dtype(const char* op, const char* name, const TensorView& v,
                      const TensorView& a) {
  if (v.dtype != a.dtype)
    throw_error<DTypeError>(op, name, " expected a's dtype, got ", v.describe(), " and ",
                            a.describe());
}

}  // namespace

Local check_cholesky(const Place& p, const TensorView& a, const BlockCyclic& da) {
  const char* op = "distributed.cholesky";
  Local la = check_local(op, "a", a, da, p);
  check_float(op, "a", a);
  check_square(op, da);
  return la;
}

Pair check_solve(const Place& p, const TensorView& a, const BlockCyclic& da, const TensorView& b,
                 const BlockCyclic& db, linalg::Assume assume_a) {
  const char* op = "distributed.solve";
  Pair r{check_local(op, "a", a, da, p), check_local(op, "b", b, db, p)};
  check_float(op, "a", a);
  check_same_dtype(op, "b", b, a);
  check_square(op, da);
  check_same_grid(op, "b", db, da);
  if (db.m != da.m || db.mb != da.mb)
    throw_error<InvalidArgument>(op, "b layout expected ", da.m, " rows in blocks of ", da.mb,
                                 " (as a), got ", db.m, " rows in blocks of ", db.mb);
  if (assume_a == linalg::Assume::sym)
    throw_error<NotSupported>(op,
                              "assume_a sym: cuSOLVERMp has no symmetric indefinite solver; "
                              "use gen or pos");
  return r;
}

Local check_eigh(const Place& p, const TensorView& a, const BlockCyclic& da, bool lower) {
  const char* op = "distributed.eigh";
  Local la = check_local(op, "a", a, da, p);
  check_float(op, "a", a);
  check_square(op, da);
  if (!lower)
    throw_error<NotSupported>(op,
                              "lower=false: cusolverMpSyevd reads the lower triangle only; "
                              "pass lower=true (a symmetric a has both)");
  return la;
}

Triple check_matmul(const Place& p, const TensorView& a, const BlockCyclic& da,
                    const TensorView& b, const BlockCyclic& db, const TensorView& c,
                    const BlockCyclic& dc) {
  const char* op = "distributed.matmul";
  Triple r{check_local(op, "a", a, da, p), check_local(op, "b", b, db, p),
           check_local(op, "c", c, dc, p)};
  if (a.dtype != DType::f32 && a.dtype != DType::f64 && a.dtype != DType::bf16)
    throw_error<DTypeError>(op, "a expected float32, float64 or bfloat16, got ", a.describe());
  check_same_dtype(op, "b", b, a);
  check_same_dtype(op, "c", c, a);
  check_same_grid(op, "b", db, da);
  check_same_grid(op, "c", dc, da);
  if (da.n != db.m || da.m != dc.m || db.n != dc.n)
    throw_error<InvalidArgument>(op, "expected a (m x k), b (k x n), c (m x n), got a ", da.m,
                                 "x", da.n, ", b ", db.m, "x", db.n, ", c ", dc.m, "x", dc.n);
  if (da.nb != db.mb || da.mb != dc.mb || db.nb != dc.nb)
    throw_error<InvalidArgument>(op,
                                 "blocks expected to chain (a's nb == b's mb, a's mb == c's mb, "
                                 "b's nb == c's nb), got a ",
                                 da.mb, "x", da.nb, ", b ", db.mb, "x", db.nb, ", c ", dc.mb, "x",
                                 dc.nb);
  return r;
}

}  // namespace gpula::detail::mp

namespace gpula::distributed {

using detail::cat;
using detail::throw_error;
namespace mp = detail::mp;

namespace {

void check_comm(const char* op, const Communicator& comm) {
  if (!comm.defined())
    throw_error<InvalidArgument>(op,
                                 "comm expected a communicator from Communicator::create, got an "
                                 "undefined one");
}

void throw_not_pd(const char* op, int info) {
  throw NotPositiveDefinite(
      cat("[", op, "] the leading minor of order ", info, " is not positive definite"), info, -1);
}

// A device column-major (rows, cols) Tensor with leading dimension max(1, rows).
Tensor column_major_device(int64_t rows, int64_t cols, DType t, int device) {
  const int64_t ld = std::max<int64_t>(1, rows);
  Tensor flat = Tensor::empty({std::max<int64_t>(1, ld * cols)}, t, Stream{Device::cuda(device)});
  TensorView v = flat.view();
  v.shape = {rows, cols};
  v.strides = {1, ld};
  return Tensor(v, std::make_shared<Tensor>(flat));
}

}  // namespace

bool has_mp() { return mp::available(); }

Communicator::UniqueId Communicator::unique_id() { return mp::unique_id(); }

Communicator Communicator::create(int rank, int size, const UniqueId& id, int device) {
  mp::check_create(rank, size, device);
  return Communicator(rank, size, device, mp::create(rank, size, id, device));
}

void cholesky(const Communicator& comm, const TensorView& a, const BlockCyclic& layout, bool lower,
              const MpOptions& options) {
  const char* op = "distributed.cholesky";
  check_comm(op, comm);
  const mp::Local la = mp::check_cholesky(mp::place_of(comm), a, layout);
  if (layout.n == 0) return;
  int info = 0;
  mp::potrf(comm, a.dtype, lower, layout, la, &info);
  if (info > 0 && options.check_info) throw_not_pd(op, info);
}

void solve(const Communicator& comm, const TensorView& a, const BlockCyclic& a_layout,
           const TensorView& b, const BlockCyclic& b_layout, linalg::Assume assume_a, bool lower,
           const MpOptions& options) {
  const char* op = "distributed.solve";
  check_comm(op, comm);
  const mp::Pair p = mp::check_solve(mp::place_of(comm), a, a_layout, b, b_layout, assume_a);
  if (a_layout.n == 0 || b_layout.n == 0) return;
  int info = 0;
  if (assume_a == linalg::Assume::pos) {
    mp::potrf_potrs(comm, a.dtype, lower, a_layout, p.a, b_layout, p.b, &info);
    if (info > 0 && options.check_info) throw_not_pd(op, info);
  } else {
    mp::getrf_getrs(comm, a.dtype, a_layout, p.a, b_layout, p.b, &info);
    if (info > 0 && options.check_info)
      throw SingularMatrix(
          cat("[", op, "] a is singular: U[", info - 1, ", ", info - 1, "] is exactly zero"),
          info - 1, -1);
  }
}

linalg::Eigh eigh(const Communicator& comm, const TensorView& a, const BlockCyclic& layout,
                  bool lower, bool eigvals_only, const MpOptions& options) {
  const char* op = "distributed.eigh";
  check_comm(op, comm);
  const mp::Local la = mp::check_eigh(mp::place_of(comm), a, layout, lower);
  const int64_t n = layout.n;
  linalg::Eigh r;
  r.w = Tensor::empty({n}, a.dtype, Stream{Device::cuda(comm.device())});
  r.info = Tensor::empty({}, DType::i32, Stream{});
  *static_cast<int32_t*>(r.info.data()) = 0;
  mp::Local lq;
  if (!eigvals_only) {
    r.v = column_major_device(a.shape[0], a.shape[1], a.dtype, comm.device());
    lq = {r.v.data(), r.v.view().strides[1]};
  }
  if (n == 0) return r;
  int info = 0;
  mp::syevd(comm, a.dtype, layout, la, r.w.data(), lq, &info);
  *static_cast<int32_t*>(r.info.data()) = info;
  if (info != 0 && options.check_info)
    throw_error<LinAlgError>(op, "eigenvalues did not converge (info ", info, ")");
  return r;
}

void matmul(const Communicator& comm, const TensorView& a, const BlockCyclic& a_layout,
            const TensorView& b, const BlockCyclic& b_layout, const TensorView& c,
            const BlockCyclic& c_layout, double alpha, double beta) {
  const char* op = "distributed.matmul";
  check_comm(op, comm);
  const mp::Triple t =
      mp::check_matmul(mp::place_of(comm), a, a_layout, b, b_layout, c, c_layout);
  if (c_layout.m == 0 || c_layout.n == 0) return;
  mp::gemm(comm, a.dtype, a_layout, t.a, b_layout, t.b, c_layout, t.c, alpha, beta);
}

}  // namespace gpula::distributed
