// CUDA backend of the general eigensolver: cuSOLVER's 64-bit cusolverDnXgeev (CUDA 12.6+;
// right eigenvectors only, jobvl NOVECTOR), looping over the batch on the stream, with the
// device and host workspaces sized once by cusolverDnXgeev_bufferSize and reused by every
// matrix. Real input uses the all-real form (W: n real parts then n imaginary parts per
// matrix; VR: LAPACK's real packed eigenvectors), unpacked to complex by kernels/eig.cu; should
// this cuSOLVER refuse a real type in its workspace query, that dtype is widened to the complex
// type and solved as complex (logged). Matrices holding NaN or Inf are zeroed before the solver
// by a screening kernel and their results set to NaN afterwards. Nothing here synchronizes.
#include <string>

#include "backend/cuda/base/check.h"
#include "backend/cuda/base/context.h"
#include "backend/cuda/kernels/eig.h"
#include "backend/cuda/linalg/common.h"
#include "core/format.h"
#include "linalg/eig_backend.h"

namespace gpula::detail::cuda {
namespace {

// One Xgeev problem shape: types and leading dimensions of A, W and VR (VL is never asked for).
struct Geev {
  cusolverDnHandle_t h;
  cusolverDnParams_t params;
  cusolverEigMode_t jobvr;
  int64_t n;
  cudaDataType_t at, wt, vt;

  cusolverStatus_t buffer_size(const void* a, const void* w, const void* vr, std::size_t* dev,
                               std::size_t* host) const {
    return cusolverDnXgeev_bufferSize(h, params, CUSOLVER_EIG_MODE_NOVECTOR, jobvr, n, at, a, n, wt,
                                      w, vt, nullptr, n, vt, vr, n, at, dev, host);
  }
  // Every item of the batch: a (column-major n x n of type at), w (w_item bytes per item) and
  // vr (n * n of type vt per item, or null) advance together; info[b] per item.
  void run(void* a, int64_t a_item, void* w, int64_t w_item, void* vr, int64_t vr_item,
           int64_t count, int32_t* info, const LinalgCall& c) const {
    std::size_t dev = 0, host = 0;
    GPULA_CHECK(c.op, buffer_size(a, w, vr, &dev, &host));
    Tensor ws = scratch(static_cast<int64_t>(dev), c);
    void* hw = host_workspace(host);
    for (int64_t b = 0; b < count; ++b)
      GPULA_CHECK(c.op, cusolverDnXgeev(h, params, CUSOLVER_EIG_MODE_NOVECTOR, jobvr, n, at,
                                        static_cast<char*>(a) + b * a_item, n, wt,
                                        static_cast<char*>(w) + b * w_item, vt, nullptr, n, vt,
                                        vr ? static_cast<char*>(vr) + b * vr_item : nullptr, n, at,
                                        ws.data(), dev, hw, host, info + b));
  }
};

class CudaEig final : public EigBackend {
 public:
  void geev(const SquareBatch& a, void* w, void* v, int32_t* info,
            const LinalgCall& c) const override {
    Context& ctx = context(c.stream.device.index);
    cusolverDnHandle_t h = ctx.cusolver(raw(c));
    const bool vectors = v != nullptr;
    const cusolverEigMode_t jobvr = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
    const DType ct = eig_complex_type(a.dtype);
    const bool f64 = ct == DType::c128;
    const int64_t n = a.n, nn = a.n * a.n;
    const int64_t es = static_cast<int64_t>(size_of(a.dtype));
    const int64_t cs = static_cast<int64_t>(size_of(ct)), rs = cs / 2;

    // NaN/Inf screening: such matrices are zeroed here and poisoned at the end.
    Tensor bad = scratch(a.count * static_cast<int64_t>(sizeof(int32_t)), c);
    int32_t* badp = static_cast<int32_t*>(bad.data());
    GPULA_CHECK(c.op, launch_eig_screen(a.data, elem_type(a.dtype), n, a.count, badp, raw(c)));

    void* a_data = a.data;
    Tensor widened;
    if (!is_complex(a.dtype)) {
      const cudaDataType_t rt = data_type(a.dtype);
      const Geev g{h, ctx.cusolver_params(), jobvr, n, rt, rt, rt};
      Tensor w2 = scratch(a.count * 2 * n * rs, c);
      Tensor vr = vectors ? scratch(a.count * nn * rs, c) : Tensor{};
      std::size_t dev = 0, host = 0;
      const cusolverStatus_t q =
          g.buffer_size(a.data, w2.data(), vectors ? vr.data() : nullptr, &dev, &host);
      if (q == CUSOLVER_STATUS_SUCCESS) {
        note(c, cat("cusolverDnXgeev (real, packed): ", a.count, " x order ", n));
        g.run(a.data, nn * es, w2.data(), 2 * n * rs, vectors ? vr.data() : nullptr, nn * rs,
              a.count, info, c);
        GPULA_CHECK(c.op, launch_eig_unpack_real(w2.data(), vectors ? vr.data() : nullptr, f64, n,
                                                 a.count, w, v, raw(c)));
        GPULA_CHECK(c.op, launch_eig_poison(badp, f64, n, a.count, w, v, raw(c)));
        return;
      }
      note(c, cat("cusolverDnXgeev refused ", name(a.dtype), " (status ", static_cast<int>(q),
                  "); solving as ", name(ct)));
      widened = scratch(a.count * nn * cs, c);
      GPULA_CHECK(c.op, launch_eig_widen(a.data, f64, a.count * nn, widened.data(), raw(c)));
      a_data = widened.data();
    }
    note(c, cat("cusolverDnXgeev (complex): ", a.count, " x order ", n));
    const cudaDataType_t xt = data_type(ct);
    const Geev g{h, ctx.cusolver_params(), jobvr, n, xt, xt, xt};
    g.run(a_data, nn * cs, w, n * cs, v, nn * cs, a.count, info, c);
    GPULA_CHECK(c.op, launch_eig_poison(badp, f64, n, a.count, w, v, raw(c)));
  }
};

}  // namespace

const EigBackend& eig_backend() {
  static const CudaEig backend;
  return backend;
}

}  // namespace gpula::detail::cuda
