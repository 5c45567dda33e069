// A plan executed on this host's CPUs (issue 19): every rank under mpirun computes its step with
// CpuCompute and communicates over MPI (RunStep), warm-up steps first, then measured steps; the
// measurements are gathered on rank 0 and set beside the cost model's prediction in a
// validation report (validator/validation_report.h).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "hardware-db/hardware_db.h"
#include "simulator/calibration.h"
#include "simulator/cost_model.h"
#include "simulator/job.h"
#include "validator/mpi_communicators.h"
#include "validator/rank_layout.h"
#include "validator/validation_report.h"

namespace gpuplan {

struct CpuRunOptions {
  int64_t warmup_steps = 2;  ///< run first, not measured (allocation, first touch, caches)
  int64_t steps = 5;         ///< measured
  double watchdog_s = kDefaultWatchdogSeconds;
};

/// What the ranks measured; complete on rank 0 of the world (the other ranks' copy holds only
/// their own step times).
struct CpuRunMeasurement {
  /// Each measured step: the slowest rank's time (steps start together after a barrier).
  std::vector<double> step_seconds;
  /// Seconds per step in each phase (StepRunResult::phases), mean over the measured steps, of the
  /// rank whose steps took longest in total.
  TimeBreakdown phases;
  int64_t slowest_rank = 0;
  double peak_memory_bytes = 0;  ///< largest arena peak of any rank during the measured steps
  int64_t peak_memory_rank = 0;
  int64_t elements = 0;    ///< elements received and checked by all ranks in all steps
  int64_t wrong = 0;       ///< of them, wrong (nccl-tests #wrong): non-zero fails the run
  int64_t parameters = 0;  ///< float32 parameters of the rank with the peak memory
};

/// Runs `job` (CheckCpuExecutable must hold) with the ranks of `world`, whose size is the plan's
/// (Invalid otherwise). Collective over `world`. Errors are this rank's (the caller names it); a
/// watchdog or MPI error on one rank returns there while its peers wait: the caller reports and
/// aborts the job.
Expected<CpuRunMeasurement> RunPlanOnCpu(const JobSpec& job, const RankLayout& layout,
                                         MPI_Comm world, const CpuRunOptions& options);

/// The report of a CPU run: the cost model's prediction for `job` on `gpu`/`net` with `rates`
/// (a CPU profile, or nullptr for the device's default rates) beside `measured`. The notes say
/// how the ranks ran (threads, inline communication) and where the comparison is not like for
/// like.
ValidationReport CpuValidationReport(const JobSpec& job, const GpuSpec& gpu, const NetworkSpec& net,
                                     const MeasuredRates* rates, const CpuRunMeasurement& measured,
                                     const CpuRunOptions& options);

}  // namespace gpuplan
