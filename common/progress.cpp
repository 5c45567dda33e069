#include "common/progress.h"

#include <algorithm>

namespace gpuplan {

ProgressThrottle::ProgressThrottle(ProgressSink* sink, int64_t total)
    : sink_(sink), total_(std::max<int64_t>(total, 0)) {}

bool ProgressThrottle::Report(int64_t done) {
  if (sink_ == nullptr || done < next_) return true;
  sink_->Update(done, total_);
  // The smallest count past `done` whose whole percentage is higher; total_ itself when done
  // is in the last percent, and never again after total_.
  const int64_t percent = total_ > 0 ? done * 100 / total_ : 100;
  next_ = percent >= 100 ? total_ + 1 : std::min(total_, ((percent + 1) * total_ + 99) / 100);
  return !sink_->Cancelled();
}

}  // namespace gpuplan
