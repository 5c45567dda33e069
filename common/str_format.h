// printf-style formatting into a std::string (reports and messages), and count nouns.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>

namespace gpuplan {

/// snprintf into a string of any length. `format` must be a literal matching `args`.
template <typename... Args>
std::string StrFormat(const char* format, Args... args) {
  const int n = std::snprintf(nullptr, 0, format, args...);
  if (n <= 0) return "";
  std::string out(static_cast<size_t>(n) + 1, '\0');
  std::snprintf(out.data(), out.size(), format, args...);
  out.resize(static_cast<size_t>(n));
  return out;
}

/// The form of a count noun that agrees with the count `n` (any arithmetic type): `singular` when n
/// is exactly 1, `plural` otherwise (0, 2 and 1.5 take the plural). Callers write the number
/// themselves, in the format they show it: Noun(1, "micro-batch", "micro-batches") ->
/// "micro-batch", Noun(4, "GPU", "GPUs") -> "GPUs".
template <typename Count>
std::string Noun(Count n, std::string_view singular, std::string_view plural) {
  return std::string(n == 1 ? singular : plural);
}

}  // namespace gpuplan
