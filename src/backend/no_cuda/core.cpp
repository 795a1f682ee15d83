// Built when gpula has no CUDA backend: queries answer "none", actions throw NotCompiled.
#include <gpula/error.h>

#include "backend/cuda_api.h"

namespace gpula::detail::cuda {

bool compiled() { return false; }
int device_count() { return 0; }
std::string describe() { return "cuda: not compiled"; }
int64_t total_memory(int) { throw NotCompiled("cuda"); }
void* allocate(std::size_t, Stream) { throw NotCompiled("cuda"); }
void deallocate(void*, Stream) noexcept {}
void copy(const TensorView&, const TensorView&, Stream) { throw NotCompiled("cuda"); }
void fill_zero(const TensorView&, Stream) { throw NotCompiled("cuda"); }
void synchronize(Stream) { throw NotCompiled("cuda"); }

}  // namespace gpula::detail::cuda
