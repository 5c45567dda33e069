// The event-driven step simulator: one training step of a job played out op by op on the
// streams and links of the GPUs that differ, with the pipeline schedule's pass order,
// dependencies across stages, bucketed gradient reduction, FSDP prefetch and bandwidth sharing.
// docs/SIMULATOR.md describes the event model.
#pragma once

#include <cstdint>
#include <vector>

#include "common/progress.h"
#include "common/status.h"
#include "hardware-db/hardware.h"
#include "simulator/cost_model.h"
#include "simulator/job.h"
#include "simulator/step_costs.h"
#include "simulator/timeline.h"

namespace gpuplan {

struct EventSimOptions {
  bool record_timeline = true;  ///< fill EventSimResult::timeline (the planner turns it off)
  /// Optional. Counts 2T units for the T pipeline passes of all simulated GPUs: one per pass as
  /// its ops are built, then T more as the engine finishes the ops (T x finished / all ops). At
  /// most 101 updates (ProgressThrottle); Cancelled() stops the simulation, which then returns
  /// a Cancelled status. The results are summed up after the last update.
  ProgressSink* progress = nullptr;
};

struct EventSimResult {
  double step_time_s = 0;  ///< the last op of any simulated GPU
  double pipeline_s = 0;   ///< the last forward/backward pass (before the final DP sync)
  /// Where the critical GPU's time went: at each instant the first busy stream in the order
  /// compute, tp, cp, ep, pp, dp; optimizer on its own; idle time is bubble. Sums to step_time_s.
  TimeBreakdown breakdown_s;
  int64_t critical_rank = 0;  ///< index into the simulated GPUs of the one that ends last
  /// Per simulated GPU: peak stored activation bytes, and the bytes of one micro-batch through
  /// all of that GPU's layers (so peak / per_microbatch = micro-batches in flight).
  std::vector<double> peak_activation_bytes;
  std::vector<double> microbatch_activation_bytes;
  int64_t simulated_gpus = 0;  ///< one per pipeline stage
  int64_t ops = 0;             ///< ops in the event graph
  int64_t events = 0;          ///< rate changes the engine processed
  Timeline timeline;           ///< empty unless EventSimOptions::record_timeline
};

/// A lower bound on the ops the event simulation of one step of `job` (validated) holds: a
/// forward and a backward op per layer and micro-batch (one GPU per pipeline stage).
int64_t MinEventSimOps(const JobSpec& job);

/// Invalid (naming training.global_batch_size) when MinEventSimOps(job) exceeds
/// kMaxSimulatedOps (common/limits.h): such a step is refused rather than simulated.
Status CheckEventSimSize(const JobSpec& job);

/// Simulates one step of `job` (validated) with the durations `costs` (ComputeStepCosts, or a
/// test's own). Symmetry: GPUs of one TP/CP group, and all DP replicas, run the same ops at the
/// same time, so one GPU per pipeline stage is simulated and the collectives of its groups take
/// the analytic time of the whole group (collective.h). `gpu` and `rates` size the optimizer
/// step and the activation counter. Refuses a step over kMaxSimulatedOps (CheckEventSimSize
/// first, then the ops as they are built), and a timeline (options.record_timeline) of more than
/// kMaxTimelineOps ops. Time and memory are linear in the ops.
Expected<EventSimResult> SimulateStepEvents(const JobSpec& job, const StepCosts& costs,
                                            const GpuSpec& gpu, const DeviceRates& rates,
                                            const EventSimOptions& options = {});

/// Same with the costs of the analytic model at CalibratedRates(gpu, precision, measured).
Expected<EventSimResult> SimulateStepEvents(const JobSpec& job, const GpuSpec& gpu,
                                            const NetworkSpec& net,
                                            const EventSimOptions& options = {},
                                            const MeasuredRates* measured = nullptr);

/// `analytic` re-timed by `sim`: the simulated step time and breakdown, and the throughput,
/// TFLOP/s, MFU and HFU that follow from it. Memory stays the analytic estimate.
StepResult WithEventStep(const StepResult& analytic, const EventSimResult& sim);

}  // namespace gpuplan
