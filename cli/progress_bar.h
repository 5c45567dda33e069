// A one-line progress bar on stderr for long work (plan search, profile sweep).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

namespace gpuplan {

/// Redraws "\r<label> [#####     ] done/total <unit>" on stderr; clears the line when done ==
/// total. Thread-safe.
class ProgressBar {
 public:
  void Draw(std::string_view label, int64_t done, int64_t total, std::string_view unit);

 private:
  std::mutex mu_;
};

}  // namespace gpuplan
