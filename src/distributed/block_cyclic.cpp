// Block-cyclic distribution helpers (ScaLAPACK conventions, 0-based). Host only: the index
// maps and the scatter/gather between a global matrix and one process's local piece.
#include <gpula/distributed.h>
#include <gpula/error.h>

#include <algorithm>
#include <cstring>

#include "core/format.h"

namespace gpula::distributed {

using detail::throw_error;

namespace {

// How far process iproc lies after the source isrcproc, going round nprocs (no overflow for any
// 0 <= iproc, isrcproc < nprocs).
int64_t distance(int64_t iproc, int64_t isrcproc, int64_t nprocs) {
  return iproc >= isrcproc ? iproc - isrcproc : nprocs - (isrcproc - iproc);
}

}  // namespace

int64_t numroc(int64_t n, int64_t nb, int64_t iproc, int64_t isrcproc, int64_t nprocs) {
  if (n < 0 || nb < 1 || nprocs < 1 || iproc < 0 || iproc >= nprocs || isrcproc < 0 ||
      isrcproc >= nprocs)
    throw_error<InvalidArgument>("distributed.numroc",
                                 "expected n >= 0, nb >= 1, nprocs >= 1 and "
                                 "0 <= iproc, isrcproc < nprocs, got n=",
                                 n, " nb=", nb, " iproc=", iproc, " isrcproc=", isrcproc,
                                 " nprocs=", nprocs);
  const int64_t mydist = distance(iproc, isrcproc, nprocs);
  const int64_t nblocks = n / nb;
  int64_t count = (nblocks / nprocs) * nb;
  const int64_t extra = nblocks % nprocs;
  if (mydist < extra)
    count += nb;
  else if (mydist == extra)
    count += n % nb;
  return count;
}

int64_t owner(int64_t g, int64_t nb, int64_t isrcproc, int64_t nprocs) {
  if (g < 0 || nb < 1 || nprocs < 1 || isrcproc < 0 || isrcproc >= nprocs)
    throw_error<InvalidArgument>("distributed.owner",
                                 "expected g >= 0, nb >= 1 and 0 <= isrcproc "
                                 "< nprocs, got g=",
                                 g, " nb=", nb, " isrcproc=", isrcproc, " nprocs=", nprocs);
  const int64_t steps = (g / nb) % nprocs;  // blocks past the source, round the grid
  return steps >= nprocs - isrcproc ? steps - (nprocs - isrcproc) : steps + isrcproc;
}

int64_t global_to_local(int64_t g, int64_t nb, int64_t nprocs) {
  if (g < 0 || nb < 1 || nprocs < 1)
    throw_error<InvalidArgument>("distributed.global_to_local",
                                 "expected g >= 0, nb >= 1, "
                                 "nprocs >= 1, got g=",
                                 g, " nb=", nb, " nprocs=", nprocs);
  return (g / nb / nprocs) * nb + g % nb;  // g / (nb * nprocs) without forming the product
}

int64_t local_to_global(int64_t l, int64_t nb, int64_t iproc, int64_t isrcproc, int64_t nprocs) {
  if (l < 0 || nb < 1 || nprocs < 1 || iproc < 0 || iproc >= nprocs || isrcproc < 0 ||
      isrcproc >= nprocs)
    throw_error<InvalidArgument>("distributed.local_to_global",
                                 "expected l >= 0, nb >= 1 and "
                                 "0 <= iproc, isrcproc < nprocs, got l=",
                                 l, " nb=", nb, " iproc=", iproc, " isrcproc=", isrcproc,
                                 " nprocs=", nprocs);
  // ((l / nb) * nprocs + distance) * nb + l % nb, which may pass int64 for huge l or nprocs.
  int64_t g = 0;
  if (__builtin_mul_overflow(l / nb, nprocs, &g) ||
      __builtin_add_overflow(g, distance(iproc, isrcproc, nprocs), &g) ||
      __builtin_mul_overflow(g, nb, &g) || __builtin_add_overflow(g, l % nb, &g))
    throw_error<InvalidArgument>("distributed.local_to_global",
                                 "the global index overflows int64, got l=", l, " nb=", nb,
                                 " iproc=", iproc, " isrcproc=", isrcproc, " nprocs=", nprocs);
  return g;
}

void check_layout(const char* op, const BlockCyclic& d) {
  if (d.m < 0 || d.n < 0 || d.mb < 1 || d.nb < 1 || d.nprow < 1 || d.npcol < 1 || d.rsrc < 0 ||
      d.rsrc >= d.nprow || d.csrc < 0 || d.csrc >= d.npcol)
    throw_error<InvalidArgument>(op,
                                 "layout expected m, n >= 0, mb, nb >= 1, a grid of at least "
                                 "1x1 and its source inside the grid, got m=",
                                 d.m, " n=", d.n, " mb=", d.mb, " nb=", d.nb, " grid=", d.nprow,
                                 "x", d.npcol, " source=(", d.rsrc, ", ", d.csrc, ")");
}

namespace {

void check_process(const char* op, const BlockCyclic& d, int64_t prow, int64_t pcol) {
  check_layout(op, d);
  if (prow < 0 || prow >= d.nprow || pcol < 0 || pcol >= d.npcol)
    throw_error<InvalidArgument>(op, "process expected inside the ", d.nprow, "x", d.npcol,
                                 " grid, got (", prow, ", ", pcol, ")");
}

void check_pair(const char* op, const TensorView& global, const TensorView& local,
                const BlockCyclic& d, int64_t prow, int64_t pcol) {
  check_process(op, d, prow, pcol);
  if (global.device.is_cuda() || local.device.is_cuda())
    throw_error<InvalidArgument>(op, "expected host arrays, got global on ", global.describe(),
                                 " and local on ", local.describe());
  if (global.dtype != local.dtype)
    throw_error<DTypeError>(op, "global and local expected one dtype, got ", global.describe(),
                            " and ", local.describe());
  if (global.shape != Shape{d.m, d.n})
    throw_error<InvalidArgument>(op, "global expected shape (", d.m, ", ", d.n, "), got ",
                                 global.shape_str());
  const Shape ls = local_shape(d, prow, pcol);
  if (local.shape != ls)
    throw_error<InvalidArgument>(op, "local expected shape (", ls[0], ", ", ls[1], "), got ",
                                 local.shape_str());
}

// Element (i, j) of a 2-D view.
char* at(const TensorView& v, int64_t i, int64_t j) {
  return static_cast<char*>(v.data) +
         (i * v.strides[0] + j * v.strides[1]) * static_cast<int64_t>(size_of(v.dtype));
}

// Visits every local (li, lj) with its global (gi, gj).
template <class F>
void for_each_local(const BlockCyclic& d, int64_t prow, int64_t pcol, F&& f) {
  const Shape ls = local_shape(d, prow, pcol);
  for (int64_t lj = 0; lj < ls[1]; ++lj) {
    const int64_t gj = local_to_global(lj, d.nb, pcol, d.csrc, d.npcol);
    for (int64_t li = 0; li < ls[0]; ++li)
      f(li, lj, local_to_global(li, d.mb, prow, d.rsrc, d.nprow), gj);
  }
}

}  // namespace

Shape local_shape(const BlockCyclic& d, int64_t prow, int64_t pcol) {
  check_process("distributed.local_shape", d, prow, pcol);
  return {numroc(d.m, d.mb, prow, d.rsrc, d.nprow), numroc(d.n, d.nb, pcol, d.csrc, d.npcol)};
}

int64_t local_ld(const BlockCyclic& d, int64_t prow, int64_t pcol) {
  return std::max<int64_t>(1, local_shape(d, prow, pcol)[0]);
}

void scatter(const TensorView& global, const BlockCyclic& d, int64_t prow, int64_t pcol,
             const TensorView& local) {
  check_pair("distributed.scatter", global, local, d, prow, pcol);
  const std::size_t es = size_of(global.dtype);
  for_each_local(d, prow, pcol, [&](int64_t li, int64_t lj, int64_t gi, int64_t gj) {
    std::memcpy(at(local, li, lj), at(global, gi, gj), es);
  });
}

void gather(const TensorView& local, const BlockCyclic& d, int64_t prow, int64_t pcol,
            const TensorView& global) {
  check_pair("distributed.gather", global, local, d, prow, pcol);
  const std::size_t es = size_of(global.dtype);
  for_each_local(d, prow, pcol, [&](int64_t li, int64_t lj, int64_t gi, int64_t gj) {
    std::memcpy(at(global, gi, gj), at(local, li, lj), es);
  });
}

}  // namespace gpula::distributed
