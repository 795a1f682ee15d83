// rethrow_edited: the error being handled, rethrown with an edited message (rethrow.h).
#include "linalg/rethrow.h"

#include <gpula/error.h>

namespace gpula::detail {

[[noreturn]] void rethrow_edited(const std::function<std::string(const std::string&)>& edit,
                                 int64_t batch_index) {
  auto bi = [&](int64_t own) { return batch_index >= 0 ? batch_index : own; };
  try {
    throw;
  } catch (const NotPositiveDefinite& e) {
    throw NotPositiveDefinite(edit(e.what()), e.order(), bi(e.batch_index()));
  } catch (const SingularMatrix& e) {
    throw SingularMatrix(edit(e.what()), e.index(), bi(e.batch_index()));
  } catch (const LinAlgError& e) {
    throw LinAlgError(edit(e.what()));
  } catch (const DTypeError& e) {
    throw DTypeError(edit(e.what()));
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(edit(e.what()));
  } catch (const OutOfMemory& e) {
    throw OutOfMemory(edit(e.what()));
  } catch (const NotCompiled&) {
    throw;  // not about an item
  } catch (const NotSupported& e) {
    throw NotSupported(edit(e.what()));
  } catch (const CudaError& e) {
    throw CudaError(edit(e.what()), e.status(), e.status_name());
  } catch (const CublasError& e) {
    throw CublasError(edit(e.what()), e.status(), e.status_name());
  } catch (const CusolverError& e) {
    throw CusolverError(edit(e.what()), e.status(), e.status_name());
  } catch (const CusparseError& e) {
    throw CusparseError(edit(e.what()), e.status(), e.status_name());
  } catch (const CudssError& e) {
    throw CudssError(edit(e.what()), e.status(), e.status_name());
  } catch (const NcclError& e) {
    throw NcclError(edit(e.what()), e.status(), e.status_name());
  } catch (const CublasMpError& e) {
    throw CublasMpError(edit(e.what()), e.status(), e.status_name());
  } catch (const VendorError& e) {
    throw VendorError(edit(e.what()), e.status(), e.status_name());
  } catch (const Error& e) {
    throw Error(edit(e.what()));
  }
}

[[noreturn]] void rethrow_as(const char* op) {
  rethrow_edited([op](const std::string& m) {
    const std::string prefix = std::string("[") + op + "]";
    if (m.rfind(prefix, 0) == 0 || m.empty() || m[0] != '[') return m;
    const std::size_t close = m.find(']');
    return close == std::string::npos ? m : prefix + m.substr(close + 1);
  });
}

}  // namespace gpula::detail
