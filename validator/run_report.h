// What a run of a plan measured and the report that sets it beside the prediction (issue 19):
// shared by the runs under mpirun (validator/plan_run.h) and the replay of one rank
// (validator/rank_replay.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hardware-db/hardware.h"
#include "simulator/calibration.h"
#include "simulator/cost_model.h"
#include "simulator/job.h"
#include "validator/measured_trace.h"
#include "validator/rank_compute.h"
#include "validator/step_transport.h"
#include "validator/validation_report.h"

namespace gpuplan {

struct RunOptions {
  int64_t warmup_steps = 2;  ///< run first, not measured (allocation, first touch, caches)
  int64_t steps = 5;         ///< measured
  double watchdog_s = kDefaultWatchdogSeconds;
  /// Record every op of the last measured step on every rank (RunMeasurement::rank_ops).
  bool record_trace = false;
};

/// What the ranks measured; complete on rank 0 of the world (the other ranks' copy holds only
/// their own step times).
struct RunMeasurement {
  /// Each measured step: the slowest rank's time (steps start together after a barrier).
  std::vector<double> step_seconds;
  /// Seconds per step in each phase (StepRunResult::phases), mean over the measured steps, of the
  /// rank whose steps took longest in total.
  TimeBreakdown phases;
  int64_t slowest_rank = 0;
  double peak_memory_bytes = 0;  ///< largest arena peak of any rank during the measured steps
  int64_t peak_memory_rank = 0;
  /// That rank's allocator (RankCompute::Allocator; zero on the CPU backend).
  RankCompute::AllocatorUse allocator;
  int64_t elements = 0;              ///< elements received and checked by all ranks in all steps
  int64_t wrong = 0;                 ///< of them, wrong (nccl-tests #wrong): non-zero fails the run
  int64_t parameters = 0;            ///< parameters of the rank with the peak memory
  int64_t trainable_parameters = 0;  ///< of them, trained (all, or under LoRA its adapters')
  /// With RunOptions::record_trace, on rank 0: every rank's ops of the last measured step, in
  /// rank order, each timed on its own rank's clock from its step's start.
  std::vector<std::vector<MeasuredOp>> rank_ops;
};

/// The report of a run: the cost model's prediction for `job` on `gpu`/`net` with `rates` (a
/// profile, or nullptr for the device's default rates) beside `measured`. `backend` says how the
/// ranks ran (the first note); the other notes say where the comparison is not like for like.
/// `replayed_rank` >= 0: a rank replay of that rank (ReplayRank), mode kRankReplay.
ValidationReport MeasuredValidationReport(const JobSpec& job, const GpuSpec& gpu,
                                          const NetworkSpec& net, const MeasuredRates* rates,
                                          const RunMeasurement& measured, const RunOptions& options,
                                          const std::string& backend, int64_t replayed_rank = -1);

/// The first note of a CPU run's report: ranks, threads, Eigen's version, inline communication.
std::string CpuBackendNote(const JobSpec& job);

}  // namespace gpuplan
