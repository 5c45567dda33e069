// Overflow-checked size arithmetic (common/checked_math.h).
#include "common/checked_math.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace gpuplan {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TEST(CheckedMul, ExactProducts) {
  EXPECT_EQ(CheckedMul(8, 16), 128);
  EXPECT_EQ(CheckedMul(-3, 7), -21);
  EXPECT_EQ(CheckedMul(0, kMax), 0);
  EXPECT_EQ(CheckedMul(kMax, 1), kMax);
}

TEST(CheckedMul, OverflowIsNullopt) {
  // 2^32 * 2^32 wraps to 0 in 64 bits: the SIGFPE of issue 17 (a product used as a divisor).
  EXPECT_FALSE(CheckedMul(int64_t{1} << 32, int64_t{1} << 32).has_value());
  EXPECT_FALSE(CheckedMul(kMax, 2).has_value());
  EXPECT_FALSE(CheckedMul(std::numeric_limits<int64_t>::min(), -1).has_value());
}

TEST(CheckedProduct, StopsAtTheFirstOverflow) {
  EXPECT_EQ(CheckedProduct({8, 16, 4, 2}), 1024);
  EXPECT_EQ(CheckedProduct({}), 1);
  EXPECT_FALSE(CheckedProduct({int64_t{1} << 40, int64_t{1} << 20, 8}).has_value());
  // A later zero does not hide an earlier overflow.
  EXPECT_FALSE(CheckedProduct({int64_t{1} << 62, 4, 0}).has_value());
}

static_assert(CheckedMul(1 << 20, 1 << 20) == int64_t{1} << 40);

}  // namespace
}  // namespace gpuplan
