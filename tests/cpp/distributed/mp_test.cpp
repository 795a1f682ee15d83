// gpula::distributed's multi-process fronts without a GPU: Communicator::create's argument
// errors, the undefined communicator, NotCompiled where the engines are not built, and every
// argument check of cholesky / solve / eigh / matmul (detail::mp::check_*, which the fronts run
// before touching a device) on hand-made local views.
#include <gpula/distributed.h>
#include <gpula/error.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "distributed/mp_backend.h"

namespace {

namespace dist = gpula::distributed;
namespace mp = gpula::detail::mp;
using gpula::DType;
using gpula::Shape;
using gpula::TensorView;

// A fake device address: the checks never dereference it.
void* fake_ptr() {
  static double storage[1];
  return storage;
}

// Process place.rank's column-major local view of layout d on cuda:place.device.
TensorView local_of(const dist::BlockCyclic& d, const mp::Place& p, DType t = DType::f64) {
  const Shape ls = dist::local_shape(d, p.rank % d.nprow, p.rank / d.nprow);
  return {fake_ptr(), t, ls, {1, std::max<int64_t>(1, ls[0])}, gpula::Device::cuda(p.device)};
}

template <class E, class F>
void expect_message(F&& f, const std::string& part) {
  try {
    f();
    ADD_FAILURE() << "expected an exception containing '" << part << "'";
  } catch (const E& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

const mp::Place kOne{0, 1, 0};
const dist::BlockCyclic kSquare{.m = 300, .n = 300, .mb = 64, .nb = 64};

TEST(DistributedMp, CreateArgumentsAndBuild) {
  const dist::Communicator::UniqueId id{};
  expect_message<gpula::InvalidArgument>([&] { dist::Communicator::create(0, 0, id, 0); },
                                         "size expected >= 1, got 0");
  expect_message<gpula::InvalidArgument>([&] { dist::Communicator::create(2, 2, id, 0); },
                                         "rank expected in [0, 2), got 2");
  expect_message<gpula::InvalidArgument>([&] { dist::Communicator::create(0, 1, id, -1); },
                                         "device expected >= 0, got -1");
  if (!dist::has_mp()) {
    expect_message<gpula::NotCompiled>([&] { dist::Communicator::create(0, 1, id, 0); },
                                       "GPULA_CUSOLVERMP_ROOT");
    EXPECT_THROW(dist::Communicator::unique_id(), gpula::NotCompiled);
  }
}

TEST(DistributedMp, UndefinedCommunicatorIsRejected) {
  const dist::Communicator none;
  EXPECT_FALSE(none.defined());
  const TensorView a = local_of(kSquare, kOne);
  expect_message<gpula::InvalidArgument>([&] { dist::cholesky(none, a, kSquare); },
                                         "[distributed.cholesky] comm expected a communicator");
  EXPECT_THROW(dist::solve(none, a, kSquare, a, kSquare), gpula::InvalidArgument);
  EXPECT_THROW(dist::eigh(none, a, kSquare), gpula::InvalidArgument);
  EXPECT_THROW(dist::matmul(none, a, kSquare, a, kSquare, a, kSquare), gpula::InvalidArgument);
}

TEST(DistributedMp, LocalPieceChecks) {
  const TensorView good = local_of(kSquare, kOne);
  const mp::Local l = mp::check_local("op", "a", good, kSquare, kOne);
  EXPECT_EQ(l.ld, 300);
  EXPECT_EQ(l.data, fake_ptr());
  // A padded leading dimension is accepted and reported.
  TensorView padded = good;
  padded.strides = {1, 320};
  EXPECT_EQ(mp::check_local("op", "a", padded, kSquare, kOne).ld, 320);
  // Host memory, another GPU.
  TensorView host = good;
  host.device = gpula::Device::cpu();
  expect_message<gpula::InvalidArgument>([&] { mp::check_local("op", "a", host, kSquare, kOne); },
                                         "a expected this rank's local piece on cuda:0");
  TensorView other = good;
  other.device = gpula::Device::cuda(1);
  EXPECT_THROW(mp::check_local("op", "a", other, kSquare, kOne), gpula::InvalidArgument);
  // Wrong local shape.
  TensorView shape = good;
  shape.shape = {300, 299};
  expect_message<gpula::InvalidArgument>([&] { mp::check_local("op", "a", shape, kSquare, kOne); },
                                         "expected the local shape (300, 300)");
  // Row-major (C order) and a too-small ld.
  TensorView rowmajor = good;
  rowmajor.strides = {300, 1};
  expect_message<gpula::InvalidArgument>(
      [&] { mp::check_local("op", "a", rowmajor, kSquare, kOne); }, "column-major");
  TensorView small = good;
  small.strides = {1, 200};
  EXPECT_THROW(mp::check_local("op", "a", small, kSquare, kOne), gpula::InvalidArgument);
}

TEST(DistributedMp, GridChecks) {
  // A 2x2 grid for 3 processes.
  dist::BlockCyclic g = kSquare;
  g.nprow = 2;
  g.npcol = 2;
  const mp::Place three{1, 3, 0};
  expect_message<gpula::InvalidArgument>([&] { mp::check_grid("op", "a", g, three); },
                                         "a layout grid 2x2 expected comm.size() = 3 processes");
  // Rank 3 of 4 is process (1, 1): its local shape is checked against that process.
  const mp::Place four{3, 4, 0};
  const TensorView l = local_of(g, four);
  EXPECT_EQ(l.shape, (Shape{128, 128}));
  EXPECT_NO_THROW(mp::check_local("op", "a", l, g, four));
  // Source off (0, 0).
  dist::BlockCyclic src = g;
  src.rsrc = 1;
  expect_message<gpula::NotSupported>([&] { mp::check_grid("op", "a", src, four); },
                                      "first block on process (0, 0)");
  // An invalid layout.
  dist::BlockCyclic bad = kSquare;
  bad.mb = 0;
  EXPECT_THROW(mp::check_grid("op", "a", bad, kOne), gpula::InvalidArgument);
}

TEST(DistributedMp, CholeskyAndEighChecks) {
  const TensorView a = local_of(kSquare, kOne);
  EXPECT_NO_THROW(mp::check_cholesky(kOne, a, kSquare));
  EXPECT_NO_THROW(mp::check_eigh(kOne, a, kSquare, true));
  const TensorView i32 = local_of(kSquare, kOne, DType::i32);
  expect_message<gpula::DTypeError>([&] { mp::check_cholesky(kOne, i32, kSquare); },
                                    "a expected float32 or float64");
  const TensorView b16 = local_of(kSquare, kOne, DType::bf16);
  EXPECT_THROW(mp::check_eigh(kOne, b16, kSquare, true), gpula::DTypeError);
  const dist::BlockCyclic rect{.m = 300, .n = 200, .mb = 64, .nb = 64};
  expect_message<gpula::InvalidArgument>(
      [&] { mp::check_cholesky(kOne, local_of(rect, kOne), rect); }, "a expected a square matrix");
  const dist::BlockCyclic blocks{.m = 300, .n = 300, .mb = 64, .nb = 32};
  expect_message<gpula::InvalidArgument>(
      [&] { mp::check_cholesky(kOne, local_of(blocks, kOne), blocks); }, "square blocks");
  expect_message<gpula::NotSupported>([&] { mp::check_eigh(kOne, a, kSquare, false); },
                                      "lower=false");
}

TEST(DistributedMp, SolveChecks) {
  const TensorView a = local_of(kSquare, kOne);
  const dist::BlockCyclic db{.m = 300, .n = 5, .mb = 64, .nb = 64};
  const TensorView b = local_of(db, kOne);
  const mp::Pair p = mp::check_solve(kOne, a, kSquare, b, db, gpula::linalg::Assume::gen);
  EXPECT_EQ(p.b.ld, 300);
  expect_message<gpula::NotSupported>(
      [&] { mp::check_solve(kOne, a, kSquare, b, db, gpula::linalg::Assume::sym); },
      "assume_a sym");
  const TensorView b32 = local_of(db, kOne, DType::f32);
  expect_message<gpula::DTypeError>(
      [&] { mp::check_solve(kOne, a, kSquare, b32, db, gpula::linalg::Assume::gen); },
      "b expected a's dtype");
  const dist::BlockCyclic rows{.m = 299, .n = 5, .mb = 64, .nb = 64};
  expect_message<gpula::InvalidArgument>(
      [&] {
        mp::check_solve(kOne, a, kSquare, local_of(rows, kOne), rows, gpula::linalg::Assume::pos);
      },
      "b layout expected 300 rows in blocks of 64");
  const dist::BlockCyclic rb{.m = 300, .n = 5, .mb = 32, .nb = 64};
  EXPECT_THROW(
      mp::check_solve(kOne, a, kSquare, local_of(rb, kOne), rb, gpula::linalg::Assume::gen),
      gpula::InvalidArgument);
}

TEST(DistributedMp, MatmulChecks) {
  const dist::BlockCyclic da{.m = 300, .n = 200, .mb = 64, .nb = 32};
  const dist::BlockCyclic db{.m = 200, .n = 100, .mb = 32, .nb = 16};
  const dist::BlockCyclic dc{.m = 300, .n = 100, .mb = 64, .nb = 16};
  for (DType t : {DType::f32, DType::f64, DType::bf16})
    EXPECT_NO_THROW(mp::check_matmul(kOne, local_of(da, kOne, t), da, local_of(db, kOne, t), db,
                                     local_of(dc, kOne, t), dc));
  expect_message<gpula::DTypeError>(
      [&] {
        mp::check_matmul(kOne, local_of(da, kOne, DType::f16), da, local_of(db, kOne, DType::f16),
                         db, local_of(dc, kOne, DType::f16), dc);
      },
      "a expected float32, float64 or bfloat16");
  expect_message<gpula::DTypeError>(
      [&] {
        mp::check_matmul(kOne, local_of(da, kOne), da, local_of(db, kOne, DType::f32), db,
                         local_of(dc, kOne), dc);
      },
      "b expected a's dtype");
  const dist::BlockCyclic dk{.m = 199, .n = 100, .mb = 32, .nb = 16};
  expect_message<gpula::InvalidArgument>(
      [&] {
        mp::check_matmul(kOne, local_of(da, kOne), da, local_of(dk, kOne), dk, local_of(dc, kOne),
                         dc);
      },
      "expected a (m x k), b (k x n), c (m x n)");
  const dist::BlockCyclic dbb{.m = 200, .n = 100, .mb = 64, .nb = 16};
  expect_message<gpula::InvalidArgument>(
      [&] {
        mp::check_matmul(kOne, local_of(da, kOne), da, local_of(dbb, kOne), dbb,
                         local_of(dc, kOne), dc);
      },
      "blocks expected to chain");
}

}  // namespace
