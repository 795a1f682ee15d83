# SuiteSparse (Debian libsuitesparse-dev) for the CPU sparse direct solver: UMFPACK (LU, general
# and indefinite matrices) and CHOLMOD (supernodal Cholesky, positive definite matrices). Sets
# GPULA_HAVE_SUITESPARSE and, when found, adds the include folders and libraries to gpula.
find_path(GPULA_SUITESPARSE_INCLUDE suitesparse/umfpack.h)
find_path(GPULA_CHOLMOD_INCLUDE suitesparse/cholmod.h)
find_library(GPULA_UMFPACK_LIBRARY umfpack)
find_library(GPULA_CHOLMOD_LIBRARY cholmod)
if(GPULA_SUITESPARSE_INCLUDE AND GPULA_CHOLMOD_INCLUDE AND GPULA_UMFPACK_LIBRARY
   AND GPULA_CHOLMOD_LIBRARY)
  set(GPULA_HAVE_SUITESPARSE ON)
  message(STATUS "gpula: SuiteSparse UMFPACK ${GPULA_UMFPACK_LIBRARY}, CHOLMOD ${GPULA_CHOLMOD_LIBRARY}")
  target_include_directories(gpula PRIVATE ${GPULA_SUITESPARSE_INCLUDE} ${GPULA_CHOLMOD_INCLUDE})
  target_link_libraries(gpula PRIVATE ${GPULA_UMFPACK_LIBRARY} ${GPULA_CHOLMOD_LIBRARY})
else()
  set(GPULA_HAVE_SUITESPARSE OFF)
  message(STATUS "gpula: SuiteSparse (UMFPACK + CHOLMOD) not found, CPU sparse direct solver not built")
endif()
