#pragma once
// What the core asks of the CUDA backend. Defined in backend/cuda/ when built with CUDA,
// otherwise in backend/no_cuda/core.cpp (queries answer "none", actions throw NotCompiled).
#include <gpula/tensor.h>

#include <cstddef>
#include <string>

namespace gpula::detail::cuda {

bool compiled();
int device_count();
std::string describe();
int64_t total_memory(int device);

// Stream-ordered device memory from the per-device pool; throws OutOfMemory.
void* allocate(std::size_t bytes, Stream stream);
void deallocate(void* ptr, Stream stream) noexcept;

// Strided copy where at least one side is on a GPU; src may broadcast (stride 0).
void copy(const TensorView& src, const TensorView& dst, Stream stream);
void fill_zero(const TensorView& dst, Stream stream);
void synchronize(Stream stream);

}  // namespace gpula::detail::cuda
