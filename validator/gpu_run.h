// A plan executed on this node's GPUs (issue 19): RunPlan with one process per GPU, each rank's
// compute on its device (GpuCompute) and its communication over NCCL (NcclTransport), the
// communicators bootstrapped over MPI.
#pragma once

#include <mpi.h>

#include <string>

#include "common/status.h"
#include "simulator/job.h"
#include "validator/plan_run.h"
#include "validator/rank_layout.h"

namespace gpuplan {

/// RunPlan on this node's GPUs (CheckGpuExecutable must hold): each rank uses the device
/// LocalDevice gives it. Unavailable "no CUDA GPU: ..." when there is none, or when the node has
/// more ranks than GPUs.
Expected<RunMeasurement> RunPlanOnGpu(const JobSpec& job, const RankLayout& layout, MPI_Comm world,
                                      const RunOptions& options);

/// The first note of a GPU run's report: ranks and `device_name`, the libraries, the streams and
/// the per-op synchronisation.
std::string GpuBackendNote(const JobSpec& job, const std::string& device_name);

}  // namespace gpuplan
