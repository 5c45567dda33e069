#include "common/host_memory.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define GPUPLAN_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GPUPLAN_TEST_ASAN 1
#endif
#endif

namespace gpuplan {
namespace {

// A block above glibc's largest mmap threshold (32 MiB) comes from the heap and, once freed,
// stays there for the next request instead of being unmapped.
TEST(HostMemory, FreedBlocksStayInTheHeap) {
#if !defined(__GLIBC__) || defined(GPUPLAN_TEST_ASAN)
  GTEST_SKIP() << "glibc's malloc only (AddressSanitizer replaces it)";
#else
  KeepFreedHostMemory();
  constexpr size_t kBytes = size_t{64} << 20;
  const size_t mapped_before = mallinfo2().hblkhd;
  void* block = std::malloc(kBytes);
  ASSERT_NE(block, nullptr);
  std::memset(block, 1, kBytes);
  asm volatile("" : : "g"(block) : "memory");  // the block is used: keep the malloc
  EXPECT_EQ(mallinfo2().hblkhd, mapped_before) << "the block got a mapping of its own";
  std::free(block);
  EXPECT_GE(mallinfo2().fordblks, kBytes) << "the freed block left the heap";
#endif
}

}  // namespace
}  // namespace gpuplan
