#include "cli/progress_bar.h"

#include <algorithm>
#include <cstdio>

namespace gpuplan {

void ProgressBar::Draw(std::string_view label, int64_t done, int64_t total, std::string_view unit) {
  std::lock_guard<std::mutex> lock(mu_);
  constexpr int kWidth = 40;
  const int filled = static_cast<int>(kWidth * done / std::max<int64_t>(1, total));
  std::fprintf(stderr, "\r%-10.*s [%s%s] %lld/%lld %.*s   ", static_cast<int>(label.size()),
               label.data(), std::string(static_cast<size_t>(filled), '#').c_str(),
               std::string(static_cast<size_t>(kWidth - filled), ' ').c_str(),
               static_cast<long long>(done), static_cast<long long>(total),
               static_cast<int>(unit.size()), unit.data());
  if (done >= total) std::fprintf(stderr, "\r%*s\r", kWidth + 70, "");
  std::fflush(stderr);
}

void TerminalProgress::Update(int64_t done, int64_t total) {
  if (unit_ == "%") {
    bar_.Draw(label_, total > 0 ? done * 100 / total : 100, 100, unit_);
  } else {
    bar_.Draw(label_, done, total, unit_);
  }
}

}  // namespace gpuplan
