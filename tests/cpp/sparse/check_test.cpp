// Issue 17, sparse: every C++ entry point that takes a CsrView validates its contents before it
// reads an index (SpMV, SpMM, spmm, SDDMM, spgemm, DirectSolver, the four Krylov solvers with
// each preconditioner); a CsrMatrix owns its pattern (later writes to the caller's index arrays
// do not reach it) and shares its values; the CsrMatrix overloads of the plans keep it alive;
// maxiter = 0 reports convergence only when x0 meets the tolerance, maxiter < 0 is refused; a b
// with Inf or NaN entries is a breakdown, never a convergence.
#include <gpula/error.h>
#include <gpula/sparse.h>
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "support/sparse.h"

namespace {

using sparse_test::view_1d;

using namespace gpula;
namespace sp = gpula::sparse;

// A 3 x 3 SPD matrix [[4, 1, 0], [1, 4, 0], [0, 0, 4]] as int64 CSR host arrays that the tests
// corrupt one entry at a time.
struct Csr {
  std::vector<int64_t> ptr{0, 2, 4, 5};
  std::vector<int64_t> ind{0, 1, 0, 1, 2};
  std::vector<double> val{4, 1, 1, 4, 4};
  sp::CsrView view() {
    return sp::CsrView{3, 3, view_1d(ptr.data(), DType::i64, 4),
                       view_1d(ind.data(), DType::i64, static_cast<int64_t>(ind.size())),
                       view_1d(val.data(), DType::f64, static_cast<int64_t>(val.size()))};
  }
};

struct Corruption {
  const char* what;
  std::function<void(Csr&)> apply;
  const char* message;  // after "[op] "
};

const std::vector<Corruption>& corruptions() {
  static const std::vector<Corruption> all = {
      {"out-of-range index", [](Csr& c) { c.ind[1] = 100000000; },
       "indices[1] = 100000000 is out of range [0, 3)"},
      {"negative index", [](Csr& c) { c.ind[3] = -1; }, "indices[3] = -1 is out of range [0, 3)"},
      {"indptr past nnz", [](Csr& c) { c.ptr[3] = 1000000; },
       "indptr[3] must equal nnz = 5, got 1000000"},
      {"non-monotone indptr", [](Csr& c) { c.ptr[1] = 4, c.ptr[2] = 2; },
       "indptr must be non-decreasing: indptr[2] = 2 < indptr[1] = 4"},
      {"indptr[0] != 0", [](Csr& c) { c.ptr[0] = 1; }, "indptr[0] must be 0, got 1"},
  };
  return all;
}

template <class F>
std::string invalid_argument_of(F&& f) {
  try {
    f();
  } catch (const InvalidArgument& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("other exception: ") + e.what();
  }
  return "no exception";
}

// Each entry point with a view of `c`, and the op name its message must carry.
struct EntryPoint {
  const char* op;
  std::function<void(const sp::CsrView&)> call;
};

std::vector<EntryPoint> entry_points() {
  auto krylov = [](auto fn, sp::Preconditioner m) {
    return [fn, m](const sp::CsrView& a) {
      std::vector<double> b(3, 1.0), x(3, 0.0);
      sp::IterativeOptions o;
      o.preconditioner = m;
      fn(a, view_1d(b.data(), DType::f64, 3), view_1d(x.data(), DType::f64, 3), o, Stream{});
    };
  };
  using P = sp::Preconditioner;
  using Fn = sp::IterativeResult (*)(const sp::CsrView&, const TensorView&, const TensorView&,
                                     const sp::IterativeOptions&, Stream);
  std::vector<EntryPoint> out = {
      {"sparse.SpMV", [](const sp::CsrView& a) { sp::SpMV p(a); }},
      {"sparse.spmm", [](const sp::CsrView& a) { sp::SpMM p(a, sp::Op::transpose); }},
      {"sparse.spmm",
       [](const sp::CsrView& a) {
         std::vector<double> b(6, 1.0);
         TensorView bv = view_1d(b.data(), DType::f64, 3);
         bv.shape = {3, 2};
         bv.strides = {2, 1};
         sp::spmm(a, bv);
       }},
      {"sparse.sddmm", [](const sp::CsrView& a) { sp::SDDMM p(a); }},
      {"sparse.spgemm", [](const sp::CsrView& a) { sp::spgemm(a, a); }},
      {"sparse.DirectSolver", [](const sp::CsrView& a) { sp::DirectSolver s(a); }},
  };
  const std::pair<const char*, Fn> methods[] = {{"sparse.linalg.cg", &sp::cg},
                                                {"sparse.linalg.gmres", &sp::gmres},
                                                {"sparse.linalg.bicgstab", &sp::bicgstab},
                                                {"sparse.linalg.minres", &sp::minres}};
  for (const auto& [op, fn] : methods) {
    for (P m : {P::none, P::jacobi, P::ic0, P::ilu0}) out.push_back({op, krylov(fn, m)});
  }
  return out;
}

TEST(SparseValidation, EveryEntryPointRejectsInvalidContents) {
  for (const EntryPoint& e : entry_points()) {
    for (const Corruption& k : corruptions()) {
      Csr c;
      k.apply(c);
      const Csr before = c;
      const std::string got = invalid_argument_of([&] { e.call(c.view()); });
      EXPECT_EQ(got, std::string("[") + e.op + "] " + k.message) << e.op << ", " << k.what;
      EXPECT_EQ(c.ptr, before.ptr);  // inputs unchanged
      EXPECT_EQ(c.ind, before.ind);
      EXPECT_EQ(c.val, before.val);
    }
    Csr ok;  // and the valid matrix passes
    EXPECT_NO_THROW(e.call(ok.view())) << e.op;
  }
}

TEST(SparseValidation, SpgemmNamesTheRightOperand) {
  Csr a, b;
  b.ind[4] = 7;
  EXPECT_EQ(invalid_argument_of([&] { sp::spgemm(a.view(), b.view()); }),
            "[sparse.spgemm] indices[4] = 7 is out of range [0, 3)");
}

TEST(SparseValidation, CsrMatrixOwnsItsPatternAndSharesValues) {
  Csr c;
  auto tensor = [](sp::CsrView& v, TensorView sp::CsrView::*f) { return Tensor(v.*f, nullptr); };
  sp::CsrView v = c.view();
  const sp::CsrMatrix m = sp::CsrMatrix::from_csr(3, 3, tensor(v, &sp::CsrView::indptr),
                                                  tensor(v, &sp::CsrView::indices),
                                                  tensor(v, &sp::CsrView::values));
  EXPECT_NE(m.indptr().data(), c.ptr.data());
  EXPECT_NE(m.indices().data(), c.ind.data());
  EXPECT_EQ(m.values().data(), c.val.data());
  sp::SpMV plan(m);
  // The caller's pattern arrays are overwritten with garbage: the matrix does not see it.
  c.ind.assign(c.ind.size(), 1 << 30);
  c.ptr.assign(c.ptr.size(), -5);
  c.val[4] = 8.0;  // a value update is seen
  std::vector<double> x{1, 2, 3}, y(3, 0.0);
  plan.execute(view_1d(x.data(), DType::f64, 3), view_1d(y.data(), DType::f64, 3));
  EXPECT_EQ(y, (std::vector<double>{6, 9, 24}));
  std::vector<double> y2(3, 0.0);
  sp::SpMM mm(m);
  TensorView xb = view_1d(x.data(), DType::f64, 3), yb = view_1d(y2.data(), DType::f64, 3);
  xb.shape = yb.shape = {3, 1};
  xb.strides = yb.strides = {1, 1};
  mm.execute(xb, yb);
  EXPECT_EQ(y2, y);
}

TEST(SparseValidation, PlansKeepTheirCsrMatrixAlive) {
  std::vector<double> x{1, 2, 3}, y(3, 0.0);
  std::unique_ptr<sp::SpMV> plan;
  {
    Csr c;
    sp::CsrView v = c.view();
    // Values copied into a Tensor the matrix alone will hold.
    Tensor vals = Tensor::empty({5}, DType::f64, {});
    std::memcpy(vals.data(), c.val.data(), 5 * sizeof(double));
    const sp::CsrMatrix m = sp::CsrMatrix::from_csr(3, 3, Tensor(v.indptr, nullptr),
                                                    Tensor(v.indices, nullptr), vals);
    plan = std::make_unique<sp::SpMV>(m);
  }  // the matrix, its arrays' other owners and the caller's vectors are gone
  plan->execute(view_1d(x.data(), DType::f64, 3), view_1d(y.data(), DType::f64, 3));
  EXPECT_EQ(y, (std::vector<double>{6, 9, 12}));
}

TEST(SparseValidation, MaxiterZeroAndNegative) {
  using Fn = sp::IterativeResult (*)(const sp::CsrView&, const TensorView&, const TensorView&,
                                     const sp::IterativeOptions&, Stream);
  for (Fn fn : {Fn{&sp::cg}, Fn{&sp::gmres}, Fn{&sp::bicgstab}, Fn{&sp::minres}}) {
    Csr c;
    std::vector<double> b{5, 5, 4}, x(3, 0.0);
    sp::IterativeOptions o;
    o.maxiter = 0;
    sp::IterativeResult r =
        fn(c.view(), view_1d(b.data(), DType::f64, 3), view_1d(x.data(), DType::f64, 3), o, {});
    EXPECT_EQ(r.info, 1);  // not converged, and no iteration run
    EXPECT_EQ(r.iterations, 0);
    EXPECT_EQ(x, (std::vector<double>(3, 0.0)));
    std::vector<double> exact{1, 1, 1};  // x0 = the solution: converged with 0 iterations
    r = fn(c.view(), view_1d(b.data(), DType::f64, 3), view_1d(exact.data(), DType::f64, 3), o, {});
    EXPECT_EQ(r.info, 0);
    o.maxiter = -1;
    EXPECT_NE(invalid_argument_of([&] {
                fn(c.view(), view_1d(b.data(), DType::f64, 3), view_1d(x.data(), DType::f64, 3), o,
                   {});
              }).find("maxiter must be >= 0, got -1"),
              std::string::npos);
  }
}

TEST(SparseValidation, NonFiniteRightHandSideIsABreakdown) {
  using Fn = sp::IterativeResult (*)(const sp::CsrView&, const TensorView&, const TensorView&,
                                     const sp::IterativeOptions&, Stream);
  for (Fn fn : {Fn{&sp::cg}, Fn{&sp::gmres}, Fn{&sp::bicgstab}, Fn{&sp::minres}}) {
    for (double bad : {std::numeric_limits<double>::infinity(),
                       std::numeric_limits<double>::quiet_NaN()}) {
      Csr c;
      std::vector<double> b{5, bad, 4}, x(3, 0.0);
      const sp::IterativeResult r =
          fn(c.view(), view_1d(b.data(), DType::f64, 3), view_1d(x.data(), DType::f64, 3), {}, {});
      EXPECT_EQ(r.info, -1) << bad;  // never "converged" with an infinite tolerance
      EXPECT_EQ(r.iterations, 0);
      EXPECT_EQ(x, (std::vector<double>(3, 0.0)));  // x0 untouched
    }
  }
}

}  // namespace
