// A plan executed (issue 19): every rank under mpirun computes its step with its backend's
// compute (CpuCompute, GpuCompute) and communicates through its transport (MPI, NCCL) (RunStep),
// warm-up steps first, then measured steps; the measurements are gathered on rank 0 and set
// beside the cost model's prediction in a validation report (validator/validation_report.h).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "hardware-db/hardware_db.h"
#include "simulator/calibration.h"
#include "simulator/cost_model.h"
#include "simulator/job.h"
#include "validator/mpi_communicators.h"
#include "validator/rank_compute.h"
#include "validator/rank_layout.h"
#include "validator/step_transport.h"
#include "validator/validation_report.h"

namespace gpuplan {

struct RunOptions {
  int64_t warmup_steps = 2;  ///< run first, not measured (allocation, first touch, caches)
  int64_t steps = 5;         ///< measured
  double watchdog_s = kDefaultWatchdogSeconds;
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
  int64_t elements = 0;    ///< elements received and checked by all ranks in all steps
  int64_t wrong = 0;       ///< of them, wrong (nccl-tests #wrong): non-zero fails the run
  int64_t parameters = 0;  ///< parameters of the rank with the peak memory
};

/// A rank's compute and transport.
struct RankBackends {
  std::unique_ptr<RankCompute> compute;
  std::unique_ptr<StepTransport> transport;
};

/// Makes this rank's backends for `program` (its RankProgram), given the plan's MPI
/// communicators (which outlive them). Collective over the world when the transport is.
using MakeRankBackends = std::function<Expected<RankBackends>(
    const std::vector<ProgramStep>& program, const PlanCommunicators& comms)>;

/// Runs `job` with the ranks of `world`, whose size is the plan's (Invalid otherwise), each with
/// the backends `make` gives it. Collective over `world`. Errors are this rank's (the caller names
/// it); a watchdog, MPI, NCCL or CUDA error on one rank returns there while its peers wait: the
/// caller reports and aborts the job.
Expected<RunMeasurement> RunPlan(const JobSpec& job, const RankLayout& layout, MPI_Comm world,
                                 const RunOptions& options, const MakeRankBackends& make);

/// RunPlan on this host's CPUs (CheckCpuExecutable must hold): CpuCompute with one Eigen thread
/// per rank, as the CPU profile measures, and MpiTransport.
Expected<RunMeasurement> RunPlanOnCpu(const JobSpec& job, const RankLayout& layout, MPI_Comm world,
                                      const RunOptions& options);

/// The report of a run: the cost model's prediction for `job` on `gpu`/`net` with `rates` (a
/// profile, or nullptr for the device's default rates) beside `measured`. `backend` says how the
/// ranks ran (the first note); the other notes say where the comparison is not like for like.
ValidationReport MeasuredValidationReport(const JobSpec& job, const GpuSpec& gpu,
                                          const NetworkSpec& net, const MeasuredRates* rates,
                                          const RunMeasurement& measured, const RunOptions& options,
                                          const std::string& backend);

/// The first note of a CPU run's report: ranks, threads, Eigen's version, inline communication.
std::string CpuBackendNote(const JobSpec& job);

}  // namespace gpuplan
