// One rank of a plan executed alone (issue 19, rank replay): on a host with fewer devices than
// the plan, the rank's compute runs for real on a local CPU or GPU (its RankCompute) and its
// communication takes the cost model's predicted time (ReplayTransport), so that one stage of a
// 128-GPU plan can be measured on one GPU. Needs no MPI.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"
#include "hardware-db/hardware.h"
#include "simulator/calibration.h"
#include "simulator/job.h"
#include "validator/rank_compute.h"
#include "validator/rank_layout.h"
#include "validator/rank_program.h"
#include "validator/run_report.h"

namespace gpuplan {

/// Runs `program` (RankProgram of `rank` of `layout`, the plan `job`'s) with `compute` (made for
/// that program) over a ReplayTransport on `gpu`/`net` with `rates` (a profile or nullptr),
/// warm-up steps first. Each measured step is the rank's wall time (its compute; communication
/// takes none) plus its communication's predicted time and the pipeline bubble EvaluateStep
/// predicts for the plan (a lone rank waits for no peer). Phases: compute and optimizer measured,
/// communication and bubble predicted. Peak memory: the compute's arena during the measured
/// steps. elements and wrong stay 0: nothing is exchanged.
Expected<RunMeasurement> ReplayRank(const JobSpec& job, const RankLayout& layout, int64_t rank,
                                    const std::vector<ProgramStep>& program, RankCompute& compute,
                                    const GpuSpec& gpu, const NetworkSpec& net,
                                    const MeasuredRates* rates, const RunOptions& options);

/// The note a replay's report starts with: which rank ran where, and what was predicted.
std::string ReplayNote(int64_t rank, const std::string& backend, const RunMeasurement& measured);

}  // namespace gpuplan
