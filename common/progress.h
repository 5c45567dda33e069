// Progress of long work (the planner's search, the event simulation of a large step), reported
// to a sink the caller provides (a terminal progress bar, the GUI), and the caller's request to
// stop.
#pragma once

#include <cstdint>

namespace gpuplan {

/// Receives progress and may ask the work to stop; implementations must be thread-safe.
class ProgressSink {
 public:
  virtual ~ProgressSink() = default;
  /// `done` of `total` units of work are finished (the work names its unit).
  virtual void Update(int64_t done, int64_t total) = 0;
  /// True once the caller wants the work abandoned (polled where the work reports).
  virtual bool Cancelled() const { return false; }
};

/// Forwards the progress of `total` units to a sink at a bounded rate: Report(done) calls
/// sink->Update only when the whole percentage done grows and at done == total, so at most 101
/// times, with done never decreasing. A null sink makes every call free.
class ProgressThrottle {
 public:
  ProgressThrottle(ProgressSink* sink, int64_t total);
  /// `done` units of `total` are finished (0 <= done <= total, not decreasing). Returns false
  /// when the sink asks to stop (polled each time the sink is updated).
  bool Report(int64_t done);

 private:
  ProgressSink* sink_;
  int64_t total_;
  int64_t next_ = 0;  // the next `done` that reaches a new whole percentage
};

}  // namespace gpuplan
