// Python exception classes for gpula's C++ errors, and the translator between them.
#include <nanobind/stl/string.h>

#include <new>
#include <string>

#include "common.h"

namespace gpula::python {
namespace {

struct Classes {
  PyObject* error = nullptr;
  PyObject* invalid_argument = nullptr;
  PyObject* dtype_error = nullptr;
  PyObject* not_supported = nullptr;
  PyObject* not_compiled = nullptr;
  PyObject* out_of_memory = nullptr;
  PyObject* cuda = nullptr;
  PyObject* cublas = nullptr;
  PyObject* cusolver = nullptr;
  PyObject* cusparse = nullptr;
  PyObject* cudss = nullptr;
  PyObject* nccl = nullptr;
  PyObject* cublas_mp = nullptr;
  PyObject* vendor = nullptr;
  PyObject* linalg = nullptr;
  PyObject* not_pd = nullptr;
  PyObject* singular = nullptr;
};
Classes g_cls;  // module-lifetime references (never released: exceptions outlive the module)

PyObject* make_class(nb::module_& m, const char* name, std::initializer_list<PyObject*> bases,
                     const char* doc) {
  nb::list b;
  for (PyObject* p : bases)
    if (p) b.append(nb::handle(p));
  const std::string qual = std::string("gpula.") + name;
  nb::tuple bt = nb::tuple(b);
  PyObject* cls = PyErr_NewExceptionWithDoc(qual.c_str(), doc, bt.ptr(), nullptr);
  if (!cls) throw nb::python_error();
  m.attr(name) = nb::handle(cls);
  return cls;
}

// numpy.linalg.LinAlgError, so that `except numpy.linalg.LinAlgError` catches gpula's too.
PyObject* numpy_linalg_error() {
  try {
    nb::object e = nb::module_::import_("numpy.linalg").attr("LinAlgError");
    return e.release().ptr();
  } catch (const nb::python_error&) {
    return nullptr;  // NumPy missing or broken: LinAlgError derives from Error alone
  }
}

void raise_vendor(PyObject* cls, const VendorError& e) {
  nb::object inst = nb::steal(PyObject_CallFunction(cls, "s", e.what()));
  if (!inst.is_valid()) return;  // the call set an error already
  inst.attr("status") = nb::int_(e.status());
  inst.attr("status_name") = nb::str(e.status_name().c_str(), e.status_name().size());
  PyErr_SetObject(cls, inst.ptr());
}

// An instance of cls with two int attributes (NotPositiveDefinite, SingularMatrix).
void raise_linalg(PyObject* cls, const char* msg, const char* k1, int64_t v1, int64_t v2) {
  nb::object inst = nb::steal(PyObject_CallFunction(cls, "s", msg));
  if (!inst.is_valid()) return;
  inst.attr(k1) = nb::int_(v1);
  inst.attr("batch_index") = nb::int_(v2);
  PyErr_SetObject(cls, inst.ptr());
}

}  // namespace

void init_errors(nb::module_& m) {
  Classes& c = g_cls;
  // One base, gpula.Error; each class also derives from the builtin a caller would catch.
  c.error = make_class(m, "Error", {PyExc_Exception}, "Base of every exception gpula raises.");
  c.invalid_argument = make_class(m, "InvalidArgument", {c.error, PyExc_ValueError},
                                  "A bad argument: shape, value, layout or state.");
  c.dtype_error = make_class(m, "DTypeError", {c.invalid_argument, PyExc_TypeError},
                             "An argument of the wrong type or an unsupported element type.");
  c.not_supported = make_class(m, "NotSupported", {c.error, PyExc_RuntimeError},
                               "A valid request this build or device cannot carry out.");
  c.not_compiled = make_class(m, "NotCompiled", {c.not_supported},
                              "A backend that was not compiled into this build.");
  c.out_of_memory = make_class(m, "OutOfMemory", {c.error, PyExc_MemoryError},
                               "Device or host memory could not be obtained.");
  c.vendor = make_class(m, "VendorError", {c.error, PyExc_RuntimeError},
                        "A vendor library reported a failure; `status` is its code, "
                        "`status_name` its name.");
  const char* vendor_doc = "A failure reported by this vendor library (`status`, `status_name`).";
  c.cuda = make_class(m, "CudaError", {c.vendor}, vendor_doc);
  c.cublas = make_class(m, "CublasError", {c.vendor}, vendor_doc);
  c.cusolver = make_class(m, "CusolverError", {c.vendor}, vendor_doc);
  c.cusparse = make_class(m, "CusparseError", {c.vendor}, vendor_doc);
  c.cudss = make_class(m, "CudssError", {c.vendor}, vendor_doc);
  c.nccl = make_class(m, "NcclError", {c.vendor}, vendor_doc);
  c.cublas_mp = make_class(m, "CublasMpError", {c.vendor}, vendor_doc);
  nb::handle(c.vendor).attr("status") = nb::int_(0);
  nb::handle(c.vendor).attr("status_name") = nb::str("");
  c.linalg = make_class(m, "LinAlgError", {c.error, numpy_linalg_error()},
                        "A factorization or solve failed on its input.");
  c.not_pd = make_class(m, "NotPositiveDefinite", {c.linalg},
                        "A matrix is not positive definite: `order` is the leading minor that "
                        "failed (1-based), `batch_index` the flat batch position (-1 without a "
                        "batch).");
  c.singular = make_class(m, "SingularMatrix", {c.linalg},
                          "A matrix is exactly singular: `index` is the zero pivot U[i, i] "
                          "(0-based), `batch_index` the flat batch position (-1 without a "
                          "batch).");
  nb::handle(c.not_pd).attr("order") = nb::int_(0);
  nb::handle(c.singular).attr("index") = nb::int_(0);
  for (PyObject* cls : {c.not_pd, c.singular}) nb::handle(cls).attr("batch_index") = nb::int_(-1);

  // Most-derived first.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    const Classes& k = g_cls;
    try {
      std::rethrow_exception(p);
    } catch (const DTypeError& e) {
      PyErr_SetString(k.dtype_error, e.what());
    } catch (const InvalidArgument& e) {
      PyErr_SetString(k.invalid_argument, e.what());
    } catch (const NotCompiled& e) {
      PyErr_SetString(k.not_compiled, e.what());
    } catch (const NotSupported& e) {
      PyErr_SetString(k.not_supported, e.what());
    } catch (const OutOfMemory& e) {
      PyErr_SetString(k.out_of_memory, e.what());
    } catch (const CudaError& e) {
      raise_vendor(k.cuda, e);
    } catch (const CublasError& e) {
      raise_vendor(k.cublas, e);
    } catch (const CusolverError& e) {
      raise_vendor(k.cusolver, e);
    } catch (const CusparseError& e) {
      raise_vendor(k.cusparse, e);
    } catch (const CudssError& e) {
      raise_vendor(k.cudss, e);
    } catch (const NcclError& e) {
      raise_vendor(k.nccl, e);
    } catch (const CublasMpError& e) {
      raise_vendor(k.cublas_mp, e);
    } catch (const VendorError& e) {
      raise_vendor(k.vendor, e);
    } catch (const NotPositiveDefinite& e) {
      raise_linalg(k.not_pd, e.what(), "order", e.order(), e.batch_index());
    } catch (const SingularMatrix& e) {
      raise_linalg(k.singular, e.what(), "index", e.index(), e.batch_index());
    } catch (const LinAlgError& e) {
      PyErr_SetString(k.linalg, e.what());
    } catch (const Error& e) {
      PyErr_SetString(k.error, e.what());
    } catch (const std::bad_alloc&) {
      // A host allocation inside a call (vectors, staging buffers): still one of gpula's classes.
      PyErr_SetString(k.out_of_memory,
                      "[gpula] host memory could not be obtained (std::bad_alloc)");
    }
  });

  // For tests of the translation above: throws the C++ exception of that class name.
  m.def(
      "_throw_cpp_error",
      [](const std::string& kind, const std::string& message) {
        if (kind == "Error") throw Error(message);
        if (kind == "InvalidArgument") throw InvalidArgument(message);
        if (kind == "DTypeError") throw DTypeError(message);
        if (kind == "NotSupported") throw NotSupported(message);
        if (kind == "NotCompiled") throw NotCompiled(message);
        if (kind == "OutOfMemory") throw OutOfMemory(message);
        if (kind == "VendorError") throw VendorError(message, 7, "STATUS_SEVEN");
        if (kind == "CudaError") throw CudaError(message, 7, "STATUS_SEVEN");
        if (kind == "CublasError") throw CublasError(message, 7, "STATUS_SEVEN");
        if (kind == "CusolverError") throw CusolverError(message, 7, "STATUS_SEVEN");
        if (kind == "CusparseError") throw CusparseError(message, 7, "STATUS_SEVEN");
        if (kind == "CudssError") throw CudssError(message, 7, "STATUS_SEVEN");
        if (kind == "NcclError") throw NcclError(message, 7, "STATUS_SEVEN");
        if (kind == "CublasMpError") throw CublasMpError(message, 7, "STATUS_SEVEN");
        if (kind == "LinAlgError") throw LinAlgError(message);
        if (kind == "NotPositiveDefinite") throw NotPositiveDefinite(message, 3, 1);
        if (kind == "SingularMatrix") throw SingularMatrix(message, 2, 1);
        if (kind == "bad_alloc") throw std::bad_alloc();
        throw std::runtime_error("unknown kind " + kind);
      },
      nb::arg("kind"), nb::arg("message"), "Testing only: raises gpula's C++ exception `kind`.");
}

}  // namespace gpula::python
