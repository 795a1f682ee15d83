# gpula::distributed over several processes: cuSOLVERMp and cuBLASMp over NCCL. Sets
# GPULA_HAVE_MP and, when all are found, adds them to gpula.
include(${CMAKE_CURRENT_LIST_DIR}/gpula_python.cmake)
# Wheels: nvidia-cusolvermp-cu13: <site-packages>/nvidia/cu13/{include/cusolverMp.h,
# lib/libcusolverMp.so.0}; nvidia-cublasmp-cu13: nvidia/cublasmp/cu13/{include/cublasmp.h,
# lib/libcublasmp.so.0}; nvidia-nccl-cu13: nvidia/nccl/{include/nccl.h, lib/libnccl.so.2}).
# Each root comes from the cache, else the environment, else the Python site-packages. They
# need NCCL >= 2.29 (the toolkit's may be older). Without them the NotCompiled stub is built.
gpula_python_print(GPULA_PY_NVIDIA
  "import sysconfig, os; print(os.path.join(sysconfig.get_paths()['purelib'], 'nvidia'))")
foreach(lib_var IN ITEMS CUSOLVERMP:cu13 CUBLASMP:cublasmp/cu13 NCCL:nccl)
  string(REPLACE ":" ";" lib_pair "${lib_var}")
  list(GET lib_pair 0 lib_name)
  list(GET lib_pair 1 lib_sub)
  if(NOT DEFINED GPULA_${lib_name}_ROOT AND DEFINED ENV{GPULA_${lib_name}_ROOT})
    set(GPULA_${lib_name}_ROOT "$ENV{GPULA_${lib_name}_ROOT}")
  endif()
  if(NOT DEFINED GPULA_${lib_name}_ROOT AND GPULA_PY_NVIDIA)
    set(GPULA_${lib_name}_ROOT "${GPULA_PY_NVIDIA}/${lib_sub}")
  endif()
  set(GPULA_${lib_name}_ROOT "${GPULA_${lib_name}_ROOT}" CACHE PATH "folder with include/ and lib/ of ${lib_name}")
endforeach()
find_path(GPULA_CUSOLVERMP_INCLUDE cusolverMp.h HINTS ${GPULA_CUSOLVERMP_ROOT}/include NO_DEFAULT_PATH)
find_library(GPULA_CUSOLVERMP_LIBRARY NAMES libcusolverMp.so.0 cusolverMp NAMES_PER_DIR
  HINTS ${GPULA_CUSOLVERMP_ROOT}/lib NO_DEFAULT_PATH)
find_path(GPULA_CUBLASMP_INCLUDE cublasmp.h HINTS ${GPULA_CUBLASMP_ROOT}/include NO_DEFAULT_PATH)
find_library(GPULA_CUBLASMP_LIBRARY NAMES libcublasmp.so.0 cublasmp NAMES_PER_DIR
  HINTS ${GPULA_CUBLASMP_ROOT}/lib NO_DEFAULT_PATH)
find_path(GPULA_NCCL_INCLUDE nccl.h HINTS ${GPULA_NCCL_ROOT}/include ${CUDAToolkit_INCLUDE_DIRS})
find_library(GPULA_NCCL_LIBRARY NAMES libnccl.so.2 nccl NAMES_PER_DIR
  HINTS ${GPULA_NCCL_ROOT}/lib ${CUDAToolkit_LIBRARY_DIR})
set(GPULA_MP_MISSING "")
if(NOT GPULA_CUSOLVERMP_INCLUDE OR NOT GPULA_CUSOLVERMP_LIBRARY)
  list(APPEND GPULA_MP_MISSING "cuSOLVERMp (set GPULA_CUSOLVERMP_ROOT, now '${GPULA_CUSOLVERMP_ROOT}')")
endif()
if(NOT GPULA_CUBLASMP_INCLUDE OR NOT GPULA_CUBLASMP_LIBRARY)
  list(APPEND GPULA_MP_MISSING "cuBLASMp (set GPULA_CUBLASMP_ROOT, now '${GPULA_CUBLASMP_ROOT}')")
endif()
if(GPULA_NCCL_INCLUDE AND GPULA_NCCL_LIBRARY)
  file(STRINGS ${GPULA_NCCL_INCLUDE}/nccl.h GPULA_NCCL_MINOR_LINE REGEX "^#define NCCL_MINOR ")
  string(REGEX REPLACE "[^0-9]" "" GPULA_NCCL_MINOR "${GPULA_NCCL_MINOR_LINE}")
  if(GPULA_NCCL_MINOR LESS 29)
    list(APPEND GPULA_MP_MISSING "NCCL >= 2.29 (found 2.${GPULA_NCCL_MINOR} in ${GPULA_NCCL_INCLUDE}; set GPULA_NCCL_ROOT, e.g. to the nvidia-nccl-cu13 wheel's nvidia/nccl)")
  endif()
else()
  list(APPEND GPULA_MP_MISSING "NCCL (set GPULA_NCCL_ROOT, now '${GPULA_NCCL_ROOT}')")
endif()
if(NOT GPULA_MP_MISSING)
  message(STATUS "gpula: cuSOLVERMp ${GPULA_CUSOLVERMP_LIBRARY}, cuBLASMp ${GPULA_CUBLASMP_LIBRARY}, NCCL ${GPULA_NCCL_LIBRARY}")
  set(GPULA_HAVE_MP ON)
  # NCCL's include folder first: the toolkit's older nccl.h must not be picked.
  target_include_directories(gpula BEFORE PRIVATE ${GPULA_NCCL_INCLUDE})
  target_include_directories(gpula PRIVATE ${GPULA_CUSOLVERMP_INCLUDE} ${GPULA_CUBLASMP_INCLUDE})
  # They call the driver API (libcuda.so.1): CUDA::cuda_driver, the toolkit's stub where no
  # driver is installed (build machines), the real one at run time.
  target_link_libraries(gpula PRIVATE ${GPULA_CUSOLVERMP_LIBRARY} ${GPULA_CUBLASMP_LIBRARY}
    ${GPULA_NCCL_LIBRARY} CUDA::cuda_driver)
  target_compile_definitions(gpula PRIVATE GPULA_HAVE_MP=1)
  foreach(mp_lib IN ITEMS ${GPULA_CUSOLVERMP_LIBRARY} ${GPULA_CUBLASMP_LIBRARY} ${GPULA_NCCL_LIBRARY})
    get_filename_component(mp_dir ${mp_lib} DIRECTORY)
    set_property(TARGET gpula APPEND PROPERTY INTERFACE_LINK_OPTIONS "-Wl,-rpath,${mp_dir}")
  endforeach()
else()
  string(REPLACE ";" ", " GPULA_MP_MISSING_TEXT "${GPULA_MP_MISSING}")
  message(STATUS "gpula: distributed multi-process engines not built, missing: ${GPULA_MP_MISSING_TEXT}; "
                 "the Communicator functions raise NotCompiled")
  set(GPULA_HAVE_MP OFF)
endif()
