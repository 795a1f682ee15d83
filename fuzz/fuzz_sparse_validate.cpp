// libFuzzer target for the sparse validator: CSR / COO / CSC construction, check_csr +
// validate_csr on views, with_values, on CPU memory. The decoding and the oracle live in
// sparse_fuzz_input.h (shared with tests/cpp/sparse/fuzz_corpus_test.cpp, which replays
// fuzz/corpus in every ctest run). Build and run: `make fuzz` (see fuzz/README.md).
#include <cstdio>
#include <cstdlib>

#include "fuzz/sparse_fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string bad = gpula_fuzz::run_sparse_case(data, size);
  if (!bad.empty()) {
    std::fprintf(stderr, "sparse validator violation: %s\n", bad.c_str());
    std::abort();
  }
  return 0;
}
