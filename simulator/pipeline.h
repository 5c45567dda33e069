// Pipeline-parallel schedules: step time from per-stage times, bubbles, micro-batches in flight.
#pragma once

#include <cstdint>

#include "simulator/job.h"

namespace gpuplan {

/// Idle fraction of a pipeline step with p equal stages, m micro-batches and v model chunks per
/// stage, ignoring communication: GPipe and 1F1B (p-1)/(m+p-1) (Huang et al. 2019; Narayanan et
/// al. 2021 Sec. 2.2.1); interleaved 1F1B (p-1)/(v*m+p-1) (Narayanan et al. 2021 Sec. 2.2.2).
/// ZB-H1 depends on the backward split: see PipelineStepTime.
double PipelineBubbleFraction(Schedule schedule, int64_t p, int64_t m, int64_t v);

struct PipelineTime {
  double total_s = 0;   ///< whole step of the pipeline (all micro-batches, forward + backward)
  double bubble_s = 0;  ///< total_s minus the busy time of the slowest stage
};

/// Step time of a pipeline whose slowest stage needs `max_stage_s` and all stages together
/// `sum_stage_s` per micro-batch (forward + backward). The first micro-batch crosses every stage
/// once; the other m-1 are paced by the slowest: total = m*max + (sum - max)/v, which for equal
/// stages is (m + (p-1)/v) * t, i.e. the bubble fractions above.
/// ZB-H1 (Qi et al. 2024, "Zero Bubble Pipeline Parallelism", Sec. 2.1) splits backward into B
/// (input gradients) and W (weight gradients, mean `wgrad_stage_s` per stage and micro-batch)
/// and defers W passes into the drain: with equal stages of t = F + B + W the fill shrinks from
/// (p-1)t to (p-1)(F + B - W), a bubble of (p-1)/3m at F = B = W (the paper's Table 2).
/// `wgrad_stage_s` is ignored by the other schedules.
PipelineTime PipelineStepTime(Schedule schedule, int64_t p, int64_t m, int64_t v,
                              double max_stage_s, double sum_stage_s, double wgrad_stage_s);

/// Micro-batches whose activations pipeline stage `stage` (0-based) keeps at its peak, in units
/// of one micro-batch through all of that stage's layers, when its v chunks store equal bytes:
/// GPipe m; 1F1B min(p - stage, m); interleaved 1F1B (InterleavedWarmup + 1) / v chunks, at most
/// m: (2(p - stage - 1) + (v-1)p + 1) / v, which on the first stage is p + (p-1)/v (Korthikanti
/// et al. 2022 Sec. 4.2.3: the first stage's memory grows by (1 + (p-1)/(p*v))) and on later
/// stages falls by 2/v per stage, not by 1 as in 1F1B; ZB-H1 min(p, m) on every stage (Qi et al.
/// 2024 Sec. 2.1: deferred W passes keep each stage at the first stage's 1F1B count). These are
/// the peaks of the pass orders of pipeline_schedule.h.
double MicrobatchesInFlight(Schedule schedule, int64_t p, int64_t m, int64_t v, int64_t stage);

}  // namespace gpuplan
