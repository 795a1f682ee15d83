# scipy-openblas32, gpula's dense BLAS and LAPACK (the PyPI wheel NumPy and SciPy build with: a
# current OpenBLAS, 32-bit integers, every BLAS/LAPACK/OpenBLAS symbol prefixed "scipy_";
# include/cblas.h and lib/libscipy_openblas.so in its package folder). Defines the IMPORTED
# target gpula::scipy_openblas and GPULA_OPENBLAS_INCLUDE / GPULA_OPENBLAS_LIBRARY. Used by the
# build (CMakeLists.txt) and by the installed package config, so that a program linking an
# installed gpula finds the library where it is now, not where gpula was built.
#
# The folder comes from GPULA_OPENBLAS_ROOT (a CMake variable, else the environment), else from
# the Python CMake finds (import scipy_openblas32). Searched again at every configure.
include("${CMAKE_CURRENT_LIST_DIR}/gpula_python.cmake")
if(NOT TARGET gpula::scipy_openblas)
  set(_gpula_openblas_root "${GPULA_OPENBLAS_ROOT}")
  if(NOT _gpula_openblas_root AND DEFINED ENV{GPULA_OPENBLAS_ROOT})
    set(_gpula_openblas_root "$ENV{GPULA_OPENBLAS_ROOT}")
  endif()
  if(NOT _gpula_openblas_root)
    gpula_python_print(_gpula_openblas_root
      "import os, scipy_openblas32 as s; print(os.path.dirname(s.__file__))")
  endif()
  # (a value left in the cache by an older gpula would stop the search: drop it)
  unset(GPULA_OPENBLAS_INCLUDE CACHE)
  unset(GPULA_OPENBLAS_LIBRARY CACHE)
  unset(GPULA_OPENBLAS_INCLUDE)
  unset(GPULA_OPENBLAS_LIBRARY)
  find_path(GPULA_OPENBLAS_INCLUDE cblas.h HINTS "${_gpula_openblas_root}/include"
            NO_DEFAULT_PATH NO_CACHE)
  find_library(GPULA_OPENBLAS_LIBRARY scipy_openblas HINTS "${_gpula_openblas_root}/lib"
               NO_DEFAULT_PATH NO_CACHE)
  if(NOT GPULA_OPENBLAS_INCLUDE OR NOT GPULA_OPENBLAS_LIBRARY)
    message(FATAL_ERROR "gpula: scipy-openblas32 not found (folder '${_gpula_openblas_root}'). "
      "Install it into the Python CMake uses (pip install scipy-openblas32; pass "
      "-DPython_EXECUTABLE=...) or set GPULA_OPENBLAS_ROOT to its package folder.")
  endif()
  add_library(gpula::scipy_openblas SHARED IMPORTED)
  set_target_properties(gpula::scipy_openblas PROPERTIES
    IMPORTED_LOCATION "${GPULA_OPENBLAS_LIBRARY}"
    INTERFACE_INCLUDE_DIRECTORIES "${GPULA_OPENBLAS_INCLUDE}")
  get_filename_component(GPULA_OPENBLAS_LIBDIR "${GPULA_OPENBLAS_LIBRARY}" DIRECTORY)
  unset(_gpula_openblas_root)
endif()
