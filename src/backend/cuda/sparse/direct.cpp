// CUDA DirectSolver backend: cuDSS. One cudssHandle_t per (device, thread), cached here, in
// cuDSS's multi-threaded mode where its threading layer is found (threading_layer()); the
// solver copies A's arrays into its own device memory so that the caller's arrays need not
// outlive it. Analysis, (re)factorization and solve are ordered on the solver's stream.
#include <cuda_runtime.h>
#include <cudss.h>
#include <dlfcn.h>
#include <gpula/error.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "backend/cuda/base/check.h"
#include "backend/cuda/base/types.h"
#include "core/format.h"
#include "sparse/direct_backend.h"

namespace gpula::sparse::detail::cuda {

namespace {

constexpr const char* kOp = "sparse.DirectSolver";

// Handles per (device, thread), destroyed when the thread ends.
struct HandleCache {
  std::map<int, cudssHandle_t> handles;
  ~HandleCache() {
    for (auto& [device, h] : handles) {
      if (cudaSetDevice(device) == cudaSuccess) static_cast<void>(cudssDestroy(h));
    }
  }
};

// cuDSS's OpenMP threading layer as the wheel ships it, next to libcudss; "" when absent.
std::string bundled_threading_layer() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&cudssCreate), &info) == 0 || info.dli_fname == nullptr)
    return {};
  std::error_code ec;
  const auto path =
      std::filesystem::path(info.dli_fname).parent_path() / "libcudss_mtlayer_gomp.so.1";
  return std::filesystem::exists(path, ec) ? path.string() : std::string{};
}

// Handles run in cuDSS's multi-threaded mode where a threading layer is found: the reordering
// of the analysis phase then uses all host cores instead of one. $CUDSS_THREADING_LIB, when
// set, names the layer (cuDSS reads it itself when given no name); else the wheel's. A layer
// that fails to load leaves the handle single-threaded, which is correct, only slower.
cudssHandle_t handle_for(int device) {
  thread_local HandleCache cache;
  auto it = cache.handles.find(device);
  if (it != cache.handles.end()) return it->second;
  cudssHandle_t h = nullptr;
  GPULA_CHECK(kOp, cudssCreate(&h));
  cache.handles.emplace(device, h);
  if (std::getenv("CUDSS_THREADING_LIB") != nullptr) {
    static_cast<void>(cudssSetThreadingLayer(h, nullptr));
  } else if (const std::string layer = bundled_threading_layer(); !layer.empty()) {
    static_cast<void>(cudssSetThreadingLayer(h, layer.c_str()));
  }
  return h;
}

cudssMatrixType_t matrix_type(MatrixType m, bool cplx) {
  switch (m) {
    case MatrixType::symmetric:
      return CUDSS_MTYPE_SYMMETRIC;
    case MatrixType::positive_definite:
      return cplx ? CUDSS_MTYPE_HPD : CUDSS_MTYPE_SPD;
    case MatrixType::hermitian:
      return cplx ? CUDSS_MTYPE_HERMITIAN : CUDSS_MTYPE_SYMMETRIC;
    default:
      return CUDSS_MTYPE_GENERAL;
  }
}

class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    GPULA_CHECK(kOp, cudaGetDevice(&previous_));
    GPULA_CHECK(kOp, cudaSetDevice(device));
  }
  ~DeviceGuard() { static_cast<void>(cudaSetDevice(previous_)); }

 private:
  int previous_ = 0;
};

class CudssBackend final : public DirectBackend {
 public:
  CudssBackend(const CsrView& a, const DirectSolverOptions& options, Stream stream)
      : device_(a.device().index),
        n_(a.rows),
        nnz_(a.nnz()),
        dtype_(a.dtype()),
        index_dtype_(a.index_dtype()),
        stream_(static_cast<cudaStream_t>(stream.handle)) {
    DeviceGuard guard(device_);
    handle_ = handle_for(device_);
    const std::size_t ib = size_of(a.index_dtype());
    GPULA_CHECK(kOp, cudaMalloc(&indptr_, (n_ + 1) * ib));
    GPULA_CHECK(kOp, cudaMalloc(&indices_, std::max<int64_t>(nnz_, 1) * ib));
    GPULA_CHECK(kOp, cudaMalloc(&values_, std::max<int64_t>(nnz_, 1) * size_of(dtype_)));
    GPULA_CHECK(kOp, cudaMemcpyAsync(indptr_, a.indptr.data, (n_ + 1) * ib,
                                     cudaMemcpyDeviceToDevice, stream_));
    GPULA_CHECK(kOp, cudaMemcpyAsync(indices_, a.indices.data, nnz_ * ib, cudaMemcpyDeviceToDevice,
                                     stream_));
    set_values(a.values);
    const cudaDataType_t it = a.index_dtype() == DType::i32 ? CUDA_R_32I : CUDA_R_64I;
    const cudssMatrixViewType_t view = options.triangle == StoredTriangle::lower ? CUDSS_MVIEW_LOWER
                                       : options.triangle == StoredTriangle::upper
                                           ? CUDSS_MVIEW_UPPER
                                           : CUDSS_MVIEW_FULL;
    GPULA_CHECK(kOp, cudssConfigCreate(&config_));
    GPULA_CHECK(kOp, cudssDataCreate(handle_, &data_));
    GPULA_CHECK(kOp, cudssMatrixCreateCsr(&a_, n_, n_, nnz_, indptr_, nullptr, indices_, values_,
                                          it, it, gpula::detail::cuda::data_type(dtype_),
                                          matrix_type(options.matrix_type, is_complex(dtype_)),
                                          view, CUDSS_BASE_ZERO));
  }

  ~CudssBackend() override {
    DeviceGuard guard(device_);
    if (a_) static_cast<void>(cudssMatrixDestroy(a_));
    if (data_) static_cast<void>(cudssDataDestroy(handle_, data_));
    if (config_) static_cast<void>(cudssConfigDestroy(config_));
    static_cast<void>(cudaStreamSynchronize(stream_));
    static_cast<void>(cudaFree(indptr_));
    static_cast<void>(cudaFree(indices_));
    static_cast<void>(cudaFree(values_));
  }

  void analyze() override { execute(CUDSS_PHASE_ANALYSIS, nullptr, nullptr); }

  std::string library_ordering() const override { return "cudss"; }
  bool takes_ordering() const override { return true; }

  // The permutation and the top levels of its dissection tree, in the matrix's index type. With
  // the tree cuDSS keeps its tree-parallel symbolic analysis and factorization; a permutation
  // alone took 2.7 s of symbolic analysis and 0.35 s of factorization instead of 0.08 and 0.02
  // on the 2-D Poisson matrix with n = 1e6 (probe_cudss_user_perm).
  void use_ordering(const NestedDissection& nd) override {
    DeviceGuard guard(device_);
    const cudssReorderingAlg_t alg = CUDSS_REORDERING_ALG_NESTED_DISSECTION;
    GPULA_CHECK(kOp, cudssConfigSet(config_, CUDSS_CONFIG_REORDERING_ALG, &alg, sizeof(alg)));
    const int levels = nd.levels;
    GPULA_CHECK(kOp, cudssConfigSet(config_, CUDSS_CONFIG_ND_NLEVELS, &levels, sizeof(levels)));
    auto set = [&](cudssDataParam_t param, const std::vector<int32_t>& v) {
      if (index_dtype_ == DType::i32) {
        GPULA_CHECK(kOp, cudssDataSet(handle_, data_, param, v.data(), v.size() * sizeof(int32_t)));
      } else {
        const std::vector<int64_t> wide(v.begin(), v.end());
        GPULA_CHECK(
            kOp, cudssDataSet(handle_, data_, param, wide.data(), wide.size() * sizeof(int64_t)));
      }
    };
    set(CUDSS_DATA_USER_PERM, nd.perm);
    set(CUDSS_DATA_USER_ND_PARTITION_TREE, nd.tree);
  }

  void factorize() override {
    execute(factorized_once_ ? CUDSS_PHASE_REFACTORIZATION : CUDSS_PHASE_FACTORIZATION, nullptr,
            nullptr);
    int info = 0;
    std::size_t written = 0;
    GPULA_CHECK(kOp, cudssDataGet(handle_, data_, CUDSS_DATA_INFO, &info, sizeof(info), &written));
    if (info != 0) {
      const std::string msg = gpula::detail::cat(
          "[", kOp, "] cuDSS factorization reported info = ", info,
          " (zero or non-positive pivot; the matrix is singular or not positive definite)");
      throw SingularMatrix(msg, info > 0 ? info - 1 : -1, -1);
    }
    factorized_once_ = true;
  }

  void set_values(const TensorView& values) override {
    GPULA_CHECK(kOp, cudaMemcpyAsync(values_, values.data, nnz_ * size_of(dtype_),
                                     cudaMemcpyDeviceToDevice, stream_));
  }

  void solve(const TensorView& b, const TensorView& x) override {
    const int64_t k = b.ndim() == 2 ? b.shape[1] : 1;
    if (k > 1) {
      // cuDSS takes column-major dense matrices only (row-major: CUDSS_STATUS_NOT_SUPPORTED,
      // seen on the H200): b goes through a column-major copy and x comes back through one.
      const Stream s{Device::cuda(device_), stream_};
      Tensor bt = Tensor::empty({k, n_}, dtype_, s), xt = Tensor::empty({k, n_}, dtype_, s);
      TensorView bcol = bt.view(), xcol = xt.view();
      bcol.shape = xcol.shape = {n_, k};
      bcol.strides = xcol.strides = {1, n_};
      gpula::copy(b, bcol, s);
      solve_col_major(bt.data(), xt.data(), k);
      gpula::copy(xcol, x, s);
      GPULA_CHECK(kOp, cudaStreamSynchronize(stream_));
      return;
    }
    solve_col_major(b.data, x.data, 1);
  }

  void solve_col_major(void* b, void* x, int64_t k) {
    cudssMatrix_t bm = nullptr, xm = nullptr;
    DeviceGuard guard(device_);
    GPULA_CHECK(kOp, cudssMatrixCreateDn(&bm, n_, k, n_, b, gpula::detail::cuda::data_type(dtype_),
                                         CUDSS_LAYOUT_COL_MAJOR));
    try {
      GPULA_CHECK(kOp,
                  cudssMatrixCreateDn(&xm, n_, k, n_, x, gpula::detail::cuda::data_type(dtype_),
                                      CUDSS_LAYOUT_COL_MAJOR));
      execute(CUDSS_PHASE_SOLVE, xm, bm);
    } catch (...) {
      if (xm) static_cast<void>(cudssMatrixDestroy(xm));
      static_cast<void>(cudssMatrixDestroy(bm));
      throw;
    }
    static_cast<void>(cudssMatrixDestroy(xm));
    static_cast<void>(cudssMatrixDestroy(bm));
  }

 private:
  void execute(int phase, cudssMatrix_t solution, cudssMatrix_t rhs) {
    DeviceGuard guard(device_);
    GPULA_CHECK(kOp, cudssSetStream(handle_, stream_));
    GPULA_CHECK(kOp, cudssExecute(handle_, phase, config_, data_, a_, solution, rhs));
    GPULA_CHECK(kOp, cudaStreamSynchronize(stream_));
  }

  int device_;
  int64_t n_, nnz_;
  DType dtype_, index_dtype_;
  cudaStream_t stream_;
  cudssHandle_t handle_ = nullptr;
  cudssConfig_t config_ = nullptr;
  cudssData_t data_ = nullptr;
  cudssMatrix_t a_ = nullptr;
  void *indptr_ = nullptr, *indices_ = nullptr, *values_ = nullptr;
  bool factorized_once_ = false;
};

}  // namespace

std::unique_ptr<DirectBackend> make_direct_backend(const CsrView& a,
                                                   const DirectSolverOptions& options,
                                                   Stream stream) {
  return std::make_unique<CudssBackend>(a, options, stream);
}

}  // namespace gpula::sparse::detail::cuda
