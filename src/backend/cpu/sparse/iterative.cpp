// CPU Krylov solvers (cg, gmres, bicgstab, minres) with OpenMP vector kernels, a CSR product and
// jacobi / ilu0 / ic0 preconditioners computed here.
#include <algorithm>
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "core/dtype_dispatch.h"
#include "core/format.h"
#include "sparse/iterative_backend.h"

namespace gpula::sparse::detail::cpu {

namespace {

using gpula::detail::throw_error;

using gpula::detail::real_t;

template <class T>
T conj_of(T v) {
  return gpula::detail::conj_if(v, true);
}
template <class T>
double re(T v) {
  return static_cast<double>(v);
}
template <class R>
double re(std::complex<R> v) {
  return static_cast<double>(v.real());
}

// ---- vector kernels ----
template <class T>
T dot(int64_t n, const T* x, const T* y) {  // conj(x) . y
  double sr = 0, si = 0;
#pragma omp parallel for reduction(+ : sr, si) if (n > 32768)
  for (int64_t i = 0; i < n; ++i) {
    const auto v = conj_of(x[i]) * y[i];
    if constexpr (std::is_floating_point_v<T>) {
      sr += v;
    } else {
      sr += v.real();
      si += v.imag();
    }
  }
  if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(sr);
  } else {
    return T(static_cast<typename T::value_type>(sr), static_cast<typename T::value_type>(si));
  }
}
template <class T>
double nrm2(int64_t n, const T* x) {
  double s = 0;
#pragma omp parallel for reduction(+ : s) if (n > 32768)
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(std::norm(x[i]));
  return std::sqrt(s);
}
template <class T>
void axpy(int64_t n, T a, const T* x, T* y) {
#pragma omp parallel for if (n > 32768)
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}
template <class T>
void xpby(int64_t n, const T* x, T b, T* y) {  // y = x + b y
#pragma omp parallel for if (n > 32768)
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] + b * y[i];
}

// x of a callback or a LinearOperator: n contiguous host elements.
template <class T>
TensorView view_of(T* p, int64_t n, DType dt) {
  return TensorView{p, dt, {n}, {1}, Device::cpu()};
}

// ---- the matrix and its preconditioners, sorted CSR copy with int64 indices ----
template <class T>
struct Csr {
  int64_t n = 0;
  std::vector<int64_t> ptr, col;
  std::vector<T> val;
};

template <class T, class I>
Csr<T> sorted_copy(const CsrView& a) {
  Csr<T> c;
  c.n = a.rows;
  const I* ip = static_cast<const I*>(a.indptr.data);
  const I* ix = static_cast<const I*>(a.indices.data);
  const T* vv = static_cast<const T*>(a.values.data);
  c.ptr.assign(ip, ip + a.rows + 1);
  c.col.assign(ix, ix + a.nnz());
  c.val.assign(vv, vv + a.nnz());
  std::vector<std::pair<int64_t, T>> row;
  for (int64_t i = 0; i < c.n; ++i) {
    row.clear();
    for (int64_t k = c.ptr[i]; k < c.ptr[i + 1]; ++k) row.emplace_back(c.col[k], c.val[k]);
    std::sort(row.begin(), row.end(),
              [](const auto& l, const auto& r) { return l.first < r.first; });
    for (size_t k = 0; k < row.size(); ++k) {
      c.col[c.ptr[i] + k] = row[k].first;
      c.val[c.ptr[i] + k] = row[k].second;
    }
  }
  return c;
}

template <class T, class I>
void csr_matvec(const CsrView& a, const T* x, T* y) {
  const I* ip = static_cast<const I*>(a.indptr.data);
  const I* ix = static_cast<const I*>(a.indices.data);
  const T* vv = static_cast<const T*>(a.values.data);
#pragma omp parallel for schedule(static) if (a.rows > 8192)
  for (int64_t i = 0; i < a.rows; ++i) {
    T s{};
    for (int64_t k = ip[i]; k < ip[i + 1]; ++k) s += vv[k] * x[ix[k]];
    y[i] = s;
  }
}

template <class T>
struct Precond {
  Preconditioner kind = Preconditioner::none;
  std::vector<T> inv_diag;  // jacobi
  Csr<T> lu;                // ilu0 / ic0: unit L below the diagonal, U on and above it
  std::vector<int64_t> diag_pos;
  OperatorFn custom;
  DType dtype{};

  void apply(int64_t n, const T* r, T* z) const {
    switch (kind) {
      case Preconditioner::none:
        std::copy(r, r + n, z);
        return;
      case Preconditioner::jacobi:
#pragma omp parallel for if (n > 32768)
        for (int64_t i = 0; i < n; ++i) z[i] = inv_diag[i] * r[i];
        return;
      case Preconditioner::custom:
        custom(view_of(const_cast<T*>(r), n, dtype), view_of(z, n, dtype));
        return;
      default:
        break;
    }
    for (int64_t i = 0; i < n; ++i) {  // L z = r
      T s = r[i];
      for (int64_t k = lu.ptr[i]; k < diag_pos[i]; ++k) s -= lu.val[k] * z[lu.col[k]];
      z[i] = s;
    }
    for (int64_t i = n - 1; i >= 0; --i) {  // U z = z
      T s = z[i];
      for (int64_t k = diag_pos[i] + 1; k < lu.ptr[i + 1]; ++k) s -= lu.val[k] * z[lu.col[k]];
      z[i] = s / lu.val[diag_pos[i]];
    }
  }
};

// ILU(0) on the pattern of A (IKJ order). For a Hermitian matrix this is L D L^H with the
// pattern of A, i.e. IC(0): ic0 additionally requires every pivot real and positive.
template <class T>
void factor_ilu0(Precond<T>& m, const char* op, bool cholesky) {
  Csr<T>& c = m.lu;
  const int64_t n = c.n;
  const char* name = cholesky ? "ic0" : "ilu0";
  m.diag_pos.assign(n, -1);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k = c.ptr[i]; k < c.ptr[i + 1]; ++k) {
      if (c.col[k] == i) m.diag_pos[i] = k;
    }
    if (m.diag_pos[i] < 0) {
      throw SingularMatrix(gpula::detail::cat("[", op, "] M='", name, "': A[", i, ", ", i,
                                              "] is not stored (zero pivot)"),
                           i, -1);
    }
  }
  std::vector<int64_t> where(n, -1);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k = c.ptr[i]; k < c.ptr[i + 1]; ++k) where[c.col[k]] = k;
    for (int64_t k = c.ptr[i]; k < m.diag_pos[i]; ++k) {
      const int64_t j = c.col[k];
      c.val[k] /= c.val[m.diag_pos[j]];
      for (int64_t q = m.diag_pos[j] + 1; q < c.ptr[j + 1]; ++q) {
        const int64_t w = where[c.col[q]];
        if (w >= 0) c.val[w] -= c.val[k] * c.val[q];
      }
    }
    for (int64_t k = c.ptr[i]; k < c.ptr[i + 1]; ++k) where[c.col[k]] = -1;
    const T piv = c.val[m.diag_pos[i]];
    const bool bad =
        cholesky ? !(re(piv) > 0.0) : !(std::abs(piv) > 0.0) || !std::isfinite(std::abs(piv));
    if (bad) {
      if (cholesky) {
        throw NotPositiveDefinite(gpula::detail::cat("[", op, "] M='ic0': pivot ", i, " is ",
                                                     re(piv), " (IC(0) of A breaks down)"),
                                  i + 1, -1);
      }
      throw SingularMatrix(
          gpula::detail::cat("[", op, "] M='ilu0': zero pivot U[", i, ", ", i, "]"), i, -1);
    }
  }
}

// ---- solvers. Each returns the result; `mv` is y = A x. ----
template <class T>
struct Ctx {
  int64_t n;
  DType dtype;
  std::function<void(const T*, T*)> mv;
  const Precond<T>* m;
  const IterativeOptions* o;
  double tol;
  int64_t maxiter;
  void callback(T* x) const {
    if (o->callback) o->callback(view_of(x, n, dtype));
  }
};

template <class T>
bool bad(T v) {
  return !(std::abs(v) > 0.0) || !std::isfinite(std::abs(v));
}

template <class T>
IterativeResult solve_cg(const Ctx<T>& c, const T* b, T* x, T* r) {
  const int64_t n = c.n;
  std::vector<T> z(n), p(n), q(n);
  IterativeResult res;
  res.residual_norm = nrm2(n, r);
  if (res.residual_norm <= c.tol) return res;
  c.m->apply(n, r, z.data());
  p = z;
  T rho = dot(n, r, z.data());
  (void)b;
  for (int64_t it = 1; it <= c.maxiter; ++it) {
    c.mv(p.data(), q.data());
    const T pq = dot(n, p.data(), q.data());
    if (bad(pq) || bad(rho)) return {-1, it - 1, res.residual_norm};
    const T alpha = rho / pq;
    axpy(n, alpha, p.data(), x);
    axpy(n, -alpha, q.data(), r);
    res.iterations = it;
    res.residual_norm = nrm2(n, r);
    c.callback(x);
    if (res.residual_norm <= c.tol) return res;
    c.m->apply(n, r, z.data());
    const T rho_new = dot(n, r, z.data());
    xpby(n, z.data(), rho_new / rho, p.data());
    rho = rho_new;
  }
  res.info = not_converged_info(c.maxiter);
  return res;
}

template <class T>
IterativeResult solve_bicgstab(const Ctx<T>& c, T* x, T* r) {
  const int64_t n = c.n;
  std::vector<T> rhat(r, r + n), p(n), v(n), ph(n), s(n), sh(n), t(n);
  IterativeResult res;
  res.residual_norm = nrm2(n, r);
  if (res.residual_norm <= c.tol) return res;
  T rho(1), alpha(1), omega(1);
  for (int64_t it = 1; it <= c.maxiter; ++it) {
    const T rho_new = dot(n, rhat.data(), r);
    if (bad(rho_new)) return {-10, it - 1, res.residual_norm};
    if (it == 1) {
      p.assign(r, r + n);
    } else {
      const T beta = (rho_new / rho) * (alpha / omega);
      for (int64_t i = 0; i < n; ++i) p[i] = r[i] + beta * (p[i] - omega * v[i]);
    }
    rho = rho_new;
    c.m->apply(n, p.data(), ph.data());
    c.mv(ph.data(), v.data());
    const T rv = dot(n, rhat.data(), v.data());
    if (bad(rv)) return {-10, it - 1, res.residual_norm};
    alpha = rho / rv;
    for (int64_t i = 0; i < n; ++i) s[i] = r[i] - alpha * v[i];
    res.iterations = it;
    const double snorm = nrm2(n, s.data());
    if (snorm <= c.tol) {
      axpy(n, alpha, ph.data(), x);
      std::copy(s.begin(), s.end(), r);
      res.residual_norm = snorm;
      c.callback(x);
      return res;
    }
    c.m->apply(n, s.data(), sh.data());
    c.mv(sh.data(), t.data());
    const double tt = re(dot(n, t.data(), t.data()));
    if (!(tt > 0.0)) return {-11, it, snorm};
    omega = dot(n, t.data(), s.data()) / static_cast<real_t<T>>(tt);
    for (int64_t i = 0; i < n; ++i) {
      x[i] += alpha * ph[i] + omega * sh[i];
      r[i] = s[i] - omega * t[i];
    }
    res.residual_norm = nrm2(n, r);
    c.callback(x);
    if (res.residual_norm <= c.tol) return res;
    if (bad(omega)) return {-11, it, res.residual_norm};
  }
  res.info = not_converged_info(c.maxiter);
  return res;
}

// GMRES(m) with right preconditioning (x = x0 + M^-1 V y), modified Gram-Schmidt and Givens
// rotations; maxiter counts restart cycles, as scipy.
template <class T>
IterativeResult solve_gmres(const Ctx<T>& c, const T* b, T* x, T* r) {
  using R = real_t<T>;
  const int64_t n = c.n;
  const int64_t m = std::max<int64_t>(1, std::min(c.o->restart, n));
  std::vector<T> V((m + 1) * n), H((m + 1) * m), cs(m), sn(m), g(m + 1), z(n), w(n), y(m);
  IterativeResult res;
  res.residual_norm = nrm2(n, r);
  if (res.residual_norm <= c.tol) return res;
  for (int64_t cycle = 1; cycle <= c.maxiter; ++cycle) {
    const double beta = res.residual_norm;
    for (int64_t i = 0; i < n; ++i) V[i] = r[i] / static_cast<R>(beta);
    std::fill(g.begin(), g.end(), T{});
    g[0] = T(static_cast<R>(beta));
    int64_t k = 0;
    double est = beta;
    for (; k < m && est > c.tol; ++k) {
      c.m->apply(n, &V[k * n], z.data());
      c.mv(z.data(), w.data());
      for (int64_t j = 0; j <= k; ++j) {
        const T h = dot(n, &V[j * n], w.data());
        H[j * m + k] = h;
        axpy(n, -h, &V[j * n], w.data());
      }
      const double hn = nrm2(n, w.data());
      H[(k + 1) * m + k] = T(static_cast<R>(hn));
      if (hn > 0.0) {
        for (int64_t i = 0; i < n; ++i) V[(k + 1) * n + i] = w[i] / static_cast<R>(hn);
      }
      for (int64_t j = 0; j < k; ++j) {  // earlier rotations
        const T a = H[j * m + k], bb = H[(j + 1) * m + k];
        H[j * m + k] = conj_of(cs[j]) * a + conj_of(sn[j]) * bb;
        H[(j + 1) * m + k] = -sn[j] * a + cs[j] * bb;
      }
      const T a = H[k * m + k], bb = H[(k + 1) * m + k];
      const double den = std::sqrt(static_cast<double>(std::norm(a) + std::norm(bb)));
      if (!(den > 0.0) || !std::isfinite(den)) return {-1, res.iterations, res.residual_norm};
      cs[k] = a / static_cast<R>(den);
      sn[k] = bb / static_cast<R>(den);
      H[k * m + k] = T(static_cast<R>(den));
      H[(k + 1) * m + k] = T{};
      g[k + 1] = -sn[k] * g[k];
      g[k] = conj_of(cs[k]) * g[k];
      est = std::abs(g[k + 1]);
      ++res.iterations;
      if (hn == 0.0) {
        ++k;
        break;
      }
    }
    for (int64_t i = k - 1; i >= 0; --i) {  // H y = g
      T s = g[i];
      for (int64_t j = i + 1; j < k; ++j) s -= H[i * m + j] * y[j];
      y[i] = s / H[i * m + i];
    }
    std::fill(w.begin(), w.end(), T{});
    for (int64_t j = 0; j < k; ++j) axpy(n, y[j], &V[j * n], w.data());
    c.m->apply(n, w.data(), z.data());
    axpy(n, T(1), z.data(), x);
    c.mv(x, w.data());  // true residual at each restart
    for (int64_t i = 0; i < n; ++i) r[i] = b[i] - w[i];
    res.residual_norm = nrm2(n, r);
    c.callback(x);
    if (res.residual_norm <= c.tol) return res;
    if (!std::isfinite(res.residual_norm)) return {-1, res.iterations, res.residual_norm};
  }
  res.info = not_converged_info(c.maxiter);
  return res;
}

// MINRES (Paige and Saunders) with an SPD preconditioner; the true residual is carried by the
// recurrence r -= phi A w (A w updated from A v), so the stopping test is scipy's ||b - A x||.
template <class T>
IterativeResult solve_minres(const Ctx<T>& c, T* x, T* r) {
  using R = real_t<T>;
  const int64_t n = c.n;
  IterativeResult res;
  res.residual_norm = nrm2(n, r);
  if (res.residual_norm <= c.tol) return res;
  std::vector<T> r1(r, r + n), r2(r, r + n), y(n), v(n), av(n), w(n), w1(n), w2(n), aw(n), aw1(n),
      aw2(n);
  c.m->apply(n, r1.data(), y.data());
  double beta1 = re(dot(n, r1.data(), y.data()));
  if (!(beta1 > 0.0)) return {-1, 0, res.residual_norm};
  beta1 = std::sqrt(beta1);
  double oldb = 0, beta = beta1, dbar = 0, epsln = 0, phibar = beta1, cs = -1, sn = 0;
  for (int64_t it = 1; it <= c.maxiter; ++it) {
    const R s = static_cast<R>(1.0 / beta);
    for (int64_t i = 0; i < n; ++i) v[i] = s * y[i];
    c.mv(v.data(), av.data());
    y = av;
    if (it >= 2) axpy(n, T(static_cast<R>(-beta / oldb)), r1.data(), y.data());
    const double alfa = re(dot(n, v.data(), y.data()));
    axpy(n, T(static_cast<R>(-alfa / beta)), r2.data(), y.data());
    r1.swap(r2);
    r2 = y;
    c.m->apply(n, r2.data(), y.data());
    oldb = beta;
    const double b2 = re(dot(n, r2.data(), y.data()));
    if (b2 < 0.0 || !std::isfinite(b2)) return {-1, it - 1, res.residual_norm};
    beta = std::sqrt(b2);
    const double oldeps = epsln;
    const double delta = cs * dbar + sn * alfa;
    const double gbar = sn * dbar - cs * alfa;
    epsln = sn * beta;
    dbar = -cs * beta;
    const double gamma = std::max(std::hypot(gbar, beta), 1e-300);
    cs = gbar / gamma;
    sn = beta / gamma;
    const double phi = cs * phibar;
    phibar = sn * phibar;
    w1.swap(w2);
    w2.swap(w);
    aw1.swap(aw2);
    aw2.swap(aw);
    const R ig = static_cast<R>(1.0 / gamma), e = static_cast<R>(oldeps), d = static_cast<R>(delta);
    for (int64_t i = 0; i < n; ++i) {
      w[i] = (v[i] - e * w1[i] - d * w2[i]) * ig;
      aw[i] = (av[i] - e * aw1[i] - d * aw2[i]) * ig;
    }
    axpy(n, T(static_cast<R>(phi)), w.data(), x);
    axpy(n, T(static_cast<R>(-phi)), aw.data(), r);
    res.iterations = it;
    res.residual_norm = nrm2(n, r);
    c.callback(x);
    if (res.residual_norm <= c.tol) return res;
    if (beta == 0.0)
      return res.residual_norm <= c.tol ? res : IterativeResult{-1, it, res.residual_norm};
  }
  res.info = not_converged_info(c.maxiter);
  return res;
}

template <class T, class I>
IterativeResult solve_typed(const IterativeProblem& p, const TensorView& bv, const TensorView& xv,
                            const IterativeOptions& o) {
  const int64_t n = p.n;
  Precond<T> m;
  m.kind = o.preconditioner;
  m.dtype = p.dtype;
  m.custom = o.preconditioner_op;
  if (m.kind == Preconditioner::jacobi || m.kind == Preconditioner::ilu0 ||
      m.kind == Preconditioner::ic0) {
    Csr<T> c = sorted_copy<T, I>(*p.csr);
    if (m.kind == Preconditioner::jacobi) {
      m.inv_diag.assign(n, T{});
      for (int64_t i = 0; i < n; ++i) {
        T d{};
        for (int64_t k = c.ptr[i]; k < c.ptr[i + 1]; ++k) {
          if (c.col[k] == i) d += c.val[k];
        }
        if (!(std::abs(d) > 0.0)) {
          throw_error<InvalidArgument>(p.op, "M='jacobi' needs a nonzero diagonal, got A[", i, ", ",
                                       i, "] = 0");
        }
        m.inv_diag[i] = T(1) / d;
      }
    } else {
      m.lu = std::move(c);
      factor_ilu0(m, p.op, m.kind == Preconditioner::ic0);
    }
  }
  Ctx<T> c;
  c.n = n;
  c.dtype = p.dtype;
  c.m = &m;
  c.o = &o;
  c.maxiter = p.maxiter;
  if (p.csr != nullptr) {
    const CsrView* a = p.csr;
    c.mv = [a](const T* in, T* out) { csr_matvec<T, I>(*a, in, out); };
  } else {
    const OperatorFn f = p.matvec;
    const DType dt = p.dtype;
    c.mv = [f, n, dt](const T* in, T* out) {
      f(view_of(const_cast<T*>(in), n, dt), view_of(out, n, dt));
    };
  }
  const T* b = static_cast<const T*>(bv.data);
  T* x = static_cast<T*>(xv.data);
  const double bnorm = nrm2(n, b);
  if (bnorm == 0.0) {
    std::fill(x, x + n, T{});
    return {};
  }
  std::vector<T> r(n);
  c.mv(x, r.data());
  for (int64_t i = 0; i < n; ++i) r[i] = b[i] - r[i];
  if (!std::isfinite(bnorm)) return non_finite_b(nrm2(n, r.data()));
  c.tol = std::max(o.rtol * bnorm, o.atol);
  switch (p.method) {
    case KrylovMethod::cg:
      return solve_cg(c, b, x, r.data());
    case KrylovMethod::bicgstab:
      return solve_bicgstab(c, x, r.data());
    case KrylovMethod::gmres:
      return solve_gmres(c, b, x, r.data());
    case KrylovMethod::minres:
      return solve_minres(c, x, r.data());
  }
  return {};
}

template <class T>
IterativeResult by_index(const IterativeProblem& p, const TensorView& b, const TensorView& x,
                         const IterativeOptions& o) {
  if (p.csr != nullptr && p.csr->index_dtype() == DType::i32)
    return solve_typed<T, int32_t>(p, b, x, o);
  return solve_typed<T, int64_t>(p, b, x, o);
}

}  // namespace

IterativeResult iterative_solve(const IterativeProblem& p, const TensorView& b, const TensorView& x,
                                const IterativeOptions& o) {
  return gpula::detail::visit_float(
      p.dtype, [&](auto zero) { return by_index<decltype(zero)>(p, b, x, o); });
}

}  // namespace gpula::sparse::detail::cpu
