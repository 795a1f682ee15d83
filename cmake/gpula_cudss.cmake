# cuDSS (pip wheel nvidia-cudss-cu13: <site-packages>/nvidia/cu13/{include/cudss.h,
# lib/libcudss.so.1}). Sets GPULA_HAVE_CUDSS and, when found, adds it to gpula.
# The root comes from the environment (GPULA_CUDSS_ROOT) when set, else from the cache, else from
# the Python site-packages. The environment wins over the cache, and a library not found before is
# searched again, so a build folder configured before cuDSS was there finds it once it is.
include(${CMAKE_CURRENT_LIST_DIR}/gpula_python.cmake)
if(DEFINED ENV{GPULA_CUDSS_ROOT} AND NOT "$ENV{GPULA_CUDSS_ROOT}" STREQUAL "${GPULA_CUDSS_ROOT}")
  set(GPULA_CUDSS_ROOT "$ENV{GPULA_CUDSS_ROOT}" CACHE PATH "folder with include/cudss.h and lib/libcudss.so.*" FORCE)
  unset(GPULA_CUDSS_INCLUDE CACHE)
  unset(GPULA_CUDSS_LIBRARY CACHE)
endif()
if(NOT GPULA_CUDSS_ROOT)
  gpula_python_print(_gpula_cudss_root
    "import sysconfig, os; print(os.path.join(sysconfig.get_paths()['purelib'], 'nvidia', 'cu13'))")
  set(GPULA_CUDSS_ROOT "${_gpula_cudss_root}" CACHE PATH "folder with include/cudss.h and lib/libcudss.so.*" FORCE)
endif()
find_path(GPULA_CUDSS_INCLUDE cudss.h HINTS ${GPULA_CUDSS_ROOT}/include ${GPULA_CUDSS_ROOT}/../cudss/include)
find_library(GPULA_CUDSS_LIBRARY NAMES cudss libcudss.so.1 libcudss.so.0
  HINTS ${GPULA_CUDSS_ROOT}/lib ${GPULA_CUDSS_ROOT}/../cudss/lib)
if(GPULA_CUDSS_INCLUDE AND GPULA_CUDSS_LIBRARY)
  set(GPULA_HAVE_CUDSS ON)
  message(STATUS "gpula: cuDSS ${GPULA_CUDSS_LIBRARY}")
  target_include_directories(gpula PRIVATE ${GPULA_CUDSS_INCLUDE})
  target_link_libraries(gpula PRIVATE ${GPULA_CUDSS_LIBRARY})
  target_compile_definitions(gpula PRIVATE GPULA_WITH_CUDSS=1)
  get_filename_component(_gpula_cudss_libdir ${GPULA_CUDSS_LIBRARY} DIRECTORY)
  set_property(TARGET gpula APPEND PROPERTY INTERFACE_LINK_OPTIONS "-Wl,-rpath,${_gpula_cudss_libdir}")
else()
  set(GPULA_HAVE_CUDSS OFF)
  message(STATUS "gpula: cuDSS not found (GPULA_CUDSS_ROOT=${GPULA_CUDSS_ROOT}): sparse direct solver on the GPU not built")
endif()
