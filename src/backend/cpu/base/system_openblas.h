#pragma once
// The system OpenBLAS (Debian's; SuiteSparse calls its unprefixed BLAS), as opposed to
// scipy-openblas32, which gpula's dense code calls through <cblas.h> (scipy_ names). Its own
// header is not on the include path, so the few functions gpula asks it are declared here.
extern "C" {
char* openblas_get_config(void);
char* openblas_get_corename(void);
int openblas_get_num_threads(void);
int openblas_get_parallel(void);  // 0 serial, 1 pthreads, 2 OpenMP
}
