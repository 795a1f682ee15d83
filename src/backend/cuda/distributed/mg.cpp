// cusolverMg backend of gpula::distributed: one host matrix spread over several GPUs of one node
// in a 1-D block-cyclic column distribution (a 1 x G device grid, column-major mapping, row
// blocks of the whole height), as cusolverMg requires. Column block j of the host column-major
// matrix lives on device j % G at local column (j / G) * block; each device's piece is n rows
// with leading dimension n, so one block is one contiguous copy. Workspaces are sized by the
// *_bufferSize calls (elements of the data type, per device). cusolverMg is synchronous with
// respect to the host; info is returned on the host. The API is marked deprecated in CUDA 13
// (it is still shipped and the only multi-GPU solver in the toolkit).
#define DISABLE_CUSOLVERMG_DEPRECATED
#include <cusolverMg.h>
#include <gpula/distributed.h>
#include <gpula/error.h>

#include <algorithm>
#include <climits>
#include <vector>

#include "backend/cuda/base/check.h"
#include "backend/cuda/base/types.h"
#include "core/format.h"
#include "distributed/mg_backend.h"

namespace gpula::detail::cuda {
namespace {

int to_int(const MgCall& c, int64_t v, const char* what) {
  if (v > INT_MAX)
    throw_error<NotSupported>(c.op, what, " ", v, " exceeds cusolverMg's 32-bit limit");
  return static_cast<int>(v);
}

// Restores the caller's current device.
struct DeviceGuard {
  int saved = 0;
  DeviceGuard() { GPULA_CHECK("distributed", cudaGetDevice(&saved)); }
  ~DeviceGuard() { GPULA_CHECK_NOTHROW(cudaSetDevice(saved)); }
};

std::vector<int> resolve_devices(const MgCall& c) {
  int count = 0;
  GPULA_CHECK(c.op, cudaGetDeviceCount(&count));
  std::vector<int> d = c.devices;
  if (d.empty())
    for (int i = 0; i < count; ++i) d.push_back(i);
  if (d.empty()) throw_error<Error>(c.op, "no CUDA device is visible");
  for (int x : d)
    if (x >= count)
      throw_error<InvalidArgument>(c.op, "devices expected ordinals below ", count, ", got ", x);
  return d;
}

// cusolverMg reads peer devices' memory directly.
void enable_peer_access(const MgCall& c, const std::vector<int>& d) {
  for (int i : d) {
    GPULA_CHECK(c.op, cudaSetDevice(i));
    for (int j : d) {
      if (i == j) continue;
      int can = 0;
      GPULA_CHECK(c.op, cudaDeviceCanAccessPeer(&can, i, j));
      if (!can) continue;
      const cudaError_t e = cudaDeviceEnablePeerAccess(j, 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled)
        static_cast<void>(cudaGetLastError());  // clear the sticky-free error
      else
        GPULA_CHECK(c.op, e);
    }
  }
}

// Waits for every device, then makes the first one current (cusolverMg is called from there).
void sync_all(const MgCall& c, const std::vector<int>& d) {
  for (int i : d) {
    GPULA_CHECK(c.op, cudaSetDevice(i));
    GPULA_CHECK(c.op, cudaDeviceSynchronize());
  }
  GPULA_CHECK(c.op, cudaSetDevice(d.front()));
}

// The handle, grid and descriptors of one call, destroyed on every path.
struct MgSession {
  cusolverMgHandle_t handle = nullptr;
  cudaLibMgGrid_t grid = nullptr;
  std::vector<cudaLibMgMatrixDesc_t> descs;
  ~MgSession() {
    for (auto d : descs) GPULA_CHECK_NOTHROW(cusolverMgDestroyMatrixDesc(d));
    if (grid) GPULA_CHECK_NOTHROW(cusolverMgDestroyGrid(grid));
    if (handle) GPULA_CHECK_NOTHROW(cusolverMgDestroy(handle));
  }
};

// One allocation per device, freed on every path.
struct PerDevice {
  std::vector<int> devices;
  std::vector<void*> ptrs;
  PerDevice(const MgCall& c, const std::vector<int>& d, const std::vector<std::size_t>& bytes)
      : devices(d), ptrs(d.size(), nullptr) {
    for (std::size_t i = 0; i < d.size(); ++i) {
      GPULA_CHECK(c.op, cudaSetDevice(d[i]));
      const cudaError_t e = cudaMalloc(&ptrs[i], std::max<std::size_t>(bytes[i], 1));
      if (e == cudaErrorMemoryAllocation) {
        static_cast<void>(cudaGetLastError());
        throw_error<OutOfMemory>(c.op, "could not allocate ", bytes[i], " bytes on cuda:", d[i]);
      }
      GPULA_CHECK(c.op, e);
    }
    GPULA_CHECK(c.op, cudaSetDevice(d.front()));  // cusolverMg is called from the first device
  }
  ~PerDevice() {
    for (std::size_t i = 0; i < ptrs.size(); ++i) {
      if (!ptrs[i]) continue;
      GPULA_CHECK_NOTHROW(cudaSetDevice(devices[i]));
      GPULA_CHECK_NOTHROW(cudaFree(ptrs[i]));
    }
  }
};

// A distributed n x ncols matrix: its descriptor and the per-device pieces.
struct MgMatrix {
  cudaLibMgMatrixDesc_t desc = nullptr;
  PerDevice pieces;
};

struct Setup {
  const MgCall& c;
  DType t;
  std::vector<int> devices;
  int64_t block;
  MgSession s;
  DeviceGuard guard;

  Setup(const MgCall& call, DType dtype) : c(call), t(dtype), devices(resolve_devices(call)) {
    block = call.block_size;
    enable_peer_access(c, devices);
    GPULA_CHECK(c.op, cudaSetDevice(devices.front()));
    GPULA_CHECK(c.op, cusolverMgCreate(&s.handle));
    GPULA_CHECK(c.op,
                cusolverMgDeviceSelect(s.handle, static_cast<int>(devices.size()), devices.data()));
    const std::vector<int32_t> ids(devices.begin(), devices.end());
    GPULA_CHECK(c.op, cusolverMgCreateDeviceGrid(&s.grid, 1, static_cast<int32_t>(ids.size()),
                                                 ids.data(), CUDALIBMG_GRID_MAPPING_COL_MAJOR));
  }
  int g() const { return static_cast<int>(devices.size()); }
  int64_t local_cols(int64_t ncols, int i) const {
    return distributed::numroc(ncols, block, i, 0, g());
  }
  std::vector<std::size_t> piece_bytes(int64_t rows, int64_t ncols, std::size_t es) const {
    std::vector<std::size_t> b;
    for (int i = 0; i < g(); ++i)
      b.push_back(static_cast<std::size_t>(rows * local_cols(ncols, i)) * es);
    return b;
  }
  // The descriptor and device pieces of an n x ncols matrix, filled from host (column-major).
  MgMatrix distribute(int64_t n, int64_t ncols, const void* host) {
    cudaLibMgMatrixDesc_t d = nullptr;
    GPULA_CHECK(c.op, cusolverMgCreateMatrixDesc(&d, n, ncols, n, block, data_type(t), s.grid));
    s.descs.push_back(d);
    MgMatrix m{d, PerDevice(c, devices, piece_bytes(n, ncols, size_of(t)))};
    copy_blocks(m, n, ncols, const_cast<void*>(host), true);
    return m;
  }
  // Host column block j <-> device j % G, local column (j / G) * block.
  void copy_blocks(MgMatrix& m, int64_t n, int64_t ncols, void* host, bool to_device) {
    const std::size_t es = size_of(t);
    for (int64_t j0 = 0, jb = 0; j0 < ncols; j0 += block, ++jb) {
      const int i = static_cast<int>(jb % g());
      const int64_t width = std::min(block, ncols - j0);
      const int64_t lcol = (jb / g()) * block;
      char* h = static_cast<char*>(host) + static_cast<std::size_t>(j0 * n) * es;
      char* dptr = static_cast<char*>(m.pieces.ptrs[i]) + static_cast<std::size_t>(lcol * n) * es;
      const std::size_t bytes = static_cast<std::size_t>(width * n) * es;
      GPULA_CHECK(c.op, cudaSetDevice(devices[i]));
      if (to_device)
        GPULA_CHECK(c.op, cudaMemcpy(dptr, h, bytes, cudaMemcpyHostToDevice));
      else
        GPULA_CHECK(c.op, cudaMemcpy(h, dptr, bytes, cudaMemcpyDeviceToHost));
    }
    GPULA_CHECK(c.op, cudaSetDevice(devices.front()));
  }
  PerDevice workspace(int64_t lwork) {
    return PerDevice(
        c, devices,
        std::vector<std::size_t>(devices.size(), static_cast<std::size_t>(lwork) * size_of(t)));
  }
};

// cusolverMg's potrf, potrs and syevd support the lower triangle only.
constexpr cublasFillMode_t kLower = CUBLAS_FILL_MODE_LOWER;

}  // namespace

void mg_potrf(const MgCall& c, DType t, int64_t n, void* a, int* info) {
  Setup x(c, t);
  const int ni = to_int(c, n, "n");
  MgMatrix ma = x.distribute(n, n, a);
  int64_t lwork = 0;
  GPULA_CHECK(c.op, cusolverMgPotrf_bufferSize(x.s.handle, kLower, ni, ma.pieces.ptrs.data(), 1, 1,
                                               ma.desc, data_type(t), &lwork));
  PerDevice work = x.workspace(lwork);
  sync_all(c, x.devices);
  GPULA_CHECK(c.op, cusolverMgPotrf(x.s.handle, kLower, ni, ma.pieces.ptrs.data(), 1, 1, ma.desc,
                                    data_type(t), work.ptrs.data(), lwork, info));
  sync_all(c, x.devices);
  x.copy_blocks(ma, n, n, a, false);
}

void mg_potrf_potrs(const MgCall& c, DType t, int64_t n, int64_t k, void* a, void* b, int* info) {
  Setup x(c, t);
  const int ni = to_int(c, n, "n"), ki = to_int(c, k, "nrhs");
  MgMatrix ma = x.distribute(n, n, a);
  MgMatrix mb = x.distribute(n, k, b);
  int64_t lw_f = 0, lw_s = 0;
  GPULA_CHECK(c.op, cusolverMgPotrf_bufferSize(x.s.handle, kLower, ni, ma.pieces.ptrs.data(), 1, 1,
                                               ma.desc, data_type(t), &lw_f));
  GPULA_CHECK(c.op, cusolverMgPotrs_bufferSize(x.s.handle, kLower, ni, ki, ma.pieces.ptrs.data(), 1,
                                               1, ma.desc, mb.pieces.ptrs.data(), 1, 1, mb.desc,
                                               data_type(t), &lw_s));
  const int64_t lwork = std::max(lw_f, lw_s);
  PerDevice work = x.workspace(lwork);
  sync_all(c, x.devices);
  GPULA_CHECK(c.op, cusolverMgPotrf(x.s.handle, kLower, ni, ma.pieces.ptrs.data(), 1, 1, ma.desc,
                                    data_type(t), work.ptrs.data(), lwork, info));
  sync_all(c, x.devices);
  if (*info != 0) return;
  GPULA_CHECK(c.op, cusolverMgPotrs(x.s.handle, kLower, ni, ki, ma.pieces.ptrs.data(), 1, 1,
                                    ma.desc, mb.pieces.ptrs.data(), 1, 1, mb.desc, data_type(t),
                                    work.ptrs.data(), lwork, info));
  sync_all(c, x.devices);
  x.copy_blocks(mb, n, k, b, false);
}

void mg_getrf_getrs(const MgCall& c, DType t, int64_t n, int64_t k, void* a, void* b, int* info) {
  Setup x(c, t);
  const int ni = to_int(c, n, "n"), ki = to_int(c, k, "nrhs");
  MgMatrix ma = x.distribute(n, n, a);
  MgMatrix mb = x.distribute(n, k, b);
  // Pivots are distributed as a's columns: numroc(n, block, i, 0, G) int32 per device.
  std::vector<std::size_t> ipiv_bytes;
  for (int i = 0; i < x.g(); ++i)
    ipiv_bytes.push_back(static_cast<std::size_t>(x.local_cols(n, i)) * sizeof(int));
  PerDevice ipiv(c, x.devices, ipiv_bytes);
  std::vector<int*> ipiv_ptrs;
  for (void* p : ipiv.ptrs) ipiv_ptrs.push_back(static_cast<int*>(p));
  int64_t lw_f = 0, lw_s = 0;
  GPULA_CHECK(c.op, cusolverMgGetrf_bufferSize(x.s.handle, ni, ni, ma.pieces.ptrs.data(), 1, 1,
                                               ma.desc, ipiv_ptrs.data(), data_type(t), &lw_f));
  GPULA_CHECK(
      c.op, cusolverMgGetrs_bufferSize(x.s.handle, CUBLAS_OP_N, ni, ki, ma.pieces.ptrs.data(), 1, 1,
                                       ma.desc, ipiv_ptrs.data(), mb.pieces.ptrs.data(), 1, 1,
                                       mb.desc, data_type(t), &lw_s));
  const int64_t lwork = std::max(lw_f, lw_s);
  PerDevice work = x.workspace(lwork);
  sync_all(c, x.devices);
  GPULA_CHECK(c.op, cusolverMgGetrf(x.s.handle, ni, ni, ma.pieces.ptrs.data(), 1, 1, ma.desc,
                                    ipiv_ptrs.data(), data_type(t), work.ptrs.data(), lwork, info));
  sync_all(c, x.devices);
  if (*info != 0) return;
  GPULA_CHECK(c.op, cusolverMgGetrs(x.s.handle, CUBLAS_OP_N, ni, ki, ma.pieces.ptrs.data(), 1, 1,
                                    ma.desc, ipiv_ptrs.data(), mb.pieces.ptrs.data(), 1, 1, mb.desc,
                                    data_type(t), work.ptrs.data(), lwork, info));
  sync_all(c, x.devices);
  x.copy_blocks(mb, n, k, b, false);
}

void mg_syevd(const MgCall& c, DType t, int64_t n, void* a, void* w, bool vectors, int* info) {
  Setup x(c, t);
  const int ni = to_int(c, n, "n");
  MgMatrix ma = x.distribute(n, n, a);
  const cusolverEigMode_t jobz = vectors ? CUSOLVER_EIG_MODE_VECTOR : CUSOLVER_EIG_MODE_NOVECTOR;
  int64_t lwork = 0;
  // cusolverMgSyevd supports the lower triangle only (the front stages a^T for upper).
  GPULA_CHECK(c.op, cusolverMgSyevd_bufferSize(x.s.handle, jobz, CUBLAS_FILL_MODE_LOWER, ni,
                                               ma.pieces.ptrs.data(), 1, 1, ma.desc, w,
                                               data_type(t), data_type(t), &lwork));
  PerDevice work = x.workspace(lwork);
  sync_all(c, x.devices);
  GPULA_CHECK(c.op, cusolverMgSyevd(x.s.handle, jobz, CUBLAS_FILL_MODE_LOWER, ni,
                                    ma.pieces.ptrs.data(), 1, 1, ma.desc, w, data_type(t),
                                    data_type(t), work.ptrs.data(), lwork, info));
  sync_all(c, x.devices);
  if (vectors) x.copy_blocks(ma, n, n, a, false);
}

}  // namespace gpula::detail::cuda
