// Pipeline-parallel schedules: step time from per-stage times, bubbles, micro-batches in flight.
#pragma once

#include <cstdint>

#include "simulator/job.h"

namespace gpuplan {

/// Idle fraction of a pipeline step with p equal stages, m micro-batches and v model chunks per
/// stage, ignoring communication: GPipe and 1F1B (p-1)/(m+p-1) (Huang et al. 2019; Narayanan et
/// al. 2021 Sec. 2.2.1); interleaved 1F1B (p-1)/(v*m+p-1) (Narayanan et al. 2021 Sec. 2.2.2).
double PipelineBubbleFraction(Schedule schedule, int64_t p, int64_t m, int64_t v);

struct PipelineTime {
  double total_s = 0;   ///< whole step of the pipeline (all micro-batches, forward + backward)
  double bubble_s = 0;  ///< total_s minus the busy time of the slowest stage
};

/// Step time of a pipeline whose slowest stage needs `max_stage_s` and all stages together
/// `sum_stage_s` per micro-batch (forward + backward). The first micro-batch crosses every stage
/// once; the other m-1 are paced by the slowest: total = m*max + (sum - max)/v, which for equal
/// stages is (m + (p-1)/v) * t, i.e. the bubble fractions above.
PipelineTime PipelineStepTime(Schedule schedule, int64_t p, int64_t m, int64_t v,
                              double max_stage_s, double sum_stage_s);

/// Micro-batches whose activations pipeline stage `stage` (0-based) keeps at its peak, in units
/// of one micro-batch through all of that stage's layers: GPipe m; 1F1B min(p - stage, m);
/// interleaved 1F1B, first stage, p + (p-1)/v (Korthikanti et al. 2022 Sec. 4.2.3: the first
/// stage's memory grows by (1 + (p-1)/(p*v))), capped at m*... the micro-batch count.
double MicrobatchesInFlight(Schedule schedule, int64_t p, int64_t m, int64_t v, int64_t stage);

}  // namespace gpuplan
