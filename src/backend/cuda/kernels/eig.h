#pragma once
// Launchers of the device kernels around cusolverDnXgeev (kernels/eig.cu). Matrices are `count`
// contiguous column-major n x n items; complex arrays are interleaved (re, im) pairs of the
// real type (cuComplex / cuDoubleComplex layout).
#include <cuda_runtime.h>

#include <cstdint>

#include "backend/cuda/kernels/linalg.h"

namespace gpula::detail::cuda {

// bad[b] = 1 where item b of a holds a NaN or Inf (that item is then zeroed, so the solver runs
// on a harmless matrix), else 0.
cudaError_t launch_eig_screen(void* a, ElemType t, int64_t n, int64_t count, int32_t* bad,
                              cudaStream_t stream);
// Real ?geev output to complex: w2 holds, per item, n real parts then n imaginary parts (the
// all-real-types form of cusolverDnXgeev); w gets w2[j] + i w2[n + j]. With vr (LAPACK's real
// packed right eigenvectors) and v, column j of v is vr(:, j) + i vr(:, j + 1) where wi[j] > 0,
// vr(:, j - 1) - i vr(:, j) where wi[j] < 0, and vr(:, j) otherwise (as backend/cpu's rule).
// f64: double data, else float.
cudaError_t launch_eig_unpack_real(const void* w2, const void* vr, bool f64, int64_t n,
                                   int64_t count, void* w, void* v, cudaStream_t stream);
// out[k] = in[k] + 0 i for `total` reals (real input routed through the complex solver).
cudaError_t launch_eig_widen(const void* in, bool f64, int64_t total, void* out,
                             cudaStream_t stream);
// NaN + i NaN into w (count * n complex) and, when given, v (count * n * n complex) of every
// item b with bad[b] != 0.
cudaError_t launch_eig_poison(const int32_t* bad, bool f64, int64_t n, int64_t count, void* w,
                              void* v, cudaStream_t stream);

}  // namespace gpula::detail::cuda
