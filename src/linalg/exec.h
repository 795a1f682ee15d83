#pragma once
// Plumbing of the linalg fronts (solve.cpp, qr.cpp, eigh.cpp, eig.cpp, svd.cpp): where the work
// runs and on which stream, which backend, workspaces, copies between layouts and devices, the
// one info check, the CPU fallback.
#include <gpula/linalg.h>
#include <gpula/log.h>

#include <initializer_list>
#include <optional>
#include <string>

#include "core/format.h"
#include "linalg/batch.h"

namespace gpula::detail {

// Argument checks shared by the linalg fronts; messages name the operation and the argument.
void check_view(const char* op, const char* arg, const TensorView& v);   // strides, sizes
void check_float(const char* op, const char* arg, const TensorView& v);  // f32 f64 c64 c128
// check_view + check_float + (..., n, n); returns n.
int64_t check_square(const char* op, const char* arg, const TensorView& v);
// Two operands of one call: same device (InvalidArgument) and dtype (DTypeError).
void check_pair(const char* op, const char* arg_a, const TensorView& a, const char* arg_b,
                const TensorView& b);

// What a nonzero info means.
enum class Failure : uint8_t {
  not_positive_definite,  // NotPositiveDefinite: "leading minor of order k"
  singular_u,             // SingularMatrix: "U[k-1,k-1] is exactly zero"
  singular_d,             // SingularMatrix: "D[k-1,k-1] is exactly zero" (sytrf)
  eig_not_converged,      // LinAlgError: "eigenvalues did not converge (info k)"
  svd_not_converged,      // LinAlgError: "the SVD did not converge (info k)"
  zero_diagonal,          // SingularMatrix: "a[k-1,k-1] is exactly zero" (triangular a)
  generalized_eig,        // ?sygvd: k <= n as eig_not_converged, n + k: b not positive definite
};

class LinalgExec {
 public:
  // Runs on options.device (else where the data lives), or on `force` (the CPU fallback). `arg`
  // names the operand whose batch sizes the work (the matrix: "a", "c", "lu"); errors name it.
  LinalgExec(const char* op, const char* arg, Device data, const linalg::LinalgOptions& options,
             Stream caller, std::optional<Device> force = {});

  const char* op() const { return op_; }
  const char* arg() const { return arg_; }
  Device exec() const { return exec_; }
  // The backend of one contract (<op>_backend.h) where the work runs, given its two factories:
  // x.backend(cpu::eig_backend, cuda::eig_backend).
  template <class B>
  const B& backend(const B& (*cpu_backend)(), const B& (*cuda_backend)()) const {
    return exec_.is_cuda() ? cuda_backend() : cpu_backend();
  }
  LinalgCall call() const { return {op_, stream_, &options_->logger}; }
  const linalg::LinalgOptions& options() const { return *options_; }

  // Uninitialized contiguous memory where the work runs, ordered on its stream. Out of memory
  // is an OutOfMemory that names the operation and the operand ("[linalg.solve] a: ...").
  Tensor empty(const Shape& shape, DType t) const;
  // Copies between any layouts and devices (src may broadcast), on the right stream.
  void copy(const TensorView& src, const TensorView& dst) const;
  void zero(const TensorView& v) const;
  // Sets every trailing square matrix of the contiguous t (batch + (n, n)) to the identity.
  void set_identity(const Tensor& t) const;
  // `t` (made where the work runs) where the data lives.
  Tensor result(const Tensor& t) const;
  // A tensor where the data lives with every element equal to `value` (real part for complex).
  Tensor filled(const Shape& shape, DType t, double value) const;
  // Reads info (synchronizing with the device) and throws on the first nonzero entry. `bad`
  // info arrays have the batch shape; the message names the operand ("[linalg.solve] a is
  // singular: ...") and the flat batch index when there is one.
  // `n` is the matrices' order (generalized_eig only).
  void check(const Tensor& info, Failure what, int64_t n = 0) const;
  // Zeroes the strict upper (`upper`) or strict lower triangle of each matrix of a.
  void zero_triangle(const SquareBatch& a, bool upper) const;
  // Synchronizes when options.blocking asks for it.
  void finish() const;
  // Reads one int32 from where the work runs (synchronizing).
  int32_t read_int(const void* p) const;

 private:
  Stream stream_for(Device d) const;
  // Tensor::empty on `stream`, its OutOfMemory rethrown naming op_ and arg_.
  Tensor allocate(const Shape& shape, DType t, Stream stream) const;

  const char* op_;
  const char* arg_;
  Device data_, exec_;
  Stream caller_, stream_;
  const linalg::LinalgOptions* options_;
};

// Runs f(exec) where the options say; an OutOfMemory on a GPU with Fallback::cpu reruns f on the
// CPU and logs that it did.
template <class F>
auto run_linalg(const char* op, const char* arg, Device data, const linalg::LinalgOptions& options,
                Stream stream, F&& f) {
  LinalgExec x(op, arg, data, options, stream);
  try {
    auto r = f(x);
    x.finish();
    return r;
  } catch (const OutOfMemory& e) {
    if (options.fallback != Fallback::cpu || !x.exec().is_cuda()) throw;
    log(LogLevel::warning, cat("[", op, "] out of GPU memory (", e.what(), "); running on the CPU"),
        options.logger);
  }
  LinalgExec cpu(op, arg, data, options, stream, Device::cpu());
  auto r = f(cpu);
  cpu.finish();
  return r;
}

// ---- shapes and layouts -------------------------------------------------------------------

Shape batch_of(const TensorView& v, std::size_t core);
// s with `tail` appended: with(batch, {m, n}).
Shape with(Shape s, std::initializer_list<int64_t> tail);
int64_t product(const Shape& s);
// numpy broadcasting of two batch shapes; nullopt when they are incompatible.
std::optional<Shape> broadcast_batch(const Shape& x, const Shape& y);
// v, whose last `core` dimensions are kept, as a view of shape batch + core (numpy rules: the
// caller checked that v's batch broadcasts to `batch`); broadcast dimensions get stride 0.
TensorView expand_batch(const TensorView& v, const Shape& batch, std::size_t core);
// v with its last two dimensions swapped (no copy): the transposed matrices.
TensorView transposed(TensorView v);
// A destination view over `count` contiguous n x n matrices at p, of shape batch + (n, n):
// row-major per matrix (column-major LAPACK then sees A^T), or column-major with `transpose`.
TensorView square_dst(void* p, DType t, const Shape& batch, int64_t n, bool col_major, Device d);
// batch + (rows, cols) over `count` contiguous column-major items of `item` elements with
// leading dimension ld, starting at element (row0, col0) of each.
TensorView colmajor(void* base, DType t, const Shape& batch, int64_t item, int64_t ld, int64_t row0,
                    int64_t col0, int64_t rows, int64_t cols, Device d);
// The same over whole items of rows x cols (ld = rows).
inline TensorView colmajor(void* base, DType t, const Shape& batch, int64_t rows, int64_t cols,
                           Device d) {
  return colmajor(base, t, batch, rows * cols, rows, 0, 0, rows, cols, d);
}

}  // namespace gpula::detail
