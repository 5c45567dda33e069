// What the GUI's inputs hold (a Session) and the session file that saves them. Qt-free: the
// window maps widgets to and from a Session, and the planner library does the arithmetic.
// The file format is in docs/GUI.md.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"
#include "hardware-db/hardware_db.h"
#include "planner/plan.h"
#include "simulator/job.h"

namespace gpuplan {

/// Where the model's dimensions came from (shown next to the model; dimensions are in job).
enum class ModelSource { kPreset, kHfConfig, kCustom };

/// Every input of the what-if window.
struct Session {
  ModelSource model_source = ModelSource::kPreset;
  /// The preset id (kPreset), the config.json path (kHfConfig) or what the custom dimensions
  /// were edited from (kCustom; may be empty).
  std::string model_origin;
  /// Model, cluster, training and layout. parallel.dp follows the GPU count:
  /// num_gpus / (tp x pp x cp) (ResolvedJob).
  JobSpec job;
  std::string node;         ///< NodeTemplate id the cluster is built of
  double train_tokens = 0;  ///< > 0
  std::string provider;     ///< price at this provider; "" = the cheapest that sells the GPU
  PriceKind price_kind = PriceKind::kOnDemand;
  double price_override_usd_per_gpu_hour = 0;  ///< 0 = no override
  // "Find best plan" settings.
  Objective objective = Objective::kCost;
  bool search_all_gpus = true;  ///< every GPU type of the hardware database, or only job's
  int64_t search_max_gpus = 1024;
  double deadline_s = 0;  ///< 0 = none
  double budget_usd = 0;  ///< 0 = none
};

/// The session the window opens with: Llama 3 70B, 1T tokens of 8192, global batch 512, on 256
/// H100 SXM in DGX nodes, TP8 PP4 VPP5 DP8 with sequence parallelism and ZeRO-1 (the layout
/// class of Llama 3's own runs), on-demand prices; Find best plan looks for the cheapest plan on
/// any GPU type that trains within 60 days. Needs the built-in hardware database.
Session DefaultSession(const HardwareDb& db);

/// The job to evaluate: session.job with parallel.dp = num_gpus / (tp x pp x cp), checked by
/// ValidateJob. Invalid, one line naming the field, when the GPU count is not a multiple of
/// TP x PP x CP or the job breaks a rule of ValidateJob.
Expected<JobSpec> ResolvedJob(const Session& session, const HardwareDb& db);

/// Takes over a plan's hardware and layout (job, node) and its provider and price kind (not an
/// "override" provider: the session's override stays); the model and the work stay. GPUs per
/// node come from the plan's node template in `db`.
void LoadPlan(const HardwareDb& db, const Plan& plan, Session* session);

/// The node templates of `gpu` in `db`, sorted by id; the GPU's default node first when it has
/// one.
std::vector<std::string> NodesOfGpu(const HardwareDb& db, const std::string& gpu);

/// Points `session` at `gpu` with its default (else first) node template and that node's network
/// and GPUs per node; drops a provider that does not sell `gpu`, and a precision the GPU cannot
/// run (bf16 then). Unknown `gpu`: Invalid.
Status SelectGpu(const HardwareDb& db, const std::string& gpu, Session* session);

/// The request EvaluateFixedPlan and DataParallelScaling read: work, price choice and the
/// database's reliability figures.
PlanRequest WhatIfRequest(const Session& session, const HardwareDb& db);

/// The planner's request for "Find best plan": the session's model, work, sequence length,
/// global batch, precision, LoRA and attention, on every GPU type (search_all_gpus) or the
/// session's, 1..search_max_gpus GPUs, at its provider and price kind, with its objective,
/// deadline and budget.
PlanRequest SearchRequest(const Session& session, const HardwareDb& db);

/// True when `searched` (a SearchRequest) asked about the session's model and job: the same
/// model, training tokens, sequence length, global batch, precision, LoRA, attention and
/// dropout. A search for another job is stale: its plans do not answer the session's question.
bool SearchedFor(const PlanRequest& searched, const Session& session);

/// The current plan as a planner answer, so the report writers render it: the recommendation
/// is `plan` ("what-if plan"), scaling is `scaling` (DataParallelScaling), the Pareto front and
/// alternatives come from `search` when one ran (else empty).
PlanResult WhatIfReport(const Session& session, const HardwareDb& db, const Plan& plan,
                        const std::vector<ScalingRow>& scaling, const PlanResult* search);

/// The session file: {"format": "gpuplan-session", "version": 1, "model_source", "model_origin",
/// "job" (JobSpecToJson), "node", "work", "price", "search"}.
nlohmann::json SessionToJson(const Session& session);
/// Reads what SessionToJson writes. The job goes through ParseJobSpec (so it is validated), the
/// node must be a template of the job's GPU; errors name `origin` and the field.
Expected<Session> SessionFromJson(const nlohmann::json& json, const std::string& origin,
                                  const HardwareDb& db);
Expected<Session> ReadSessionFile(const std::string& path, const HardwareDb& db);
/// Writes the session atomically (WriteFileAtomically): complete or absent.
Status WriteSessionFile(const std::string& path, const Session& session);

}  // namespace gpuplan
