// A one-line progress bar on stderr for long work (plan search, profile sweep, event simulation).
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>

#include "common/progress.h"

namespace gpuplan {

/// Redraws "\r<label> [#####     ] done/total <unit>" on stderr; clears the line when done ==
/// total. Thread-safe.
class ProgressBar {
 public:
  void Draw(std::string_view label, int64_t done, int64_t total, std::string_view unit);

 private:
  std::mutex mu_;
};

/// A ProgressSink drawn as a ProgressBar (callers show it only when stderr is a terminal):
/// "label [###   ] done/total unit", or with unit "%" the whole percentage done of 100.
class TerminalProgress : public ProgressSink {
 public:
  TerminalProgress(std::string label, std::string unit)
      : label_(std::move(label)), unit_(std::move(unit)) {}
  void Update(int64_t done, int64_t total) override;

 private:
  std::string label_, unit_;
  ProgressBar bar_;
};

}  // namespace gpuplan
