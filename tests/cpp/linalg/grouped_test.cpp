// The grouped forms of gpula::linalg (eigh, cholesky, orthogonalize, inv_root, sqrtm_psd over a
// list of matrices of different shapes) on the CPU backend: each result equals the per-item
// call, in the list's order, with the item's own shape; buckets by shape and dtype; errors name
// the list item (by batch index, or by running items alone); empty lists; non-matrix items.
#include <gpula/gpula.h>
#include <gpula/linalg.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "support/eigh.h"
#include "support/error.h"
#include "support/matrix_functions.h"

namespace {

using namespace gpula;
using core_test::HostTensor;
using core_test::make_host;
using linalg_test::Kind;
using linalg_test::with;
using test_support::msg_of;
namespace la = gpula::linalg;

// SPD items of the given shapes and dtypes (f64 unless named), kept alive with their views.
struct Items {
  std::vector<HostTensor> hosts;
  std::vector<TensorView> views;
  void add(const Shape& shape, DType t = DType::f64, Kind kind = Kind::spd) {
    hosts.push_back(make_host(shape, t));
    linalg_test::fill_kind(hosts.back(), kind, hosts.size());
    views.push_back(hosts.back().view);
  }
};

// Square items over three shapes, two dtypes and a batched item; shapes repeat, so that buckets
// of several items are stacked.
Items mixed() {
  Items it;
  it.add({3, 3});
  it.add({5, 5});
  it.add({3, 3});
  it.add({2, 5, 5});
  it.add({3, 3}, DType::f32);
  it.add({5, 5});
  it.add({3, 3}, DType::f32);
  return it;
}

double tol(DType t) { return t == DType::f64 ? 1e-13 : 1e-5; }

TEST(LinalgGroupedCpu, EighAndCholeskyEqualPerItemCalls) {
  const Items it = mixed();
  const std::vector<la::Eigh> e = la::eigh(it.views);
  const std::vector<la::Factor> c = la::cholesky(it.views);
  ASSERT_EQ(e.size(), it.views.size());
  ASSERT_EQ(c.size(), it.views.size());
  for (std::size_t i = 0; i < it.views.size(); ++i) {
    const TensorView& a = it.views[i];
    const Shape batch(a.shape.begin(), a.shape.end() - 2);
    const la::Eigh one = la::eigh(a);
    ASSERT_EQ(e[i].w.shape(), one.w.shape()) << "item " << i;
    ASSERT_EQ(e[i].v.shape(), a.shape);
    ASSERT_EQ(e[i].info.shape(), batch);
    EXPECT_EQ(e[i].v.dtype(), a.dtype);
    EXPECT_LE(mf_test::max_diff(e[i].w.view(), one.w.view()), tol(a.dtype)) << "item " << i;
    EXPECT_LE(mf_test::max_diff(e[i].v.view(), one.v.view()), tol(a.dtype)) << "item " << i;
    const la::Factor f = la::cholesky(a);
    ASSERT_EQ(c[i].value.shape(), a.shape);
    EXPECT_LE(mf_test::max_diff(c[i].value.view(), f.value.view()), tol(a.dtype)) << "item " << i;
  }
  // eigvals_only leaves every v undefined.
  for (const la::Eigh& r : la::eigh(it.views, true, true)) EXPECT_FALSE(r.v.defined());
}

TEST(LinalgGroupedCpu, MatrixFunctionsEqualPerItemCalls) {
  const Items it = mixed();
  const std::vector<Tensor> r = la::inv_root(it.views, 4, 0.1);
  const std::vector<Tensor> s = la::sqrtm_psd(it.views);
  Items rect;  // orthogonalize: wide, tall and square, two dtypes
  for (const Shape& shape : {Shape{4, 7}, Shape{7, 4}, Shape{4, 7}, Shape{3, 4, 7}, Shape{7, 4}})
    rect.add(shape, DType::f32, Kind::general);
  rect.add({5, 5}, DType::bf16, Kind::general);
  const std::vector<Tensor> u = la::orthogonalize(rect.views);
  for (std::size_t i = 0; i < it.views.size(); ++i) {
    const TensorView& a = it.views[i];
    ASSERT_EQ(r[i].shape(), a.shape);
    EXPECT_LE(mf_test::max_diff(r[i].view(), la::inv_root(a, 4, 0.1).view()), tol(a.dtype));
    EXPECT_LE(mf_test::max_diff(s[i].view(), la::sqrtm_psd(a).view()), tol(a.dtype));
  }
  for (std::size_t i = 0; i < rect.views.size(); ++i) {
    const TensorView& g = rect.views[i];
    ASSERT_EQ(u[i].shape(), g.shape);
    EXPECT_EQ(u[i].dtype(), g.dtype);
    EXPECT_LE(mf_test::max_diff(u[i].view(), la::orthogonalize(g).view()), 1e-6) << "item " << i;
  }
}

TEST(LinalgGroupedCpu, EmptyListsAndItemsThatAreNoMatrices) {
  EXPECT_TRUE(la::eigh(std::vector<TensorView>{}).empty());
  EXPECT_TRUE(la::inv_root(std::vector<TensorView>{}, 2).empty());
  Items it;
  it.add({3, 3});
  HostTensor v = make_host({3}, DType::f64);
  it.views.push_back(v.view);
  EXPECT_EQ(msg_of([&] { la::eigh(it.views); }),
            "[linalg.eigh] a[1] must be a matrix (..., m, n), got shape (3,)");
  EXPECT_EQ(msg_of([&] { la::orthogonalize(it.views); }),
            "[linalg.orthogonalize] g[1] must be a matrix (..., m, n), got shape (3,)");
  // Empty items pass through in a bucket of their own.
  Items e;
  e.add({0, 4, 4});
  e.add({0, 0});
  e.add({0, 4, 4});
  const std::vector<la::Factor> c = la::cholesky(e.views);
  EXPECT_EQ(c[0].value.shape(), (Shape{0, 4, 4}));
  EXPECT_EQ(c[1].value.shape(), (Shape{0, 0}));
  EXPECT_EQ(c[2].info.shape(), (Shape{0}));
}

TEST(LinalgGroupedCpu, ErrorsNameTheListItem) {
  // Items 1 and 2 share a bucket; item 2 is not positive definite: found by the batch index.
  Items it;
  it.add({3, 3});
  it.add({4, 4});
  it.add({4, 4}, DType::f64, Kind::general);
  for (int64_t i = 0; i < 4; ++i) it.hosts[2].set({i, i}, -1.0);
  try {
    la::cholesky(it.views);
    ADD_FAILURE() << "no NotPositiveDefinite";
  } catch (const NotPositiveDefinite& e) {
    EXPECT_EQ(e.batch_index(), 2);  // a one-matrix item: its list index
    EXPECT_NE(std::string(e.what()).find("(list item 2)"), std::string::npos) << e.what();
  }
  try {
    la::inv_root(it.views, 2);
    ADD_FAILURE() << "no NotPositiveDefinite";
  } catch (const NotPositiveDefinite& e) {
    EXPECT_EQ(e.batch_index(), 2);
    EXPECT_EQ(std::string(e.what()).rfind("[linalg.inv_root] a (+ eps I) is not positive", 0), 0u);
    EXPECT_NE(std::string(e.what()).find("(list item 2)"), std::string::npos) << e.what();
  }
  // An item alone in its bucket, and a batched item: the index within the item.
  Items b;
  b.add({2, 3, 3});
  b.add({2, 3, 3});
  b.add({5, 5}, DType::f64, Kind::general);
  for (int64_t i = 0; i < 3; ++i) b.hosts[1].set({1, i, i}, -1.0);
  try {
    la::cholesky(b.views);
    ADD_FAILURE() << "no NotPositiveDefinite";
  } catch (const NotPositiveDefinite& e) {
    EXPECT_EQ(e.batch_index(), 1);
    EXPECT_NE(std::string(e.what()).find("(list item 1)"), std::string::npos) << e.what();
  }
  Items alone;  // item 1 alone in its bucket
  alone.add({2, 3, 3});
  alone.add({5, 5}, DType::f64, Kind::general);
  for (int64_t i = 0; i < 5; ++i) alone.hosts[1].set({i, i}, -1.0);
  try {
    la::cholesky(alone.views);
    ADD_FAILURE() << "no NotPositiveDefinite";
  } catch (const NotPositiveDefinite& e) {
    EXPECT_EQ(e.batch_index(), 1);
    EXPECT_NE(std::string(e.what()).find("(list item 1)"), std::string::npos) << e.what();
  }
  // No batch index (a dtype error of a stacked bucket): found by running the items alone.
  Items d;
  d.add({3, 3});
  d.add({3, 3}, DType::f16);
  d.add({3, 3}, DType::f16);
  try {
    la::eigh(d.views);
    ADD_FAILURE() << "no DTypeError";
  } catch (const DTypeError& e) {
    EXPECT_EQ(std::string(e.what()),
              "[linalg.eigh] unsupported dtype float16 for a; linalg takes float32, float64, "
              "complex64, complex128 (list item 1)");
  }
}

}  // namespace
