// printf-style formatting into a std::string (reports and messages).
#pragma once

#include <cstdio>
#include <string>

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

}  // namespace gpuplan
