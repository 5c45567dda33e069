// One plan the user fixed ("what if"): a job with its hardware and layout chosen by hand, timed
// by the cost model and priced exactly as the planner prices its candidates, without a search.
// This is the GUI's live answer (docs/GUI.md); the planner is its search counterpart.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hardware-db/hardware_db.h"
#include "planner/plan.h"
#include "simulator/job.h"

namespace gpuplan {

/// `job` (it must pass ValidateJob against `db`) built from node template `node`, timed by the
/// analytic cost model (EvaluateStep at req.measured's rates for its GPU type), with the
/// request's work (train_tokens, or train_steps, at the job's global batch and seq_len) and
/// priced by PricePlan: the request's price override for the GPU if any, else the cheapest
/// offering of req.price_kind at req.providers (all when empty) that serves the job's GPU count;
/// unpriced (econ.usd_per_gpu_hour 0) when none does. Of `req` only train_tokens, train_steps,
/// providers, price_kind, price_overrides, reliability and measured are read.
Plan EvaluateFixedPlan(const PlanRequest& req, const HardwareDb& db, const JobSpec& job,
                       const std::string& node);

/// Data-parallel scaling of the layout of `job`: the same TP, PP, VPP, CP, EP, micro-batch,
/// global batch and settings at DP = 1, 2, 4, ... and at the job's own DP, for every GPU count up
/// to `max_gpus` that is a valid job (ValidateJob: the global batch divides into micro-batches
/// across the replicas, whole nodes above one node, EP divides DP x CP). Each row is
/// EvaluateFixedPlan of that job, feasible when it fits in memory; ascending GPU counts, with
/// speedup and scaling efficiency relative to the first feasible row (FillSpeedups). Empty when
/// not even DP = 1 is a valid job.
std::vector<ScalingRow> DataParallelScaling(const PlanRequest& req, const HardwareDb& db,
                                            const JobSpec& job, const std::string& node,
                                            int64_t max_gpus);

}  // namespace gpuplan
