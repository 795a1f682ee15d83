// Multi-process backend of gpula::distributed, part 1: the Communicator (NCCL + the cuSOLVERMp /
// cuBLASMp handles on one stream) and the cuSOLVERMp solvers (potrf, potrs, getrf, getrs,
// syevd) on the caller's local pieces (2-D block-cyclic, column-major, whole-matrix offsets
// IA = JA = 1). Workspaces are sized by each *_bufferSize call (bytes, device and host); plain
// cudaMalloc memory is accepted by cuSOLVERMp. info lives in device memory and is copied back
// after the stream is synchronized. cusolverMpGetrs / cusolverMpPotrs take one right-hand side
// per call in this version (0.9), so k columns are k calls on the column offset JB = j + 1.
#include <gpula/error.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "backend/cuda/distributed/mp_comm.h"
#include "core/format.h"

namespace gpula::detail::cuda {

void throw_nccl(ncclResult_t status, const char* op, const char* call) {
  throw NcclError(cat("[", op, "] ", call, " failed: ", ncclGetErrorString(status)),
                  static_cast<int>(status), ncclGetErrorString(status));
}

namespace {
const char* cublasmp_status_name(cublasMpStatus_t s) {
  switch (s) {
    case CUBLASMP_STATUS_SUCCESS: return "CUBLASMP_STATUS_SUCCESS";
    case CUBLASMP_STATUS_NOT_INITIALIZED: return "CUBLASMP_STATUS_NOT_INITIALIZED";
    case CUBLASMP_STATUS_ALLOCATION_FAILED: return "CUBLASMP_STATUS_ALLOCATION_FAILED";
    case CUBLASMP_STATUS_INVALID_VALUE: return "CUBLASMP_STATUS_INVALID_VALUE";
    case CUBLASMP_STATUS_ARCHITECTURE_MISMATCH: return "CUBLASMP_STATUS_ARCHITECTURE_MISMATCH";
    case CUBLASMP_STATUS_EXECUTION_FAILED: return "CUBLASMP_STATUS_EXECUTION_FAILED";
    case CUBLASMP_STATUS_INTERNAL_ERROR: return "CUBLASMP_STATUS_INTERNAL_ERROR";
    case CUBLASMP_STATUS_NOT_SUPPORTED: return "CUBLASMP_STATUS_NOT_SUPPORTED";
  }
  return "CUBLASMP_STATUS_UNKNOWN";
}
}  // namespace

void throw_cublasmp(cublasMpStatus_t status, const char* op, const char* call) {
  const std::string msg = cat("[", op, "] ", call, " failed: ", cublasmp_status_name(status));
  if (status == CUBLASMP_STATUS_ALLOCATION_FAILED) throw OutOfMemory(msg);
  throw CublasMpError(msg, static_cast<int>(status), cublasmp_status_name(status));
}

}  // namespace gpula::detail::cuda

namespace gpula::detail::mp {

using distributed::numroc;

Call::Call(const distributed::Communicator& comm, const char* o)
    : c(*comm.impl()), op(o), lock_(comm.impl()->mutex) {
  GPULA_CHECK(op, cudaGetDevice(&saved_device_));
  GPULA_CHECK(op, cudaSetDevice(c.device));
  GPULA_CHECK(op, cudaDeviceSynchronize());
}

Call::~Call() { GPULA_CHECK_NOTHROW(cudaSetDevice(saved_device_)); }

void Call::sync() { GPULA_CHECK(op, cudaStreamSynchronize(c.stream)); }

DeviceBuffer::DeviceBuffer(const char* op, std::size_t bytes) {
  const cudaError_t e = cudaMalloc(&p_, std::max<std::size_t>(bytes, 1));
  if (e == cudaErrorMemoryAllocation) {
    static_cast<void>(cudaGetLastError());
    throw_error<OutOfMemory>(op, "could not allocate ", bytes, " bytes of workspace");
  }
  GPULA_CHECK(op, e);
}

DeviceBuffer::~DeviceBuffer() {
  if (p_) GPULA_CHECK_NOTHROW(cudaFree(p_));
}

}  // namespace gpula::detail::mp

// ----- the communicator -----

gpula::distributed::Communicator::Impl::~Impl() {
  int saved = 0;
  GPULA_CHECK_NOTHROW(cudaGetDevice(&saved));
  GPULA_CHECK_NOTHROW(cudaSetDevice(device));
  if (stream) GPULA_CHECK_NOTHROW(cudaStreamSynchronize(stream));
  for (auto& [k, g] : solver_grids) GPULA_CHECK_NOTHROW(cusolverMpDestroyGrid(g));
  for (auto& [k, g] : blas_grids) GPULA_CHECK_NOTHROW(cublasMpGridDestroy(g));
  if (solver) GPULA_CHECK_NOTHROW(cusolverMpDestroy(solver));
  if (blas) GPULA_CHECK_NOTHROW(cublasMpDestroy(blas));
  if (nccl) GPULA_CHECK_NOTHROW(ncclCommDestroy(nccl));
  if (stream) GPULA_CHECK_NOTHROW(cudaStreamDestroy(stream));
  GPULA_CHECK_NOTHROW(cudaSetDevice(saved));
}

cusolverMpHandle_t gpula::distributed::Communicator::Impl::solver_handle(const char* op) {
  if (!solver) GPULA_CHECK(op, cusolverMpCreate(&solver, device, stream));
  return solver;
}

cublasMpHandle_t gpula::distributed::Communicator::Impl::blas_handle(const char* op) {
  if (!blas) GPULA_CHECK(op, cublasMpCreate(&blas, stream));
  return blas;
}

cusolverMpGrid_t gpula::distributed::Communicator::Impl::solver_grid(const char* op,
                                                                    int64_t nprow,
                                                                    int64_t npcol) {
  auto it = solver_grids.find({nprow, npcol});
  if (it != solver_grids.end()) return it->second;
  cusolverMpGrid_t g = nullptr;
  GPULA_CHECK(op, cusolverMpCreateDeviceGrid(
                      solver_handle(op), &g, nccl, static_cast<int32_t>(nprow),
                      static_cast<int32_t>(npcol), CUSOLVERMP_GRID_MAPPING_COL_MAJOR));
  solver_grids[{nprow, npcol}] = g;
  return g;
}

cublasMpGrid_t gpula::distributed::Communicator::Impl::blas_grid(const char* op, int64_t nprow,
                                                                int64_t npcol) {
  auto it = blas_grids.find({nprow, npcol});
  if (it != blas_grids.end()) return it->second;
  blas_handle(op);
  cublasMpGrid_t g = nullptr;
  GPULA_CHECK(op, cublasMpGridCreate(nprow, npcol, CUBLASMP_GRID_LAYOUT_COL_MAJOR, nccl, &g));
  blas_grids[{nprow, npcol}] = g;
  return g;
}

namespace gpula::detail::mp {

static_assert(sizeof(ncclUniqueId) == sizeof(Communicator::UniqueId));

bool available() { return true; }

Communicator::UniqueId unique_id() {
  ncclUniqueId id;
  GPULA_CHECK("distributed.Communicator.unique_id", ncclGetUniqueId(&id));
  Communicator::UniqueId out{};
  std::memcpy(out.data(), &id, sizeof id);
  return out;
}

std::shared_ptr<Communicator::Impl> create(int rank, int size, const Communicator::UniqueId& id,
                                           int device) {
  const char* op = "distributed.Communicator.create";
  int count = 0;
  GPULA_CHECK(op, cudaGetDeviceCount(&count));
  if (device >= count)
    throw_error<InvalidArgument>(op, "device expected an ordinal below ", count, ", got ", device);
  int saved = 0;
  GPULA_CHECK(op, cudaGetDevice(&saved));
  struct Restore {
    int d;
    ~Restore() { GPULA_CHECK_NOTHROW(cudaSetDevice(d)); }
  } restore{saved};
  GPULA_CHECK(op, cudaSetDevice(device));
  auto impl = std::make_shared<Communicator::Impl>();
  impl->rank = rank;
  impl->size = size;
  impl->device = device;
  GPULA_CHECK(op, cudaStreamCreateWithFlags(&impl->stream, cudaStreamNonBlocking));
  ncclUniqueId uid;
  std::memcpy(&uid, id.data(), sizeof uid);
  GPULA_CHECK(op, ncclCommInitRank(&impl->nccl, size, uid, rank));
  return impl;
}

// ----- cuSOLVERMp -----

namespace {

struct Desc {
  cusolverMpMatrixDescriptor_t d = nullptr;
  Desc(const char* op, cusolverMpGrid_t grid, DType t, const BlockCyclic& l, int64_t ld) {
    GPULA_CHECK(op, cusolverMpCreateMatrixDesc(&d, grid, cuda::data_type(t), l.m, l.n, l.mb, l.nb,
                                               0, 0, ld));
  }
  ~Desc() {
    if (d) GPULA_CHECK_NOTHROW(cusolverMpDestroyMatrixDesc(d));
  }
  Desc(const Desc&) = delete;
  Desc& operator=(const Desc&) = delete;
};

// A device int for info, zeroed; read() waits for the stream and returns it.
struct DeviceInfo {
  DeviceBuffer buf;
  Call& x;
  explicit DeviceInfo(Call& call) : buf(call.op, sizeof(int)), x(call) {
    GPULA_CHECK(x.op, cudaMemsetAsync(buf.get(), 0, sizeof(int), x.c.stream));
  }
  int* get() const { return static_cast<int*>(buf.get()); }
  int read() {
    int h = 0;
    GPULA_CHECK(x.op,
                cudaMemcpyAsync(&h, buf.get(), sizeof(int), cudaMemcpyDeviceToHost, x.c.stream));
    x.sync();
    return h;
  }
};

// Device and host workspaces of the largest of the sizes asked for.
struct Workspace {
  std::size_t device_bytes = 0, host_bytes = 0;
  void need(std::size_t d, std::size_t h) {
    device_bytes = std::max(device_bytes, d);
    host_bytes = std::max(host_bytes, h);
  }
};

cublasFillMode_t fill(bool lower) { return lower ? CUBLAS_FILL_MODE_LOWER : CUBLAS_FILL_MODE_UPPER; }

}  // namespace

void potrf(const Communicator& comm, DType t, bool lower, const BlockCyclic& da, Local a,
           int* info) {
  Call x(comm, "distributed.cholesky");
  cusolverMpHandle_t h = x.c.solver_handle(x.op);
  Desc d(x.op, x.c.solver_grid(x.op, da.nprow, da.npcol), t, da, a.ld);
  std::size_t dws = 0, hws = 0;
  GPULA_CHECK(x.op, cusolverMpPotrf_bufferSize(h, fill(lower), da.n, a.data, 1, 1, d.d,
                                               cuda::data_type(t), &dws, &hws));
  DeviceBuffer work(x.op, dws);
  std::vector<char> hwork(std::max<std::size_t>(hws, 1));
  DeviceInfo di(x);
  GPULA_CHECK(x.op, cusolverMpPotrf(h, fill(lower), da.n, a.data, 1, 1, d.d, cuda::data_type(t),
                                    work.get(), dws, hwork.data(), hws, di.get()));
  *info = di.read();
}

void potrf_potrs(const Communicator& comm, DType t, bool lower, const BlockCyclic& da, Local a,
                 const BlockCyclic& db, Local b, int* info_potrf) {
  Call x(comm, "distributed.solve");
  cusolverMpHandle_t h = x.c.solver_handle(x.op);
  cusolverMpGrid_t grid = x.c.solver_grid(x.op, da.nprow, da.npcol);
  Desc dA(x.op, grid, t, da, a.ld), dB(x.op, grid, t, db, b.ld);
  const cudaDataType ct = cuda::data_type(t);
  Workspace ws;
  std::size_t dws = 0, hws = 0;
  GPULA_CHECK(x.op,
              cusolverMpPotrf_bufferSize(h, fill(lower), da.n, a.data, 1, 1, dA.d, ct, &dws, &hws));
  ws.need(dws, hws);
  for (int64_t j = 0; j < db.n; ++j) {
    GPULA_CHECK(x.op, cusolverMpPotrs_bufferSize(h, fill(lower), da.n, 1, a.data, 1, 1, dA.d,
                                                 b.data, 1, j + 1, dB.d, ct, &dws, &hws));
    ws.need(dws, hws);
  }
  DeviceBuffer work(x.op, ws.device_bytes);
  std::vector<char> hwork(std::max<std::size_t>(ws.host_bytes, 1));
  DeviceInfo di(x);
  GPULA_CHECK(x.op, cusolverMpPotrf(h, fill(lower), da.n, a.data, 1, 1, dA.d, ct, work.get(),
                                    ws.device_bytes, hwork.data(), ws.host_bytes, di.get()));
  *info_potrf = di.read();
  if (*info_potrf != 0) return;
  for (int64_t j = 0; j < db.n; ++j) {
    GPULA_CHECK(x.op, cusolverMpPotrs(h, fill(lower), da.n, 1, a.data, 1, 1, dA.d, b.data, 1, j + 1,
                                      dB.d, ct, work.get(), ws.device_bytes, hwork.data(),
                                      ws.host_bytes, di.get()));
  }
  const int info_potrs = di.read();
  if (info_potrs < 0)
    throw_error<Error>(x.op, "cusolverMpPotrs rejected argument ", -info_potrs);
}

void getrf_getrs(const Communicator& comm, DType t, const BlockCyclic& da, Local a,
                 const BlockCyclic& db, Local b, int* info_getrf) {
  Call x(comm, "distributed.solve");
  cusolverMpHandle_t h = x.c.solver_handle(x.op);
  cusolverMpGrid_t grid = x.c.solver_grid(x.op, da.nprow, da.npcol);
  Desc dA(x.op, grid, t, da, a.ld), dB(x.op, grid, t, db, b.ld);
  const cudaDataType ct = cuda::data_type(t);
  // Pivots are distributed as a's columns (ScaLAPACK: ipiv overlaps a's first row): this
  // process column's count of int64.
  const int64_t pcol = x.c.rank / da.nprow;
  DeviceBuffer ipiv(x.op, static_cast<std::size_t>(numroc(da.n, da.nb, pcol, 0, da.npcol)) *
                              sizeof(int64_t));
  auto* piv = static_cast<int64_t*>(ipiv.get());
  Workspace ws;
  std::size_t dws = 0, hws = 0;
  GPULA_CHECK(x.op,
              cusolverMpGetrf_bufferSize(h, da.n, da.n, a.data, 1, 1, dA.d, piv, ct, &dws, &hws));
  ws.need(dws, hws);
  for (int64_t j = 0; j < db.n; ++j) {
    GPULA_CHECK(x.op, cusolverMpGetrs_bufferSize(h, CUBLAS_OP_N, da.n, 1, a.data, 1, 1, dA.d, piv,
                                                 b.data, 1, j + 1, dB.d, ct, &dws, &hws));
    ws.need(dws, hws);
  }
  DeviceBuffer work(x.op, ws.device_bytes);
  std::vector<char> hwork(std::max<std::size_t>(ws.host_bytes, 1));
  DeviceInfo di(x);
  GPULA_CHECK(x.op, cusolverMpGetrf(h, da.n, da.n, a.data, 1, 1, dA.d, piv, ct, work.get(),
                                    ws.device_bytes, hwork.data(), ws.host_bytes, di.get()));
  *info_getrf = di.read();
  if (*info_getrf != 0) return;
  for (int64_t j = 0; j < db.n; ++j) {
    GPULA_CHECK(x.op, cusolverMpGetrs(h, CUBLAS_OP_N, da.n, 1, a.data, 1, 1, dA.d, piv, b.data, 1,
                                      j + 1, dB.d, ct, work.get(), ws.device_bytes, hwork.data(),
                                      ws.host_bytes, di.get()));
  }
  const int info_getrs = di.read();
  if (info_getrs < 0)
    throw_error<Error>(x.op, "cusolverMpGetrs rejected argument ", -info_getrs);
}

void syevd(const Communicator& comm, DType t, const BlockCyclic& da, Local a, void* w, Local q,
           int* info) {
  Call x(comm, "distributed.eigh");
  cusolverMpHandle_t h = x.c.solver_handle(x.op);
  cusolverMpGrid_t grid = x.c.solver_grid(x.op, da.nprow, da.npcol);
  Desc dA(x.op, grid, t, da, a.ld);
  const bool vectors = q.data != nullptr;
  // jobz 'V' needs Q laid out as A (same grid, blocks, source).
  Desc dQ(x.op, grid, t, da, vectors ? q.ld : a.ld);
  char jobz = vectors ? 'V' : 'N';
  const cudaDataType ct = cuda::data_type(t);
  std::size_t dws = 0, hws = 0;
  GPULA_CHECK(x.op, cusolverMpSyevd_bufferSize(h, &jobz, CUBLAS_FILL_MODE_LOWER, da.n, a.data, 1, 1,
                                               dA.d, w, q.data, 1, 1, dQ.d, ct, &dws, &hws));
  DeviceBuffer work(x.op, dws);
  std::vector<char> hwork(std::max<std::size_t>(hws, 1));
  DeviceInfo di(x);
  GPULA_CHECK(x.op,
              cusolverMpSyevd(h, &jobz, CUBLAS_FILL_MODE_LOWER, da.n, a.data, 1, 1, dA.d, w, q.data,
                              1, 1, dQ.d, ct, work.get(), dws, hwork.data(), hws, di.get()));
  *info = di.read();
}

}  // namespace gpula::detail::mp
