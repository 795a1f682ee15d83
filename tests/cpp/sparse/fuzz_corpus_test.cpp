// Replays every input of fuzz/corpus through the sparse validator's fuzz case (the decoder and
// oracle of fuzz/sparse_fuzz_input.h, shared with the libFuzzer target), so every ctest run
// exercises the harness without clang or libFuzzer.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "fuzz/sparse_fuzz_input.h"

#ifndef GPULA_FUZZ_CORPUS_DIR
#error "GPULA_FUZZ_CORPUS_DIR must name fuzz/corpus"
#endif

TEST(SparseFuzzCorpus, EveryInputBehavesAsDocumented) {
  namespace fs = std::filesystem;
  const fs::path dir(GPULA_FUZZ_CORPUS_DIR);
  ASSERT_TRUE(fs::is_directory(dir)) << dir;
  size_t count = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream f(entry.path(), std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)),
                                     std::istreambuf_iterator<char>());
    EXPECT_EQ(gpula_fuzz::run_sparse_case(bytes.data(), bytes.size()), "")
        << "corpus input " << entry.path().filename();
    ++count;
  }
  EXPECT_GE(count, 8u) << "fuzz/corpus should hold the seed inputs";
}
