#include "simulator/pipeline.h"

#include <algorithm>

#include "simulator/pipeline_schedule.h"

namespace gpuplan {

double PipelineBubbleFraction(Schedule schedule, int64_t p, int64_t m, int64_t v) {
  const double pp = static_cast<double>(p);
  const double mm = static_cast<double>(m);
  const double vv = schedule == Schedule::kInterleaved ? static_cast<double>(v) : 1.0;
  return (pp - 1.0) / (vv * mm + pp - 1.0);
}

PipelineTime PipelineStepTime(Schedule schedule, int64_t p, int64_t m, int64_t v,
                              double max_stage_s, double sum_stage_s, double wgrad_stage_s) {
  PipelineTime t;
  const double vv = schedule == Schedule::kInterleaved ? static_cast<double>(v) : 1.0;
  const double busy = static_cast<double>(m) * max_stage_s;
  double fill = p > 1 ? (sum_stage_s - max_stage_s) / vv : 0.0;
  if (schedule == Schedule::kZeroBubbleH1 && p > 1) {
    fill = std::max(0.0, fill - 2.0 * static_cast<double>(p - 1) * wgrad_stage_s);
  }
  t.total_s = busy + fill;
  t.bubble_s = t.total_s - busy;
  return t;
}

double MicrobatchesInFlight(Schedule schedule, int64_t p, int64_t m, int64_t v, int64_t stage) {
  const double mm = static_cast<double>(m);
  const double remaining = static_cast<double>(p - stage);
  switch (schedule) {
    case Schedule::kGpipe:
      return mm;
    case Schedule::k1F1B:
      return std::min(remaining, mm);
    case Schedule::kInterleaved:
      // The forward after the warm-up runs before the first backward frees a chunk.
      return static_cast<double>(std::min(InterleavedWarmup(p, m, v, stage) + 1, m * v)) /
             static_cast<double>(v);
    case Schedule::kZeroBubbleH1:
      return std::min(static_cast<double>(p), mm);
  }
  return mm;
}

}  // namespace gpuplan
