#pragma once
/// @file error.h
/// The error hierarchy: every exception gpula throws derives from gpula::Error, so that
/// `catch (const gpula::Error&)` catches them all. Messages name the operation, the argument and
/// the value: "[matmul] inner dimensions differ: a has shape (3, 4), b has shape (5, 2)".
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

namespace gpula {

/// Base of every exception gpula throws (Python: gpula.Error).
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A bad argument: shape, value, layout, state (Python: ValueError).
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

/// An argument of the wrong or unsupported element type (Python: TypeError).
class DTypeError : public InvalidArgument {
 public:
  using InvalidArgument::InvalidArgument;
};

/// A valid request this build or this device cannot carry out (e.g. fp8 on the CPU; Python:
/// RuntimeError).
class NotSupported : public Error {
 public:
  using Error::Error;
};

/// A backend that was not compiled into this build: NotCompiled("cuda"), or, naming the
/// operation and the argument that asked for it, NotCompiled("matmul", "device", "cuda"):
/// "[matmul] device: gpula was built without its cuda backend".
class NotCompiled : public NotSupported {
 public:
  explicit NotCompiled(const std::string& backend)
      : NotSupported("gpula was built without its " + backend + " backend") {}
  NotCompiled(const std::string& op, const std::string& arg, const std::string& backend)
      : NotSupported("[" + op + "] " + arg + ": gpula was built without its " + backend +
                     " backend") {}
};

/// Device or host memory could not be obtained (Python: MemoryError).
class OutOfMemory : public Error {
 public:
  using Error::Error;
};

/// A vendor library reported a failure: status code and its symbolic name (Python: RuntimeError).
class VendorError : public Error {
 public:
  VendorError(const std::string& msg, int status, std::string status_name)
      : Error(msg), status_(status), status_name_(std::move(status_name)) {}
  int status() const { return status_; }
  const std::string& status_name() const { return status_name_; }

 private:
  int status_;
  std::string status_name_;
};

class CudaError : public VendorError {
 public:
  using VendorError::VendorError;
};
class CublasError : public VendorError {
 public:
  using VendorError::VendorError;
};
class CusolverError : public VendorError {
 public:
  using VendorError::VendorError;
};
class CusparseError : public VendorError {
 public:
  using VendorError::VendorError;
};
class CudssError : public VendorError {
 public:
  using VendorError::VendorError;
};
/// NCCL (the communicator under gpula::distributed's multi-process engines).
class NcclError : public VendorError {
 public:
  using VendorError::VendorError;
};
/// cuBLASMp (gpula::distributed::matmul over several processes).
class CublasMpError : public VendorError {
 public:
  using VendorError::VendorError;
};

/// A factorization or solve failed on its input (singular, not positive definite; Python: also
/// numpy.linalg.LinAlgError).
class LinAlgError : public Error {
 public:
  using Error::Error;
};

/// Not positive definite: order() is the leading minor that failed (1-based), batch_index() the
/// flat position in the batch (-1 without a batch).
class NotPositiveDefinite : public LinAlgError {
 public:
  NotPositiveDefinite(const std::string& msg, int64_t order, int64_t batch_index)
      : LinAlgError(msg), order_(order), batch_index_(batch_index) {}
  int64_t order() const { return order_; }
  int64_t batch_index() const { return batch_index_; }

 private:
  int64_t order_, batch_index_;
};

/// Exactly singular: index() is the zero pivot U[i, i] (0-based), batch_index() as above.
class SingularMatrix : public LinAlgError {
 public:
  SingularMatrix(const std::string& msg, int64_t index, int64_t batch_index)
      : LinAlgError(msg), index_(index), batch_index_(batch_index) {}
  int64_t index() const { return index_; }
  int64_t batch_index() const { return batch_index_; }

 private:
  int64_t index_, batch_index_;
};

}  // namespace gpula
