#pragma once
// When a CPU loop is worth the OpenMP pool. The pool sleeps between calls (import gpula sets
// OMP_WAIT_POLICY=passive; python/gpula/_openblas_core.py): a wake costs tens of microseconds on
// an idle machine, and milliseconds where the cores are busy (NumPy's OpenBLAS threads spin
// ~0.1 s after each of its calls), so a pool woken for little work takes more than it gives.
// Work counts elements of a plain vectorized pass (load, add or compare, store: ~0.2 ns on one
// x86-64 core); a loop whose element costs more (a gather, a GELU) counts that many units.
#include <cstdint>

namespace gpula::detail::cpu {

// ~0.2 ms of serial work.
constexpr double kParallelWork = double(int64_t{1} << 20);

// Whether a loop of `work` units should run on the pool (else on the calling thread).
inline bool parallel_worth(double work) { return work >= kParallelWork; }

// The threads for a pass of `work` units: all of `threads`, or 1 when it is small.
inline int pass_threads(double work, int threads) { return parallel_worth(work) ? threads : 1; }

}  // namespace gpula::detail::cpu
