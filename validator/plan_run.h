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
#include "validator/run_report.h"
#include "validator/step_transport.h"

namespace gpuplan {

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

}  // namespace gpuplan
