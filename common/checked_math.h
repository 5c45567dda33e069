// Overflow-checked integer arithmetic for sizes (GPU counts, products of parallel degrees,
// batch x sequence, token totals).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>

namespace gpuplan {

/// a * b, or nullopt when the product does not fit an int64_t.
constexpr std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t out = 0;
  if (__builtin_mul_overflow(a, b, &out)) return std::nullopt;
  return out;
}

/// The product of all `factors`, or nullopt when any partial product overflows int64_t.
constexpr std::optional<int64_t> CheckedProduct(std::initializer_list<int64_t> factors) {
  int64_t out = 1;
  for (int64_t f : factors) {
    if (__builtin_mul_overflow(out, f, &out)) return std::nullopt;
  }
  return out;
}

}  // namespace gpuplan
