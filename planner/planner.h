// The planner's entry point: a PlanRequest in, a PlanResult out (recommendation with reasons,
// alternatives, Pareto front of time vs cost, scaling table, or why nothing fits).
#pragma once

#include "common/status.h"
#include "hardware-db/hardware_db.h"
#include "planner/plan.h"
#include "planner/search.h"

namespace gpuplan {

/// Checks a request. Each error is one line naming the option at fault and what is allowed
/// ("--gpu: unknown GPU 'x' (known: ...)", "--objective cost-under-deadline needs --deadline").
/// Bounds the search space by the limits of common/limits.h (docs/JOB_SPEC.md, Limits):
/// --max-gpus at most kMaxGpus, at most kMaxPlannerBatchSizes batch sizes, each batch x seq_len at
/// most kMaxTokensPerStep and reachable within kMaxMicroBatchesPerStep micro-batches on
/// --max-gpus GPUs, --seq-len at most kMaxSeqLen, training tokens at most kMaxTrainTokens.
Status ValidatePlanRequest(const PlanRequest& req, const HardwareDb& db);

/// Validates `req`, searches every hardware point (GPU type x node template x GPU count) and
/// every layout on it, prices the best layouts, and chooses by the objective. `progress` may be
/// null; when it reports Cancelled(), MakePlan returns Status::Cancelled. A request that nothing
/// satisfies is not an error: the result has found == false and says why (no_fit, explanation).
Expected<PlanResult> MakePlan(const PlanRequest& req, const HardwareDb& db, ProgressSink* progress);

}  // namespace gpuplan
