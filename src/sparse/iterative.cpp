// Fronts of the Krylov solvers: argument checks, then the CPU backend.
#include <string>

#include "backend/cuda_api.h"
#include "core/format.h"
#include "sparse/iterative_backend.h"

namespace gpula::sparse {

using detail::IterativeProblem;
using detail::KrylovMethod;
using gpula::detail::throw_error;

Preconditioner parse_preconditioner(std::string_view name, std::string_view op_view) {
  const std::string op(op_view);
  if (name.empty() || name == "none") return Preconditioner::none;
  if (name == "jacobi") return Preconditioner::jacobi;
  if (name == "ic0") return Preconditioner::ic0;
  if (name == "ilu0") return Preconditioner::ilu0;
  throw_error<InvalidArgument>(op.c_str(),
                               "M must be None, 'jacobi', 'ic0', 'ilu0' or an operator, got '",
                               std::string(name), "'");
}

namespace {

void check_vector(const TensorView& v, const char* name, int64_t n, DType dtype, Device device,
                  const char* op) {
  if (v.ndim() != 1 || v.shape[0] != n) {
    throw_error<InvalidArgument>(op, name, " must have shape (", n, ",), got ", v.shape_str());
  }
  if (v.dtype != dtype) {
    throw_error<DTypeError>(op, name, " must have A's dtype ", gpula::name(dtype), ", got ",
                            gpula::name(v.dtype));
  }
  if (n > 1 && v.strides[0] != 1) {
    throw_error<InvalidArgument>(op, name, " must be contiguous, got stride ", v.strides[0]);
  }
  if (!(v.device == device)) {
    throw_error<InvalidArgument>(op, name, " must be on A's device ", to_string(device), ", got ",
                                 to_string(v.device));
  }
}

IterativeResult run(IterativeProblem& p, Device device, const TensorView& b, const TensorView& x,
                    const IterativeOptions& options, Stream stream) {
  const char* op = p.op;
  const DType v = p.dtype;
  if (v != DType::f32 && v != DType::f64 && v != DType::c64 && v != DType::c128) {
    throw_error<DTypeError>(op, "A must be float32, float64, complex64 or complex128, got ",
                            gpula::name(v));
  }
  check_vector(b, "b", p.n, v, device, op);
  check_vector(x, "x", p.n, v, device, op);
  if (!(options.rtol >= 0.0) || !(options.atol >= 0.0)) {
    throw_error<InvalidArgument>(op, "rtol and atol must be >= 0, got ", options.rtol, ", ",
                                 options.atol);
  }
  if (p.method == KrylovMethod::gmres && options.restart < 1) {
    throw_error<InvalidArgument>(op, "restart must be >= 1, got ", options.restart);
  }
  if (options.preconditioner == Preconditioner::custom && !options.preconditioner_op) {
    throw_error<InvalidArgument>(op, "M is 'custom' but no preconditioner operator was given");
  }
  if (p.csr == nullptr && options.preconditioner != Preconditioner::none &&
      options.preconditioner != Preconditioner::custom) {
    throw_error<InvalidArgument>(op,
                                 "M='jacobi', 'ic0' and 'ilu0' need a sparse matrix A, got a "
                                 "LinearOperator");
  }
  if (options.maxiter && *options.maxiter < 0) {
    throw_error<InvalidArgument>(op, "maxiter must be >= 0, got ", *options.maxiter);
  }
  p.maxiter = options.maxiter ? *options.maxiter : 10 * p.n;
  if (device.is_cuda()) {
    if (p.csr == nullptr) {
      throw_error<NotSupported>(op, "a matrix-free LinearOperator on a GPU is not supported yet");
    }
    Stream st = stream;
    if (!(st.device == device)) st = Stream{device, nullptr};
    IterativeResult r = detail::cuda::iterative_solve(p, b, x, options, st);
    if (options.common.blocking) gpula::detail::cuda::synchronize(st);
    return r;
  }
  return detail::cpu::iterative_solve(p, b, x, options);
}

IterativeResult solve_csr(KrylovMethod m, const char* op, const CsrView& a, const TensorView& b,
                          const TensorView& x, const IterativeOptions& options, Stream stream) {
  validate_csr(a, op);  // the loops index x by A's column indices
  if (a.rows != a.cols) {
    throw_error<InvalidArgument>(op, "A must be square, got shape (", a.rows, ", ", a.cols, ")");
  }
  IterativeProblem p;
  p.op = op;
  p.method = m;
  p.n = a.rows;
  p.dtype = a.dtype();
  p.csr = &a;
  return run(p, a.device(), b, x, options, stream);
}

IterativeResult solve_op(KrylovMethod m, const char* op, const LinearOperator& a,
                         const TensorView& b, const TensorView& x, const IterativeOptions& options,
                         Stream stream) {
  if (a.rows != a.cols || a.rows < 0) {
    throw_error<InvalidArgument>(op, "A must be square, got shape (", a.rows, ", ", a.cols, ")");
  }
  if (!a.matvec) throw_error<InvalidArgument>(op, "A has no matvec");
  IterativeProblem p;
  p.op = op;
  p.method = m;
  p.n = a.rows;
  p.dtype = a.dtype;
  p.matvec = a.matvec;
  return run(p, b.device, b, x, options, stream);
}

}  // namespace

IterativeResult cg(const CsrView& a, const TensorView& b, const TensorView& x,
                   const IterativeOptions& o, Stream s) {
  return solve_csr(KrylovMethod::cg, "sparse.linalg.cg", a, b, x, o, s);
}
IterativeResult gmres(const CsrView& a, const TensorView& b, const TensorView& x,
                      const IterativeOptions& o, Stream s) {
  return solve_csr(KrylovMethod::gmres, "sparse.linalg.gmres", a, b, x, o, s);
}
IterativeResult bicgstab(const CsrView& a, const TensorView& b, const TensorView& x,
                         const IterativeOptions& o, Stream s) {
  return solve_csr(KrylovMethod::bicgstab, "sparse.linalg.bicgstab", a, b, x, o, s);
}
IterativeResult minres(const CsrView& a, const TensorView& b, const TensorView& x,
                       const IterativeOptions& o, Stream s) {
  return solve_csr(KrylovMethod::minres, "sparse.linalg.minres", a, b, x, o, s);
}
IterativeResult cg(const LinearOperator& a, const TensorView& b, const TensorView& x,
                   const IterativeOptions& o, Stream s) {
  return solve_op(KrylovMethod::cg, "sparse.linalg.cg", a, b, x, o, s);
}
IterativeResult gmres(const LinearOperator& a, const TensorView& b, const TensorView& x,
                      const IterativeOptions& o, Stream s) {
  return solve_op(KrylovMethod::gmres, "sparse.linalg.gmres", a, b, x, o, s);
}
IterativeResult bicgstab(const LinearOperator& a, const TensorView& b, const TensorView& x,
                         const IterativeOptions& o, Stream s) {
  return solve_op(KrylovMethod::bicgstab, "sparse.linalg.bicgstab", a, b, x, o, s);
}
IterativeResult minres(const LinearOperator& a, const TensorView& b, const TensorView& x,
                       const IterativeOptions& o, Stream s) {
  return solve_op(KrylovMethod::minres, "sparse.linalg.minres", a, b, x, o, s);
}

}  // namespace gpula::sparse
